"""The options both command lines share, under one spelling each.

``protoqa-eval`` and ``probeval`` read the same kinds of input and offer the same
choices about it; :func:`add_input_options` gives those choices the same names in
both.
"""

from __future__ import annotations

import argparse

__all__ = ["add_input_options"]


def add_input_options(parser: argparse.ArgumentParser, *, progress_default: bool) -> None:
    """``--ignore-unknown``, ``--only-predicted``, ``--all-stopwords-zero`` and ``--progress/--no-progress``.

    The metric-specific help stays with each command; these four mean the same in
    both: what to do with prediction ids that are not in the targets (see
    :func:`protoqa_core.io.ids.reconcile_ids`), with target questions that have no
    predictions, with two all-stopword strings under WordNet, and whether to draw a
    progress bar on stderr (``progress_default`` differs between the commands).

    >>> p = argparse.ArgumentParser()
    >>> add_input_options(p, progress_default=False)
    >>> a = p.parse_args(["--only-predicted", "--no-progress"])
    >>> a.only_predicted, a.ignore_unknown, a.all_stopwords_zero, a.progress
    (True, False, False, False)
    """
    parser.add_argument(
        "--ignore-unknown",
        action="store_true",
        help="drop predictions for question ids that are not in the targets, with a warning (default: error)",
    )
    parser.add_argument(
        "--only-predicted",
        action="store_true",
        help="leave target questions without predictions out of the mean (default: score them, "
        "as 0 for ProtoQA and as an empty sample for ProbEval)",
    )
    parser.add_argument(
        "--all-stopwords-zero",
        action="store_true",
        help="WordNet: two all-stopword strings do not match (default: they do, as published)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=progress_default,
        help="a progress bar on stderr"
        + (" when it is a terminal (default: on)" if progress_default else " (default: off)"),
    )

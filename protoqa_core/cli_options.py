"""The options both command lines share, under one spelling each.

``protoqa-eval`` and ``probeval`` read the same kinds of input and offer the same
choices about it; :func:`add_input_options` gives those choices the same names in
both. A spelling that one of them used before stays accepted for one release as a
hidden alias (:func:`add_deprecated_alias`), with a one-line note on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional, Sequence

__all__ = ["add_input_options", "add_deprecated_alias"]


class _DeprecatedFlag(argparse.Action):
    """A flag that sets ``dest`` like its new spelling and says, once, that it is deprecated."""

    def __init__(self, option_strings: Sequence[str], dest: str, new_name: str = "", **kwargs: Any) -> None:
        self.new_name = new_name
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        print(f"{parser.prog}: note: {option_string} is deprecated and will be removed in the next release; "
              f"use {self.new_name}", file=sys.stderr)
        setattr(namespace, self.dest, True)


def add_deprecated_alias(parser: argparse.ArgumentParser, old_name: str, new_name: str, dest: str) -> None:
    """Accept ``old_name`` as a hidden alias of the flag ``new_name`` (which stores True in ``dest``).

    >>> import contextlib, io
    >>> p = argparse.ArgumentParser(prog="demo")
    >>> _ = p.add_argument("--only-predicted", action="store_true")
    >>> add_deprecated_alias(p, "--only-sampled", "--only-predicted", "only_predicted")
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     p.parse_args(["--only-sampled"]).only_predicted
    True
    >>> err.getvalue().strip()
    'demo: note: --only-sampled is deprecated and will be removed in the next release; use --only-predicted'
    >>> "--only-sampled" in p.format_help()
    False
    """
    parser.add_argument(old_name, dest=dest, action=_DeprecatedFlag, new_name=new_name)


def add_input_options(parser: argparse.ArgumentParser, *, progress_default: bool) -> None:
    """``--ignore-unknown``, ``--only-predicted``, ``--all-stopwords-zero`` and ``--progress/--no-progress``.

    The metric-specific help stays with each command; these four mean the same in
    both: what to do with prediction ids that are not in the targets (see
    :func:`protoqa_core.ids.reconcile_ids`), with target questions that have no
    predictions, with two all-stopword strings under WordNet, and whether to draw a
    progress bar on stderr (``progress_default`` differs between the commands).

    >>> p = argparse.ArgumentParser()
    >>> add_input_options(p, progress_default=False)
    >>> a = p.parse_args(["--only-predicted", "--no-progress"])
    >>> a.only_predicted, a.ignore_unknown, a.all_stopwords_zero, a.progress
    (True, False, False, False)
    """
    parser.add_argument("--ignore-unknown", action="store_true",
                        help="drop predictions for question ids that are not in the targets, with a warning "
                             "(default: error)")
    parser.add_argument("--only-predicted", action="store_true",
                        help="leave target questions without predictions out of the mean (default: score them, "
                             "as 0 for ProtoQA and as an empty sample for ProbEval)")
    parser.add_argument("--all-stopwords-zero", action="store_true",
                        help="WordNet: two all-stopword strings do not match (default: they do, as published)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=progress_default,
                        help="a progress bar on stderr" + (" when it is a terminal (default: on)" if progress_default
                                                           else " (default: off)"))

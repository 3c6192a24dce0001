"""The options both command lines (``protoqa-eval`` and ``probeval``) share, under one spelling each."""

from __future__ import annotations

import argparse

from .cli import add_overwrite_option, int_at_least
from .progress import LOG_INTERVAL

__all__ = [
    "add_input_options",
    "add_per_question_option",
    "add_quiet_option",
    "add_max_answers_option",
    "add_no_cache_option",
    "DEFAULT_MAX_ANSWERS",
]

DEFAULT_MAX_ANSWERS = 500
"""The most answers one question may have in a predictions file read by a command line; the home of the cap,
which the Space and the Hub-folder apps apply as it is."""


def add_input_options(parser: argparse.ArgumentParser, *, unanswered: str, quiet: str = "progress reports") -> None:
    """``--ignore-unknown``, ``--only-predicted``, ``--all-stopwords-zero`` and ``--quiet``.

    ``unanswered`` says what the command does by default with a question without predictions,
    ``quiet`` what ``--quiet`` silences.

    >>> p = argparse.ArgumentParser()
    >>> add_input_options(p, unanswered="score each as 0")
    >>> a = p.parse_args(["--only-predicted", "--quiet"])
    >>> a.only_predicted, a.ignore_unknown, a.all_stopwords_zero, a.quiet
    (True, False, False, True)
    """
    parser.add_argument(
        "--ignore-unknown",
        action="store_true",
        help="drop predictions for question ids that are not in the targets, with a warning (default: error)",
    )
    parser.add_argument(
        "--only-predicted",
        action="store_true",
        help=f"leave target questions without predictions out of the mean (default: {unanswered})",
    )
    parser.add_argument(
        "--all-stopwords-zero",
        action="store_true",
        help="WordNet: two all-stopword strings do not match (default: they do, as published)",
    )
    add_quiet_option(parser, quiet)


def add_quiet_option(parser: argparse.ArgumentParser, what: str = "progress reports") -> None:
    """``--quiet`` (``args.quiet``): no progress reports on stderr (``what`` says what it silences).

    ``--no-progress`` is accepted too, without a line in ``--help``.

    >>> p = argparse.ArgumentParser()
    >>> add_quiet_option(p)
    >>> p.parse_args(["--no-progress"]).quiet, p.parse_args([]).quiet
    (True, False)
    """
    parser.add_argument(
        "--quiet",
        action="store_true",
        help=f"no {what} on stderr (default: progress as a bar on a terminal, else one line every "
        f"{LOG_INTERVAL:g} s of a long run)",
    )
    parser.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)


def add_per_question_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--per-question FILE`` (``args.per_question``, default None) and ``--overwrite`` to replace it.

    ``what`` says what the file holds; the help adds that it is never written over an input file.

    >>> p = argparse.ArgumentParser()
    >>> add_per_question_option(p, "per-question scores as JSONL")
    >>> a = p.parse_args(["--per-question", "q.jsonl", "--force"])
    >>> a.per_question, a.overwrite, p.parse_args([]).per_question
    ('q.jsonl', True, None)
    """
    parser.add_argument(
        "--per-question",
        metavar="FILE",
        default=None,
        help=f"write {what} (never over an input file; default: no such file)",
    )
    add_overwrite_option(parser, "let --per-question replace an existing file")


def add_max_answers_option(parser: argparse.ArgumentParser) -> None:
    """``--max-answers N`` (``args.max_answers``): the cap on one question's answers, default :data:`DEFAULT_MAX_ANSWERS`.

    >>> p = argparse.ArgumentParser()
    >>> add_max_answers_option(p)
    >>> p.parse_args([]).max_answers, p.parse_args(["--max-answers", "2000"]).max_answers
    (500, 2000)
    """
    parser.add_argument(
        "--max-answers",
        type=int_at_least(1),
        default=DEFAULT_MAX_ANSWERS,
        metavar="N",
        help=f"refuse a question with more than N answers in a predictions file (default {DEFAULT_MAX_ANSWERS}; "
        "memory and time grow with it)",
    )


class _NoCache(argparse.Action):
    """Turns the caches off as soon as the flag is read, before any command runs."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from .io.cache_files import disable_caching

        disable_caching()
        setattr(namespace, self.dest, True)


def add_no_cache_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--no-cache``: neither read nor write ``what`` in the user's cache (:mod:`protoqa_core.io.cache_files`).

    >>> import os
    >>> from protoqa_core.io.cache_files import NO_CACHE_ENV
    >>> before = os.environ.pop(NO_CACHE_ENV, None)
    >>> p = argparse.ArgumentParser()
    >>> add_no_cache_option(p, "automatic clusters")
    >>> p.parse_args(["--no-cache"]).no_cache, os.environ[NO_CACHE_ENV]
    (True, '1')
    >>> _ = os.environ.pop(NO_CACHE_ENV) if before is None else os.environ.update({NO_CACHE_ENV: before})
    """
    parser.add_argument(
        "--no-cache",
        action=_NoCache,
        nargs=0,
        default=False,
        help=f"neither read nor write {what} in the user's cache ($PROTOQA_CACHE_DIR, else ~/.cache/protoqa_eval; "
        "the same as PROTOQA_NO_CACHE=1)",
    )

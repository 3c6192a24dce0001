"""``protoqa-eval``'s metric sub-commands (:data:`COMMANDS`): ``evaluate`` (the default: ``protoqa-eval
TARGETS PREDICTIONS``, the reference evaluator's form included), ``compare`` and ``prepare``.

The installed command is :func:`protoqa_integrations.cli.main`, one parser for these and the sub-commands of
generation and leaderboards (``python -m protoqa_metric`` runs it); :func:`main` runs these alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

from protoqa_core.cli import (
    Subcommand,
    build_command_parser,
    check_output_file,
    finite_json,
    int_at_least,
    run_subcommands,
    with_default_command,
    write_output_file,
)
from protoqa_core.cli_options import (
    add_input_options,
    add_max_answers_option,
    add_no_cache_option,
    add_per_question_option,
)
from protoqa_core.io.files import DataFormatError, ProtoQAWarning
from protoqa_core.similarity import SIMILARITIES, similarity_options
from protoqa_core.wordnet.files import WORDNET_DIR_ENV, WordNetUnavailableError

from . import __version__

if TYPE_CHECKING:
    from .metric import ProtoQA
    from .metric_set import EvaluationResult
    from .scoring import QuestionScore

# The scoring modules (and numpy) are imported by the commands that score, not to build the
# parser: ``protoqa-eval --help`` and a usage error import none of them.

__all__ = ["main", "build_parser", "parse_args", "COMMANDS", "DESCRIPTION"]


def _similarity_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if name not in SIMILARITIES:
            raise argparse.ArgumentTypeError(f"unknown similarity {name!r} (choose from {', '.join(SIMILARITIES)})")
    return names


_METRICS_HELP = "'standard' (default: the ten metrics of the reference evaluator, which scores one predictions file)"

_FIELD_HELP = "for {'model_answers': ...} files: which mapping to read (default: model_ranked_answers if present)"

_WORDNET_DIR_HELP = (
    f"folder with a WordNet 3.0 database (index.noun, data.noun, ...), read in place "
    f"(default: ${WORDNET_DIR_ENV}, else a system or NLTK copy)"
)


def _add_evaluate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("targets", metavar="TARGETS", help="targets JSONL (ProtoQA/CFC format, e.g. dev.crowdsourced.jsonl)")
    p.add_argument(
        "predictions",
        metavar="PREDICTIONS",
        help="predictions: JSONL {id: [answers]} lines, a JSON object, or {'model_answers': ...}",
    )
    p.add_argument(
        "--similarity",
        "--similarity_function",
        dest="similarity",
        action="append",
        type=_similarity_list,
        metavar="NAME[,NAME]",
        help="exact_match, wordnet (default), wordnet_wup, lcs, longest_common_substring, jaro_winkler "
        "or roberta (the ProtoQA paper's RoBERTa similarity); repeat or comma-separate for several",
    )
    p.add_argument(
        "--metrics",
        default="standard",
        help=f"{_METRICS_HELP}, 'paper' (the seven the ProtoQA paper reports, which score-generated and "
        "leaderboard show to compare models) or comma-separated names such as max_answers@10",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per similarity (scores and signature)")
    add_per_question_option(p, "per-question scores and cluster assignments as JSONL")
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="exit 0 when no question can be scored (scores 0 over n=0); by default that is an error",
    )
    p.add_argument("--field", help=_FIELD_HELP)
    add_input_options(p, unanswered="score each as 0 on every ProtoQA metric")
    add_max_answers_option(p)
    p.add_argument("--wordnet-dir", help=_WORDNET_DIR_HELP)
    _add_similarity_options(p)
    p.add_argument("--version", action="version", version=f"protoqa-eval {__version__}")


def _add_similarity_options(p: argparse.ArgumentParser) -> None:
    """One flag per option the similarities declare (``--length-scale`` for ``length_scale``)."""
    for option, owners in similarity_options().values():
        p.add_argument(
            option.flag,
            type=option.parse(),
            default=option.default,
            metavar=option.metavar,
            help=f"{' or '.join(owners)} similarity: {option.help}",
        )
    add_no_cache_option(p, "the roberta similarity's cluster-string vectors")


def _add_compare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("targets", metavar="TARGETS", help="targets JSONL")
    p.add_argument("predictions_a", metavar="PREDICTIONS_A", help="system A's predictions")
    p.add_argument("predictions_b", metavar="PREDICTIONS_B", help="system B's predictions")
    p.add_argument(
        "--similarity",
        default="wordnet",
        choices=list(SIMILARITIES),
        metavar="NAME",
        help=f"one of {', '.join(SIMILARITIES)} (default: wordnet)",
    )
    p.add_argument("--metrics", default="standard", help=f"{_METRICS_HELP}, 'paper' (seven) or metric names")
    p.add_argument("--resamples", type=int_at_least(1, 10**7), default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int_at_least(0), default=12345, help="bootstrap seed")
    p.add_argument("--field", help=_FIELD_HELP)
    p.add_argument(
        "--ignore-unknown",
        action="store_true",
        help="drop predictions for question ids that are not in the targets, with a warning (default: error)",
    )
    p.add_argument(
        "--all-stopwords-zero",
        action="store_true",
        help="WordNet: two all-stopword strings do not match (default: they do, as published)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_max_answers_option(p)
    _add_similarity_options(p)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the metric's sub-commands (:func:`parse_args` adds the default ``evaluate``).

    >>> build_parser().parse_args(["compare", "t", "a", "b"]).resamples
    1000
    """
    return build_command_parser("protoqa-eval", DESCRIPTION, COMMANDS, __version__)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse a ``protoqa-eval`` command line; without a sub-command, ``evaluate`` is meant.

    >>> parse_args(["t.jsonl", "p.json", "--json"]).json
    True
    >>> parse_args(["evaluate", "t.jsonl", "p.json"]).command
    'evaluate'
    """
    return build_parser().parse_args(with_default_command(argv, COMMANDS, "evaluate"))


def _per_question_record(sim: str, qid: str, by_metric: dict[str, QuestionScore]) -> dict:
    return {
        "id": qid,
        "similarity": sim,
        "scores": {m: qs.score for m, qs in by_metric.items()},
        "details": {
            m: {
                "raw_score": qs.raw_score,
                "oracle_score": qs.oracle_score,
                "predictions": list(qs.predictions),
                "assigned_cluster": list(qs.assignment),
            }
            for m, qs in by_metric.items()
        },
    }


def _ignore(qid: str, by_metric: dict[str, QuestionScore]) -> None:
    """The sink of questions whose details nobody reads: the result keeps their scores only."""


def _check_option_flags(similarities: Sequence[str], args: argparse.Namespace) -> None:
    """ValueError naming a flag given that none of ``similarities`` declares, and those that do."""
    for name, (option, owners) in similarity_options().items():
        if not option.shared and getattr(args, name) is not None and not set(owners) & set(similarities):
            raise ValueError(f"{option.flag} is used by --similarity {' or '.join(owners)} only")


def _similarity_options(similarity: str, args: argparse.Namespace) -> dict:
    """The ``ProtoQA`` options given on the command line that ``similarity`` declares."""
    return {o.name: getattr(args, o.name) for o in SIMILARITIES[similarity].options}


def _compare(args: argparse.Namespace) -> int:
    from protoqa_core.io.question_index import QuestionIndex
    from protoqa_core.significance import compare_paired

    from .metric import ProtoQA

    try:
        _check_option_flags([args.similarity], args)
        protoqa = ProtoQA(
            args.similarity,
            args.metrics,
            all_stopword_match=not args.all_stopwords_zero,
            **_similarity_options(args.similarity, args),
        )
        # Each file is read once into an on-disk index; one question at a time is held.
        with QuestionIndex(
            args.targets, [args.predictions_a, args.predictions_b], args.field, max_answers=args.max_answers
        ) as index:
            for run in (0, 1):
                index.reconcile(run, ignore_unknown=args.ignore_unknown)  # both files' ids before any scoring
            runs = [
                protoqa.evaluate_index(index, run, ignore_unknown=args.ignore_unknown, on_question=_ignore)
                for run in (0, 1)
            ]
    except (DataFormatError, FileNotFoundError, WordNetUnavailableError, ValueError) as exc:
        print(f"protoqa-eval compare: error: {exc}", file=sys.stderr)
        return 2
    a, b = runs
    if not a.num_questions:
        print(
            f"protoqa-eval compare: error: {args.targets}: no question to compare on "
            "(no question has answer clusters with a count above 0)",
            file=sys.stderr,
        )
        return 2
    table = {}
    for metric in a.scores:
        r = compare_paired(
            dict(zip(a.question_ids, a.question_scores[metric], strict=True)),
            dict(zip(b.question_ids, b.question_scores[metric], strict=True)),
            resamples=args.resamples,
            seed=args.seed,
        )
        table[metric] = {
            "a": r.mean_a,
            "b": r.mean_b,
            "difference": r.difference.mean,
            "ci_low": r.difference.low,
            "ci_high": r.difference.high,
            "p_value": r.p_value,
        }
    signature = f"{a.signature}|bootstrap:{args.resamples}|seed:{args.seed}"
    if args.json:
        document = {"a": args.predictions_a, "b": args.predictions_b, "metrics": table, "signature": signature}
        print(json.dumps(finite_json(document), allow_nan=False))
        return 0
    width = max(len("metric"), *(len(m) for m in table))
    print(f"A: {args.predictions_a}\nB: {args.predictions_b}\n")
    print(f"{'metric'.ljust(width)}  {'A':>7}  {'B':>7}  {'A - B':>7}  {'95% CI':>17}  {'p':>6}")
    for metric, row in table.items():
        ci = f"[{row['ci_low']:+.4f}, {row['ci_high']:+.4f}]"
        print(
            f"{metric.ljust(width)}  {row['a']:7.4f}  {row['b']:7.4f}  {row['difference']:+7.4f}  {ci:>17}  {row['p_value']:6.3f}"
        )
    print(f"\n{signature}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the metric's sub-commands (:data:`COMMANDS`); returns the exit status (0 ok, 2 bad input, output or set-up)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    return run_subcommands(
        "protoqa-eval",
        DESCRIPTION,
        COMMANDS,
        args_list,
        version=__version__,
        default="evaluate",
        always_show=(ProtoQAWarning,),
    )


def _find_wordnet_if_used(similarities: Sequence[str], wordnet_dir: Optional[str]) -> None:
    """Find WordNet now, before any scoring, when a similarity declares that it reads it (it is imported only then)."""
    if any(s in SIMILARITIES and SIMILARITIES[s].uses_wordnet for s in similarities):
        from protoqa_core.wordnet.lookup import open_wordnet

        open_wordnet(wordnet_dir)


def _configured(similarities: Sequence[str], args: argparse.Namespace) -> dict[str, ProtoQA]:
    """Each similarity's :class:`~protoqa_metric.metric.ProtoQA`, and WordNet found when one reads it, so that
    a bad option, metric, encoder or WordNet fails before any file is read."""
    from .metric import ProtoQA
    from .metric_set import metric_specs

    _check_option_flags(similarities, args)
    metric_specs(args.metrics)  # an unknown metric fails before ProtoQA(...) loads an encoder
    configured = {
        sim: ProtoQA(
            sim, args.metrics, all_stopword_match=not args.all_stopwords_zero, **_similarity_options(sim, args)
        )
        for sim in similarities
    }
    _find_wordnet_if_used(similarities, args.wordnet_dir)
    return configured


def _evaluate(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:  # the index is removed however the command ends
        return _evaluate_in(args, stack)


def _evaluate_in(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    from protoqa_core.io.question_index import QuestionIndex

    from .metric_set import format_table

    similarities = [name for group in (args.similarity or [["wordnet"]]) for name in group]
    similarities = list(dict.fromkeys(similarities))
    try:
        configured = _configured(similarities, args)
        per_question = (
            check_output_file(args.per_question, [args.targets, args.predictions], args.overwrite)
            if args.per_question
            else None
        )
        # Each file is read once into an on-disk index (docs/protoqa-metric.md: the memory bound).
        index = stack.enter_context(
            QuestionIndex(args.targets, [args.predictions], args.field, max_answers=args.max_answers)
        )
        # The gate names the predictions file, before any scoring; the library repeats it per similarity.
        index.reconcile(0, ignore_unknown=args.ignore_unknown)
        to_score = index.count(0, only_predicted=args.only_predicted)
        results: dict[str, EvaluationResult] = {}

        def score(sink) -> None:
            for sim in similarities:
                on_question = _ignore if sink is None else lambda qid, by_metric, sim=sim: sink(sim, qid, by_metric)
                results[sim] = configured[sim].evaluate_index(
                    index,
                    only_predicted=args.only_predicted,
                    ignore_unknown=args.ignore_unknown,
                    progress=not args.quiet,
                    on_question=on_question,
                    keep_question_scores=False,
                )

        if per_question is not None and to_score:
            # Each question's record is written as soon as it is scored, into a temporary
            # file that replaces the output only when every similarity has scored.
            def write(fh) -> None:
                def sink(sim: str, qid: str, by_metric: dict[str, QuestionScore]) -> None:
                    record = _per_question_record(sim, qid, by_metric)
                    fh.write(json.dumps(finite_json(record), allow_nan=False) + "\n")

                score(sink)

            write_output_file(per_question, write)
        else:
            score(None)
    except (DataFormatError, FileNotFoundError, WordNetUnavailableError, ValueError) as exc:
        print(f"protoqa-eval: error: {exc}", file=sys.stderr)
        return 2
    if not args.allow_empty and not next(iter(results.values())).num_questions:
        why = f"no {'predicted ' if args.only_predicted else ''}question has answer clusters with a count above 0"
        print(
            f"protoqa-eval: error: {args.targets}: nothing to score: {why} (pass --allow-empty to accept this)",
            file=sys.stderr,
        )
        return 2
    if per_question is not None and not to_score:
        write_output_file(per_question, lambda fh: None)
    if args.json:
        for result in results.values():
            print(json.dumps(finite_json(result.as_dict()), allow_nan=False))
    else:
        print(format_table(results))
    return 0


def _add_prepare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--wordnet-dir", help=_WORDNET_DIR_HELP)


def _prepare(args: argparse.Namespace) -> int:
    from protoqa_core.wordnet.walk_file import prepare_wordnet  # the walk tables' code, only for this command

    print("protoqa-eval prepare: checking WordNet's cache files (a first build takes about 10 s)", file=sys.stderr)
    try:
        path = prepare_wordnet(args.wordnet_dir)
    except (WordNetUnavailableError, OSError) as exc:
        print(f"protoqa-eval prepare: error: {exc}", file=sys.stderr)
        return 2
    print(f"WordNet cache files ready in {path.parent}")
    return 0


DESCRIPTION = (
    "Score ranked answer lists against ProtoQA/CFC answer clusters (Max Answers@k, Max Incorrect@k, set "
    "intersection). Without a command, 'protoqa-eval TARGETS PREDICTIONS ...' is 'protoqa-eval evaluate "
    "TARGETS PREDICTIONS ...'."
)
"""What ``protoqa-eval --help`` says first."""

COMMANDS: dict[str, Subcommand] = {
    c.name: c
    for c in (
        # The default form has the program's own name in usage and error lines.
        Subcommand(
            "evaluate",
            "score predictions (the default command)",
            "Score ranked answer lists against ProtoQA/CFC answer clusters "
            "(Max Answers@k, Max Incorrect@k, set intersection).",
            _add_evaluate_arguments,
            _evaluate,
            prog="protoqa-eval",
            examples=(
                "protoqa-eval ../shared/data/protoqa/dev.crowdsourced.jsonl ../shared/data/protoqa/dev.predictions.gpt2finetuned.json",
                "protoqa-eval evaluate ../shared/data/protoqa/dev.crowdsourced.jsonl ../shared/data/protoqa/dev.predictions.gpt2finetuned.json "
                "--similarity exact_match,wordnet --json",
            ),
        ),
        Subcommand(
            "compare",
            "compare two systems with a paired bootstrap test",
            "Compare two systems on the same questions: each score, the difference (A - B), "
            "its 95% bootstrap confidence interval and a paired bootstrap p-value, per metric.",
            _add_compare_arguments,
            _compare,
            examples=(
                "protoqa-eval compare ../shared/data/protoqa/dev.crowdsourced.jsonl ../shared/data/protoqa/dev.predictions.gpt2finetuned.json "
                "../shared/data/protoqa/dev.predictions.human.jsonl",
            ),
        ),
        Subcommand(
            "prepare",
            "build WordNet's cache files now (the Wu-Palmer walk file)",
            "Find WordNet and build its cache files (the lemma tables and the Wu-Palmer walk file), "
            "once per installation; runs without them compute what they need themselves.",
            _add_prepare_arguments,
            _prepare,
            examples=("protoqa-eval prepare",),
        ),
    )
}
"""The sub-commands of the metric; without one, ``evaluate`` is meant (``protoqa-eval TARGETS PREDICTIONS``)."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``protoqa-eval leaderboard`` and ``protoqa-eval convert``: thin wiring of :mod:`.board` and :mod:`protoqa_integrations.harnesses.outputs`.

protoqa-eval leaderboard TARGETS NAME=FILE [NAME=FILE ...] [--similarity wordnet]
             [--metrics protoqa,probeval] [--only-common] [--json | --markdown | --csv]
             [--plot FILE.png] [--model-index DIR] [--question-scores] [--resamples 1000] [--seed 12345] [--overwrite]
protoqa-eval convert HARNESS_OUTPUT -o ANSWERS.json [--overwrite]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from protoqa_core.io.cli import Subcommand, add_overwrite_option, check_output_file, int_at_least, write_output_file
from protoqa_core.significance import DEFAULT_RESAMPLES, DEFAULT_SEED

__all__ = ["COMMANDS", "add_leaderboard_arguments", "add_convert_arguments"]


def _metric_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names or set(names) - {"protoqa", "probeval"}:
        raise argparse.ArgumentTypeError(f"expected protoqa, probeval or both, got {text!r}")
    return names


def add_leaderboard_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``protoqa-eval leaderboard``.

    >>> from protoqa_core.io.cli import OneLineParser
    >>> p = OneLineParser()
    >>> add_leaderboard_arguments(p)
    >>> p.parse_args(["t.jsonl", "a=a.json", "b=b.json"]).metrics
    ['protoqa', 'probeval']
    """
    p.add_argument("targets", metavar="TARGETS", help="targets JSONL with the questions (and their clusters)")
    p.add_argument("systems", nargs="+", metavar="NAME=FILE", help="a system and its file (at most 100 systems)")
    p.add_argument("--similarity", default="wordnet", help="similarity of the ProtoQA metrics (default wordnet)")
    p.add_argument(
        "--metrics",
        type=_metric_list,
        default=["protoqa", "probeval"],
        help="protoqa, probeval or both (default); ProtoQA metrics need targets with clusters",
    )
    p.add_argument("--only-common", action="store_true", help="rank on the questions every system answers")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument(
        "--question-scores", action="store_true", help="with --json: the question ids and per-question scores"
    )
    out.add_argument("--markdown", action="store_true", help="print a Markdown table")
    out.add_argument("--csv", action="store_true", help="print CSV, one row per system and metric")
    p.add_argument("--plot", metavar="FILE.png", help="draw every metric's scores and intervals into a PNG")
    p.add_argument("--model-index", metavar="DIR", help="write NAME.yaml, a model card's model-index, per system")
    p.add_argument("--dataset-type", default="", help="the data set's Hub id in --model-index (default: targets file)")
    p.add_argument("--dataset-name", default="", help="the data set's name in --model-index (default: its type)")
    p.add_argument("--split", default="", help="the split named in --model-index (default: none named)")
    p.add_argument("--resamples", type=int_at_least(1), default=DEFAULT_RESAMPLES, help="at most 10,000")
    p.add_argument("--seed", type=int_at_least(0), default=DEFAULT_SEED, help="bootstrap seed")
    add_overwrite_option(p, "replace existing --plot and --model-index files")


def _run_leaderboard(args: argparse.Namespace) -> int:
    from protoqa_core.io.readers import read_targets
    from protoqa_integrations.harnesses.outputs import FORMATS
    from protoqa_integrations.leaderboard.board import build_leaderboard, parse_system_arguments, read_system
    from protoqa_integrations.leaderboard.report import (
        LeaderboardError,
        format_table,
        model_index,
        plot_leaderboard,
        to_csv,
        to_markdown,
    )

    pairs = parse_system_arguments(args.systems)
    names = [n for n, _ in pairs]
    inputs = [args.targets] + [str(p) for _, p in pairs]
    plot = check_output_file(args.plot, inputs, args.overwrite) if args.plot else None
    index_files = {}
    if args.model_index:
        folder = Path(args.model_index)
        if folder.exists() and not folder.is_dir():
            raise LeaderboardError(f"{folder}: --model-index needs a folder")
        folder.mkdir(parents=True, exist_ok=True)
        index_files = {n: check_output_file(str(folder / f"{n}.yaml"), inputs, args.overwrite) for n in names}
    start = time.perf_counter()
    targets = read_targets(args.targets)
    systems = []
    for name, path in pairs:
        system = read_system(name, path)
        print(f"{name}: {path} ({FORMATS[system.format]})", file=sys.stderr)
        systems.append(system)
    board = build_leaderboard(
        targets,
        systems,
        metrics=args.metrics,
        similarity=args.similarity,
        only_common=args.only_common,
        resamples=args.resamples,
        seed=args.seed,
    )
    if len(board.questions) < len(targets) and not board.dropped:
        print(
            f"note: ranking on the {len(board.questions)} of {len(targets)} target questions that the systems answer",
            file=sys.stderr,
        )
    if board.dropped:
        print(
            f"--only-common: ranking on the {len(board.questions)} questions every system answers; "
            f"{len(board.dropped)} question id(s) left out",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(board.as_dict(per_question=args.question_scores), ensure_ascii=False, allow_nan=False))
    elif args.markdown:
        print(to_markdown(board), end="")
    elif args.csv:
        print(to_csv(board), end="")
    else:
        print(format_table(board))
    if plot is not None:
        plot_leaderboard(board, plot)
    if index_files:
        dataset = args.dataset_type or Path(args.targets).name
        blocks = model_index(board, dataset, args.dataset_name or dataset, args.split)
        for name, path in index_files.items():
            write_output_file(path, _writer(blocks[name]))
    print(f"{len(systems)} systems scored in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


def _writer(text: str) -> Callable[[Any], None]:
    return lambda fh: fh.write(text)


def add_convert_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``protoqa-eval convert``.

    >>> from protoqa_core.io.cli import OneLineParser
    >>> p = OneLineParser()
    >>> add_convert_arguments(p)
    >>> p.parse_args(["samples.jsonl", "-o", "a.json"]).output
    'a.json'
    """
    p.add_argument("source", help="lm-eval samples_<task>_<time>.jsonl or lighteval details_<task>|<shots>_*.parquet")
    p.add_argument("-o", "--output", required=True, help="answers file to write (JSON)")
    add_overwrite_option(p, "replace an existing output file")


def _run_convert(args: argparse.Namespace) -> int:
    from protoqa_core.io.records import Question
    from protoqa_integrations.generation.answers_file import answers_document
    from protoqa_integrations.harnesses.outputs import read_harness_output

    output = check_output_file(args.output, [args.source], args.overwrite)
    read = read_harness_output(args.source)
    questions = [Question(qid, "", ()) for qid in read.samples]
    document = answers_document(questions, read.samples, {}, read.generation)
    write_output_file(output, lambda fh: json.dump(document, fh, ensure_ascii=False))
    print(
        f"{args.source}: {len(questions)} questions, {read.generation['num_samples']} samples each at most "
        f"({read.generation['harness']}, task {read.generation['task'] or 'unknown'}) -> {output}",
        file=sys.stderr,
    )
    return 0


COMMANDS: dict[str, Subcommand] = {
    c.name: c
    for c in (
        Subcommand(
            "leaderboard",
            "rank several systems: intervals, paired tests, rank ranges",
            "Rank several systems on one set of questions: ProtoQA metrics and ProbEval KL with 95% bootstrap "
            "intervals (the same resampled questions for every system), Holm-corrected paired bootstrap tests "
            "between every pair, rank ranges. Each FILE is an answers file, a predictions file, lm-eval "
            "--log_samples output or lighteval details; the format is detected.",
            add_leaderboard_arguments,
            _run_leaderboard,
        ),
        Subcommand(
            "convert",
            "write lm-eval or lighteval outputs as an answers file",
            "Write lm-eval --log_samples output or lighteval details as an answers file (the format of "
            "protoqa-eval generate, read by score-generated, leaderboard and probeval), keeping the sampling "
            "settings the harness recorded.",
            add_convert_arguments,
            _run_convert,
        ),
    )
}
"""The sub-commands of several systems, for :func:`protoqa_integrations.cli.main`."""

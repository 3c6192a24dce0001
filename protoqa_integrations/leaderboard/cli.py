"""``protoqa-eval leaderboard`` and ``protoqa-eval convert``: thin wiring of :mod:`.board` and :mod:`protoqa_integrations.harnesses.outputs`."""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Optional

from protoqa_core.cli import (
    Subcommand,
    add_overwrite_option,
    check_output_file,
    int_at_least,
    write_output_file,
)
from protoqa_core.cli_options import add_max_answers_option, add_no_cache_option, add_quiet_option
from protoqa_integrations.generation.provenance import parse_accepted

__all__ = ["COMMANDS", "add_leaderboard_arguments", "add_convert_arguments"]


def _metric_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names or set(names) - {"protoqa", "probeval"}:
        raise argparse.ArgumentTypeError(f"expected protoqa, probeval or both, got {text!r}")
    return names


def add_leaderboard_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``protoqa-eval leaderboard``.

    >>> from protoqa_core.cli import OneLineParser
    >>> p = OneLineParser()
    >>> add_leaderboard_arguments(p)
    >>> p.parse_args(["t.jsonl", "a=a.json", "b=b.json"]).metrics
    ['protoqa', 'probeval']
    """
    from protoqa_core.significance import DEFAULT_RESAMPLES, DEFAULT_SEED  # numpy: only to build this command

    p.add_argument("targets", metavar="TARGETS", help="targets JSONL with the questions (and their clusters)")
    p.add_argument("systems", nargs="+", metavar="NAME=FILE", help="a system and its file (at most 100 systems)")
    p.add_argument("--similarity", default="wordnet", help="similarity of the ProtoQA metrics (default wordnet)")
    p.add_argument(
        "--metrics",
        type=_metric_list,
        default=["protoqa", "probeval"],
        help="protoqa (the seven metrics of the ProtoQA paper, as score-generated shows them), probeval or both "
        "(default); ProtoQA metrics need targets with clusters",
    )
    p.add_argument("--only-common", action="store_true", help="rank on the questions every system answers")
    p.add_argument(
        "--accept-mismatch",
        metavar="FIELD[,FIELD]",
        type=parse_accepted,
        default=[],
        help="rank systems whose recorded provenance differs in these fields (dataset, split, questions, samples, "
        "temperature, top_p, max_tokens, prompt, or all); every output and the signature then say so "
        "(default: none, a difference stops the run with status 2)",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument(
        "--question-scores", action="store_true", help="with --json: the question ids and per-question scores"
    )
    out.add_argument("--markdown", action="store_true", help="print a Markdown table")
    out.add_argument("--csv", action="store_true", help="print CSV, one row per system and metric")
    p.add_argument(
        "--plot", metavar="FILE.png", help="draw every metric's scores and intervals into a PNG (default: no plot)"
    )
    p.add_argument(
        "--model-index",
        metavar="DIR",
        help="write NAME.yaml, a model card's model-index, per system (default: none written)",
    )
    p.add_argument(
        "--dataset-type",
        metavar="HUB_ID",
        default="",
        help="the data set's id on the Hugging Face Hub, as --model-index records it, e.g. OWNER/protoqa after "
        "python -m protoqa_dataset upload (required with --model-index; default: none)",
    )
    p.add_argument(
        "--dataset-name",
        default="",
        help="the data set's name in --model-index and the --plot title (default: the name of a known ProtoQA "
        "or CFC file, recognized by its checksum, else the targets file's name)",
    )
    p.add_argument(
        "--split",
        default="",
        help="the split named in --model-index and the --plot title (default: that of a known file, else none)",
    )
    p.add_argument(
        "--resamples", type=int_at_least(1), default=DEFAULT_RESAMPLES, help="bootstrap resamples, at most 10,000"
    )
    p.add_argument(
        "--seed", type=int_at_least(0), default=DEFAULT_SEED, help="bootstrap seed (the clustering's is --cluster-seed)"
    )
    add_no_cache_option(p, "ProbEval's automatic clusters and roberta's cluster-string vectors")
    p.add_argument(
        "--cluster-seed",
        type=int_at_least(0, 2**32 - 1),
        default=0,
        help="seed of the automatic clustering for targets without clusters, the first of the five scored (default 0)",
    )
    add_max_answers_option(p)
    add_overwrite_option(p, "replace existing --plot and --model-index files")
    add_quiet_option(p)


def _run_leaderboard(args: argparse.Namespace) -> int:
    from cfc_probeval import ProbEval
    from cfc_probeval.clustered import read_questions_and_label
    from protoqa_integrations.generation.provenance import data_of_checksum
    from protoqa_integrations.harnesses.outputs import FORMATS
    from protoqa_integrations.leaderboard.board import build_leaderboard, parse_system_arguments
    from protoqa_integrations.leaderboard.report import check_hub_id, model_index_files
    from protoqa_integrations.leaderboard.store import SystemIndex

    pairs = parse_system_arguments(args.systems)
    names = [n for n, _ in pairs]
    inputs = [args.targets] + [str(p) for _, p in pairs]
    index_files: dict[str, Path] = {}
    if args.model_index:
        check_hub_id(args.dataset_type)
        index_files = model_index_files(args.model_index, names, inputs, args.overwrite)
    plot = check_output_file(args.plot, inputs, args.overwrite) if args.plot else None
    start = time.perf_counter()
    targets, digest, clustered = read_questions_and_label(args.targets)
    known = data_of_checksum(digest)
    # One system file at a time: its answers to the targets go to an on-disk index, and only its
    # name and provenance stay in memory until it is scored.
    with SystemIndex(targets) as index:
        systems = []
        for name, path in pairs:
            system = index.add(name, path, max_answers=args.max_answers)
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
            probeval=ProbEval("auto", seed=args.cluster_seed) if "probeval" in args.metrics else None,
            targets_data=known,
            targets_label=clustered,
            accept=args.accept_mismatch,
            progress=not args.quiet,
            index=index,
        )
    _publish(args, board, len(targets), known, plot, index_files)
    print(f"{len(systems)} systems scored in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


def _publish(
    args: argparse.Namespace,
    board: Any,
    num_targets: int,
    known: Optional[tuple[str, str]],
    plot: Optional[Path],
    index_files: dict[str, Path],
) -> None:
    """The board's warnings, the board on stdout, then ``--plot`` and ``--model-index``, naming the data set
    ``known`` (a known file's config and split) or the options give."""
    from protoqa_core.io.files import ProtoQAWarning
    from protoqa_dataset.sources import SOURCES
    from protoqa_integrations.leaderboard.report import (
        format_table,
        leaderboard_warnings,
        model_index,
        plot_leaderboard,
        to_csv,
        to_markdown,
    )

    for note in leaderboard_warnings(board, args.targets, num_targets, known, board.systems):
        # ``protoqa-eval leaderboard: warning: ...``, as every command prints them
        warnings.warn(note, ProtoQAWarning, stacklevel=1)
    if args.json:
        print(json.dumps(board.as_dict(per_question=args.question_scores), ensure_ascii=False, allow_nan=False))
    elif args.markdown:
        print(to_markdown(board), end="")
    elif args.csv:
        print(to_csv(board), end="")
    else:
        print(format_table(board))
    if plot is None and not index_files:
        return
    config, split = known or ("", "")
    name = args.dataset_name or (SOURCES[config][split].name if known else "")
    split = args.split or split
    # Every text is made before any file is written, and the files are written together.
    blocks = model_index(board, args.dataset_type, name or args.dataset_type, split, config) if index_files else {}
    if plot is not None:
        shown = f"{name or Path(args.targets).name}{f' ({split})' if split else ''}"
        plot_leaderboard(
            board, plot, f"{shown}: {len(board.questions)} questions, {board.level:.0%} bootstrap intervals"
        )
    for entry, path in index_files.items():
        write_output_file(path, functools.partial(_write_text, blocks[entry]))
    if index_files:
        named = ", ".join(f"{k} {v}" for k, v in (("config", config), ("split", split)) if v)
        print(
            f"--model-index: data set {args.dataset_type} ({name or args.dataset_type}{'; ' + named if named else ''}) "
            f"in {len(index_files)} file(s) under {args.model_index}",
            file=sys.stderr,
        )


def _write_text(text: str, fh: Any) -> None:
    fh.write(text)


def add_convert_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``protoqa-eval convert``.

    >>> from protoqa_core.cli import OneLineParser
    >>> p = OneLineParser()
    >>> add_convert_arguments(p)
    >>> p.parse_args(["samples.jsonl", "-o", "a.json"]).output
    'a.json'
    """
    p.add_argument(
        "source",
        help="lm-eval samples_<task>_<time>.jsonl, lighteval details_<task>|<shots>_*.parquet or an Inspect log (.eval, .json)",
    )
    p.add_argument("-o", "--output", required=True, help="answers file to write (JSON)")
    add_max_answers_option(p)
    add_overwrite_option(p, "replace an existing output file")


def _run_convert(args: argparse.Namespace) -> int:
    from protoqa_core.io.records import Question
    from protoqa_integrations.generation.answers_file import answers_document
    from protoqa_integrations.harnesses.outputs import read_harness_output

    output = check_output_file(args.output, [args.source], args.overwrite)
    read = read_harness_output(args.source, max_answers=args.max_answers)
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
            "between every pair, rank ranges. Under a seeded automatic clustering (targets without clusters) "
            "ProbEval's KL is the mean over five clusterings (--cluster-seed and the next four) and each resample "
            "redraws one, so its intervals and ranks hold the seed's share (clustering_draws:5). Each FILE is an answers file, a predictions file, lm-eval "
            "--log_samples output, lighteval details or an Inspect log; the format is detected.",
            add_leaderboard_arguments,
            _run_leaderboard,
            examples=(
                "protoqa-eval leaderboard ../shared/data/protoqa/dev.crowdsourced.jsonl finetuned=../shared/data/protoqa/dev.predictions.gpt2finetuned.json "
                "human=../shared/data/protoqa/dev.predictions.human.jsonl --markdown",
                "protoqa-eval leaderboard ../shared/data/protoqa/dev.crowdsourced.jsonl tiny=tiny.answers.json "
                "inspect=logs/run.eval --plot board.png",
            ),
        ),
        Subcommand(
            "convert",
            "write lm-eval, lighteval or Inspect outputs as an answers file",
            "Write lm-eval --log_samples output, lighteval details or an Inspect log as an answers file (the format of "
            "protoqa-eval generate, read by score-generated, leaderboard and probeval), keeping the sampling "
            "settings the harness recorded.",
            add_convert_arguments,
            _run_convert,
            examples=(
                "protoqa-eval convert logs/run.eval -o inspect.answers.json",
                "protoqa-eval convert out/tiny-gpt2/samples_protoqa_2026-01-01T00-00-00.jsonl -o lm-eval.answers.json",
            ),
        ),
    )
}
"""The sub-commands of several systems, for :func:`protoqa_integrations.cli.main`."""

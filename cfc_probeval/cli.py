"""Command line: ``probeval TARGETS PREDICTIONS`` prints the mean KL and its signature; ``probeval compare``
tests two systems, ``probeval cluster`` writes automatic clusters as a targets file (docs/probeval.md).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from protoqa_core import __version__
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
from protoqa_core.cli_options import add_input_options, add_no_cache_option, add_per_question_option
from protoqa_core.io.files import DataFormatError
from protoqa_core.io.predictions import read_prediction_document
from protoqa_core.significance import DEFAULT_RESAMPLES, DEFAULT_SEED

from .checks import check_settings
from .clustered import read_targets_and_label
from .clustering import clustering_options, describe_option
from .defaults import AUTO, DEFAULTS
from .errors import ScoreMeaningWarning
from .inputs import (
    SAMPLE_FIELDS,
    SampleCounts,
    check_recorded_samples,
    drop_unknown_ids,
    read_samples,
    reconcile_sample_ids,
    sample_fields,
)
from .options import SEED, THRESHOLD
from .registry import CLUSTERINGS, MATCHINGS, clustering_choices
from .results import ProbEvalResult

__all__ = ["main", "build_parser", "parse_args", "write_per_question", "COMMANDS", "DESCRIPTION"]

_DESCRIPTION = (
    "ProbEval: KL divergence between the human and the model answer distributions "
    "over answer clusters (lower is better)."
)
_COMPARE_DESCRIPTION = (
    "Compare two systems' ProbEval KL on the same questions, at the same number of samples per question: "
    "each mean, the difference KL(A) - KL(B) (negative favours A), its 95% bootstrap confidence "
    "interval and a paired bootstrap p-value. With a seeded automatic clustering (X-means, G-means from "
    "k-means++ starts) both systems are scored under five clusterings (--cluster-seed and the next four) and each "
    "resample redraws the clustering, so the interval and p-value hold the seed's share."
)


def build_parser() -> argparse.ArgumentParser:
    """The ``probeval`` argument parser, one sub-command of :data:`COMMANDS` each (``evaluate``, ``compare``, ``cluster``).

    Use :func:`parse_args`, which reads arguments without a sub-command as ``evaluate``.

    >>> list(COMMANDS)
    ['evaluate', 'compare', 'cluster']
    >>> build_parser().parse_args(["evaluate", "t.jsonl", "p.json", "--clustering", "human"]).clustering
    'human'
    """
    return build_command_parser("probeval", DESCRIPTION, COMMANDS, __version__)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse a ``probeval`` command line; without a sub-command, ``evaluate`` is meant.

    >>> parse_args(["t.jsonl", "p.json", "--only-predicted"]).only_predicted
    True
    >>> parse_args(["compare", "t.jsonl", "a.json", "b.json"]).resamples
    1000
    """
    return build_parser().parse_args(with_default_command(argv, COMMANDS, "evaluate"))


def _add_evaluate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "targets",
        metavar="TARGETS",
        help="targets JSONL (ProtoQA/CFC format: answers.raw and, when clustered, answers.clusters)",
    )
    parser.add_argument(
        "predictions",
        metavar="PREDICTIONS",
        help="samples: JSONL lines {id: [answers]}, a JSON object {id: [answers]}, "
        'or {"model_answers": {id: [answers]}, ...}',
    )
    _add_method_arguments(parser)
    parser.add_argument(
        "--field",
        choices=SAMPLE_FIELDS,
        default=None,
        help='which field of a {"model_answers": ...} file to read (default model_answers)',
    )
    add_input_options(
        parser,
        unanswered="refuse the file, since a ProbEval score over part of the CFC questions is not "
        "the data set's; with it, the signature's n: names how many were scored",
        quiet="progress reports and the warnings that do not change what the score means",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object (kl, num_questions, signature, ...)")
    add_per_question_option(parser, "every question's clusters, P_G, P_H and matches: .csv/.tsv table or JSONL")
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="exit 0 when no question can be scored (kl is then null); by default that is an error",
    )


def _add_method_arguments(parser: argparse.ArgumentParser) -> None:
    """How ``evaluate`` clusters, embeds and matches: the options of :class:`~cfc_probeval.ProbEval`."""
    parser.add_argument(
        "--clustering",
        choices=clustering_choices(),
        default=AUTO,
        help=f"how the targets' answers are clustered: {AUTO} (default) takes the targets' human clusters when "
        f"they have them, else clusters the raw answers with {DEFAULTS.clustering} "
        f"(k_init {CLUSTERINGS[DEFAULTS.clustering].option('k_init').default}); human, or an automatic clustering, forces one",
    )
    parser.add_argument(
        "--matching",
        choices=MATCHINGS.names(),
        default=DEFAULTS.matching,
        help=f"how samples are matched to clusters (default {DEFAULTS.matching})",
    )
    parser.add_argument(
        "--embedder",
        default=None,
        help="minilm (default, offline), st:MODEL_OR_FOLDER, fasttext:FILE.vec|FILE.bin, char-ngrams",
    )
    parser.add_argument(
        "--model-dir",
        default=None,
        help="folder of local sentence-transformers models (default: $PROBEVAL_MODEL_DIR, else the Hub cache)",
    )
    parser.add_argument(
        "--threshold",
        type=THRESHOLD.parse(),
        default=None,
        help=f"cosine similarity (default {DEFAULTS.cosine_threshold}) or GP probability "
        f"(default {DEFAULTS.gp_threshold}) a match needs",
    )
    _add_clustering_arguments(parser)
    _add_cluster_seed_argument(parser, also="--seed")
    add_no_cache_option(parser, "automatic clusters")


def _add_cluster_seed_argument(
    parser: argparse.ArgumentParser, also: Optional[str] = None, beside_bootstrap: bool = False
) -> None:
    """``--cluster-seed``: the seed of K-means (X-means, G-means) and the GP classifiers, never a bootstrap's."""
    note = f"; {also} is the same option" if also else "; --seed is the bootstrap's" if beside_bootstrap else ""
    parser.add_argument(
        "--cluster-seed",
        *([also] if also else []),
        dest="seed" if also else "cluster_seed",
        type=SEED.parse(),
        default=DEFAULTS.seed,
        help=f"seed of K-means (X-means, G-means) and the GP classifiers (default {DEFAULTS.seed}){note}",
    )


def _add_clustering_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per option the clusterings declare (``--k-init`` for ``k_init``), unset by default."""
    for name, owners in clustering_options().items():
        option = owners[0][1]
        if option.shared:  # a setting of ProbEval as a whole, with a flag of its own
            continue
        parser.add_argument(
            option.flag,
            type=option.parse(),
            choices=option.choices if option.kind is str else None,
            default=None,
            help=describe_option(name),
        )


def _clustering_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The clustering options of the command line, by name (None: not given)."""
    return {name: getattr(args, name) for name, owners in clustering_options().items() if not owners[0][1].shared}


def write_per_question(result: ProbEvalResult, path: Path) -> None:
    """Write per-question details: a flat table for ``.csv``/``.tsv``, else one JSON object per line.

    The file is replaced atomically; NaN or infinite values are written as empty cells / null.
    """
    if path.suffix.lower() in (".csv", ".tsv"):
        rows = [finite_json(row) for row in result.cluster_rows()]

        def write_table(fh) -> None:
            fields = list(rows[0]) if rows else ["question", "kl", "cluster"]
            writer = csv.DictWriter(fh, fieldnames=fields, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
            writer.writeheader()
            writer.writerows(rows)

        write_output_file(path, write_table, newline="")
        return

    def write_lines(fh) -> None:
        for question in result.questions.values():
            fh.write(json.dumps(finite_json(question.as_dict()), ensure_ascii=False, allow_nan=False) + "\n")

    write_output_file(path, write_lines)


def _read_system(path: str, field: Optional[str]) -> tuple[dict[str, SampleCounts], Optional[str]]:
    """A predictions file's samples, read once and checked against its recorded sample count, and the field read
    (which decides where an id's line is, for error messages)."""
    document = read_prediction_document(path)
    samples = read_samples(document, field)
    field = field or next(iter(sample_fields(document)), None)
    check_recorded_samples(document, samples, field)
    return samples, field


def _run(args: argparse.Namespace) -> ProbEvalResult:
    from .probeval import evaluate_probeval

    targets, clustered = read_targets_and_label(args.targets)
    samples, field = _read_system(args.predictions, args.field)
    # The gate names the file and line of an unknown id; the library repeats it and records what it ignored.
    reconcile_sample_ids(samples, targets, path=args.predictions, field=field, ignore_unknown=args.ignore_unknown)
    result = evaluate_probeval(
        targets,
        samples,
        clustering=args.clustering,
        matching=args.matching,
        ignore_unknown=args.ignore_unknown,
        only_sampled=args.only_predicted,
        progress=not args.quiet,
        embedder=args.embedder,
        model_dir=args.model_dir,
        threshold=args.threshold,
        seed=args.seed,
        all_stopword_match=not args.all_stopwords_zero,
        **_clustering_settings(args),
    )
    # The signature names the clustered targets file scored, if it is one.
    return replace(result, signature=f"{result.signature}|{clustered}") if clustered else result


def _add_embedder_arguments(parser: argparse.ArgumentParser) -> None:
    """``--embedder`` and ``--model-dir`` of ``compare`` and ``cluster``, as for ``evaluate``."""
    parser.add_argument("--embedder", default=None, help="as for probeval (default: minilm)")
    parser.add_argument(
        "--model-dir", default=None, help="as for probeval (default: $PROBEVAL_MODEL_DIR, else the Hub cache)"
    )


def _add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("targets", metavar="TARGETS", help="targets JSONL")
    parser.add_argument("predictions_a", metavar="PREDICTIONS_A", help="system A's samples")
    parser.add_argument("predictions_b", metavar="PREDICTIONS_B", help="system B's samples")
    parser.add_argument(
        "--clustering",
        choices=clustering_choices(),
        default=AUTO,
        help="as for probeval (default auto: the targets' human clusters when they have them)",
    )
    parser.add_argument("--matching", choices=MATCHINGS.names(), default=DEFAULTS.matching, help="as for probeval")
    _add_embedder_arguments(parser)
    parser.add_argument("--field", choices=SAMPLE_FIELDS, default=None, help="as for probeval (default: model_answers)")
    parser.add_argument(
        "--ignore-unknown",
        action="store_true",
        help="drop predictions for question ids that are not in the targets, with a warning (default: error)",
    )
    parser.add_argument(
        "--only-common",
        action="store_true",
        help="compare on the questions both systems answer (default: both must answer every question)",
    )
    parser.add_argument(
        "--accept-mismatch",
        choices=["samples"],
        default=None,
        help="compare systems scored at different sample counts per question anyway; the signature marks it "
        "(default: an error, since KL depends on the number of samples)",
    )
    parser.add_argument(
        "--resamples", type=int_at_least(1, 10**7), default=DEFAULT_RESAMPLES, help="bootstrap resamples"
    )
    parser.add_argument(
        "--seed", type=int_at_least(0), default=DEFAULT_SEED, help="bootstrap seed (the clustering's is --cluster-seed)"
    )
    _add_cluster_seed_argument(parser, beside_bootstrap=True)
    add_no_cache_option(parser, "automatic clusters")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _compare(args: argparse.Namespace) -> int:
    from .compare import compare_probeval
    from .probeval import ProbEval

    warnings.simplefilter("always")
    try:
        targets, clustered = read_targets_and_label(args.targets)
        systems = []
        for path in (args.predictions_a, args.predictions_b):
            samples, field = _read_system(path, args.field)
            systems.append(
                drop_unknown_ids(samples, targets, path=path, field=field, ignore_unknown=args.ignore_unknown)
            )
        # Questions without target answers cannot be scored: compare on the others only.
        pe = ProbEval(
            args.clustering, args.matching, embedder=args.embedder, model_dir=args.model_dir, seed=args.cluster_seed
        ).resolved(targets)
        usable = {qid: t for qid, t in targets.items() if t.total > 0 and (t.clusters or pe.clusterer is not None)}
        if not any(qid in systems[0] and qid in systems[1] for qid in usable):
            raise ValueError(f"{args.targets}: no question with target answers was answered by both systems")
        r = compare_probeval(
            usable,
            systems[0],
            systems[1],
            pe,
            resamples=args.resamples,
            seed=args.seed,
            only_common=args.only_common,
            accept_samples=args.accept_mismatch == "samples",
        )
    except (DataFormatError, FileNotFoundError, ValueError, ImportError) as exc:
        print(f"probeval compare: error: {exc}", file=sys.stderr)
        return 2
    signature = (
        f"{r.signature}{'|' + clustered if clustered else ''}|bootstrap:{args.resamples}|bootstrap_seed:{args.seed}"
    )
    out = {
        "a": args.predictions_a,
        "b": args.predictions_b,
        "kl_a": r.mean_a,
        "kl_b": r.mean_b,
        "difference": r.difference.mean,
        "ci_low": r.difference.low,
        "ci_high": r.difference.high,
        "p_value": r.p_value,
        "num_questions": r.num_questions,
        "num_samples": list(r.num_samples),
        "clustering_draws": r.clustering_draws,
        "signature": signature,
    }
    if args.json:
        print(json.dumps(finite_json(out), allow_nan=False))
    else:
        print(f"A: {args.predictions_a}\nB: {args.predictions_b}\n")
        print(
            f"KL(A) {r.mean_a:.4f}   KL(B) {r.mean_b:.4f}   A - B {r.difference.mean:+.4f}   "
            f"95% CI [{r.difference.low:+.4f}, {r.difference.high:+.4f}]   p {r.p_value:.3f}   "
            f"({r.num_questions} questions, {_samples_text(r.num_samples)}; lower KL is better)"
        )
        if r.clustering_draws > 1:
            print(
                f"(means over {r.clustering_draws} clusterings, --cluster-seed {args.cluster_seed} and the next "
                "seeds; each resample redraws one, so the interval holds the seed's share)"
            )
        print(f"\n{signature}")
    return 0


def _samples_text(counts: tuple[int, int]) -> str:
    """The sample counts of a comparison, for its summary line.

    >>> _samples_text((100, 100)), _samples_text((100, 30))
    ('100 samples each', '100 and 30 samples each')
    """
    return f"{counts[0]} samples each" if counts[0] == counts[1] else f"{counts[0]} and {counts[1]} samples each"


def _clusters_line(result: ProbEvalResult) -> str:
    """How many clusters the questions were scored with, and the annotators' count when the targets have it.

    >>> r = ProbEvalResult(0.5, {}, {}, 2, "", clusters_per_question=5.5, human_clusters_per_question=7.0)
    >>> _clusters_line(r)
    'clusters per question: 5.5 (human clusters: 7.0)'
    """
    line = f"clusters per question: {result.clusters_per_question:.1f}"
    if result.human_clusters_per_question is not None:
        line += f" (human clusters: {result.human_clusters_per_question:.1f})"
    return line


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``probeval`` command; returns the exit status (0, or 2 for bad input, output or options, each
    error one line on stderr naming the file, line and question where known).

    >>> main(["../shared/data/cfc/dev.targets.jsonl", "samples.json", "--json"])  # doctest: +SKIP
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_subcommands("probeval", DESCRIPTION, COMMANDS, argv, version=__version__, default="evaluate")


def _evaluate(args: argparse.Namespace) -> int:
    warnings.simplefilter("ignore" if args.quiet else "always")
    # Questions made up with wrong answers change what the KL means: --quiet never hides that.
    warnings.simplefilter("always", ScoreMeaningWarning)
    try:
        # The library's checks, before any file is read.
        check_settings(
            args.clustering,
            args.matching,
            {"threshold": args.threshold, "seed": args.seed, **_clustering_settings(args)},
        )
        per_question = (
            check_output_file(args.per_question, [args.targets, args.predictions], args.overwrite)
            if args.per_question
            else None
        )
        result = _run(args)
    except (DataFormatError, FileNotFoundError, ValueError, ImportError) as exc:
        print(f"probeval: error: {exc}", file=sys.stderr)
        return 2
    if not result.num_questions and not args.allow_empty:
        print(
            f"probeval: error: {args.targets}: nothing to score: no question has target answers"
            f"{' and samples' if args.only_predicted else ''} (pass --allow-empty to accept this)",
            file=sys.stderr,
        )
        return 2
    if per_question is not None:
        write_per_question(result, per_question)
    if args.json:
        print(json.dumps(finite_json(result.as_dict()), ensure_ascii=False, indent=2, allow_nan=False))
    elif result.num_questions:
        print(f"ProbEval KL: {result.kl:.4f} (mean over {result.num_questions} questions; lower is better)")
        print(_clusters_line(result))
        print(f"signature: {result.signature}")
    else:
        print("ProbEval KL: none (no question was scored)")
        print(f"signature: {result.signature}")
    return 0


_CLUSTER_DESCRIPTION = (
    "Cluster the raw answers of a targets file automatically, once, and write them as a targets file with "
    "clusters and their provenance (the source's checksum, the clustering, the embedder and its weights' "
    "checksum, the version); scoring it gives the KLs of scoring the source with the same setting, and its "
    "signature names the written file's checksum."
)


def _add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("targets", metavar="TARGETS", help="targets JSONL with raw answers (answers.raw), no clusters")
    parser.add_argument("-o", "--output", required=True, metavar="CLUSTERED.jsonl", help="the clustered targets file")
    automatic = [c for c in clustering_choices() if c not in (AUTO, "human")]
    parser.add_argument(
        "--clustering",
        choices=automatic,
        default=DEFAULTS.clustering,
        help=f"the automatic clustering (default {DEFAULTS.clustering})",
    )
    _add_embedder_arguments(parser)
    _add_clustering_arguments(parser)
    _add_cluster_seed_argument(parser)
    add_no_cache_option(parser, "automatic clusters")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output file")


def _cluster(args: argparse.Namespace) -> int:
    from .clustered import write_clustered_targets
    from .probeval import ProbEval

    warnings.simplefilter("always")
    try:
        output = check_output_file(args.output, [args.targets], args.overwrite)
        pe = ProbEval(
            args.clustering,
            embedder=args.embedder,
            model_dir=args.model_dir,
            seed=args.cluster_seed,
            **_clustering_settings(args),
        )
        provenance = write_clustered_targets(args.targets, output, pe)
    except (DataFormatError, FileNotFoundError, ValueError, ImportError) as exc:
        print(f"probeval cluster: error: {exc}", file=sys.stderr)
        return 2
    print(f"{output}: clusters {provenance['clustering']}, embedder {provenance['embedder']}", file=sys.stderr)
    return 0


_DEFAULT_NOTE = " Without a command, 'probeval TARGETS PREDICTIONS ...' is 'probeval evaluate TARGETS PREDICTIONS ...'."
DESCRIPTION = _DESCRIPTION + _DEFAULT_NOTE
"""What ``probeval --help`` says first."""

COMMANDS: dict[str, Subcommand] = {
    c.name: c
    for c in (
        # The default form has the program's own name in usage and error lines.
        Subcommand(
            "evaluate",
            "score samples (the default command)",
            _DESCRIPTION,
            _add_evaluate_arguments,
            _evaluate,
            prog="probeval",
            examples=(
                "probeval ../shared/data/cfc/dev.targets.jsonl ../shared/data/cfc/dev.predictions.gpt2-xl.oneshot.json "
                "--ignore-unknown",
                "probeval evaluate ../shared/data/cfc/test.targets.jsonl "
                "../shared/data/cfc/test.samples.gpt2-xl.oneshot.jsonl --clustering human --json",
            ),
        ),
        Subcommand(
            "compare",
            "compare two systems with a paired bootstrap test",
            _COMPARE_DESCRIPTION,
            _add_compare_arguments,
            _compare,
            examples=(
                "probeval compare ../shared/data/cfc/test.targets.jsonl ../shared/data/cfc/test.samples.gpt2-xl.oneshot.jsonl "
                "../shared/data/cfc/test.samples.gpt2-xl.zeroshot.jsonl --clustering human --accept-mismatch samples",
            ),
        ),
        Subcommand(
            "cluster",
            "write a targets file's automatic clusters as a targets file with clusters",
            _CLUSTER_DESCRIPTION,
            _add_cluster_arguments,
            _cluster,
            examples=(
                "probeval cluster raw.targets.jsonl -o clustered.jsonl",
                "probeval cluster raw.targets.jsonl -o clustered.jsonl --clustering hac --cluster-seed 0",
            ),
        ),
    )
}
"""The sub-commands of ``probeval``; without one, ``evaluate`` is meant (``probeval TARGETS PREDICTIONS``)."""

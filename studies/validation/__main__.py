"""``python -m studies.validation {study,leaderboard,clusters,all,claims,papers}``: the agreement study and the leaderboard.

Examples::

    python -m studies.validation all                      # everything, into studies/reports/
    python -m studies.validation study                    # every figure of validation.{json,md}
    python -m studies.validation study --questions 5 --sets 10 --no-tune --no-systems
    python -m studies.validation leaderboard --data-dir ../shared/data --out studies/reports/
    python -m studies.validation claims                   # README and card claims from validation.json
    python -m studies.validation clusters                 # the automatic clustering's choice: clusters.{json,md}
    python -m studies.validation papers                   # the papers' tables beside ours (paper_tables.md)
    python -m studies.validation similarity-controls      # the similarities against controls (similarity_controls.md)

The data folder is ``--data-dir``, else ``$PROTOQA_DATA_DIR``, else ``../shared/data``
beside the checkout.

With ``--jobs 2`` (the default) the matching study and then the system level run in a
second process beside the agreement study: the agreement study sends it the tuned
parameters, it sends back the matching thresholds. Every step runs on one thread, and
each process embeds its strings in the same batches as a single process would, so
the figures are the same with one job or two. The embedding model is looked up
without asking the Hugging Face Hub (the study reads local data only) unless
``--hub`` is given.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Optional

from cfc_probeval.registry import CLUSTERINGS, MATCHINGS
from protoqa_core.io import data as data_location
from protoqa_core.io.files import DataFormatError

from . import similarity_controls
from .matching_study import MATCHERS
from .sampling import SAMPLINGS
from .workers import cosine_threshold, limit_threads, receive, run_matching, run_systems, side_studies

REPORTS = Path(__file__).resolve().parents[1] / "reports"
REPORTS_HELP = "studies/reports/"

__all__ = ["main", "build_parser", "resolve_data_dir", "limit_threads"]


def resolve_data_dir(given: Optional[str] = None) -> Path:
    """The data folder of :func:`protoqa_core.io.data.resolve_data_dir` (``given``, ``$PROTOQA_DATA_DIR``,
    ``../shared/data`` beside the checkout); it must exist, since the study reads many files.

    >>> resolve_data_dir("/nonexistent")
    Traceback (most recent call last):
    ...
    FileNotFoundError: data folder not found: /nonexistent (give --data-dir or set $PROTOQA_DATA_DIR)
    """
    path = data_location.resolve_data_dir(given)
    if path is None or not path.is_dir():
        raise FileNotFoundError(
            f"data folder not found: {path or '../shared/data'} (give --data-dir or set ${data_location.DATA_DIR_ENV})"
        )
    return path


@contextlib.contextmanager
def _hub_allowed(allowed: bool) -> Iterator[None]:
    """Unless ``allowed``, set ``HF_HUB_OFFLINE`` while the block runs (restored after), so that the model is
    looked up locally only: without a network, each lookup would otherwise wait for the Hub's retries."""
    before = os.environ.get("HF_HUB_OFFLINE")
    if not allowed:
        os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = before


def _names(text: str, allowed: Sequence[str], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{what}: choose from {', '.join(allowed)} (got {text!r})")
    return names


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m studies.validation``.

    >>> build_parser().parse_args(["study", "--questions", "2"]).questions
    2
    """
    parser = argparse.ArgumentParser(
        prog="python -m studies.validation", description="ProbEval's agreement with human judgment, and a leaderboard."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    study = sub.add_parser("study", help="the agreement study: studies/reports/validation.{json,md} and plots")
    _common_options(study)
    _study_options(study)
    board = sub.add_parser("leaderboard", help="studies/reports/leaderboard.{json,md}")
    _common_options(board)
    board.add_argument(
        "--automatic",
        default=None,
        help="the automatic setting as JSON ProbEval arguments (default: ProbEval's automatic "
        "default, G-means from 8 centers of MiniLM embeddings with WordNet matching)",
    )
    board.add_argument("--questions", type=int, default=None, help="only the first N questions of each data set")
    both = sub.add_parser(
        "all", help="the study, the leaderboard, the marked claims of the README and card, then the paper tables"
    )
    _common_options(both)
    _study_options(both)
    clusters = sub.add_parser(
        "clusters",
        help="ProbEval's automatic clustering: every dev criterion beside the controls, the protocol's rule, "
        "then CFC test once; studies/reports/clusters.{json,md}",
    )
    _common_options(clusters)
    clusters.add_argument("--questions", type=int, default=None, help="only the first N questions of each data set")
    claims = sub.add_parser(
        "claims",
        help="rewrite the marked system-level claims of docs/validation.md from validation.json",
    )
    claims.add_argument("--out", default=str(REPORTS), help=f"folder of validation.json (default {REPORTS_HELP})")
    papers = sub.add_parser(
        "papers",
        help="the papers' tables beside this project's figures: paper_tables.md from the committed study outputs",
    )
    papers.add_argument(
        "--out",
        default=str(REPORTS),
        help=f"folder of the study outputs and of paper_tables.md (default {REPORTS_HELP})",
    )
    controls = sub.add_parser(
        "similarity-controls",
        help="the ProtoQA metric's similarities against wrong-question and random-word lists and human judgements; "
        "chooses the roberta rule on dev folds: similarity_controls.{json,md}",
    )
    _common_options(controls)
    similarity_controls.add_arguments(controls)
    return parser


def _common_options(p: argparse.ArgumentParser) -> None:
    """The options every command that reads the data takes."""
    p.add_argument(
        "--data-dir",
        default=None,
        help=f"shared data folder (else ${data_location.DATA_DIR_ENV}, else ../shared/data)",
    )
    p.add_argument("--out", default=str(REPORTS), help=f"output folder (default {REPORTS_HELP})")
    p.add_argument("--embedder", default=None, help="minilm (default), char-ngrams, st:MODEL, fasttext:FILE")
    p.add_argument("--threads", type=int, default=1, help="threads for PyTorch and BLAS (default 1)")
    p.add_argument(
        "--hub",
        action="store_true",
        help="let the embedder look for its model on the Hugging Face Hub (default: local copies only)",
    )


def _study_options(p: argparse.ArgumentParser) -> None:
    """The options of ``study`` and ``all``."""
    p.add_argument("--questions", type=int, default=None, help="only the first N questions of each dev set")
    p.add_argument("--sets", type=int, default=50, help="answer sets per question and sampling (default 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the answer sets, folds and bootstrap (default 0)")
    p.add_argument(
        "--clusterings",
        default=",".join(CLUSTERINGS.names()),
        type=lambda t: _names(t, CLUSTERINGS.names(), "--clusterings"),
        help="comma-separated clusterings",
    )
    p.add_argument(
        "--matchings",
        default=",".join(MATCHINGS.names()),
        type=lambda t: _names(t, MATCHINGS.names(), "--matchings"),
        help="comma-separated matchings",
    )
    p.add_argument(
        "--samplings",
        default=",".join(SAMPLINGS),
        type=lambda t: _names(t, SAMPLINGS, "--samplings"),
        help="comma-separated samplings",
    )
    p.add_argument(
        "--no-tune",
        action="store_true",
        help="use ProbEval's current defaults instead of choosing the parameters on the grid",
    )
    p.add_argument(
        "--sensitivity-sizes",
        default="100",
        help="fixed set sizes of the earlier 'pool' procedure to re-measure human+WordNet at "
        "('' for none; default 100)",
    )
    p.add_argument(
        "--matchers",
        default=",".join(MATCHERS),
        type=lambda t: _names(t, MATCHERS, "--matchers"),
        help="matchers of the matching-validity table (comma-separated)",
    )
    p.add_argument(
        "--wup-budget",
        type=float,
        default=120.0,
        help="seconds the Wu-Palmer matcher may spend (questions in order until spent; default 120)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        choices=(1, 2),
        default=2,
        help="processes: 2 runs the matching and system-level studies beside the agreement study (default 2)",
    )
    p.add_argument("--no-systems", action="store_true", help="skip the system-level study on CFC test")
    p.add_argument(
        "--extra-embedders",
        default="",
        help="comma-separated further embedders (e.g. st:FOLDER) tried as a lever of the automatic "
        "default, chosen on dev like the others (default: none)",
    )
    p.add_argument(
        "--state", default=None, help="also pickle the measured results to this file (to re-render the reports)"
    )
    p.add_argument("--no-plots", action="store_true", help="do not draw the PNG scatter plots")


def _papers(out: Path) -> None:
    from .paper_tables import write_paper_tables

    print(f"papers: wrote {write_paper_tables(out)}")


def _claims(out: Path) -> None:
    from .claims import write_claims

    changed = write_claims(out / "validation.json")
    print("claims: " + (", ".join(str(p) for p in changed) if changed else "already up to date"))


def _clusters(args: argparse.Namespace, data_dir: Path, out: Path) -> None:
    from .cluster_agreement import run_cluster_study
    from .cluster_report import write_cluster_claims, write_cluster_study

    result = run_cluster_study(data_dir, num_questions=getattr(args, "questions", None), log=_log)
    paths = write_cluster_study(result, out)
    print(f"clusters: {result['seconds']:.1f} s; wrote {', '.join(str(p) for p in paths)}")
    if out.resolve() == REPORTS and result["questions_limit"] is None:
        changed = write_cluster_claims(out / "clusters.json")
        print("cluster claims: " + (", ".join(str(p) for p in changed) if changed else "already up to date"))


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _study(args: argparse.Namespace, data_dir: Path, out: Path, command: str) -> dict:
    from .report import write_study

    start = time.perf_counter()
    result, matching_result, systems = _run_studies(args, data_dir)
    seconds = time.perf_counter() - start
    if args.state:
        import pickle

        with open(args.state, "wb") as handle:
            pickle.dump({"result": result, "matching": matching_result, "systems": systems, "seconds": seconds}, handle)
    paths = write_study(
        result,
        out,
        command=command,
        plots=not args.no_plots,
        matching=matching_result,
        systems=systems,
        seconds=seconds,
    )
    print(
        f"study: {seconds:.1f} s; wrote {', '.join(str(p) for p in paths[:3])}"
        + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    )
    if systems is not None:
        default = systems["default"]
        print(
            f"automatic default (as shipped, chosen by python -m studies.validation clusters): {default['label']} "
            f"(test rho over the 8 model systems {default['test']['rho']})"
        )
    return {"systems": systems}


def _run_studies(args: argparse.Namespace, data_dir: Path) -> tuple[Any, dict, Optional[dict]]:
    """The agreement study, with the matching study and the system level beside it (``--jobs 2``: in a
    second process) or before and after it (``--jobs 1``); returns the three results."""
    from .study import run_study
    from .systems import settings_as_candidates

    sizes = [int(s) for s in args.sensitivity_sizes.split(",") if s.strip()]
    options = {
        "data_dir": str(data_dir),
        "embedder": args.embedder,
        "matchers": list(args.matchers),
        "questions": args.questions,
        "seed": args.seed,
        "wup_budget": args.wup_budget,
        "threads": args.threads,
        "systems": not args.no_systems,
        "cosine_threshold": None,
        "extra_embedders": [e.strip() for e in args.extra_embedders.split(",") if e.strip()],
    }
    received: dict[str, Any] = {}

    def candidates(parameters: Any) -> dict:
        return settings_as_candidates(parameters.chosen, args.clusterings, args.matchings, args.embedder)

    if args.jobs == 2:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        to_child, from_child = context.Queue(), context.Queue()
        worker = context.Process(target=side_studies, args=(to_child, from_child, options), daemon=True)
        worker.start()

        def matching() -> dict:
            received["matching"] = receive(from_child, "matching", worker)
            return received["matching"]

        def send_settings(parameters: Any) -> None:
            if not args.no_systems:
                to_child.put(("settings", candidates(parameters)))
    else:
        worker = None
        received["matching"] = run_matching(options)

        def matching() -> dict:
            return received["matching"]

        def send_settings(parameters: Any) -> None:
            received["parameters"] = parameters

    try:
        _log("agreement study (ProtoQA dev, CFC dev)")
        result = run_study(
            data_dir,
            num_questions=args.questions,
            num_sets=args.sets,
            seed=args.seed,
            embedder=args.embedder,
            clusterings=args.clusterings,
            matchings=args.matchings,
            samplings=args.samplings,
            tune_parameters=not args.no_tune,
            matching=matching,
            sensitivity_sizes=sizes,
            on_parameters=send_settings,
            log=_log,
        )
        systems = None
        if not args.no_systems:
            if worker is not None:
                systems = receive(from_child, "systems", worker)
            else:
                options["cosine_threshold"] = cosine_threshold(received["matching"])
                systems = run_systems(options, lambda: candidates(received["parameters"]))
    finally:
        if worker is not None:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.terminate()
    return result, received["matching"], systems


def _automatic_config(args: argparse.Namespace) -> Optional[dict]:
    """The automatic setting for the leaderboard: ``--automatic``, else None (ProbEval's automatic default)."""
    import json

    if getattr(args, "automatic", None):
        try:
            config = json.loads(args.automatic)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--automatic: not JSON ({exc})") from None
        if not isinstance(config, dict):
            raise ValueError("--automatic: expected a JSON object of ProbEval arguments")
        return config
    return None


def _leaderboard(args: argparse.Namespace, data_dir: Path, out: Path) -> None:
    from .leaderboard import run_leaderboard
    from .leaderboard_report import write_leaderboard

    board = run_leaderboard(
        data_dir, embedder=args.embedder, num_questions=args.questions, log=_log, automatic=_automatic_config(args)
    )
    paths = write_leaderboard(board, out)
    print(f"leaderboard: {board['info']['seconds']:.1f} s; wrote {', '.join(str(p) for p in paths)}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run a command; returns the exit status (0, or 2 for bad input).

    >>> main(["study", "--questions", "2", "--sets", "6", "--no-tune"])  # doctest: +SKIP
    """
    args = build_parser().parse_args(argv)
    command = "python -m studies.validation " + " ".join(argv if argv is not None else sys.argv[1:])
    start = time.perf_counter()
    try:
        if args.command == "claims":
            _claims(Path(args.out))
            return 0
        if args.command == "papers":
            _papers(Path(args.out))
            return 0
        data_dir = resolve_data_dir(args.data_dir)
        out = Path(args.out)
        with limit_threads(args.threads), warnings.catch_warnings(), _hub_allowed(args.hub):
            # Library warnings (GP convergence, empty samples) are summarized in the reports instead.
            warnings.simplefilter("ignore")
            if args.command == "similarity-controls":
                similarity_controls.main(args, data_dir, out)
            if args.command in ("study", "all"):
                _study(args, data_dir, out, command)
            if args.command in ("leaderboard", "all"):
                _leaderboard(args, data_dir, out)
            if args.command in ("clusters", "all"):
                _clusters(args, data_dir, out)
            if args.command == "all" and out.resolve() == REPORTS and not args.no_systems:
                _claims(out)
            if args.command == "all" and (out / "matching_roberta_length_scale.json").is_file():
                _papers(out)  # the paper tables read the figures just written
    except (DataFormatError, FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"python -m studies.validation: error: {exc}", file=sys.stderr)
        return 2
    print(f"total: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Peak memory of ``protoqa-eval`` and ``protoqa-eval leaderboard`` on a predictions file just under
the input size cap.

Prints figures; asserts nothing about time (machines are noisy). Run from the repository
root:

    python benchmarks/bench_input_cap.py [--megabytes 437] [--baseline-ref REV] [--command leaderboard]

The input cap (``$PROTOQA_MAX_INPUT_MB``, 512 MB by default) bounds what is read from one
file; what memory the command then takes depends on how it holds what it read. The case
measured here is the one that takes the most memory per byte: one JSON document (not
JSONL) of many short answer lists, ``{"<id>": ["dog", "cat", ...], ...}``, so that Python
objects outnumber bytes. The file holds the 52 ProtoQA crowdsourced dev questions' real
fine-tuned GPT-2 lists and then short lists under ids that are not in the targets, up to
``--megabytes`` MB, and is scored against the dev targets with ``--ignore-unknown`` (so that
the time goes to reading, not to scoring 52 questions). It is written into a temporary
folder and removed afterwards.

Each run is the whole command ``protoqa-eval TARGETS PREDICTIONS --similarity exact_match
--ignore-unknown --json`` in a fresh process; ``--baseline-ref`` also runs the code of a git
revision (unpacked into a temporary folder) on the same file in the same session, and checks
that the ``--json`` outputs are identical. Figures are recorded in ``--json-out`` (default
``benchmarks/results/input_cap.json``) as each run ends.

With ``--command leaderboard`` the same document is ranked by ``protoqa-eval leaderboard TARGETS
NAME=PREDICTIONS ... --metrics protoqa --similarity exact_match --only-common --json``, as one
system and as two systems (the same file under two names), so that what the leaderboard holds per
system shows; the control is the dev predictions alone as one system. Its figures go to
``benchmarks/results/input_cap_leaderboard.json`` by default.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

from process_timing import REPO, ResultsFile, extract_revision, run_measured

WORDS = ["dog", "cat", "a fish", "birthday", "age", "name", "money", "car", "tea", "x"]


def write_predictions(path: Path, data_dir: Path, megabytes: float) -> int:
    """The predictions document described above, about ``megabytes`` MB; returns its number of ids."""
    dev = json.loads((data_dir / "protoqa" / "dev.predictions.gpt2finetuned.json").read_text(encoding="utf-8"))
    target = int(megabytes * 2**20)
    rng = random.Random(0)
    count = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("{")
        size = 1
        for qid, answers in dev.items():
            text = f"{json.dumps(qid)}: {json.dumps(answers)}, "
            fh.write(text)
            size += len(text.encode())
            count += 1
        while size < target - 200:
            answers = [rng.choice(WORDS) for _ in range(rng.randint(5, 20))]
            text = f'"u{count}": {json.dumps(answers)}, '
            fh.write(text)
            size += len(text)
            count += 1
        fh.write('"last": []}\n')
    return count + 1


def _evaluate_command(targets: Path, path: Path, copies: int) -> list[str]:
    command = [sys.executable, "-m", "protoqa_metric", str(targets), str(path)]
    return command + ["--similarity", "exact_match", "--ignore-unknown", "--json", "--no-progress"]


def _leaderboard_command(targets: Path, path: Path, copies: int) -> list[str]:
    command = [sys.executable, "-m", "protoqa_integrations", "leaderboard", str(targets)]
    command += [f"s{i}={path}" for i in range(copies)]
    return command + ["--metrics", "protoqa", "--similarity", "exact_match", "--only-common", "--json", "--no-progress"]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--megabytes", type=float, default=437.0, help="size of the predictions file")
    parser.add_argument("--baseline-ref", help="git revision to measure in the same run")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds before a run is killed")
    parser.add_argument(
        "--max-rss-mb",
        type=float,
        default=6144.0,
        help="kill a run whose resident memory passes this many MB, and record it as killed (default 6144)",
    )
    parser.add_argument(
        "--command", choices=("evaluate", "leaderboard"), default="evaluate", help="the command measured"
    )
    parser.add_argument("--jobs", type=int, default=1, help="runs measured side by side (default 1: one at a time)")
    parser.add_argument("--json-out", help="results file (default: benchmarks/results/input_cap[_leaderboard].json)")
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    leaderboard = args.command == "leaderboard"
    default_out = REPO / "benchmarks" / "results" / ("input_cap_leaderboard.json" if leaderboard else "input_cap.json")
    results = ResultsFile(
        Path(args.json_out or default_out), "python benchmarks/bench_input_cap.py " + " ".join(sys.argv[1:])
    )
    data_dir = Path(args.data_dir)
    targets = data_dir / "protoqa" / "dev.crowdsourced.jsonl"
    print(f"machine: {results.data['machine']}, load average {' '.join(map(str, results.data['load_at_start']))}")
    with tempfile.TemporaryDirectory(prefix="bench-input-cap-") as tmp:
        folder = Path(tmp)
        predictions = folder / "predictions.json"
        ids = write_predictions(predictions, data_dir, args.megabytes)
        size_mb = predictions.stat().st_size / 2**20
        print(f"predictions: one JSON document, {size_mb:.0f} MB, {ids:,} question ids", flush=True)
        results.data["file"] = {"megabytes": round(size_mb, 1), "ids": ids}
        baseline = extract_revision(args.baseline_ref, folder) if args.baseline_ref else None
        # (label, code, file, systems): the leaderboard ranks the document as one system and as two.
        runs = []
        for copies in (1, 2) if leaderboard else (1,):
            if baseline is not None:
                runs.append((f"baseline {args.baseline_ref}", baseline, predictions, copies))
            runs.append(("this version", REPO, predictions, copies))
        # The interpreter and the scoring of the 52 questions alone: the dev predictions file (27 KB).
        small = data_dir / "protoqa" / "dev.predictions.gpt2finetuned.json"
        runs.append(("this version, dev predictions only", REPO, small, 1))
        build = _leaderboard_command if leaderboard else _evaluate_command
        outputs: dict[tuple[str, int], Optional[bytes]] = {}
        lock = threading.Lock()

        def measure(label: str, code: Path, path: Path, copies: int) -> None:
            env = {**os.environ, "PYTHONPATH": str(code)}
            env.pop("PROTOQA_MAX_INPUT_MB", None)
            load = os.getloadavg()[0]
            what = f"{args.command} ({label}, {copies} system{'s' if copies > 1 else ''})"
            run = run_measured(build(targets, path, copies), folder, env, args.timeout, what, args.max_rss_mb)
            with lock:
                outputs[label, copies] = run.stdout
            row = {
                "case": "json_document" if path == predictions else "dev_predictions",
                "file_mb": round(path.stat().st_size / 2**20, 3),
                "version": label,
                "load": round(load, 1),
                "wall_s": round(run.wall, 1),
                "cpu_s": round(run.cpu, 1),
                "peak_mb": round(run.rss_mb),
                "killed": run.stdout is None,
            }
            if run.killed:
                row["killed_by"] = run.killed
            if leaderboard:
                row["systems"] = copies
            with lock:
                results.add(row)
                print(
                    f"   {label:<24} {copies} system(s)  load {load:4.1f}  wall {run.wall:7.1f} s  "
                    f"CPU {run.cpu:7.1f} s  peak RSS {run.rss_mb:6.0f} MB"
                    + (f"  KILLED ({run.killed})" if run.killed else ""),
                    flush=True,
                )

        # Runs may go side by side (--jobs): each is its own process, whose CPU time and peak memory
        # are its own; only the wall time and the load then count the others.
        results.data["jobs"] = args.jobs
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for done in [pool.submit(measure, *run) for run in runs]:
                done.result()
        if baseline is not None:
            _compare_outputs(outputs, f"baseline {args.baseline_ref}", leaderboard, results)


def _compare_outputs(
    outputs: dict[tuple[str, int], Optional[bytes]], baseline: str, leaderboard: bool, results: ResultsFile
) -> None:
    """Record and print whether the baseline's ``--json`` output equals this version's, per system count."""
    for copies in (1, 2) if leaderboard else (1,):
        before, after = outputs.get((baseline, copies)), outputs[("this version", copies)]
        if before is None or after is None:
            continue
        same = _comparable(before, leaderboard) == _comparable(after, leaderboard)
        results.add({"case": "json_document", "identical": same, **({"systems": copies} if leaderboard else {})})
        print(f"   --json output identical to the baseline ({copies} system(s)): {'yes' if same else 'NO'}")


def _comparable(stdout: bytes, leaderboard: bool) -> object:
    """A ``--json`` output as compared between versions: a leaderboard's parsed (its key order is not
    part of it), ``protoqa-eval``'s byte for byte."""
    return json.loads(stdout) if leaderboard else stdout


if __name__ == "__main__":
    main()

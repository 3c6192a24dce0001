"""What ``probeval --help`` and a human-cluster ``probeval`` run cost, beside a baseline revision.

Prints figures; asserts nothing about time (machines are noisy). Run from the repository root:

    python benchmarks/bench_probeval_startup.py [--baseline main] [--rounds 5] [--data-dir ../shared/data]

Each round runs, in fresh processes and alternating so that load changes hit all alike:
``python -c "import numpy"`` (the unit the start-up goals are written in), then each command
with the baseline revision's code (``git archive`` of ``--baseline``, put first on
``PYTHONPATH``) and with this checkout's. CPU time (user + system) and peak memory are the
process's own (``os.wait4``). The commands:

- ``probeval --help``;
- ``probeval dev.targets.jsonl dev.predictions.human.json --ignore-unknown --json --quiet`` on CFC
  dev (54 questions scored with the targets' human clusters and WordNet matching).

The outputs of the two revisions are compared byte for byte, and the figures are the medians
over the rounds, with the ratio to ``import numpy`` of the same rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from process_timing import REPO, ProcessRun, extract_revision, machine, run_measured


def _commands(data: Path) -> dict[str, list[str]]:
    cfc = data / "cfc"
    probeval = [sys.executable, "-m", "cfc_probeval"]
    return {
        "probeval --help": [*probeval, "--help"],
        "human-cluster CFC dev run": [
            *probeval,
            str(cfc / "dev.targets.jsonl"),
            str(cfc / "dev.predictions.human.json"),
            "--ignore-unknown",
            "--json",
            "--quiet",
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git revision to measure beside this checkout")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args()
    commands = _commands(args.data_dir.resolve())
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"baseline": extract_revision(args.baseline, Path(scratch)), "this": REPO}
        runs: dict[tuple[str, str], list[ProcessRun]] = {}
        numpy_runs: list[ProcessRun] = []
        outputs: dict[tuple[str, str], bytes] = {}
        print(f"{machine()}; load {os.getloadavg()[0]:.1f} at start; baseline {args.baseline}")
        for _ in range(args.rounds):
            numpy_runs.append(
                run_measured([sys.executable, "-c", "import numpy"], Path(scratch), dict(os.environ), 120, "numpy")
            )
            for what, command in commands.items():
                for tree_name, tree in trees.items():
                    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
                    run = run_measured(command, Path(scratch), env, 600, f"{what} ({tree_name})")
                    runs.setdefault((what, tree_name), []).append(run)
                    outputs[(what, tree_name)] = run.stdout or b""
        numpy_cpu = statistics.median(r.cpu for r in numpy_runs)
        numpy_rss = statistics.median(r.rss_mb for r in numpy_runs)
        print(f"import numpy: CPU {numpy_cpu:.3f} s, peak {numpy_rss:.0f} MB (median of {args.rounds})")
        for what in commands:
            same = outputs[(what, "baseline")] == outputs[(what, "this")]
            print(f"\n{what} (output {'byte-identical' if same else 'DIFFERENT'} between the two revisions)")
            for tree_name in trees:
                rs = runs[(what, tree_name)]
                cpu = statistics.median(r.cpu for r in rs)
                print(
                    f"  {tree_name:8s} CPU {cpu:.3f} s ({cpu / numpy_cpu:.2f}x import numpy; "
                    f"range {min(r.cpu for r in rs):.3f}-{max(r.cpu for r in rs):.3f}), "
                    f"peak {statistics.median(r.rss_mb for r in rs):.0f} MB"
                )
        print(f"\nload {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()

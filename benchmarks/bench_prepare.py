"""What ``protoqa-eval prepare`` costs: building WordNet's cache files into an empty cache folder.

Prints figures; asserts nothing about time. Run from the repository root:

    python benchmarks/bench_prepare.py [--rounds 2]

Each round runs, each in a fresh process, ``python -c "import numpy"`` (the baseline: an
interpreter with the one library every command loads) and then ``python -m protoqa_metric
prepare`` with ``$PROTOQA_CACHE_DIR`` set to a new empty folder, so that the walk file and
the lemma tables are computed, as on a first installation. Figures are recorded in
``--json-out`` (default ``benchmarks/results/prepare.json``) as each run ends.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from process_timing import REPO, ResultsFile, run_measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json-out", default=str(REPO / "benchmarks" / "results" / "prepare.json"))
    args = parser.parse_args()
    results = ResultsFile(Path(args.json_out), "python benchmarks/bench_prepare.py " + " ".join(sys.argv[1:]))
    print(f"machine: {results.data['machine']}")
    commands = {
        'python -c "import numpy"': [sys.executable, "-c", "import numpy"],
        "protoqa-eval prepare": [sys.executable, "-m", "protoqa_metric", "prepare"],
    }
    with tempfile.TemporaryDirectory(prefix="bench-prepare-") as tmp:
        for round_ in range(1, args.rounds + 1):
            for name, command in commands.items():
                cache = Path(tmp) / f"cache-{round_}-{len(name)}"
                env = {**os.environ, "PYTHONPATH": str(REPO), "PROTOQA_CACHE_DIR": str(cache)}
                load = os.getloadavg()[0]
                run = run_measured(command, Path(tmp), env, 1800, name)
                results.add(
                    {
                        "command": name,
                        "round": round_,
                        "load": round(load, 1),
                        "wall_s": round(run.wall, 2),
                        "cpu_s": round(run.cpu, 2),
                        "peak_mb": round(run.rss_mb),
                    }
                )
                print(
                    f"   round {round_}  {name:<28} load {load:4.1f}  wall {run.wall:6.2f} s  CPU {run.cpu:6.2f} s  "
                    f"peak RSS {run.rss_mb:5.0f} MB",
                    flush=True,
                )


if __name__ == "__main__":
    main()

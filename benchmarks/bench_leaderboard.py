"""``protoqa-eval leaderboard`` over the eight GPT-2 sample files of CFC test, beside one ``probeval`` per file.

Measured in one run, alternated over ``--rounds``:

* baseline: ``probeval TARGETS FILE --json`` once per file, eight processes (what scoring the
  systems one by one costs; no intervals shared, no paired tests);
* ``protoqa-eval leaderboard TARGETS NAME=FILE ... --metrics probeval --json``: one process
  scoring the eight files, with intervals, 28 Holm-corrected paired tests and rank ranges.

For each: wall seconds and CPU seconds (user + sys of the child processes), the least of the
rounds. The KLs of the two are compared (they must agree to 1e-9).

    python benchmarks/bench_leaderboard.py [--data-dir ../shared/data] [--rounds 2]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

SYSTEMS = [
    f"{m}.{s}" for m in ("gpt2-large", "gpt2-xl", "protoqa-ft", "gpt2-large-ft") for s in ("zeroshot", "oneshot")
]


def _timed(commands: list[list[str]]) -> tuple[float, float, list[str]]:
    """Wall and CPU seconds of running ``commands`` one after another, and their outputs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    outputs = []
    for command in commands:
        result = subprocess.run(command, capture_output=True, text=True, check=True)
        outputs.append(result.stdout)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, outputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cfc = Path(args.data_dir) / "cfc"
    targets = str(cfc / "test.targets.jsonl")
    files = {name: str(cfc / f"test.samples.{name}.jsonl") for name in SYSTEMS}
    python = sys.executable
    baseline = [[python, "-m", "cfc_probeval", targets, path, "--json"] for path in files.values()]
    board = [
        [python, "-m", "protoqa_integrations", "leaderboard", targets]
        + [f"{n}={p}" for n, p in files.items()]
        + ["--metrics", "probeval", "--accept-mismatch", "samples", "--json"]  # distinct answers: counts differ
    ]
    best: dict[str, tuple[float, float]] = {}
    outputs: dict[str, list[str]] = {}
    for _ in range(args.rounds):
        for label, commands in (("8 x probeval (baseline)", baseline), ("protoqa-eval leaderboard", board)):
            wall, cpu, out = _timed(commands)
            outputs[label] = out
            previous = best.get(label)
            best[label] = (min(wall, previous[0]), min(cpu, previous[1])) if previous else (wall, cpu)
    single = {name: json.loads(out)["kl"] for name, out in zip(files, outputs["8 x probeval (baseline)"], strict=True)}
    ranked = {
        s["name"]: s["scores"]["probeval_kl"]["mean"]
        for s in json.loads(outputs["protoqa-eval leaderboard"][0])["systems"]
    }
    worst = max(abs(single[n] - ranked[n]) for n in files)
    print(
        f"CFC test, {len(files)} systems, least of {args.rounds} rounds, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    for label, (wall, cpu) in best.items():
        print(f"  {label:28s} wall {wall:6.1f} s   cpu {cpu:6.1f} s")
    print(f"  largest |KL difference| between the two: {worst:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

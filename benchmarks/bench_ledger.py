"""What the project's own versions of library code cost beside the libraries, and whether they agree.

Prints figures and writes ``benchmarks/results/ledger.json`` (quoted by ARCHITECTURE.md's ledger);
asserts nothing about time. Run from the repository root:

    python benchmarks/bench_ledger.py [--rounds 3] [--data-dir ../shared/data] [--extra-path DIR]

Each case does one job twice, each time in a new process: with the project's code and with the
library a user would otherwise reach for, on the same inputs. The rounds alternate the two so
that load changes hit both alike. CPU is user + system of the whole process (start-up included,
read from ``os.wait4``), the least of the rounds; "work" is the CPU of the job alone, measured
inside the process after the imports. The outputs of the two are compared: identical, or the
largest absolute difference.

- ``treebank``: every string of ProtoQA dev, its GPT-2 predictions and CFC dev's human answers,
  split into words by ``protoqa_core.treebank`` and by NLTK's ``NLTKWordTokenizer``;
- ``wordnet_wup``: the best Wu-Palmer similarity between the synsets of two words, for the
  word pairs of ProtoQA dev (each word of the GPT-2 predictions against each word of the ten
  most frequent crowd answers of its question), by ``protoqa_core.wordnet`` and by NLTK's
  WordNet corpus reader (``wn.synsets``, ``Synset.wup_similarity``);
- ``kmeans``: ``cfc_probeval.kmeans.kmeans`` and scikit-learn's ``KMeans(n_init=10)`` on one
  thread, labels and centers, on 200 seeded problems of 20-100 unit vectors of 384 dimensions;
- ``gp_regression``: the ``roberta`` similarity's one-vs-all GP regression and scikit-learn's
  ``GaussianProcessRegressor`` (the same fixed RBF kernel and noise), on 200 seeded problems;
- ``encoder``: all-MiniLM-L6-v2's vectors of CFC dev's distinct human answers, by the numpy
  forward pass and by sentence-transformers on torch (both rounded as the embedder rounds);
- ``progress``: a 2,000-step loop reported to a log by ``protoqa_core.progress.track`` and by
  a plain ``tqdm`` bar;
- ``model_index``: the leaderboard's model-index YAML by string formatting and by
  huggingface_hub's ``ModelCardData``/``EvalResult``, compared as parsed YAML;
- ``bootstrap``: percentile bootstrap intervals of 100 systems' per-question scores (500
  questions, 1,000 resamples) by ``protoqa_core.significance.bootstrap_ci`` and
  ``scipy.stats.bootstrap(method="percentile")``;
- ``assignment``: the maximum-weight assignments of 1,000 blocks of ten predictions by 2 to 12
  clusters (weights 0, 1/2 and 1, so with ties) by ``protoqa_metric.assignment`` and SciPy's
  ``linear_sum_assignment(maximize=True)``;
- ``anderson``: the Anderson-Darling normality statistic of 500 projections (8 to 100 points) by
  G-means' ``anderson_normal_statistic`` and ``scipy.stats.anderson``;
- ``holm``: Holm's adjusted p-values of 200 families of 20 tests by ``holm_adjust`` and
  statsmodels' ``multipletests(method="holm")`` (statsmodels is no dependency of the project:
  ``--extra-path`` names a folder where it is installed, e.g. ``pip install --target DIR statsmodels``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from process_timing import REPO, ResultsFile, run_measured

CASES: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "treebank": (
        "protoqa_core.treebank",
        "NLTK's NLTKWordTokenizer",
        "NLTK: the [wordnet] extra and the tests; scoring never imports it",
        ("protoqa_core/treebank.py",),
    ),
    "wordnet_wup": (
        "protoqa_core.wordnet, wordnet_wup",
        "NLTK's WordNet corpus reader",
        "NLTK: the [wordnet] extra and the tests; scoring never imports it",
        (
            "protoqa_core/wordnet/reader.py",
            "protoqa_core/wordnet/files.py",
            "protoqa_core/wordnet/lookup.py",
            "protoqa_core/wordnet/cache.py",
            "protoqa_core/wordnet/synset_tables.py",
            "protoqa_core/wordnet/sense_search.py",
            "protoqa_core/wordnet/walk_table.py",
            "protoqa_core/wordnet/walk_file.py",
            "protoqa_core/wordnet/wu_palmer.py",
            "protoqa_core/similarity/wordnet_wup.py",
        ),
    ),
    "kmeans": (
        "cfc_probeval.kmeans",
        "scikit-learn's KMeans",
        "scikit-learn: the [probeval] extra",
        ("cfc_probeval/kmeans.py",),
    ),
    "gp_regression": (
        "protoqa_core.similarity.gaussian_process (regression)",
        "scikit-learn's GaussianProcessRegressor",
        "scikit-learn: [probeval], not [roberta]",
        ("protoqa_core/similarity/gaussian_process.py",),
    ),
    "encoder": (
        "protoqa_core.similarity.numpy_encoder",
        "sentence-transformers on torch",
        "sentence-transformers and torch: [probeval]; [roberta] has transformers without torch",
        ("protoqa_core/similarity/numpy_encoder.py", "protoqa_core/similarity/exact_products.py"),
    ),
    "progress": (
        "protoqa_core.progress",
        "a plain tqdm bar",
        "tqdm: every installation (the module draws with it)",
        ("protoqa_core/progress.py",),
    ),
    "model_index": (
        "leaderboard.report.model_index",
        "huggingface_hub's ModelCardData",
        "huggingface_hub: the [datasets] extra",
        (),
    ),
    "bootstrap": (
        "protoqa_core.significance.bootstrap_ci",
        "scipy.stats.bootstrap",
        "SciPy: every installation (rng= from SciPy 1.15; setup.cfg allows 1.13)",
        (),
    ),
    "assignment": (
        "protoqa_metric.assignment (small blocks)",
        "scipy.optimize.linear_sum_assignment",
        "SciPy: every installation",
        ("protoqa_metric/assignment.py",),
    ),
    "anderson": (
        "cfc_probeval.clustering.anderson_normal_statistic",
        "scipy.stats.anderson",
        "SciPy: every installation",
        (),
    ),
    "holm": (
        "protoqa_core.significance.holm_adjust",
        "statsmodels' multipletests",
        "statsmodels: no extra",
        (),
    ),
}
"""Each case: the project's code, the library, where the library stands in an installation, and the
files that are the project's code alone (their lines are recorded; none where it is a few lines of a
larger module)."""


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _documents(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    return (
        [json.loads(line) for line in text.splitlines() if line.strip()]
        if path.suffix == ".jsonl"
        else [json.loads(text)]
    )


def _data(name: str) -> Path:
    return Path(os.environ["LEDGER_DATA"]) / name


def _treebank_inputs() -> list[str]:
    files = (
        "protoqa/dev.crowdsourced.jsonl",
        "protoqa/dev.predictions.gpt2finetuned.json",
        "cfc/dev.predictions.human.json",
    )
    return [s for f in files for doc in _documents(_data(f)) for s in _strings(doc)]


def _word_pairs() -> list[tuple[str, str]]:
    import re

    predictions = _documents(_data("protoqa/dev.predictions.gpt2finetuned.json"))[0]
    pairs: set[tuple[str, str]] = set()
    for question in _documents(_data("protoqa/dev.crowdsourced.jsonl")):
        raw = question["answers"]["raw"]
        top = sorted(raw, key=lambda a: (-raw[a], a))[:10]
        words_b = {w for a in top for w in re.findall("[a-z]+", a.lower())}
        words_a = {w for p in predictions.get(question["metadata"]["id"], []) for w in re.findall("[a-z]+", p.lower())}
        pairs.update((a, b) for a in words_a for b in words_b)
    return sorted(pairs)


def _kmeans_problems() -> list[tuple[Any, int, int]]:
    import numpy as np

    rng = np.random.default_rng(0)
    problems = []
    for seed in range(200):
        n = int(rng.integers(20, 101))
        x = rng.normal(size=(n, 384))
        problems.append((x / np.linalg.norm(x, axis=1, keepdims=True), int(rng.integers(2, 6)), seed))
    return problems


def _gp_problems() -> list[tuple[Any, Any, Any, Any]]:
    import numpy as np

    rng = np.random.default_rng(1)
    problems = []
    for _ in range(200):
        n, clusters = int(rng.integers(10, 41)), int(rng.integers(2, 8))
        vectors = rng.normal(size=(n, 768)) / np.sqrt(768)
        members = np.zeros((n, clusters), dtype=bool)
        members[np.arange(n), rng.integers(0, clusters, size=n)] = True
        counts = rng.integers(1, 6, size=n).astype(float)
        problems.append((vectors, members, counts, rng.normal(size=(15, 768)) / np.sqrt(768)))
    return problems


def _scores() -> Any:
    import numpy as np

    return np.random.default_rng(2).beta(0.7, 0.9, size=(100, 500))


def _p_values() -> Any:
    import numpy as np

    return np.random.default_rng(3).uniform(size=(200, 20)) ** 3


def _blocks() -> list[Any]:
    import numpy as np

    rng = np.random.default_rng(4)
    # A dev set's blocks under a few similarities: ten predictions, a handful of clusters, many ties.
    return [rng.choice([0.0, 0.0, 0.0, 0.5, 1.0], size=(10, int(rng.integers(2, 13)))) for _ in range(1000)]


def _projections() -> list[Any]:
    import numpy as np

    rng = np.random.default_rng(5)
    return [rng.normal(size=int(rng.integers(8, 101))) ** int(rng.integers(1, 3)) for _ in range(500)]


def _cfc_answers() -> list[str]:
    document = _documents(_data("cfc/dev.predictions.human.json"))[0]
    return sorted({a for answers in document["model_answers"].values() for a in answers})


def _ours(case: str) -> Callable[[], Any]:
    """The job with the project's code: imports first, then a function doing the job."""
    if case == "treebank":
        from protoqa_core.treebank import treebank_tokens

        texts = _treebank_inputs()
        return lambda: [treebank_tokens(t) for t in texts]
    if case == "wordnet_wup":
        from protoqa_core.wordnet.lookup import synset_keys
        from protoqa_core.wordnet.wu_palmer import best_wup

        pairs = _word_pairs()
        return lambda: [best_wup(synset_keys(a), synset_keys(b)) for a, b in pairs]
    if case == "kmeans":
        from cfc_probeval.kmeans import kmeans, one_thread

        problems = _kmeans_problems()

        def fit() -> list:
            with one_thread():
                fits = [kmeans(x, k, seed) for x, k, seed in problems]
            return [(f.labels_.tolist(), f.cluster_centers_.tolist()) for f in fits]

        return fit
    if case == "gp_regression":
        from protoqa_core.similarity.gaussian_process import fit_one_vs_all

        gp = _gp_problems()
        return lambda: [fit_one_vs_all(v, m, counts=c).scores(t).tolist() for v, m, c, t in gp]
    if case == "encoder":
        from cfc_probeval.embedders import SentenceTransformerEmbedder

        answers = _cfc_answers()
        return lambda: SentenceTransformerEmbedder(runtime="numpy").embed(answers).tolist()
    if case == "progress":
        from protoqa_core.progress import track

        return lambda: sum(1 for _ in track(range(2000), 2000, "steps", unit="step"))
    if case == "model_index":
        from protoqa_integrations.leaderboard.report import model_index

        board = _board()
        return lambda: model_index(board, "someone/protoqa", "ProtoQA dev", "validation")
    if case == "bootstrap":
        from protoqa_core.significance import bootstrap_ci

        scores = _scores()
        return lambda: [[bootstrap_ci(s).low, bootstrap_ci(s).high] for s in scores]
    if case == "assignment":
        from protoqa_metric.assignment import max_weight_assignment

        blocks = _blocks()
        return lambda: [max_weight_assignment(b) for b in blocks]
    if case == "anderson":
        from cfc_probeval.clustering import anderson_normal_statistic

        projections = _projections()
        return lambda: [anderson_normal_statistic(x) for x in projections]
    if case == "holm":
        from protoqa_core.significance import holm_adjust

        p = _p_values()
        return lambda: [holm_adjust(list(row)) for row in p]
    raise ValueError(case)


def _library(case: str) -> Callable[[], Any]:
    """The same job with the library."""
    if case == "treebank":
        from nltk.tokenize import NLTKWordTokenizer

        tokenizer, texts = NLTKWordTokenizer(), _treebank_inputs()
        return lambda: [tokenizer.tokenize(t) for t in texts]
    if case == "wordnet_wup":
        from nltk.corpus import wordnet as wn

        pairs = _word_pairs()

        def best(a: str, b: str) -> float:
            return max((x.wup_similarity(y) or 0.0 for x in wn.synsets(a) for y in wn.synsets(b)), default=0.0)

        return lambda: [best(a, b) for a, b in pairs]
    if case == "kmeans":
        from sklearn.cluster import KMeans
        from threadpoolctl import threadpool_limits

        problems = _kmeans_problems()

        def fit() -> list:
            with threadpool_limits(limits=1):
                fits = [KMeans(n_clusters=k, n_init=10, random_state=seed).fit(x) for x, k, seed in problems]
            return [(f.labels_.tolist(), f.cluster_centers_.tolist()) for f in fits]

        return fit
    if case == "gp_regression":
        return _sklearn_gp()
    if case == "encoder":
        from cfc_probeval.embedders import SentenceTransformerEmbedder

        answers = _cfc_answers()
        return lambda: SentenceTransformerEmbedder(runtime="torch").embed(answers).tolist()
    if case == "progress":
        from tqdm import tqdm

        return lambda: sum(1 for _ in tqdm(range(2000), desc="steps", unit="step", mininterval=15))
    if case == "model_index":
        return _hub_model_index()
    if case == "bootstrap":
        import numpy as np
        from scipy.stats import bootstrap

        scores = _scores()

        def intervals() -> list:
            out = []
            for s in scores:
                ci = bootstrap((s,), np.mean, n_resamples=1000, method="percentile", rng=12345).confidence_interval
                out.append([float(ci.low), float(ci.high)])
            return out

        return intervals
    if case == "assignment":
        from scipy.optimize import linear_sum_assignment

        blocks = _blocks()
        return lambda: [[r.tolist() for r in linear_sum_assignment(b, maximize=True)] for b in blocks]
    if case == "anderson":
        from scipy.stats import anderson

        projections = _projections()
        return lambda: [float(anderson(x, "norm", method="interpolate").statistic) for x in projections]
    if case == "holm":
        from statsmodels.stats.multitest import multipletests

        p = _p_values()
        return lambda: [multipletests(row, method="holm")[1].tolist() for row in p]
    raise ValueError(case)


def _sklearn_gp() -> Callable[[], Any]:
    import numpy as np
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF

    from protoqa_core.similarity.gaussian_process import REGRESSION_ALPHA

    gp = _gp_problems()

    def one(vectors: Any, members: Any, counts: Any, test: Any) -> list:
        out = np.zeros((len(test), members.shape[1]))
        for j in range(members.shape[1]):
            if members[:, j].any():
                model = GaussianProcessRegressor(RBF(1.0, "fixed"), alpha=REGRESSION_ALPHA / counts, optimizer=None)
                out[:, j] = model.fit(vectors, members[:, j].astype(float)).predict(test)
        return out.tolist()

    return lambda: [one(*problem) for problem in gp]


def _board() -> Any:
    from protoqa_core.io.records import Cluster, Question
    from protoqa_integrations.leaderboard.board import build_leaderboard
    from protoqa_integrations.leaderboard.report import SystemAnswers

    q = {
        f"q{i}": Question(f"q{i}", "name a pet", (Cluster(f"q{i}.0", ("dog",), 6), Cluster(f"q{i}.1", ("cat",), 3)))
        for i in range(40)
    }
    systems = [
        SystemAnswers(name, f"{name}.json", "predictions", {k: {a: 1} for k in q}, {k: [a] for k in q})
        for name, a in (("one", "dog"), ("two", "cat"), ('three: "q"', "fish"))
    ]
    return build_leaderboard(q, systems, metrics=["protoqa"], similarity="exact_match")


def _hub_model_index() -> Callable[[], Any]:
    from huggingface_hub import EvalResult, ModelCardData

    board = _board()

    def cards() -> dict[str, str]:
        out = {}
        for system in board.systems:
            results = [
                EvalResult(
                    task_type="text-generation",
                    task_name="Text Generation",
                    dataset_type="someone/protoqa",
                    dataset_name="ProtoQA dev",
                    dataset_split="validation",
                    metric_type=column.key,
                    metric_name=column.label,
                    metric_value=board.scores[column.key][system.name].mean,
                    metric_config=board.metric_signature(column),
                    metric_args={
                        "ci_low": board.scores[column.key][system.name].low,
                        "ci_high": board.scores[column.key][system.name].high,
                        "level": board.level,
                    },
                    verified=False,
                )
                for column in board.columns
                if system.name in board.scores[column.key]
            ]
            out[system.name] = ModelCardData(model_name=system.name, eval_results=results).to_yaml()
        return out

    return cards


def _child(case: str, side: str, output: str) -> None:
    """Do the job, write its result to ``output`` and print its CPU."""
    job = (_ours if side == "ours" else _library)(case)
    start = time.process_time()
    result = job()
    work = time.process_time() - start
    Path(output).write_text(json.dumps(result), encoding="utf-8")
    sys.stdout.write(json.dumps({"work_cpu_s": work}))


def _compare_files(case: str, ours: str, library: str) -> None:
    """Print how the two results agree (a process of its own, see :func:`_measure`)."""
    read = [json.loads(Path(f).read_text(encoding="utf-8")) for f in (ours, library)]
    sys.stdout.write(json.dumps(_compare(case, *read)))


def _flat(value: Any) -> list[float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return []


def _compare(case: str, ours: Any, library: Any) -> dict[str, Any]:
    if case == "model_index":
        import yaml

        ours = {k: yaml.safe_load(v)["model-index"] for k, v in ours.items()}
        library = {k: yaml.safe_load(v)["model-index"] for k, v in library.items()}
        return {"identical": ours == library, "items": len(ours)}
    if case == "progress":  # the same loop; what each writes to the log is the difference (see the ledger)
        return {"identical": None, "items": 2000}
    if case in ("treebank", "assignment"):
        return {"identical": ours == library, "items": len(ours) if isinstance(ours, list) else 1}
    if case == "kmeans":
        labels_equal = all(a[0] == b[0] for a, b in zip(ours, library, strict=True))
        return {"identical": ours == library, "labels_identical": labels_equal, "items": len(ours)}
    a, b = _flat(ours), _flat(library)
    if len(a) != len(b):
        return {"identical": False, "items": len(a), "shapes_differ": True}
    worst = max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)
    same = sum(x == y for x, y in zip(a, b, strict=True))
    return {"identical": a == b, "max_abs_difference": worst, "items": len(a), "items_identical": same}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--extra-path", default="", help="a folder put last on PYTHONPATH (for statsmodels)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated cases (default: all)")
    parser.add_argument("--json-out", type=Path, default=REPO / "benchmarks" / "results" / "ledger.json")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--compare", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    if args.compare:
        _compare_files(*args.compare)
        return
    path = os.pathsep.join(p for p in (str(REPO), str(REPO / "benchmarks"), args.extra_path) if p)
    # In a process of its own, so that this one stays small: a child's peak memory counts the
    # parent's pages it was forked with. From here on NLTK's data folder holds WordNet, as after a
    # user's first NLTK run.
    prepare = "from protoqa_core.wordnet.nltk_reader import get_wordnet, _nltk_data_dir; get_wordnet(); print(_nltk_data_dir())"
    nltk_data = subprocess.run(
        [sys.executable, "-c", prepare],
        env={**os.environ, "PYTHONPATH": path},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    env = {
        **os.environ,
        "PYTHONPATH": path,
        "LEDGER_DATA": str(args.data_dir.resolve()),
        "NLTK_DATA": nltk_data,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PROTOQA_PROGRESS_INTERVAL": "15",
    }
    results = ResultsFile(args.json_out, "python " + " ".join([os.path.relpath(__file__, REPO), *sys.argv[1:]]))
    for case in args.cases.split(","):
        _measure(case, args.rounds, env, results)


def _measure(case: str, rounds: int, env: dict[str, str], results: ResultsFile) -> None:
    # The results stay in files and are compared in a process of its own: a child's peak memory
    # counts the pages of the parent it was forked from, so this process stays as small as it starts.
    runs: dict[str, list] = {"ours": [], "library": []}
    load = round(os.getloadavg()[0], 1)
    script = str(Path(__file__).resolve())
    with tempfile.TemporaryDirectory() as scratch:
        outputs = {side: str(Path(scratch) / f"{side}.json") for side in runs}
        for _ in range(rounds):
            for side in runs:
                command = [sys.executable, script, "--child", case, side, outputs[side]]
                run = run_measured(command, Path(scratch), env, 900, f"{case} ({side})")
                runs[side].append((run.cpu, run.rss_mb, json.loads(run.stdout or b"{}")["work_cpu_s"]))
        compare = [sys.executable, script, "--compare", case, outputs["ours"], outputs["library"]]
        agreement = json.loads(subprocess.run(compare, env=env, check=True, capture_output=True).stdout)
    ours, library = (min(r[0] for r in runs[s]) for s in ("ours", "library"))
    row = {
        "case": case,
        "command": CASES[case][0],
        "lines": sum(len((REPO / f).read_text(encoding="utf-8").splitlines()) for f in CASES[case][3]),
        "installed": CASES[case][2],
        "cpu_s": round(ours, 3),
        "peak_mb": round(min(r[1] for r in runs["ours"])),
        "work_cpu_s": round(min(r[2] for r in runs["ours"]), 3),
        "baseline": CASES[case][1],
        "baseline_cpu_s": round(library, 3),
        "baseline_peak_mb": round(min(r[1] for r in runs["library"])),
        "baseline_work_cpu_s": round(min(r[2] for r in runs["library"]), 3),
        "ratio": round(ours / library, 3),
        "round_ratios": [round(a[0] / b[0], 3) for a, b in zip(runs["ours"], runs["library"], strict=True)],
        "rounds": rounds,
        "load": load,
        **agreement,
    }
    results.add(row)
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

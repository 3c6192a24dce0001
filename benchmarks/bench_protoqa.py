"""Benchmark of the ProtoQA metric: speed against a plain implementation of docs/spec.md, and memory.

Prints figures; asserts nothing about time (machines are noisy). Run from the
repository root:

    python benchmarks/bench_protoqa.py [--data-dir ../shared/data] [--baseline-questions N] [--only wup|lcs]

What is measured, in one run:

1. Baseline: the straightforward implementation of docs/spec.md section 1 — for each of
   the ten metrics, every (prediction, cluster string) WordNet similarity is
   computed by enumerating all partition pairs, with no caching
   (``tests/support/spec_reference.py``). Its scores are checked against ours.
2. Ours: ``evaluate_predictions`` for the same ten metrics, WordNet loaded but
   every similarity cache cleared first.
3. The whole command ``protoqa-eval TARGETS PREDICTIONS --similarity wordnet --json``
   in a fresh process (imports and WordNet load included), wall time and peak
   resident memory.
4. One WordNet similarity between two 30-token strings (cold caches), for ordinary
   sentences and for adversarial ones that repeat a few words.
5. Long cluster strings, under every similarity: the 50-character prediction
   "dog cat car dog cat car dog cat car dog cat car d" against a 500-token answer of
   those three words (ordered and shuffled), and a 1 MB answer (also as a whole
   ``protoqa-eval`` run in a fresh process, with its peak memory).
6. Wu-Palmer against WordNet on the same data, in this process: three rounds, the two
   alternating, each run from empty caches and Wu-Palmer tables after a garbage
   collection (so neither pays for the other's garbage); and as whole commands.
   Wu-Palmer reads each synset's walk from the walk file that is computed once per
   WordNet installation (``protoqa_core.wordnet.walk_table``); the time to compute that file
   is printed too, as is the same run with walks computed in the process.
7. ``lcs`` with 1,000 answers per question, and 10 predictions against 100 cluster
   strings of 10,000 characters; the baseline is the textbook dynamic-programming LCS
   the package used before, on a sample, scaled up.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from protoqa_core import similarity as sim_module  # noqa: E402
from protoqa_core import text as text_module  # noqa: E402
from protoqa_core.io.records import Cluster, Question  # noqa: E402
from protoqa_core.similarity import SIMILARITIES, collect_approximations, get_similarity, spans, wordnet, wordnet_wup  # noqa: E402  # noqa: E402
from protoqa_core.wordnet import lookup as wordnet_lookup  # noqa: E402
from protoqa_core.wordnet import walk_file, wu_palmer  # noqa: E402
from protoqa_core.wordnet.walk_table import WalkTable  # noqa: E402
from protoqa_metric import evaluate_predictions, read_predictions, read_targets  # noqa: E402
from protoqa_metric.metric_set import STANDARD_METRICS  # noqa: E402
from tests.support.spec_reference import reference_question_score, reference_wordnet_similarity  # noqa: E402


def clear_caches() -> None:
    """Every similarity cache and every Wu-Palmer table back to empty, then a full garbage
    collection, so that no timing pays for another's leftovers."""
    wordnet_wup._wup_tokens_similarity.cache_clear()
    wordnet_wup._phrase_wup.cache_clear()
    wordnet_wup._phrase_wup_reaches.cache_clear()
    wordnet_wup._groups_by_gaps.cache_clear()
    wordnet_wup._whole_group.cache_clear()
    wordnet._wordnet_tokens_similarity.cache_clear()
    spans.spans_with_synsets.cache_clear()
    spans.span_index.cache_clear()
    wordnet._answers_offer.cache_clear()
    text_module.content_tokens.cache_clear()
    wordnet_lookup._synset_cache.clear()
    fresh_wu_palmer()
    gc.collect()


def fresh_wu_palmer() -> None:
    """Replace the process's Wu-Palmer tables by empty ones, keeping the walk file it has open
    (its decoded names forgotten), so that a timed run starts cold but opens no file."""
    old = wu_palmer._shared
    table = old.walk_table() if old is not None else "find"
    if isinstance(table, WalkTable):
        table.forget_names()
    wu_palmer._shared = wu_palmer.WuPalmer(wordnet_lookup.open_wordnet(), walk_table=table)


def baseline(targets, predictions, qids) -> dict[str, float]:
    sums = {m.name: 0.0 for m in STANDARD_METRICS}
    for qid in qids:
        clusters = [(c.answers, c.count) for c in targets[qid].clusters]
        for m in STANDARD_METRICS:
            sums[m.name] += reference_question_score(
                predictions.get(qid, []),
                clusters,
                reference_wordnet_similarity,
                max_answers=m.max_answers,
                max_incorrect=m.max_incorrect,
                weighted=m.weighted,
                rounded=True,
            )
    return {k: v / len(qids) for k, v in sums.items()}


SENTENCE_A = (
    "people usually brush their teeth take a hot shower get dressed eat a big breakfast drink "
    "coffee check the news feed the dog lock the door grab keys wallet phone and kiss the family "
    "goodbye before driving to the office downtown"
)
SENTENCE_B = (
    "before work many folks shower brush teeth comb hair put on clothes make coffee read newspaper "
    "walk dog pack lunch water plants turn off lights lock house start car and drive to the office "
    "downtown every morning"
)


def thirty_tokens(text: str) -> str:
    tokens = text_module.content_tokens(text)
    return " ".join(tokens[:30])


def _parser() -> argparse.ArgumentParser:
    """The command line (the module docstring is its description)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument(
        "--baseline-questions",
        type=int,
        default=0,
        help="run the slow baseline on the first N questions only (0 = all)",
    )
    parser.add_argument(
        "--only",
        choices=("wup", "lcs"),
        action="append",
        help="run only these parts (Wu-Palmer against WordNet; LCS at scale); repeatable",
    )
    return parser


def main() -> None:
    args = _parser().parse_args()
    data = Path(args.data_dir)
    targets_path = data / "protoqa" / "dev.crowdsourced.jsonl"
    preds_path = data / "protoqa" / "dev.predictions.gpt2finetuned.json"
    targets = read_targets(targets_path)
    predictions = read_predictions(preds_path)
    wordnet_lookup.open_wordnet()
    qids = list(targets)
    base_qids = qids[: args.baseline_questions] if args.baseline_questions else qids
    n_pairs = sum(len(predictions.get(q, [])) * sum(len(c.answers) for c in targets[q].clusters) for q in qids)
    print(f"data: {len(qids)} questions, {n_pairs} (prediction, cluster string) pairs per metric")
    if args.only:
        # Loads what every similarity loads once per process (tokenizer, collocation list).
        evaluate_predictions(targets, predictions, "wordnet")
        if "wup" in args.only:
            wup_against_wordnet(targets, predictions, targets_path, preds_path)
        if "lcs" in args.only:
            lcs_at_scale(targets, predictions)
        return

    _against_baseline(targets, predictions, qids, base_qids)
    _whole_command(targets_path, preds_path)
    _one_similarity()
    long_strings()
    wup_against_wordnet(targets, predictions, targets_path, preds_path)
    lcs_at_scale(targets, predictions)


def _against_baseline(targets: dict, predictions: dict, qids: list[str], base_qids: list[str]) -> None:
    """Ten metrics under WordNet: ours with cold caches against the plain baseline, and the largest difference."""
    # 2. Ours, cold caches.
    clear_caches()
    start = time.perf_counter()
    ours = evaluate_predictions(targets, predictions, "wordnet")
    ours_seconds = time.perf_counter() - start
    ours_on_base = (
        ours.scores
        if base_qids == qids
        else {
            m.name: math.fsum(ours.per_question[q][m.name].score for q in base_qids) / len(base_qids)
            for m in STANDARD_METRICS
        }
    )

    # 1. Baseline.
    start = time.perf_counter()
    base = baseline(targets, predictions, base_qids)
    base_seconds = time.perf_counter() - start
    worst = max(abs(base[k] - ours_on_base[k]) for k in base)
    scale = len(qids) / len(base_qids)
    print(f"\nten metrics, WordNet similarity, {len(base_qids)} questions:")
    print(
        f"  baseline (plain docs/spec.md, no caching): {base_seconds:8.2f} s"
        + (f"  (x{scale:.1f} for all questions: {base_seconds * scale:.1f} s)" if scale != 1 else "")
    )
    print(f"  ours (scoring, cold caches):       {ours_seconds:8.2f} s for all {len(qids)} questions")
    print(f"  speed-up: {base_seconds * scale / ours_seconds:.0f}x")
    print(f"  largest score difference from the baseline: {worst:.2e}")


def _whole_command(targets_path: Path, preds_path: Path) -> None:
    """The whole command in a fresh process: wall time and peak memory."""
    exe = Path(sys.executable).parent / "protoqa-eval"
    cmd = [
        str(exe) if exe.exists() else "protoqa-eval",
        str(targets_path),
        str(preds_path),
        "--similarity",
        "wordnet",
        "--json",
    ]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    status = "ok" if done.returncode == 0 else f"FAILED: {done.stderr.strip()}"
    print(
        f"\nwhole command ({' '.join(Path(c).name if i == 0 else c for i, c in enumerate(cmd[:1] + ['TARGETS', 'PREDICTIONS'] + cmd[3:]))}):"
    )
    print(f"  wall time {wall:.2f} s, peak memory {peak_mb:.0f} MB ({status})")


def _one_similarity() -> None:
    """One WordNet similarity between two 30-token strings, cold caches, ordinary and adversarial."""
    print("\none WordNet similarity between two 30-token strings (cold caches):")
    rng = random.Random(0)
    vocab = [
        "dog",
        "cat",
        "hot",
        "car",
        "gum",
        "run",
        "shower",
        "house",
        "work",
        "home",
        "ice",
        "cream",
        "play",
        "age",
        "name",
    ]
    cases = {
        "two ordinary sentences": (thirty_tokens(SENTENCE_A), thirty_tokens(SENTENCE_B)),
        "sentence vs itself reversed": (
            thirty_tokens(SENTENCE_A),
            " ".join(reversed(thirty_tokens(SENTENCE_A).split())),
        ),
        "adversarial: 15-word vocabulary": (
            " ".join(rng.choice(vocab) for _ in range(30)),
            " ".join(rng.choice(vocab) for _ in range(30)),
        ),
    }
    for name, (a, b) in cases.items():
        clear_caches()
        start = time.perf_counter()
        value = sim_module.wordnet_similarity(a, b)
        ms = (time.perf_counter() - start) * 1000
        print(f"  {name:34s} {ms:8.1f} ms  (similarity {value:.4f})")
    a, b = cases["two ordinary sentences"]
    short_a, short_b = " ".join(a.split()[:6]), " ".join(b.split()[:6])
    start = time.perf_counter()
    value = reference_wordnet_similarity(short_a, short_b)
    print(
        f"  for scale, brute force on 6 tokens each: {(time.perf_counter() - start) * 1000:.0f} ms (similarity {value:.4f})"
    )


def textbook_lcs_ratio(prediction: str, answer: str) -> float:
    """The O(|x| |y|) dynamic program (the package's LCS before the bit-parallel one)."""
    if not prediction and not answer:
        return 1.0
    if not prediction or not answer:
        return 0.0
    short, long_ = sorted((prediction, answer), key=len)
    previous = [0] * (len(short) + 1)
    for ch in long_:
        current = [0]
        for j, sh in enumerate(short):
            current.append(previous[j] + 1 if ch == sh else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1] / len(long_)


PREDICTION_50 = "dog cat car dog cat car dog cat car dog cat car d"


def long_strings() -> None:
    rng = random.Random(0)
    cases = {
        "500 tokens, ordered": " ".join(["dog", "cat", "car"] * 167)[:1999],
        "500 tokens, shuffled": " ".join(rng.choice(["dog", "cat", "car"]) for _ in range(500)),
        "1 MB (250,000 tokens)": "dog " * 250_000,
    }
    print("\nlong cluster strings against the 50-character prediction (one pair, cold caches):")
    print("  (before these bounds: over 600 s for the 500-token case, 72 s and 5 GB for 1 MB)")
    for case, answer in cases.items():
        figures = []
        for name in SIMILARITIES:
            clear_caches()
            with collect_approximations() as cut:
                start = time.perf_counter()
                value = get_similarity(name).best(PREDICTION_50, [answer])
                seconds = time.perf_counter() - start
            figures.append(f"{name} {seconds:.2f} s ({value:.3f}{', bound' if cut else ''})")
        print(f"  {case}: " + "; ".join(figures))
    # The whole command on the 1 MB answer, in a fresh process, with its peak memory.
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        t, p = Path(tmp) / "t.jsonl", Path(tmp) / "p.json"
        answer = cases["1 MB (250,000 tokens)"]
        t.write_text(
            json.dumps(
                {
                    "metadata": {"id": "q1"},
                    "question": {"normalized": "name an animal"},
                    "answers": {
                        "raw": {answer: 3, "bird": 1},
                        "clusters": {
                            "q1.0": {"count": 3, "answers": [answer]},
                            "q1.1": {"count": 1, "answers": ["bird"]},
                        },
                    },
                }
            )
            + "\n"
        )
        p.write_text(json.dumps({"q1": [PREDICTION_50, "dog", "bird"]}))
        argv = ["protoqa-eval", str(t), str(p), "--similarity", "wordnet,exact_match,lcs", "--json"]
        code = (
            f"import resource, runpy, sys; sys.argv = {argv!r}\n"
            "try:\n    runpy.run_module('protoqa_metric', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
        )
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}
        )
        wall = time.perf_counter() - start
        peak = [line for line in done.stderr.splitlines() if line.startswith("PEAK")]
        peak_mb = int(peak[-1].split()[1]) / 1024 if peak else float("nan")
        print(
            f"  whole protoqa-eval run, 1 MB answer, wordnet + exact_match + lcs: {wall:.2f} s, "
            f"peak memory {peak_mb:.0f} MB"
        )


def wup_against_wordnet(targets, predictions, targets_path: Path, preds_path: Path, rounds: int = 3) -> None:
    print(
        "\nWu-Palmer against WordNet, same data, this process, alternating, each run from empty caches "
        "and tables after a garbage collection:"
    )
    start = time.perf_counter()
    if wu_palmer._wu_palmer().walk_table() is None:  # built here on first use, outside the timed runs
        print("  (no walk file: the cache folder cannot be written; walks are computed in the process)")
    print(f"  walk file found or computed in {time.perf_counter() - start:.2f} s")
    times: dict[str, list[float]] = {"wordnet": [], "wordnet_wup": []}
    for _ in range(rounds):
        for name in times:
            clear_caches()
            start = time.perf_counter()
            evaluate_predictions(targets, predictions, name)
            times[name].append(time.perf_counter() - start)
        print(
            f"  wordnet {times['wordnet'][-1]:.3f} s, wordnet_wup {times['wordnet_wup'][-1]:.3f} s "
            f"(load average {os.getloadavg()[0]:.1f})"
        )
    wn, wup = min(times["wordnet"]), min(times["wordnet_wup"])
    print(f"  fastest of {rounds}: wordnet {wn:.3f} s, wordnet_wup {wup:.3f} s, ratio {wup / wn:.1f}x")
    # Without the walk file (a cache folder that cannot be written): walks computed here.
    clear_caches()
    with_file = wu_palmer._shared
    wu_palmer._shared = wu_palmer.WuPalmer(wordnet_lookup.open_wordnet(), walk_table=None)
    start = time.perf_counter()
    evaluate_predictions(targets, predictions, "wordnet_wup")
    print(f"  wordnet_wup with walks computed in this process (no walk file): {time.perf_counter() - start:.3f} s")
    wu_palmer._shared = with_file
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "walks.bin"
        start = time.perf_counter()
        walk_file._build_walk_file(path, wordnet_lookup.open_wordnet().folder)
        print(
            f"  computing the walk file (once per WordNet installation, protoqa-eval prepare): "
            f"{time.perf_counter() - start:.1f} s, {path.stat().st_size / 1e6:.1f} MB"
        )
    exe = Path(sys.executable).parent / "protoqa-eval"
    for name in ("wordnet", "wordnet_wup"):
        cmd = [
            str(exe) if exe.exists() else "protoqa-eval",
            str(targets_path),
            str(preds_path),
            "--similarity",
            name,
            "--json",
        ]
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        print(f"  whole command --similarity {name}: {time.perf_counter() - start:.2f} s")


def lcs_at_scale(targets, predictions) -> None:
    rng = random.Random(1)
    pool = sorted(
        {a for q in targets.values() for c in q.clusters for a in c.answers}
        | {a for answers in predictions.values() for a in answers}
    )
    many = {}
    for qid in targets:
        own = list(predictions.get(qid, []))
        many[qid] = (own + [rng.choice(pool) for _ in range(1000)])[:1000]
    print("\nlcs with 1,000 answers per question:")
    start = time.perf_counter()
    evaluate_predictions(targets, many, "lcs")
    ours = time.perf_counter() - start
    sample = list(targets)[:2]
    start = time.perf_counter()
    baseline_sim = sim_module.Similarity("lcs_textbook", textbook_lcs_ratio, description="textbook LCS")
    evaluate_predictions({q: targets[q] for q in sample}, {q: many[q] for q in sample}, baseline_sim)
    base = (time.perf_counter() - start) * len(targets) / len(sample)
    print(
        f"  ours {ours:.2f} s ({'under' if ours < 10 else 'NOT under'} 10 s); textbook LCS (the previous code) "
        f"{base:.1f} s, scaled from {len(sample)} questions (before: 148 s)"
    )

    rng = random.Random(2)
    letters = "abcdefghijklmnopqrstuvwxyz     "
    clusters = tuple(Cluster(f"big.{k}", ("".join(rng.choice(letters) for _ in range(10_000)),), 1) for k in range(100))
    preds = ["".join(rng.choice(letters) for _ in range(rng.randint(5, 50))) for _ in range(10)]
    start = time.perf_counter()
    evaluate_predictions([Question("big", "", clusters)], {"big": preds}, "lcs")
    ours = time.perf_counter() - start
    start = time.perf_counter()
    textbook_lcs_ratio(preds[0].lower()[:50].strip(), clusters[0].answers[0])
    base = (time.perf_counter() - start) * 10 * 100
    print(
        f"10 predictions x 100 cluster strings of 10,000 characters, lcs: ours {ours:.2f} s; "
        f"textbook LCS {base:.0f} s (scaled from one pair; before: over 60 s)"
    )
    for name in ("longest_common_substring", "jaro_winkler"):
        start = time.perf_counter()
        evaluate_predictions([Question("big", "", clusters)], {"big": preds}, name)
        print(f"  the same with {name}: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()

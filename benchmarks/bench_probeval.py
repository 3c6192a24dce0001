"""Benchmark of ProbEval with HAC over MiniLM embeddings and WordNet matching (``--clustering hac``).

HAC is named explicitly: the default would use the targets' human clusters, which embed nothing.

Prints figures; asserts nothing about time (machines are noisy). Run from the
repository root:

    python benchmarks/bench_probeval.py [--data-dir ../shared/data] [--skip-process]

Data: CFC dev targets (54 questions) and the GPT-2 XL one-shot samples
(``dev.predictions.gpt2-xl.oneshot.json``, 100 samples for each of 55 question ids,
one of which, r3q21, has no targets and is ignored).

What is measured:

1. The whole command ``probeval TARGETS SAMPLES --clustering hac --ignore-unknown --json`` in a fresh
   process (imports, model load, embedding, clustering, matching): wall time and peak
   resident memory. Target: under 20 s.
2. The same work in this process, stage by stage: loading the model, embedding the
   target answers, clustering them, matching the samples with WordNet. Every
   string handed to the model and every WordNet similarity computed is counted, to
   show that each distinct string is embedded once and each (sample, answer) pair is
   scored once.

``benchmarks/bench_probeval_scale.py`` measures 10,000 questions (time, CPU time, peak
memory, growth with the number of questions, and the numbers before/after a change).
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def whole_process(targets: Path, samples: Path) -> None:
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cfc_probeval",
            str(targets),
            str(samples),
            "--clustering",
            "hac",
            "--ignore-unknown",
            "--json",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"probeval failed:\n{done.stderr}")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result = json.loads(done.stdout)
    print("1. whole command, fresh process")
    print(f"   wall time            {wall:8.2f} s   (target < 20 s)")
    print(f"   peak resident memory {peak_mb:8.0f} MB")
    print(f"   KL                   {result['kl']:.4f} over {result['num_questions']} questions")
    print(f"   work                 {result['stats']}")
    print(f"   signature            {result['signature']}")


def stages(targets_path: Path, samples_path: Path) -> None:
    start = time.perf_counter()
    import warnings

    import cfc_probeval.matching as matching_module
    from cfc_probeval import ProbEval, read_samples, read_targets
    from cfc_probeval.embedders import _load_sentence_transformer
    from cfc_probeval.inputs import drop_unknown_ids
    from cfc_probeval.probeval import normalized_sample_counts

    t_import = time.perf_counter() - start

    start = time.perf_counter()
    targets = read_targets(targets_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        samples = drop_unknown_ids(read_samples(samples_path), targets, ignore_unknown=True)
    t_read = time.perf_counter() - start

    pe = ProbEval("hac")
    embedder = pe.embedder
    start = time.perf_counter()
    _load_sentence_transformer(embedder.location, embedder.device)
    t_load = time.perf_counter() - start

    # Count what reaches the model and WordNet, underneath the caches.
    encoded: list[str] = []
    original_encode = embedder._encode

    def counting_encode(texts):
        encoded.extend(texts)
        return original_encode(texts)

    embedder._encode = counting_encode
    wordnet_calls: list[tuple[str, str]] = []
    original_similarity = matching_module.wordnet_similarity

    def counting_similarity(sample, answer, **options):
        wordnet_calls.append((sample, answer))
        return original_similarity(sample, answer, **options)

    matching_module.wordnet_similarity = counting_similarity

    start = time.perf_counter()
    pe._embed_in_advance(
        list(targets.values()),  # as evaluate() does
        [normalized_sample_counts(samples.get(qid, {})) for qid in targets],
    )
    t_embed = time.perf_counter() - start

    start = time.perf_counter()
    clusters = {qid: pe.clusters_for(truth) for qid, truth in targets.items()}
    t_cluster = time.perf_counter() - start

    start = time.perf_counter()
    results = {qid: pe.score_question(targets[qid], samples.get(qid, {}), clusters[qid]) for qid in targets}
    t_match = time.perf_counter() - start
    matching_module.wordnet_similarity = original_similarity

    seconds = {"import": t_import, "read": t_read, "load": t_load, "embed": t_embed, "cluster": t_cluster}
    _print_stages({**seconds, "match": t_match}, targets, samples, clusters, results, encoded, wordnet_calls)


def _print_stages(
    seconds: dict[str, float],
    targets: dict,
    samples: dict,
    clusters: dict,
    results: dict,
    encoded: list[str],
    wordnet_calls: list[tuple[str, str]],
) -> None:
    """Section 2 of the report: each stage's time beside what it did, and whether nothing was done twice."""
    from cfc_probeval.probeval import normalized_sample_counts

    t_import, t_read, t_load = seconds["import"], seconds["read"], seconds["load"]
    t_embed, t_cluster, t_match = seconds["embed"], seconds["cluster"], seconds["match"]
    answers = set().union(*(t.answer_counts for t in targets.values()))
    distinct_samples = sum(len(normalized_sample_counts(s)) for s in samples.values())
    kl = sum(r.kl for r in results.values()) / len(results)
    print("2. stages in this process")
    print(f"   imports                      {t_import:8.2f} s")
    print(
        f"   read targets and samples     {t_read:8.2f} s   {len(targets)} questions, "
        f"{sum(sum(s.values()) for s in samples.values())} samples ({distinct_samples} distinct after normalizing)"
    )
    print(f"   load all-MiniLM-L6-v2        {t_load:8.2f} s")
    print(
        f"   embed target answers        {t_embed:8.2f} s   {len(encoded)} strings encoded, "
        f"{len(set(encoded))} distinct, {len(answers)} distinct answers"
    )
    print(
        f"   HAC clustering               {t_cluster:8.2f} s   "
        f"{sum(len(c) for c in clusters.values())} clusters (human: {sum(len(t.clusters) for t in targets.values())})"
    )
    print(
        f"   WordNet matching + KL        {t_match:8.2f} s   {len(wordnet_calls)} similarities computed, "
        f"{len(set(wordnet_calls))} distinct pairs"
    )
    print(f"   each string embedded once:   {len(encoded) == len(set(encoded)) == len(answers)}")
    print(f"   each pair scored once:       {len(wordnet_calls) == len(set(wordnet_calls))}")
    print(f"   KL                           {kl:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--skip-process", action="store_true", help="skip the fresh-process run")
    args = parser.parse_args()
    targets = args.data_dir / "cfc" / "dev.targets.jsonl"
    samples = args.data_dir / "cfc" / "dev.predictions.gpt2-xl.oneshot.json"
    if not targets.is_file() or not samples.is_file():
        raise SystemExit(f"CFC dev data not found under {args.data_dir}")
    print(f"ProbEval benchmark: {targets.name} x {samples.name}, HAC + WordNet (--clustering hac)")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    if not args.skip_process:
        whole_process(targets, samples)
    stages(targets, samples)


if __name__ == "__main__":
    main()

"""Automatic clusters kept in the user's cache: the same scores warm, cold or off; damaged entries rebuilt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np

from cfc_probeval import ProbEval, QuestionTargets
from cfc_probeval.cluster_cache import CLUSTER_CACHE, cluster_cache_key
from cfc_probeval.clustering import HACClusterer
from cfc_probeval.embedders import CharNgramEmbedder, Embedder
from protoqa_core.io.cache_files import CacheWarning

ANSWERS = {
    "q1": {"dog": 5, "dogs": 2, "puppy": 1, "cat": 4, "cats": 1, "goldfish": 3, "gold fish": 1},
    "q2": {"at night": 6, "night": 4, "nighttime": 2, "morning": 3, "in the morning": 2, "noon": 1},
}
TARGETS = {qid: QuestionTargets(qid, (), {a: float(n) for a, n in counts.items()}) for qid, counts in ANSWERS.items()}
SAMPLES = {"q1": ["dog"] * 4 + ["cat"] * 3 + ["lizard"], "q2": ["night"] * 5 + ["noon"]}


def _score():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = ProbEval("hac", embedder=CharNgramEmbedder(), distance_threshold=0.6).evaluate(TARGETS, SAMPLES)
    return result, [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


def test_a_warm_cache_gives_the_same_scores_without_embedding(user_cache):
    cold, _ = _score()
    assert cold.stats["strings_embedded"] == 13 and len(list(CLUSTER_CACHE.folder.iterdir())) == 2
    warm, messages = _score()
    assert warm.stats["strings_embedded"] == 0 and messages == []
    assert warm.per_question == cold.per_question and warm.kl == cold.kl and warm.signature == cold.signature
    assert [c.answers for c in warm.questions["q1"].clusters] == [c.answers for c in cold.questions["q1"].clusters]


def test_a_damaged_entry_is_named_in_one_warning_and_rebuilt(user_cache):
    cold, _ = _score()
    entry = sorted(CLUSTER_CACHE.folder.iterdir())[0]
    data = bytearray(entry.read_bytes())
    data[-3] ^= 1
    entry.write_bytes(bytes(data))
    rebuilt, messages = _score()
    assert messages == [f"cache entry {entry} is damaged or cut short (checksum mismatch); rebuilding it"]
    assert rebuilt.per_question == cold.per_question and 0 < rebuilt.stats["strings_embedded"] < 13
    again, messages = _score()
    assert messages == [] and again.stats["strings_embedded"] == 0 and again.per_question == cold.per_question


def test_everything_that_changes_the_clusters_is_in_the_key():
    answers = [("dog", 2.0), ("cat", 1.0)]
    keys = {
        cluster_cache_key("q1", answers, HACClusterer(), CharNgramEmbedder()),
        cluster_cache_key("q2", answers, HACClusterer(), CharNgramEmbedder()),
        cluster_cache_key("q1", [("dog", 2.0), ("cat", 2.0)], HACClusterer(), CharNgramEmbedder()),
        cluster_cache_key("q1", answers, HACClusterer(distance_threshold=0.4), CharNgramEmbedder()),
        cluster_cache_key("q1", answers, HACClusterer(), CharNgramEmbedder(dimension=64)),
    }
    assert len(keys) == 5 and None not in keys

    class Outside(Embedder):
        name = "outside"

        def _encode(self, texts):
            return np.ones((len(texts), 2))

    assert cluster_cache_key("q1", answers, HACClusterer(), Outside()) is None  # what it depends on is unknown


def test_the_command_reads_and_writes_the_cache_unless_told_not_to(user_cache, tmp_path):
    targets = tmp_path / "raw.jsonl"
    targets.write_text(
        "".join(
            json.dumps({"metadata": {"id": qid}, "question": {"normalized": "name a pet"}, "answers": {"raw": raw}})
            + "\n"
            for qid, raw in ANSWERS.items()
        )
    )
    samples = tmp_path / "samples.json"
    samples.write_text(json.dumps(SAMPLES))
    setting = ["--clustering", "hac", "--embedder", "char-ngrams", "--json"]

    def probeval(*extra):
        done = subprocess.run(
            [sys.executable, "-m", "cfc_probeval", str(targets), str(samples), *setting, *extra],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    off = probeval("--no-cache")
    assert not CLUSTER_CACHE.folder.exists()
    cold, warm = probeval(), probeval()
    assert len(list(CLUSTER_CACHE.folder.iterdir())) == 2
    assert cold["stats"]["strings_embedded"] == 13 and warm["stats"]["strings_embedded"] == 0
    assert off["per_question"] == cold["per_question"] == warm["per_question"] and off["kl"] == warm["kl"]

"""The cluster-level study: its measures on a hand-made example, its inputs, its protocol and its reports."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from studies.validation.partitions import adjusted_rand, blanc, contingency, v_measure

ROOT = Path(__file__).resolve().parents[2]


def test_blanc_and_ari_on_a_hand_made_example():
    """Key {a, a, b} {c, d}; response {a, a} {b} {c, d} (five mentions, "a" twice).

    Pairs: 10 in all. Key coreference pairs: 3 (in {a,a,b}) + 1 (in {c,d}) = 4; response
    coreference pairs: 1 ({a,a}) + 1 ({c,d}) = 2; in both: 2.
    Coreference links: right 2, wrong in the response 0, missed 2: P 2/2 = 1, R 2/4 = 1/2, F 2/3.
    Non-coreference links: key 10 - 4 = 6, response 10 - 2 = 8, in both 10 - 4 - 2 + 2 = 6:
    P 6/8 = 3/4, R 6/6 = 1, F 2 (3/4) / (7/4) = 6/7.
    BLANC = (2/3 + 6/7) / 2 = 16/21.
    ARI: index 2, expected 4 * 2 / 10 = 0.8, maximum (4 + 2) / 2 = 3: (2 - 0.8) / (3 - 0.8) = 6/11.
    """
    table = contingency(["K1", "K1", "K2"], ["a", "b", "cd"], [2, 1, 2])
    assert table.tolist() == [[2.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    assert blanc(table) == pytest.approx(16 / 21)
    assert adjusted_rand(table) == pytest.approx(6 / 11)


def test_blanc_edge_cases():
    """Identical clusterings score 1; all-in-one against all-singletons scores 0; with no coreference
    link on either side BLANC is the non-coreference F1 (here 1)."""
    assert blanc(np.array([[2.0, 0.0], [0.0, 3.0]])) == pytest.approx(1.0)
    assert blanc(np.array([[1.0, 1.0, 1.0]])) == 0.0
    assert blanc(np.eye(3)) == pytest.approx(1.0)
    assert blanc(np.array([[1.0]])) == 1.0


def test_weighted_measures_equal_scikit_learn_on_expanded_occurrences():
    from sklearn.metrics import adjusted_rand_score, v_measure_score

    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(2, 12))
        key, resp, weight = rng.integers(0, 3, n), rng.integers(0, 4, n), rng.integers(1, 5, n)
        table = contingency(list(key), list(resp), list(weight))
        k_exp, r_exp = np.repeat(key, weight), np.repeat(resp, weight)
        assert adjusted_rand(table) == pytest.approx(adjusted_rand_score(k_exp, r_exp))
        assert v_measure(table) == pytest.approx(v_measure_score(k_exp, r_exp))


def test_contingency_refuses_bad_weights():
    with pytest.raises(ValueError, match="weights must be finite"):
        contingency(["a"], [0], [float("nan")])
    with pytest.raises(ValueError, match="1 key labels, 2 response labels"):
        contingency(["a"], [0, 1], [1, 1])


def _targets(tmp_path: Path, clusters: dict, raw: dict) -> Path:
    path = tmp_path / "t.jsonl"
    row = {"metadata": {"id": "q1"}, "question": {"normalized": "q?"}, "answers": {"raw": raw, "clusters": clusters}}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def test_mentions_follow_occurrence_lists_and_distinct_lists(tmp_path):
    from studies.validation.cluster_agreement import read_questions

    # Occurrence lists (CFC test's form): "person" three times in one cluster, once in another.
    occ = _targets(
        tmp_path,
        {
            "q1.0": {"count": 4, "answers": ["person", "person", "person", "man"]},
            "q1.1": {"count": 1, "answers": ["person"]},
        },
        {"person": 4, "man": 1},
    )
    (q,) = read_questions(occ)
    assert sorted(q.mentions) == [(0, "q1.0", 3.0), (0, "q1.1", 1.0), (1, "q1.0", 1.0)] and q.split_strings == 1
    # Distinct lists (CFC dev's and ProtoQA dev's form): a string carries its raw count.
    dis = _targets(tmp_path, {"q1.0": {"count": 5, "answers": ["person", "man"]}}, {"person": 4, "man": 1})
    (q,) = read_questions(dis)
    assert sorted(q.mentions) == [(0, "q1.0", 4.0), (1, "q1.0", 1.0)]


def test_controls_and_normalization(shared_data):
    from studies.validation.cluster_agreement import CONTROLS, ClusterMaker, Question, normalized_key

    assert normalized_key("A Person") == normalized_key("persons") == "person"
    q = Question("q", ["person", "a person", "car", "automobile"], [3.0, 1.0, 2.0, 1.0], [], source="x")
    maker = ClusterMaker()
    labels = {c.label: maker.labels(c, q, 0).tolist() for c in CONTROLS}
    assert labels["one_cluster"] == [0, 0, 0, 0] and labels["one_per_string"] == [0, 1, 2, 3]
    assert labels["normalized_strings"] == [0, 0, 1, 2]
    assert labels["wordnet_components"][2] == labels["wordnet_components"][3]  # car and automobile share a synset


def test_committed_report_names_the_protocol_file_it_ran_under():
    report = json.loads((ROOT / "studies/reports/clusters.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256((ROOT / "studies/validation/protocol.toml").read_bytes()).hexdigest()
    assert report["protocol"]["sha256"] == digest, "protocol.toml changed after the report: rerun the study"
    assert len(report["protocol"]["commit"] or "") == 40
    assert report["questions_limit"] is None and report["seeds"] == [0, 1, 2, 3, 4]


def test_documents_state_the_cluster_claims_of_the_committed_report():
    from studies.validation.claims import rewrite_claims
    from studies.validation.cluster_report import CLUSTER_CLAIM_FILES, cluster_claims

    claims = cluster_claims(json.loads((ROOT / "studies/reports/clusters.json").read_text(encoding="utf-8")))
    for name in CLUSTER_CLAIM_FILES:
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "<!-- clusters:headline -->" in text, name
        assert rewrite_claims(text, claims, marker="clusters") == text, (
            f"{name}: run python -m studies.validation clusters"
        )


AUDIT_SCRIPT = r"""
import os, sys
opened = []

def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0]).replace(os.sep, "/")
        if "/cfc/test." in path:
            opened.append(path)
            raise PermissionError(f"the selection opened a CFC test file: {path}")

sys.addaudithook(hook)
from studies.validation.cluster_agreement import load_protocol, protocol_grid, select_on_dev

grid = [c for c in protocol_grid(load_protocol()[0]) if c.embedder == "char-ngrams"][::12]
choice = select_on_dev(sys.argv[1], num_questions=2, grid=grid, seeds=[0, 1], nested_resamples=5)
print("chosen:", choice.candidates[choice.selected].label)
print("test files opened by the selection:", len(opened))
try:
    open(os.path.join(sys.argv[1], "cfc", "test.targets.jsonl")).close()
except PermissionError:
    print("hook active")
"""


def test_cluster_selection_opens_no_cfc_test_file(shared_data, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", AUDIT_SCRIPT, str(shared_data)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "test files opened by the selection: 0" in done.stdout
    assert "chosen: " in done.stdout and "hook active" in done.stdout


@pytest.mark.slow
def test_clusters_command_end_to_end_on_a_slice(shared_data, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    out = tmp_path / "reports"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "studies.validation",
            "clusters",
            "--questions",
            "2",
            "--data-dir",
            str(shared_data),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "clusters.json").read_text(encoding="utf-8"))
    assert report["questions_limit"] == 2 and report["cfc_test"]["questions"] == 2
    assert set(report["cfc_test"]["default_vs_controls"]) == {
        "one_cluster",
        "one_per_string",
        "normalized_strings",
        "wordnet_components",
    }
    assert "## Protocol" in (out / "clusters.md").read_text(encoding="utf-8")


def test_clusters_command_refuses_a_missing_data_folder(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "studies.validation",
            "clusters",
            "--data-dir",
            str(tmp_path / "none"),
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "data folder not found" in done.stderr and "Traceback" not in done.stderr


def test_raw_answers_the_annotators_left_out_are_counted_not_clustered(tmp_path):
    from studies.validation.cluster_agreement import read_questions

    path = _targets(tmp_path, {"q1.0": {"count": 4, "answers": ["person"]}}, {"person": 4, "answer": 1})
    (q,) = read_questions(path)
    assert q.strings == ["person"] and q.unclustered == 1

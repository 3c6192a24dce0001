"""The cluster-level study: its measures on a hand-made example, its inputs, its protocol and its reports."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from studies.validation.partitions import adjusted_rand, blanc, contingency, v_measure
from tests.support.processes import run_python
from tests.support.selection_audit import audited_selection

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
    from studies.validation.cluster_candidates import read_questions

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
    from studies.validation.cluster_candidates import CONTROLS, ClusterMaker, Question, normalized_key

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
        assert "<!-- clusters:headline -->" in text or "<!-- clusters:trust -->" in text, name
        assert rewrite_claims(text, claims, marker="clusters") == text, (
            f"{name}: run python -m studies.validation clusters"
        )


_SELECTION = r"""
from studies.validation.cluster_agreement import dev_report, select_on_dev

choice = select_on_dev(sys.argv[1], num_questions=2, seeds=[0], resamples=20)
report = dev_report(choice)
print("chosen:", report["chosen"])
print("criteria:", ",".join(sorted(report["criteria"])))
"""


@pytest.mark.slow
def test_cluster_selection_opens_no_cfc_test_file(shared_data, tmp_path):
    stdout = audited_selection(_SELECTION, shared_data, tmp_path)
    assert "chosen: " in stdout
    criteria = {f"{c}:{d}" for c in ("answer_sets", "blanc", "panel", "pools") for d in ("cfc_dev", "protoqa_dev")}
    assert f"criteria: {','.join(sorted(criteria))}" in stdout


@pytest.mark.slow
def test_clusters_command_end_to_end_on_a_slice(shared_data, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    out = tmp_path / "reports"
    done = run_python(
        ["-m", "studies.validation", "clusters", "--questions", "2", "--data-dir", str(shared_data), "--out", str(out)],
        ROOT,
        env,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "clusters.json").read_text(encoding="utf-8"))
    assert report["questions_limit"] == 2 and report["cfc_test"]["questions"] == 2
    others = set(report["cfc_test"]["system_level"]["new_minus"])
    assert {"one_cluster", "one_per_string", "normalized_strings", "wordnet_components"} <= others
    assert report["dev"]["old"] in others or report["dev"]["chosen"] == report["dev"]["old"]
    page = (out / "clusters.md").read_text(encoding="utf-8")
    assert "## Protocol" in page and "## The dev system panel" in page and "## CFC test (read after the choice)" in page


def test_clusters_command_refuses_a_missing_data_folder(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = run_python(
        ["-m", "studies.validation", "clusters", "--data-dir", str(tmp_path / "none"), "--out", str(tmp_path)],
        ROOT,
        env,
        timeout=300,
    )
    assert done.returncode == 2 and "data folder not found" in done.stderr and "Traceback" not in done.stderr


def test_raw_answers_the_annotators_left_out_are_counted_not_clustered(tmp_path):
    from studies.validation.cluster_candidates import read_questions

    path = _targets(tmp_path, {"q1.0": {"count": 4, "answers": ["person"]}}, {"person": 4, "answer": 1})
    (q,) = read_questions(path)
    assert q.strings == ["person"] and q.unclustered == 1


def test_each_control_recomputed_on_a_hand_made_example(shared_data):
    """Four strings: "person" x3 and "a person" x1 (annotators' cluster P), "car" x2 and "automobile" x1 (C).

    Seven mentions, 21 pairs; key coreference pairs 6 (P: 4 mentions) + 3 (C: 3 mentions) = 9, non-coreference 12.
    - one cluster: response coreference 21, right 9: F_c = 2 * (9/21) * 1 / (9/21 + 1) = 0.6; F_n = 0 -> 0.3.
    - one per string: coreference pairs 3 ("person") + 1 ("car") = 4, all right: F_c = 2 * 1 * (4/9) / (13/9)
      = 8/13; non-coreference 17, right 12: F_n = 2 * (12/17) / (12/17 + 1) = 24/29 -> (8/13 + 24/29) / 2.
    - normalized strings ({person, a person} {car} {automobile}): coreference 6 + 1 = 7, right: F_c = 14/16;
      non-coreference 14, right 12: F_n = 24/26 -> (7/8 + 12/13) / 2.
    - WordNet components ({person, a person} {car, automobile}): the annotators' clustering, 1.0.
    Each control's share of a clustering that scores 0.9, and the paired difference, follow.
    """
    from studies.validation.cluster_candidates import CONTROLS, ClusterMaker, Question, question_scores
    from studies.validation.criteria import Criterion, control_shares, paired

    q = Question(
        "q",
        ["person", "a person", "car", "automobile"],
        [3.0, 1.0, 2.0, 1.0],
        [(0, "P", 3.0), (1, "P", 1.0), (2, "C", 2.0), (3, "C", 1.0)],
        source="hand",
    )
    maker = ClusterMaker()
    expected = {
        "one_cluster": 0.3,
        "one_per_string": (8 / 13 + 24 / 29) / 2,
        "normalized_strings": (7 / 8 + 12 / 13) / 2,
        "wordnet_components": 1.0,
    }
    got = {c.label: question_scores(q, maker.labels(c, q, 0))["blanc"] for c in CONTROLS}
    assert got == pytest.approx(expected)
    # A clustering at 0.9 on this question and a second question where every option scores 1.
    names = list(expected)
    per_question = np.array([[0.9, 1.0]] + [[expected[n], 1.0] for n in names])
    criterion = Criterion("blanc", "hand", 0.01, per_question=per_question)
    shares = control_shares([criterion], 0, {n: i + 1 for i, n in enumerate(names)})["blanc:hand"]
    assert shares == pytest.approx({n: (expected[n] + 1) / 2 / 0.95 for n in names})
    boot = criterion.resampled(500, 0)
    diff = paired(criterion, boot, 0, 1)  # clustering - one_cluster: 0.3 on average, 0 to 0.6 per resample
    assert diff["diff"] == pytest.approx(0.3) and diff["ci"]["low"] == pytest.approx(0.0)
    assert diff["ci"]["high"] == pytest.approx(0.6)


def test_rule_replaces_only_when_non_inferior_everywhere_and_better_somewhere():
    from studies.validation.criteria import Criterion, choose

    # Candidates: 0 current, 1 better on A and equal on B, 2 better on A but worse on B, 3 a control equal
    # to the current everywhere (as good, so simpler: it ships), over 40 questions.
    rng = np.random.default_rng(0)
    base = rng.normal(0.5, 0.05, size=40)
    a = np.stack([base, base + 0.1, base + 0.2, base])
    b = np.stack([base, base, base - 0.2, base])
    crits = [Criterion("A", "d", 0.01, per_question=a), Criterion("B", "d", 0.01, per_question=b)]
    boots = {c.key: c.resampled(300, 0) for c in crits}
    labels = ["current", "better", "mixed", "control"]
    out = choose(crits, boots, labels, 0, [3])
    assert out["against_current"]["better"]["replaces"] and not out["against_current"]["mixed"]["replaces"]
    assert out["against_current"]["mixed"]["inferior_on"] == ["B:d"]
    assert out["chosen_clustering"] == 1
    # The control is below "better" on A: not as good, so "better" ships and beats the control.
    assert out["chosen"] == 1 and out["chosen_against_controls"]["control"]["replaces"]
    assert out["clusterings_beating_every_control"] == ["better"]
    assert out["clusterings_against_controls"]["mixed"]["control"]["inferior_on"] == ["B:d"]
    # Without "better" and "mixed", the control, as good as the current default, ships as the simpler option.
    two = [Criterion(c.name, c.dev_set, c.margin, per_question=c.per_question[[0, 3]]) for c in crits]
    out = choose(two, {c.key: c.resampled(300, 0) for c in two}, ["current", "control"], 0, [1])
    assert out["chosen"] == 1 and out["chosen_clustering"] == 0


def test_panel_systems_have_their_order_by_construction(shared_data):
    from studies.validation.cluster_candidates import load_protocol
    from studies.validation.panel import build_panel

    settings = load_protocol()[0]["panel"]
    panel = build_panel(shared_data, "cfc_dev", settings, question_ids=["r1q1", "r1q2", "r1q3"])
    rates, powers = settings["wrong_rates"], settings["powers"]
    assert len(panel.ranked) == len(rates) + len(powers) >= 20
    wrong = panel.gold[: len(rates)].mean(axis=1)
    assert np.all(np.diff(wrong) > 0)  # more wrong-question answers, farther from the annotators
    flat = [i for i, b in enumerate(powers) if b < 1]
    sharp = [i for i, b in enumerate(powers) if b > 1]
    by_power = panel.gold[len(rates) :].mean(axis=1)
    assert np.all(np.diff(by_power[flat]) < 0) and np.all(np.diff(by_power[sharp]) > 0)
    assert np.all(panel.gold[panel.control] > panel.gold[panel.real])
    for qid in panel.data.question_ids:  # every system answers 100 times, wrong-question answers included
        for system in panel.data.systems:
            assert sum(panel.data.answers[system][qid].values()) == pytest.approx(settings["answers"])


def test_wording_systems_defeat_the_string_kl_by_construction(shared_data):
    from studies.validation.cluster_agreement import _system_kls
    from studies.validation.cluster_candidates import CONTROLS, ClusterMaker, load_protocol, read_questions
    from studies.validation.panel import build_panel

    settings = load_protocol()[0]["panel"]
    powers = settings["wording_powers"]
    ids = ["r1q1", "r1q2", "r1q3", "r1q4"]
    panel = build_panel(shared_data, "cfc_dev", settings, question_ids=ids)
    names = [panel.data.systems[i] for i in panel.wording]
    assert names == [f"{kind}({float(b)})" for b in powers for kind in ("reworded", "same_words")]
    gold = panel.gold[panel.wording]
    # Same cluster counts in other words: the same KL by construction, about 0 at the annotators' own frequencies
    # (Laplace smoothing of 100 answers against the cluster counts leaves a trace).
    assert np.allclose(gold[0::2], gold[1::2])
    one = powers.index(1.0)
    assert np.all(gold[2 * one] < 1e-3) and gold[2 * powers.index(0.0)].mean() > 100 * gold[2 * one].mean()
    for i in panel.wording:
        for qid in panel.data.question_ids:
            assert sum(panel.data.answers[panel.data.systems[i]][qid].values()) == pytest.approx(settings["answers"])
    # Reworded answers are other strings of their clusters than the most frequent form.
    reworded = panel.data.answers[f"reworded({float(powers[one])})"]
    same = panel.data.answers[f"same_words({float(powers[one])})"]
    assert any(set(reworded[q]) != set(same[q]) for q in ids)
    # The string KL (each normalized string its own cluster) ranks the cluster distribution itself, reworded,
    # behind the flattest same-words system, which the construction puts far behind it.
    questions = [q for q in read_questions(shared_data / "cfc/dev.targets.jsonl") if q.qid in ids]
    strings = [c for c in CONTROLS if c.label == "normalized_strings"]
    kls, _ = _system_kls(panel.data, ClusterMaker(), questions, strings, [0])
    mean = kls[0, 0].mean(axis=1)
    flat = panel.wording[2 * powers.index(0.0) + 1]
    assert mean[panel.wording[2 * one]] > mean[flat] and gold[2 * one].mean() < panel.gold[flat].mean()


def test_protocol_compares_against_what_ships():
    from cfc_probeval.clustering import GMeansClusterer
    from cfc_probeval.defaults import DEFAULTS
    from studies.validation.cluster_candidates import CURRENT_DEFAULT, load_protocol

    protocol, _ = load_protocol()
    assert protocol["version"] == 4 and protocol["fixed"] == "2026-11-29"
    assert protocol["candidates"]["current"] == CURRENT_DEFAULT.label
    assert (DEFAULTS.clustering, GMeansClusterer.option("k_init").default, DEFAULTS.embedder) == (
        CURRENT_DEFAULT.clustering,
        dict(CURRENT_DEFAULT.params)["k_init"],
        CURRENT_DEFAULT.embedder,
    )
    (v2,) = [c for c in protocol["changes"] if c["what"].startswith("Version 2")]
    assert v2["date"] == "2026-11-28" and "ranked" in v2["reason"] and "seen on test" in v2["reason"]
    (v3,) = [c for c in protocol["changes"] if c["what"].startswith("Version 3")]
    assert v3["date"] == "2026-11-29" and "ceiling" in v3["reason"] and "wording" in protocol["criteria"]


def test_stability_is_one_for_a_start_without_seed_and_the_controls_and_falls_below_for_seeded_starts(shared_data):
    from studies.validation.cluster_candidates import CONTROLS, ClusterCandidate, ClusterMaker, read_questions
    from studies.validation.stability import partition_agreement, shuffled_labels, stability_values

    questions = read_questions(shared_data / "cfc" / "dev.targets.jsonl", 6)
    seeded = ClusterCandidate("char-ngrams", "gmeans", (("k_init", 8),))
    greedy = ClusterCandidate("char-ngrams", "gmeans", (("k_init", 8), ("init", "greedy")))
    maker = ClusterMaker()
    values = stability_values(questions, [seeded, greedy, CONTROLS[1]], [0, 1, 2], maker)
    assert values.shape == (3, 6)
    assert (values[1:] == 1.0).all() and values[0].min() < 1.0
    # At one seed only the order of the answers changes, and it never changes ProbEval's clusters.
    assert (stability_values(questions, [seeded], [4], maker) == 1.0).all()
    q = questions[0]
    assert partition_agreement(q, shuffled_labels(maker, seeded, q, 4), maker.labels(seeded, q, 4)) == 1.0

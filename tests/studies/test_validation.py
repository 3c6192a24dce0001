"""ProbEval's validation: answer-set generators, gold KL, the study and the leaderboard commands."""

from __future__ import annotations

import doctest
import importlib
import json
import math
from collections import Counter

import numpy as np
import pytest

from cfc_probeval import ProbEval
from cfc_probeval.inputs import QuestionTargets
from protoqa_core.io.records import Cluster
from protoqa_metric.metric import score_question
from studies.validation import sampling
from studies.validation.__main__ import main, resolve_data_dir
from studies.validation.sampling import (
    Annotation,
    build_pools,
    centered_distribution,
    draw_answer_set,
    draw_answer_sets,
    missing_answers_distribution,
    quota_counts,
    wrong_ranking_distribution,
    wrong_score_distribution,
)
from studies.validation.study import (
    DEV_SETS,
    Grid,
    Setting,
    Toolkit,
    baseline_score,
    gold_kl,
    load_dev_set,
    mean_spearman,
    run_study,
)
from tests.support.selection_audit import audited_selection

SAMPLING_KEYS = {"centered", "missing_answers", "wrong_ranking", "wrong_score"}


def toy_truth() -> QuestionTargets:
    clusters = (Cluster("q.0", ("dog", "puppy"), 6), Cluster("q.1", ("cat",), 3), Cluster("q.2", ("fish",), 1))
    return QuestionTargets("q", clusters, {"dog": 5, "puppy": 1, "cat": 3, "fish": 1})


def toy_pool(annotations=None):
    annotations = (
        annotations
        if annotations is not None
        else {
            "doggy": Annotation("q.0", 4),
            "kitty": Annotation("q.1", 2),
            "car": Annotation("wrong", 3),
        }
    )
    return build_pools({"q": toy_truth()}, {"q": annotations})["q"]


# --- answer pools ---------------------------------------------------------------------------------------


def test_pool_uses_annotations_then_human_strings():
    pool = toy_pool()
    sources = [c.source for c in pool.categories]
    assert sources == ["annotated", "annotated", "human answers", "annotated"]
    assert pool.categories[2].strings == ("fish",)  # no annotated answer: the cluster's own strings
    assert pool.categories[3].strings == ("car",)
    assert pool.p_model.tolist() == pytest.approx([4 / 9, 2 / 9, 0.0, 3 / 9])
    assert pool.p_gold.tolist() == pytest.approx([0.6, 0.3, 0.1, 0.0])
    assert pool.pool_size == 9


def test_wrong_pool_falls_back_to_other_questions():
    truths = {"a": toy_truth(), "b": QuestionTargets("b", (Cluster("b.0", ("red",), 2),), {"red": 2})}
    annotations = {
        "a": {"doggy": Annotation("q.0", 1), "boat": Annotation("wrong", 2), "red": Annotation("wrong", 1)},
        "b": {"red": Annotation("b.0", 2)},
    }
    pools = build_pools(truths, annotations)
    wrong = pools["b"].categories[-1]
    # "red" is a right answer of b, so only "boat" can stand for a wrong one there.
    assert (wrong.strings, wrong.source) == (("boat",), "other questions")


def test_unknown_annotated_cluster_is_an_error():
    with pytest.raises(ValueError, match="q.9"):
        toy_pool({"doggy": Annotation("q.9", 1)})


# --- centered sampling ----------------------------------------------------------------------------------


def test_centered_distribution_is_the_documented_mixture():
    model, gold = np.array([0.5, 0.0, 0.1, 0.4]), np.array([0.6, 0.3, 0.1, 0.0])
    uniform = np.full(4, 0.25)
    basis = np.stack([model, gold, uniform], axis=1)
    rng = np.random.default_rng(7)
    zs, w2s = [], []
    for _ in range(200):
        p = centered_distribution(model, gold, rng)
        weights, residual, *_ = np.linalg.lstsq(basis, p, rcond=None)
        z, w1, w2 = weights
        assert np.allclose(basis @ weights, p)
        assert 0.5 <= z <= 1 and w1 >= -1e-12 and w2 >= -1e-12 and z + w1 + w2 == pytest.approx(1)
        zs.append(z)
        w2s.append(w2)
    # z spans U(0.5, 1) and the rest is really split between gold and uniform.
    assert min(zs) < 0.55 and max(zs) > 0.95
    assert 0.05 < float(np.mean(w2s)) < 0.2


def test_centered_sets_are_deterministic_and_draw_wrong_answers():
    pool = toy_pool()
    first = draw_answer_sets(pool, "centered", 20, seed=3, procedure="pool")
    again = draw_answer_sets(pool, "centered", 20, seed=3, procedure="pool")
    other = draw_answer_sets(pool, "centered", 20, seed=4, procedure="pool")
    assert [s.answers for s in first] == [s.answers for s in again]
    assert [s.gold for s in first] != [s.gold for s in other]
    assert all(sum(s.gold) == pool.pool_size for s in first)
    # The annotated "wrong" answer is drawn, and counted as wrong by the gold matching.
    assert all(s.gold[-1] >= 1 and s.answers.get("car", 0) == s.gold[-1] for s in first)
    # The uniform share reaches the cluster the model never hit, through its human strings.
    assert any(s.answers.get("fish", 0) > 0 for s in first)
    assert {a for s in first for a in s.answers} <= {"doggy", "kitty", "fish", "car"}


def test_sets_of_a_question_do_not_depend_on_other_questions(shared_data):
    few = load_dev_set(shared_data, DEV_SETS[1], num_questions=1, num_sets=3, samplings=["centered"])
    more = load_dev_set(shared_data, DEV_SETS[1], num_questions=3, num_sets=3, samplings=["centered"])
    assert [s.answers for s in few[0].sets["centered"]] == [s.answers for s in more[0].sets["centered"]]


def test_a_category_without_answers_gets_nothing():
    pool = toy_pool({"doggy": Annotation("q.0", 4)})  # no wrong answer here or in another question
    assert pool.categories[-1].strings == ()
    s = draw_answer_set(pool, [0.25, 0.25, 0.25, 0.25], 30, np.random.default_rng(0))
    assert s.gold == (10, 10, 10, 0) and s.target == pytest.approx((1 / 3, 1 / 3, 1 / 3, 0.0))


def test_quota_counts_follow_the_distribution():
    assert quota_counts([0.5, 0.25, 0.25, 0.0], 10).tolist() == [5, 3, 2, 0]
    assert quota_counts([1 / 3] * 3, 100).sum() == 100
    with pytest.raises(ValueError):
        quota_counts([0.0, 0.0], 5)


# --- error types ----------------------------------------------------------------------------------------

GOLD = np.array([0.4, 0.25, 0.2, 0.1, 0.05, 0.0])


def test_missing_answers_drops_some_clusters_and_keeps_the_rest_in_proportion():
    rng = np.random.default_rng(0)
    dropped_counts = set()
    for _ in range(100):
        p = missing_answers_distribution(GOLD, rng)
        kept = p[:-1] > 0
        dropped_counts.add(int((~kept).sum()))
        assert 1 <= (~kept).sum() <= 4 and p[-1] == 0 and p.sum() == pytest.approx(1)
        assert p[:-1][kept] == pytest.approx(GOLD[:-1][kept] / GOLD[:-1][kept].sum())
    assert dropped_counts == {1, 2, 3, 4}


def test_wrong_ranking_permutes_cluster_probabilities():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = wrong_ranking_distribution(GOLD, rng)
        assert sorted(p[:-1]) == sorted(GOLD[:-1]) and p[-1] == 0
        assert not np.array_equal(p, GOLD)
    assert np.array_equal(wrong_ranking_distribution([0.5, 0.5, 0.0], rng), [0.5, 0.5, 0.0])


def test_wrong_score_moves_probabilities_but_keeps_their_order():
    rng = np.random.default_rng(0)
    gold = np.array([0.3, 0.1, 0.3, 0.2, 0.1, 0.0])  # with ties
    moved = 0
    for _ in range(100):
        p = wrong_score_distribution(gold, rng)
        assert p.sum() == pytest.approx(1) and p[-1] == 0 and np.all(p[:-1] > 0)
        for i in range(5):
            for j in range(5):
                if gold[i] > gold[j]:
                    assert p[i] > p[j]
        moved += not np.allclose(p, gold)
    assert moved > 90


def test_each_generator_shows_in_the_drawn_sets(shared_data):
    studies = load_dev_set(shared_data, DEV_SETS[0], num_questions=4, num_sets=20, procedure="pool")
    for study in studies:
        pool = study.pool
        gold_order = np.argsort(-np.asarray(pool.gold_counts), kind="stable")
        for s in study.sets["missing_answers"]:
            assert 1 <= sum(1 for n in s.gold[:-1] if n == 0) < pool.num_clusters and s.gold[-1] == 0
        for s in study.sets["wrong_ranking"]:
            assert sorted(np.round(s.target[:-1], 12)) == sorted(np.round(pool.p_gold[:-1], 12))
        for s in study.sets["wrong_score"]:
            realized = np.asarray(s.gold[:-1])
            # Rounding to whole answers can tie neighbours but never reverses them.
            assert np.all(np.diff(realized[gold_order]) <= 0)


# --- scoring --------------------------------------------------------------------------------------------


def test_gold_kl_hand_example():
    # P_G = [7, 5, 1] / 13 (two clusters of 6 and 4, plus "wrong"), P_H = [6, 4, 3] / 13.
    expected = 7 / 13 * math.log(7 / 6) + 5 / 13 * math.log(5 / 4) + 1 / 13 * math.log(1 / 3)
    assert gold_kl([6, 4], [5, 3, 2]) == pytest.approx(expected)
    assert gold_kl([6, 4], [6, 4, 0]) == pytest.approx(0.0)
    with pytest.raises(ValueError):
        gold_kl([6, 4], [1, 1])


def test_gold_kl_equals_probeval_with_a_perfect_matching():
    truth = toy_truth()
    pool = toy_pool({"dog": Annotation("q.0", 4), "cat": Annotation("q.1", 2), "zebra": Annotation("wrong", 3)})
    for s in draw_answer_sets(pool, "centered", 5, seed=1):
        assert s.answers and gold_kl([6, 3, 1], s.gold) == pytest.approx(
            ProbEval("human").score_question(truth, s.answers).kl
        )


@pytest.mark.slow
def test_registry_based_study_gives_probeval_numbers_on_a_tiny_case(shared_data):
    # Every per-set score of a small run equals ProbEval's own score of that set, for settings
    # built from the public API (G-means with its explicit options, GP at 0.4).
    result = run_study(
        shared_data,
        num_questions=2,
        num_sets=4,
        embedder="char-ngrams",
        clusterings=["human", "gmeans"],
        matchings=["wordnet", "gp"],
        samplings=["centered"],
        dev_sets=DEV_SETS[:1],
        tune_parameters=False,
        sensitivity=False,
    )
    studies = load_dev_set(shared_data, DEV_SETS[0], num_questions=2, num_sets=4, samplings=["centered"])
    configs = {
        "human+wordnet": ProbEval("human"),
        "human+gp": ProbEval("human", "gp", embedder="char-ngrams", threshold=0.4),
        "gmeans+wordnet": ProbEval("gmeans", embedder="char-ngrams", k_init=4, k_max=20, alpha=0.0001),
        "gmeans+gp": ProbEval("gmeans", "gp", embedder="char-ngrams", k_init=4, threshold=0.4),
    }
    scores = result.scores["protoqa_dev"]["centered"]
    for key, probeval in configs.items():
        for study in studies:
            expected = [probeval.score_question(study.truth, s.answers).kl for s in study.sets["centered"]]
            assert scores[key][study.question_id] == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert result.info["gp_single_cluster_fallbacks"] == 0


def test_toolkit_builds_one_matcher_per_threshold_and_counts_gp_fallbacks():
    from cfc_probeval.matching import GPMatcher

    toolkit = Toolkit("char-ngrams")
    low, high = toolkit.matcher("gp", 0.4), toolkit.matcher("gp", 0.5)
    assert low is not high and (low.threshold, high.threshold) == (0.4, 0.5)
    assert toolkit.matcher("gp", 0.4) is low and toolkit.matcher("wordnet") is toolkit.matcher("wordnet", None)
    with pytest.warns(RuntimeWarning, match="at least two clusters"):
        low.match(["dogs"], [["dog", "puppy"]])
    assert low.fallbacks == 1 and high.fallbacks == 0 and toolkit.gp_fallbacks == 1
    assert GPMatcher(toolkit.embedder).fallbacks == 0


def test_study_scores_are_probeval_scores(shared_data):
    study = load_dev_set(shared_data, DEV_SETS[0], num_questions=1, num_sets=4, samplings=["centered"])[0]
    toolkit = Toolkit("char-ngrams")
    for setting, probeval in [
        (Setting("human", "wordnet"), ProbEval("human")),
        (
            Setting("hac", "cosine", (("linkage", "average"), ("distance_threshold", 0.5)), 0.6),
            ProbEval("hac", "cosine", embedder="char-ngrams", linkage="average", distance_threshold=0.5, threshold=0.6),
        ),
    ]:
        kls = study.kls(toolkit, setting, "centered")
        expected = [probeval.score_question(study.truth, s.answers).kl for s in study.sets["centered"]]
        assert kls == pytest.approx(expected)


def test_baseline_is_one_minus_max_answers_at_10(shared_data):
    study = load_dev_set(shared_data, DEV_SETS[0], num_questions=1, num_sets=3, samplings=["centered"])[0]
    for s, value in zip(study.sets["centered"], study.baseline("centered"), strict=True):
        counts = Counter()  # insertion order: the set's answers in alphabetical order
        for answer, n in sorted(s.answers.items()):
            counts[answer.lower()[:50].strip()] += n
        first = list(counts)
        ranked = sorted(counts, key=lambda a: (-counts[a], first.index(a)))
        expected = 1 - score_question(ranked, study.truth.clusters, "wordnet", max_answers=10).score
        assert value == pytest.approx(expected)
    clusters = [Cluster("a", ("dog",), 3), Cluster("b", ("cat",), 1)]
    assert baseline_score({"dog": 2, "cat": 1}, clusters, lambda a: [float(a == "dog"), float(a == "cat")]) == 0.0
    # Ties go alphabetically, whatever order the set lists its answers in: a drawn set lists
    # them gold cluster by gold cluster, and that order would leak the gold matching.
    row = lambda a: [float(a == "dog"), float(a == "cat")]  # noqa: E731
    assert baseline_score({"Cat": 1, "dog": 1}, clusters, row, max_answers=1) == pytest.approx(2 / 3)
    assert baseline_score({"dog": 1, "Cat": 1}, clusters, row, max_answers=1) == pytest.approx(2 / 3)


def test_one_frequency_ranker_normalizes_first_and_keeps_first_appearance():
    from studies.validation.leaderboard import rank_by_frequency

    # Two "Night", two "night" and three "evening": "night" has four.
    assert rank_by_frequency({"Night": 2, "night": 2, "evening": 3}) == ["night", "evening"]
    assert rank_by_frequency({"zebra": 1, "apple": 1, "Zebra ": 1, "mango": 2}) == ["zebra", "mango", "apple"]
    assert rank_by_frequency({"b": 1, "a": 1}) == ["b", "a"]


def test_mean_spearman_counts_constant_cases_as_zero_and_reports_the_rest():
    c = mean_spearman(
        {"a": [1, 2, 3, 4], "b": [2, 2, 2, 2], "c": [1, 2, 4, 3]},
        {"a": [1, 2, 3, 4], "b": [1, 2, 3, 4], "c": [1, 2, 3, 4]},
        resamples=200,
    )
    assert c.mean == pytest.approx((1.0 + 0.0 + 0.8) / 3) and c.constant == ("b",) and c.num_questions == 2
    assert c.mean_dropped == pytest.approx(0.9)
    assert -1 <= c.pooled <= 1
    assert c.ci["mean"]["low"] <= c.mean <= c.ci["mean"]["high"]
    assert mean_spearman({"a": [1, 1]}, {"a": [1, 2]}).mean == 0.0
    again = mean_spearman(
        {"a": [1, 2, 3, 4], "b": [2, 2, 2, 2], "c": [1, 2, 4, 3]},
        {"a": [1, 2, 3, 4], "b": [1, 2, 3, 4], "c": [1, 2, 3, 4]},
        resamples=200,
    )
    assert again.ci == c.ci  # seeded


def test_tuning_picks_values_from_the_grid_per_fold(shared_data):
    grid = Grid(hac_linkage=("average",), hac_threshold=(0.3, 0.6))
    matching = {
        "question_folds": {},
        "matchers": {"cosine": {"threshold": 0.7, "fold_thresholds": {"0": 0.7, "1": 0.7}}},
    }
    result = run_study(
        shared_data,
        num_questions=4,
        num_sets=6,
        embedder="char-ngrams",
        clusterings=["human", "hac"],
        matchings=["wordnet", "cosine"],
        samplings=["centered", "missing_answers"],
        grid=grid,
        folds=2,
        matching=matching,
        sensitivity=False,
    )
    assert result.tuned and result.chosen["hac_threshold"] in (0.3, 0.6)
    assert result.chosen["cosine_threshold"] == 0.7
    assert set(result.tuning.mean) == {
        "hac(linkage=average,distance_threshold=0.3)+wordnet",
        "hac(linkage=average,distance_threshold=0.6)+wordnet",
    }
    assert set(result.tuning.fold_choices["hac"]) == {"0", "1"}
    assert list(result.tuning.as_dict()) == [
        "correlations",
        "per_data_set",
        "mean",
        "clusters",
        "group",
        "fold_choices",
    ]
    assert result.settings["hac+cosine"].endswith("+cosine(0.7)")
    assert set(result.in_sample["cfc_dev"]["centered"]) == {
        "human+wordnet",
        "human+cosine",
        "hac+wordnet",
        "hac+cosine",
    }


# --- commands -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_study_command_end_to_end(shared_data, tmp_path, capsys):
    # A small slice of the command, in one process: every table of validation.json but the
    # system level (test_study_command_full_run runs that, two processes and the plots).
    out = tmp_path / "reports"
    command = [
        "study",
        "--data-dir",
        str(shared_data),
        "--questions",
        "2",
        "--sets",
        "6",
        "--embedder",
        "char-ngrams",
        "--clusterings",
        "human,hac",
        "--matchings",
        "wordnet,cosine",
        "--matchers",
        "exact_match,wordnet",
        "--no-tune",
        "--sensitivity-sizes",
        "30",
        "--no-systems",
        "--jobs",
        "1",
        "--no-plots",
        "--out",
        str(out),
    ]
    assert main(command) == 0
    table = json.loads((out / "validation.json").read_text())
    assert set(table) == {"protoqa_dev", "cfc_dev", "matching", "notes"}
    for ds in ("protoqa_dev", "cfc_dev"):
        assert set(table[ds]) == SAMPLING_KEYS
        for by_key in table[ds].values():
            keys = {"human+wordnet", "human+cosine", "hac+wordnet", "hac+cosine", "protoqa_score"}
            assert set(by_key) == keys | {"ci"} and set(by_key["ci"]) == keys
            assert all(v is None or -1 <= v <= 1 for k, v in by_key.items() if k != "ci")
    assert "SANITY CHECK" in table["notes"]["cfc_dev"]
    matching = table["matching"]["protoqa_dev"]
    assert set(matching) == {"exact_match", "wordnet"}
    assert matching["exact_match"]["precision"] == pytest.approx(1.0)
    assert {"precision", "recall", "f1", "ci"} <= set(matching["wordnet"])
    details = json.loads((out / "validation_details.json").read_text())
    assert details["tuned"] is False and details["info"]["num_sets"] == 6
    assert {"pool", "30"} <= set(details["info"]["set_size_sensitivity"]["cfc_dev"])
    markdown = (out / "validation.md").read_text()
    assert "| `human+wordnet` |" in markdown and "0.752" in markdown and "sanity check only" in markdown
    assert not list(out.glob("*.png"))
    assert "study:" in capsys.readouterr().out


@pytest.mark.slow
def test_study_command_full_run(shared_data, tmp_path, capsys):
    out = tmp_path / "reports"
    command = [
        "study",
        "--data-dir",
        str(shared_data),
        "--questions",
        "3",
        "--sets",
        "6",
        "--embedder",
        "char-ngrams",
        "--clusterings",
        "human,hac",
        "--matchings",
        "wordnet,cosine",
        "--matchers",
        "exact_match,wordnet,cosine",
        "--no-tune",
        "--sensitivity-sizes",
        "30",
    ]
    status = main(command + ["--out", str(out)])
    assert status == 0
    # One process gives the same figures as two (the second runs the matching study and the system level).
    assert main(command + ["--out", str(tmp_path / "one"), "--jobs", "1", "--no-plots"]) == 0
    assert (tmp_path / "one" / "validation.json").read_text() == (out / "validation.json").read_text()
    table = json.loads((out / "validation.json").read_text())
    assert set(table) == {"protoqa_dev", "cfc_dev", "matching", "system_level", "notes"}
    for ds in ("protoqa_dev", "cfc_dev"):
        assert set(table[ds]) == SAMPLING_KEYS
        for by_key in table[ds].values():
            keys = {"human+wordnet", "human+cosine", "hac+wordnet", "hac+cosine", "protoqa_score"}
            assert set(by_key) == keys | {"ci"} and set(by_key["ci"]) == keys
            assert all(v is None or -1 <= v <= 1 for k, v in by_key.items() if k != "ci")
    assert "SANITY CHECK" in table["notes"]["cfc_dev"]
    matching = table["matching"]["protoqa_dev"]
    assert set(matching) == {"exact_match", "wordnet", "cosine"}
    assert matching["exact_match"]["precision"] == pytest.approx(1.0)
    assert {"precision", "recall", "f1", "ci"} <= set(matching["wordnet"])
    system = table["system_level"]["cfc_test"]
    assert {"human+cosine", "hac+wordnet", "hac+cosine", "automatic_default", "ci"} <= set(system)
    assert "automatic_default" in system["ci"]
    levels = table["system_level"]
    assert {"automatic_default", "levels"} - {"levels"} <= set(levels)
    assert "automatic_default" in levels["cfc_test_with_oracle"]
    # The default reported is the one that ships, chosen by the cluster-level study alone; no lever is it.
    assert levels["automatic_default_setting"] == "gmeans(k_init=8)+wordnet [minilm]"
    assert levels["automatic_default_chosen_by"].startswith("python -m studies.validation clusters")
    assert "shipped_default" not in levels["levers"] and "nested_ci" not in levels["automatic_default"]
    assert {"grid", "cluster_count", "wordnet_merge", "matching"} <= set(levels["levers"])
    details = json.loads((out / "validation_details.json").read_text())
    assert details["tuned"] is False and details["info"]["num_sets"] == 6
    assert {"pool", "30"} <= set(details["info"]["set_size_sensitivity"]["cfc_dev"])
    markdown = (out / "validation.md").read_text()
    assert "| `human+wordnet` |" in markdown and "0.752" in markdown and "sanity check only" in markdown
    assert len(list(out.glob("validation_*_*.png"))) == 8
    assert "study:" in capsys.readouterr().out


@pytest.mark.slow
def test_leaderboard_command_end_to_end(shared_data, tmp_path):
    out = tmp_path / "reports"
    assert (
        main(
            [
                "leaderboard",
                "--data-dir",
                str(shared_data),
                "--out",
                str(out),
                "--questions",
                "3",
                "--embedder",
                "char-ngrams",
            ]
        )
        == 0
    )
    board = json.loads((out / "leaderboard.json").read_text())
    assert set(board) == {"protoqa_dev", "cfc_dev", "cfc_test", "info"}
    assert len(board["cfc_test"]["systems"]) == 9
    for name in ("protoqa_dev", "cfc_dev", "cfc_test"):
        for row in board[name]["systems"]:
            for setting in ("human", "automatic"):
                cell = row["probeval"][setting]
                assert cell["low"] <= cell["mean"] <= cell["high"]
            if row["kind"] == "distinct samples":
                assert row["protoqa"] is None
            else:
                assert set(row["protoqa"]) >= {"max_answers@10", "max_incorrect@5"}
    gpt2 = board["protoqa_dev"]["systems"][0]
    assert gpt2["ranking"] == "as given" and board["cfc_dev"]["systems"][1]["ranking"] == "by frequency"
    assert "r3q21" in board["cfc_dev"]["systems"][0]["ignored_ids"]
    # The CFC test "human" file holds the targets' own answers; the models' files do not.
    assert board["cfc_test"]["systems"][-1]["overlap_with_targets"] > 0.9
    assert all(row["overlap_with_targets"] < 0.5 for row in board["cfc_test"]["systems"][:-1])
    assert "## CFC test" in (out / "leaderboard.md").read_text()
    # The automatic column is ProbEval's automatic default, passed explicitly.
    from studies.validation.leaderboard import AUTOMATIC_DEFAULT

    assert board["info"]["automatic"] == AUTOMATIC_DEFAULT
    assert board["cfc_dev"]["systems"][0]["probeval"]["automatic"]["signature"].startswith(
        "clustering:gmeans(k_init=8,k_max=20,seed=0,alpha=0.0001)"
    )


def test_data_dir_resolution(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PROTOQA_DATA_DIR", str(tmp_path))
    assert resolve_data_dir() == tmp_path
    assert resolve_data_dir(str(tmp_path / "..")) == tmp_path / ".."
    assert main(["study", "--data-dir", str(tmp_path / "missing"), "--out", str(tmp_path)]) == 2
    assert "data folder not found" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name",
    [
        "sampling",
        "study",
        "leaderboard",
        "report",
        "__main__",
        "stats",
        "workers",
        "matching_study",
        "systems",
        "selection",
        "claims",
    ],
)
def test_docstring_examples(name):
    module = importlib.import_module(f"studies.validation.{name}")
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


def test_sampling_names_are_the_documented_keys():
    assert set(sampling.SAMPLINGS) == SAMPLING_KEYS


# --- the authors' procedure ------------------------------------------------------------------------------


def test_authors_counts_scale_to_the_scarcest_category():
    # Slots 11, 2, 31 (T = 44): category 1 allows r = 2 / (44 * 0.3); counts round(r * T * p).
    counts = sampling.authors_counts([0.5, 0.3, 0.2], [10, 1, 30])
    assert counts.tolist() == [3, 2, 1]
    assert sampling.authors_counts([0.5, 0.5, 0.0], [5, 5, 5], one_more_if_empty=True).tolist() == [6, 6, 1]


def test_authors_sets_are_drawn_without_replacement_from_the_pool(shared_data):
    studies = load_dev_set(shared_data, DEV_SETS[0], num_questions=3, num_sets=10)
    for study in studies:
        assert study.pool.stratified == 50
        for sets in study.sets.values():
            for s in sets:
                for category, n in zip(study.pool.categories, s.gold, strict=True):
                    assert n <= round(sum(category.weights))
                assert sum(s.answers.values()) == sum(s.gold)
                assert sum(s.gold) <= study.pool.pool_size


def test_stratified_answers_follow_the_clusters():
    truth = toy_truth()
    extra = sampling.stratified_answers(truth, 5, np.random.default_rng(0))
    assert [sum(c.values()) for c in extra] == [3, 2, 1]  # ceil(5 * 6/10), ceil(5 * 3/10), ceil(5 * 1/10)
    assert set(extra[0]) <= {"dog", "puppy"}


def test_error_types_perturb_wrong_under_the_authors_procedure():
    rng = np.random.default_rng(0)
    gold = np.array([0.4, 0.3, 0.2, 0.1])
    assert any(wrong_ranking_distribution(gold, rng, include_wrong=True)[-1] != 0.1 for _ in range(20))
    assert any(wrong_score_distribution(gold, rng, include_wrong=True)[-1] != 0.1 for _ in range(5))
    assert any(missing_answers_distribution(gold, rng, include_wrong=True)[-1] == 0 for _ in range(50))


# --- matching validity and system level ------------------------------------------------------------------


def test_prf_and_matching_study_on_real_data(shared_data):
    from studies.validation.matching_study import prf, run_matching_study

    assert prf([0, 0, 0]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    result = run_matching_study(shared_data, matchers=["exact_match", "lcs"], num_questions=6, folds=2)
    exact = result["matchers"]["exact_match"]["weighted"]
    assert exact["precision"] == pytest.approx(1.0) and 0 < exact["recall"] < 1
    lcs = result["matchers"]["lcs"]
    assert lcs["threshold"] in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)
    assert set(lcs["fold_thresholds"]) == {"0", "1"}
    assert lcs["weighted"]["ci"]["f1"]["low"] <= lcs["weighted"]["ci"]["f1"]["high"]


def test_system_level_reference_equals_probeval(shared_data):
    from studies.validation.systems import REFERENCE, _Scorer, load_systems

    data = load_systems(shared_data)
    assert len(data.systems) == 9
    data.question_ids = data.question_ids[:3]
    scorer = _Scorer(data)
    kls = scorer.kls(REFERENCE)
    for i, system in enumerate(data.systems):
        truths = {q: data.truths[q] for q in data.question_ids}
        result = ProbEval("human").evaluate(truths, {q: data.answers[system][q] for q in data.question_ids})
        assert kls[i] == pytest.approx([result.per_question[q] for q in data.question_ids])


def test_folds_and_bootstrap_are_seeded():
    from studies.validation.stats import bootstrap_interval, fold_of

    assert fold_of(["a", "b", "c", "d"], 2) == fold_of(["d", "c", "b", "a"], 2)
    values = np.arange(10.0)
    first = bootstrap_interval(lambda idx: float(values[idx].mean()), 10, resamples=100)
    assert first == bootstrap_interval(lambda idx: float(values[idx].mean()), 10, resamples=100)


# --- the levers are chosen on dev data only -------------------------------------------------------------

_SELECTION = r"""
from studies.validation.system_study import select_levers
from studies.validation.systems import lever_grids

levers = {name: grid[:3] for name, grid in lever_grids(0.6, ["char-ngrams"]).items()}
picked = select_levers(sys.argv[1], levers, num_questions=2)
print("chosen:", picked["choices"]["grid"].label)
"""


def test_lever_selection_opens_no_cfc_test_file(shared_data, tmp_path):
    assert "chosen: " in audited_selection(_SELECTION, shared_data, tmp_path)


def test_dev_pools_are_distinct_answers_of_dev_questions_only(shared_data):
    from studies.validation.selection import MIXES, load_dev_systems, row_spearman

    data = load_dev_systems(shared_data, "cfc_dev", num_questions=3)
    assert len(data.systems) == len(MIXES) and all(q.startswith(("r1", "r2", "r3")) for q in data.question_ids)
    for pools in data.answers.values():
        assert all(set(counts.values()) == {1} for counts in pools.values())
    # Seeded: the same pools on a second read.
    assert load_dev_systems(shared_data, "cfc_dev", num_questions=3).answers == data.answers
    assert row_spearman(np.array([[1.0, 3.0, 2.0]]), np.array([1.0, 2.0, 3.0]))[0] == pytest.approx(0.5)


def test_system_agreement_leaves_the_oracle_out():
    from studies.validation.systems import agreement

    ref = np.array([[0.1, 0.2], [0.5, 0.4], [0.9, 1.0], [0.0, 0.0]])
    swapped = ref[[1, 0, 2, 3]]
    a = agreement(swapped, ref, oracle=3)
    assert a["rho"] == pytest.approx(0.5) and a["kendall"] == pytest.approx(1 / 3)
    assert a["rho_with_oracle"] == pytest.approx(0.8)


def test_readme_and_card_claims_agree_with_validation_json():
    from pathlib import Path

    from studies.validation.claims import CLAIM_FILES, claim_texts, rewrite_claims

    root = Path(__file__).resolve().parents[2]
    claims = claim_texts(json.loads((root / "studies/reports/validation.json").read_text(encoding="utf-8")))
    for name in CLAIM_FILES:
        text = (root / name).read_text(encoding="utf-8")
        assert "<!-- claims:default -->" in text and "held-out Spearman 0.967" not in text
        assert rewrite_claims(text, claims) == text, f"{name}: run python -m studies.validation claims"
    with pytest.raises(ValueError, match="unknown claim marker"):
        rewrite_claims("<!-- claims:nope -->x<!-- /claims:nope -->", claims)


def test_automatic_clusters_come_from_raw_answers_only():
    from cfc_probeval.inputs import QuestionTargets
    from protoqa_core.io.records import Cluster
    from studies.validation.systems import SystemData, _Scorer, shipped_default

    counts = {"dog": 5.0, "puppy": 3.0, "cat": 4.0, "kitten": 1.0, "fish": 2.0}
    # Clusters unlike the raw counts (as cfc/test.raw_answers_unclustered.jsonl carries): one per occurrence.
    odd = tuple(Cluster(f"q.{i}", (a,), 1) for i, a in enumerate(counts))
    answers = {"s": {"q": {"dog": 1.0}}}
    with_clusters = _Scorer(SystemData({"q": QuestionTargets("q", odd, counts)}, ["q"], answers), 0)
    raw_only = _Scorer(SystemData({"q": QuestionTargets("q", (), counts)}, ["q"], answers), 0)
    default = shipped_default()
    assert with_clusters.clusters(default, "q") == raw_only.clusters(default, "q")
    assert sum(c.count for c in raw_only.clusters(default, "q")) == sum(counts.values())
    assert shipped_default().label == "gmeans(k_init=8)+wordnet [minilm]"

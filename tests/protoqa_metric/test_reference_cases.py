"""The reference evaluator's own test cases (iesl/protoqa-evaluator ``tests/``), run against this package.

Inputs and expected values are re-typed here as data. The reference's evaluation
functions map onto this package's limits:

=============================== =====================================================
reference                       here
=============================== =====================================================
``fast_money``                  Max Answers@1
``family_feud``                 Max Incorrect@3 (``_2_incorrect``: @2, ``_5_``: @5)
``set_intersection``            clusters unweighted (``weighted=False``)
``hard_...``                    score matrix rounded half-to-even
``general_eval``                no limit (Max Answers@all)
``..._wn_sim``                  the ``wordnet`` similarity (rounded)
=============================== =====================================================

Cases for similarities that are not registered in this version (Jaro-Winkler,
longest common substring) are skipped, as is the reference's Wu-Palmer value of
a pair when ``wordnet_wup`` gives a synset with itself 1.0 (the reference gives
NLTK's Wu-Palmer, below 1 for many synsets).
"""

from __future__ import annotations

import json
from typing import Optional

import numpy as np
import pytest

from protoqa_core.io.readers import read_targets
from protoqa_core.io.records import Cluster
from protoqa_core.similarity import SIMILARITIES
from protoqa_core.text import normalize_prediction
from protoqa_metric.metric import score_question
from protoqa_metric.scoring import score_matrix, similarity_matrix

# name -> (similarity, max_answers, max_incorrect, weighted, rounded; None: the similarity's own rule)
METHODS: dict[str, tuple[str, Optional[int], Optional[int], bool, Optional[bool]]] = {
    "family_feud": ("exact_match", None, 3, True, None),
    "fast_money": ("exact_match", 1, None, True, None),
    "family_feud_2_incorrect": ("exact_match", None, 2, True, None),
    "family_feud_5_incorrect": ("exact_match", None, 5, True, None),
    "set_intersection": ("exact_match", None, None, False, None),
    "soft_jaro_winkler_set_intersection": ("jaro_winkler", None, None, False, False),
    "hard_jaro_winkler_set_intersection": ("jaro_winkler", None, None, False, True),
    "hard_lcsubstring_set_int": ("longest_common_substring", None, None, False, True),
    "hard_lcsubseq_set_int": ("lcs", None, None, False, True),
    "hard_lcsubstring": ("longest_common_substring", None, None, True, True),
    "hard_lcsubseq": ("lcs", None, None, True, True),
    "fast_money_wn_sim": ("wordnet", 1, None, True, True),
    "family_feud_wn_sim": ("wordnet", None, 3, True, True),
}


def clusters_of(answer_counts: dict) -> list[Cluster]:
    """Clusters from the reference's ``{answer: count}`` or ``{(answers...): count}`` dicts."""
    return [
        Cluster(f"c{i}", (key,) if isinstance(key, str) else tuple(key), count)
        for i, (key, count) in enumerate(answer_counts.items())
    ]


def require(similarity: str) -> None:
    if similarity not in SIMILARITIES:
        pytest.skip(f"similarity {similarity!r} is not registered in this version")


def score_with(method: str, predictions: list[str], clusters: list[Cluster]) -> float:
    name, max_answers, max_incorrect, weighted, rounded = METHODS[method]
    require(name)
    sim = SIMILARITIES[name]
    matrix = similarity_matrix(predictions, clusters, sim)
    result = score_matrix(
        matrix,
        clusters,
        max_answers=max_answers,
        max_incorrect=max_incorrect,
        weighted=weighted,
        rounded=sim.rounded if rounded is None else rounded,
        predictions=[normalize_prediction(p) for p in predictions],
    )
    if rounded is None or rounded == sim.rounded:
        # The public one-call path must agree.
        direct = score_question(
            predictions, clusters, name, max_answers=max_answers, max_incorrect=max_incorrect, weighted=weighted
        )
        assert direct.score == result.score
    return result.score


# ---- tests/test_evaluator.py: test_parametrized ------------------------------------------------

SET_10_60_30 = {"10": 10, "60": 60, "30": 30}
SET_APPLE = {"apple": 10, "bananna": 60, "carrot": 30}
SET_12_27_48 = {"12": 12, "27": 27, "48": 48}
SET_LOOKS_SMELL = {"smell": 2, "face": 5}

EVALUATOR_CASES = [
    (
        "exact",
        ["60", "30", "10"],
        SET_10_60_30,
        {"family_feud": 1.0, "fast_money": 1.0, "set_intersection": 1.0, "soft_jaro_winkler_set_intersection": 1.0},
    ),
    (
        "exact_less_than_100",
        ["48", "27", "12"],
        SET_12_27_48,
        {"family_feud": 1.0, "fast_money": 1.0, "set_intersection": 1.0},
    ),
    (
        "no_match",
        ["a", "b", "c", "d", "e"],
        SET_10_60_30,
        {"family_feud": 0.0, "fast_money": 0.0, "set_intersection": 0.0},
    ),
    (
        "scale_to_max",
        ["30", "a", "b"],
        SET_10_60_30,
        {"family_feud": 0.3, "fast_money": 0.5, "set_intersection": 1 / 3},
    ),
    (
        "wrong_order",
        ["10", "30", "60"],
        SET_10_60_30,
        {"family_feud": 1.0, "fast_money": 1 / 6, "set_intersection": 1.0},
    ),
    (
        "no_double_counting",
        ["60", "60", "60"],
        SET_10_60_30,
        {"family_feud": 0.6, "fast_money": 1, "set_intersection": 1 / 3},
    ),
    (
        "three_wrong",
        ["30", "X", "X", "10", "X", "60"],
        SET_10_60_30,
        {"family_feud": 0.4, "fast_money": 0.5, "set_intersection": 1.0},
    ),
    (
        "three_wrong_right_away",
        ["X", "X", "X", "10", "X", "60"],
        SET_10_60_30,
        {"family_feud": 0.0, "fast_money": 0.0, "family_feud_5_incorrect": 0.7, "set_intersection": 2 / 3},
    ),
    (
        "two_wrong",
        ["30", "X", "10", "X", "60"],
        SET_10_60_30,
        {"family_feud": 1.0, "family_feud_2_incorrect": 0.4, "set_intersection": 1.0},
    ),
    (
        "many_repeats_should_not_penalize",
        ["30", "30", "30", "30", "30", "30", "60"],
        SET_10_60_30,
        {"family_feud": 0.9, "family_feud_2_incorrect": 0.9, "family_feud_5_incorrect": 0.9, "set_intersection": 2 / 3},
    ),
    (
        "sloppy_input_answers",
        ["an Apple", "X", "the Banannnaa"],
        SET_APPLE,
        {
            "family_feud": 0.0,
            "set_intersection": 0.0,
            "hard_jaro_winkler_set_intersection": 2 / 3,
            "hard_lcsubstring_set_int": 1 / 3,
            "hard_lcsubseq_set_int": 2 / 3,
        },
    ),
    (
        "non_exact_match_answers",
        ["odor", "looks"],
        SET_LOOKS_SMELL,
        {
            "family_feud": 0.0,
            "set_intersection": 0.0,
            "hard_lcsubstring_set_int": 0,
            "hard_lcsubseq_set_int": 0,
            "fast_money_wn_sim": 0.4,
            "family_feud_wn_sim": 1.0,
        },
    ),
]

# ---- tests/test_evaluator.py: the crowdsourced stub's clusters -------------------------------------

R1Q1 = {("moon",): 1, ("earth", "planet"): 2, ("sun", "star"): 2, ("comet", "meteor", "asteroid"): 3}
R1Q2 = {("apple", "banana", "fruit", "fruits"): 5, ("broccoli", "vegetable"): 3}

CROWDSOURCE_CASES = [
    (
        "exact_match",
        ["fruit", "vegetable"],
        R1Q2,
        {
            "family_feud": 1.0,
            "fast_money": 1.0,
            "set_intersection": 1.0,
            "hard_lcsubstring_set_int": 1.0,
            "hard_lcsubseq_set_int": 1.0,
            "hard_lcsubstring": 1.0,
            "hard_lcsubseq": 1.0,
        },
    ),
    (
        "misspelling",
        ["aaple", "brocoli"],
        R1Q2,
        {
            "family_feud": 0.0,
            "fast_money": 0.0,
            "set_intersection": 0.0,
            "hard_lcsubstring_set_int": 0.5,
            "hard_lcsubseq_set_int": 1.0,
            "hard_lcsubstring": 5 / 8,
            "hard_lcsubseq": 1.0,
        },
    ),
    ("single_element_category", ["moon"], R1Q1, {"family_feud": 1 / 8, "fast_money": 1 / 3, "set_intersection": 1 / 4}),
    (
        "no_category_label_points",
        ["space rock"],
        R1Q1,
        {"family_feud": 0.0, "fast_money": 0.0, "set_intersection": 0.0, "hard_lcsubstring": 0.0, "hard_lcsubseq": 0.0},
    ),
    (
        "multiple_possible_assignments",
        ["broccoli/banana", "an apple"],
        R1Q2,
        {"family_feud": 0.0, "fast_money": 0.0, "set_intersection": 0.0, "hard_lcsubstring": 1.0, "hard_lcsubseq": 1.0},
    ),
    (
        "no_double_points_for_surface_forms",
        ["apple", "banana", "fruit", "fruits"],
        R1Q2,
        {
            "family_feud": 5 / 8,
            "fast_money": 1.0,
            "set_intersection": 1 / 2,
            "hard_lcsubstring": 5 / 8,
            "hard_lcsubseq": 5 / 8,
        },
    ),
    (
        "no_double_points_for_partial_matches",
        ["apple", "aapple", "appple", "apples"],
        R1Q2,
        {
            "family_feud": 5 / 8,
            "fast_money": 1.0,
            "set_intersection": 1 / 2,
            "hard_lcsubstring": 5 / 8,
            "hard_lcsubseq": 5 / 8,
        },
    ),
    (
        "no_match",
        ["a", "b", "c", "d", "e"],
        R1Q1,
        {"family_feud": 0, "fast_money": 0, "set_intersection": 0, "hard_lcsubstring": 0, "hard_lcsubseq": 0},
    ),
]


def _params(cases):
    return [
        pytest.param(method, predictions, answers, expected, id=f"{method}][{name}")
        for name, predictions, answers, by_method in cases
        for method, expected in by_method.items()
    ]


@pytest.mark.parametrize("method, predictions, answers, expected", _params(EVALUATOR_CASES + CROWDSOURCE_CASES))
def test_reference_case(method, predictions, answers, expected):
    assert score_with(method, predictions, clusters_of(answers)) == expected


# ---- tests/data_stub.jsonl: the old format, answers-cleaned as {answer: count} ----------------------

DATA_STUB = [
    (
        "q0",
        "at the beach, name something that might protect you from sun.",
        {"umbrella": 38, "sunscreen": 36, "sun hat": 14, "sunglasses": 5, "cover up": 3, "shade": 3},
    ),
    (
        "q1",
        "after a week of camping, what luxury oh home are you most excited to have again?",
        {"bed": 35, "shower": 25, "tv": 13, "toilet": 11, "electricity": 4, "air conditioner": 4, "computer": 3},
    ),
    (
        "q2",
        "after having kids name something that happens that interrupts a couples alone time at night",
        {"crying baby": 37, "nightmares": 23, "feeding times": 18, "sick kid": 14},
    ),
    (
        "q3",
        "at what age is it ok for a child to walk home from school by themselves",
        {"9": 5, "10": 35, "11": 5, "12": 24, "13": 15, "14": 6, "15": 7},
    ),
    ("q4", "at what age might a man have midlifecrisis?", {"40": 35, "45": 21, "50": 20, "30": 7, "35": 5}),
]


@pytest.fixture
def data_stub(tmp_path):
    path = tmp_path / "data_stub.jsonl"
    path.write_text(
        "".join(
            json.dumps({"question": q.title(), "normalized-question": q, "answers-cleaned": answers, "questionid": qid})
            + "\n"
            for qid, q, answers in DATA_STUB
        )
    )
    return read_targets(path)


def test_old_format_is_read(data_stub):
    assert list(data_stub) == ["q0", "q1", "q2", "q3", "q4"]
    q0 = data_stub["q0"]
    assert [(c.answers, c.count) for c in q0.clusters][:2] == [(("umbrella",), 38), (("sunscreen",), 36)]
    assert q0.question == DATA_STUB[0][1] and q0.total_count == 99


def test_evaluate_single_question(data_stub):
    q0 = data_stub["q0"]
    result = score_question(["umbrella", "hat", "towel"], q0.clusters, "exact_match", max_incorrect=3)
    assert result.score == 0.3838383838383838
    assert result.raw_score == 38.0
    assert result.assignment == (q0.clusters[0].id, None, None)


def test_evaluate_multiple_questions(data_stub):
    answers = {
        "q0": ["umbrella", "sunscreen", "towel", "sun glasses"],
        "q1": ["bed", "shower", "bathroom"],
        "q2": ["baby crying"],
        "q3": ["10"],
        "q4": ["40"],
    }
    expected = {"q0": 2 / 6, "q1": 2 / 7, "q2": 0, "q3": 1 / 7, "q4": 1 / 5}
    scores = {
        qid: score_question(preds, data_stub[qid].clusters, "exact_match", weighted=False).score
        for qid, preds in answers.items()
    }
    assert scores == expected


def test_readme_example(data_stub):
    # Soft (unrounded) longest-common-subsequence set intersection.
    q0 = data_stub["q0"]
    predictions = ["umbrella", "hat", "sun glasses"]
    matrix = similarity_matrix(predictions, q0.clusters, "lcs")
    expected_matrix = [
        [1.0, 0.33333333, 0.25, 0.3, 0.125, 0.125],
        [0.125, 0.0, 0.42857143, 0.1, 0.0, 0.4],
        [0.27272727, 0.45454545, 0.45454545, 0.90909091, 0.09090909, 0.27272727],
    ]
    np.testing.assert_allclose(matrix, expected_matrix, rtol=0, atol=1e-8)  # the reference printed 8 decimals
    result = score_matrix(matrix, q0.clusters, weighted=False, predictions=predictions)
    assert result.score == 0.3896103896103896
    ids = {c.answers[0]: c.id for c in q0.clusters}
    assert result.assignment == (ids["umbrella"], ids["sun hat"], ids["sunglasses"])


def test_crowdsource_eval_mult():
    answers = {"r1q1": ["star", "galaxy", "dark matter"], "r1q2": ["apple", "broccoli", "asparagus", "orange"]}
    r1q1, r1q2 = clusters_of(R1Q1), clusters_of(R1Q2)
    first = score_question(answers["r1q1"], r1q1, "exact_match", weighted=False)
    second = score_question(answers["r1q2"], r1q2, "exact_match", weighted=False)
    assert first.score == 0.25 and first.assignment == (r1q1[2].id, None, None)
    assert second.score == 1.0 and second.assignment == (r1q2[0].id, r1q2[1].id, None, None)
    assert similarity_matrix(answers["r1q1"], r1q1, "exact_match").tolist() == [
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ]


# ---- tests/test_scoring.py: one pair of strings ---------------------------------------------------


def _wup_matches_nltk() -> bool:
    # NLTK's Wu-Palmer of person.n.01 with itself is 6/7; an older rule here gave 1.
    return SIMILARITIES["wordnet_wup"].function("person", "someone") < 1.0


PAIR_CASES = [
    ("wn_same_synset", "jump", "startle", {"wordnet": 1, "exact_match": 0, "longest_common_substring": 0, "lcs": 0}),
    ("wn_oov", "oov", "oov", {"wordnet": 1}),
    ("wn_partial_oov", "oov plant", "oov flora", {"wordnet": 1}),
    ("wn_should_not_match", "ear muffs", "ear wax", {"wordnet": 0.5, "wordnet_wup": 2 / 3}),
    ("wn_gum", "gum", "chewing gum", {"wordnet": 1}),
]


@pytest.mark.parametrize(
    "similarity, prediction, answer, expected",
    [
        pytest.param(sim, p, a, expected, id=f"{sim}][{name}")
        for name, p, a, by_sim in PAIR_CASES
        for sim, expected in by_sim.items()
    ],
)
def test_answer_score_example(similarity, prediction, answer, expected):
    require(similarity)
    if similarity == "wordnet_wup" and not _wup_matches_nltk():
        pytest.skip("wordnet_wup gives a synset with itself 1.0 in this version, not NLTK's Wu-Palmer")
    assert SIMILARITIES[similarity].function(prediction, answer) == expected

"""The similarity registry: names listed without importing a similarity, each similarity loaded
under its own name with its declared properties and options, the default best-of and level
decision, and the errors that name the choices."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from protoqa_core.similarity import (
    ABOVE_HALF,
    DECLARING_OPTIONS,
    SIMILARITIES,
    Similarity,
    check_similarity_options,
    get_similarity,
    similarity_options,
)


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_listing_and_checking_names_imports_no_similarity_module():
    out = run_python(
        """
        import sys
        from protoqa_core.similarity import SIMILARITIES
        names = (list(SIMILARITIES), SIMILARITIES.names(), "wordnet" in SIMILARITIES, len(SIMILARITIES))
        print(sorted(m for m in sys.modules if m.startswith("protoqa_core.similarity.")))
        print("numpy" in sys.modules, list(SIMILARITIES)[-1])
        """
    )
    assert out.splitlines() == ["['protoqa_core.similarity.registry']", "False roberta"]


def test_asking_for_one_similarity_imports_its_module_alone():
    out = run_python(
        """
        import sys
        from protoqa_core.similarity import get_similarity
        print(get_similarity("lcs").name, sorted(m for m in sys.modules if m.startswith("protoqa_core.similarity.")))
        """
    )
    assert out == "lcs ['protoqa_core.similarity.registry', 'protoqa_core.similarity.strings']"


def test_every_declared_plugin_loads_under_its_own_name_with_its_declared_properties():
    for name in SIMILARITIES:
        similarity = SIMILARITIES[name]
        assert similarity.name == name and similarity.description
        assert similarity.uses_wordnet == name.startswith("wordnet") and similarity.rounded == similarity.uses_wordnet
        assert (similarity.per_question is not None) == similarity.needs_question_text == (name == "roberta")
    assert [o.name for o in SIMILARITIES["roberta"].options] == ["encoder", "device", "length_scale"]
    # Only the similarities named as declaring options declare any: the flags read those alone.
    assert [name for name in SIMILARITIES if SIMILARITIES[name].options] == list(DECLARING_OPTIONS)


def test_reading_every_declared_option_loads_no_scorer_and_no_other_similarity():
    out = run_python(
        """
        import sys
        from protoqa_core.similarity import similarity_options
        print(list(similarity_options()), "numpy" in sys.modules)
        print(sorted(m for m in sys.modules if m.startswith("protoqa_core.similarity.")))
        """
    )
    assert out.splitlines() == [
        "['encoder', 'device', 'length_scale'] False",
        "['protoqa_core.similarity.registry', 'protoqa_core.similarity.roberta_plugin']",
    ]


def test_an_option_is_checked_against_the_similaritys_declarations():
    roberta = get_similarity("roberta")
    given = {"encoder": "x", "device": "cuda", "length_scale": "fit"}
    assert check_similarity_options(roberta, given) == given
    assert check_similarity_options(roberta, {"encoder": None}) == {}
    # device is shared: a similarity without an encoder ignores it rather than refusing it.
    assert check_similarity_options(get_similarity("lcs"), {"device": "cuda"}) == {}
    with pytest.raises(ValueError, match="^an encoder is used by the roberta similarity only, not by 'lcs'$"):
        check_similarity_options(get_similarity("lcs"), {"encoder": "x"})
    with pytest.raises(ValueError, match="^encoder must be a Hugging Face Hub id or a local folder, got 3$"):
        check_similarity_options(roberta, {"encoder": 3})
    with pytest.raises(ValueError, match="^no similarity takes an option 'depth'; the options are: encoder, device"):
        check_similarity_options(roberta, {"depth": 3})
    assert similarity_options()["device"][1] == ("roberta",)


def test_an_unknown_name_lists_every_similarity_and_roberta_is_not_pairwise():
    with pytest.raises(ValueError) as error:
        get_similarity("cosine")
    assert str(error.value) == (
        "unknown similarity 'cosine'; choose one of: exact_match, wordnet, wordnet_wup, lcs, "
        "longest_common_substring, jaro_winkler, roberta"
    )
    with pytest.raises(ValueError, match="scored per question, from the question and all its clusters"):
        get_similarity("roberta").best("dog", ["cat"])


def test_a_per_question_similarity_is_built_with_the_options_given(monkeypatch, tmp_path):
    # The encoder named is the one looked for: with no copy anywhere, the error names it.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(FileNotFoundError, match=re.escape(f"the encoder {tmp_path / 'no-encoder'} was not found")):
        get_similarity("roberta").per_question(encoder=str(tmp_path / "no-encoder"))


def test_a_similarity_registered_under_another_name_is_refused():
    mine = Similarity("mine", lambda prediction, answer: 0.0, description="never agrees")
    with pytest.raises(ValueError, match="the similarity 'mine' is registered under another name, 'yours'"):
        SIMILARITIES.add("yours", mine)
    assert "yours" not in SIMILARITIES and "yours" not in SIMILARITIES.names()


def _counting(values: dict[str, float]) -> tuple[Similarity, list[str]]:
    seen: list[str] = []

    def function(prediction: str, answer: str) -> float:
        seen.append(answer)
        return values[answer]

    return Similarity("counting", function, description="a table of values"), seen


def test_the_default_best_is_the_maximum_and_stops_at_one():
    similarity, seen = _counting({"a": 0.2, "b": 0.7, "c": 1.0, "d": 0.4})
    assert similarity.best("x", []) == 0.0
    assert similarity.best("x", ["a", "b", "d"]) == 0.7
    seen.clear()
    assert similarity.best("x", ["a", "c", "d"]) == 1.0
    assert seen == ["a", "c"]  # nothing beats 1


def test_the_default_level_decision_compares_the_best_with_the_level():
    similarity, _ = _counting({"half": 0.5, "more": 0.75})
    assert similarity.reaches("x", ["half"], 0.5) and not similarity.reaches("x", ["half"], ABOVE_HALF)
    assert similarity.reaches("x", ["half", "more"], ABOVE_HALF)
    assert not similarity.reaches("x", [], ABOVE_HALF)


def test_a_declared_best_of_and_reaches_of_are_used_with_the_options():
    calls = []

    def best_of(prediction, answers, **options):
        calls.append(("best", tuple(answers), options))
        return 0.25

    def reaches_of(prediction, answers, level, **options):
        calls.append(("reaches", level, options))
        return True

    never = Similarity("never", lambda p, a: 0.0, description="", best_of=best_of, reaches_of=reaches_of)
    assert never.best("x", ["a"], all_stopword_match=False) == 0.25
    assert never.reaches("x", ["a"], 0.9, all_stopword_match=True)
    assert calls == [("best", ("a",), {"all_stopword_match": False}), ("reaches", 0.9, {"all_stopword_match": True})]


@pytest.mark.parametrize("value", [0.0, 0.25, 0.5, ABOVE_HALF, 2 / 3, 1.0])
def test_a_rounded_value_counts_one_exactly_when_it_reaches_above_half(value):
    # The metric rounds half to even (0.5 -> 0) and asks whether the best similarity reaches ABOVE_HALF.
    assert (round(value) == 1) == (value >= ABOVE_HALF)
    assert 0.5 < ABOVE_HALF < 0.5 + 1e-15

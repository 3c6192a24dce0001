"""The project's WordNet reader against NLTK's, on every lemma of WordNet 3.0.

NLTK is the oracle here (a test dependency); the similarities never import it.
"""

from __future__ import annotations

import random

import pytest

from tests.support.lazy import require

require("nltk")

from protoqa_core.wordnet import lookup as wordnet_lookup  # noqa: E402
from protoqa_core.wordnet.nltk_reader import get_wordnet, nltk_exception_map, nltk_lemma_offsets, nltk_morphy  # noqa: E402
from protoqa_core.wordnet.reader import SUBSTITUTIONS  # noqa: E402
from protoqa_core.wordnet.wu_palmer import WuPalmer, wup_from_keys  # noqa: E402


@pytest.fixture(scope="module")
def wn():
    return get_wordnet()


@pytest.fixture(scope="module")
def reader():
    return wordnet_lookup.open_wordnet()


def _nltk_keys(wn, lemma: str) -> frozenset:
    index = nltk_lemma_offsets(wn)
    return frozenset(
        (pos, offset)
        for pos in ("n", "v", "a", "r")
        for form in nltk_morphy(wn, lemma, pos)
        for offset in index.get(form, {}).get(pos, ())
    )


def test_the_readers_rules_of_detachment_are_nltks(wn):
    assert all(wn.MORPHOLOGICAL_SUBSTITUTIONS[p] == list(SUBSTITUTIONS[p]) for p in "nvar")


def _check_forms(wn, reader, forms, lemmas) -> None:
    index = nltk_lemma_offsets(wn)
    for form in sorted(forms):
        for pos in ("n", "v", "a", "r"):
            assert reader.morphy(form, pos) == nltk_morphy(wn, form, pos), (form, pos)
        if form in index:
            for pos, offsets in index[form].items():
                if pos != "s":
                    assert list(reader.offsets(form, pos)) == offsets, (form, pos)
    for lemma in lemmas:
        assert reader.synset_keys(lemma) == _nltk_keys(wn, lemma), lemma


def _lemmas(wn) -> list[str]:
    return sorted(lemma for lemma, by_pos in nltk_lemma_offsets(wn).items() if by_pos)


@pytest.mark.slow
def test_every_lemma_and_exception_form_has_nltks_synsets(wn, reader):
    lemmas = _lemmas(wn)
    assert len(lemmas) == 147_306
    forms = set(lemmas)
    for table in nltk_exception_map(wn).values():
        forms.update(table)
    _check_forms(wn, reader, forms, lemmas)


def test_inflected_forms_of_sampled_lemmas_have_nltks_synsets(wn, reader):
    # What the rules of detachment undo, and what they do not, on a sample (all lemmas: slow test above).
    lemmas = random.Random(7).sample(_lemmas(wn), 2000)
    forms = {lemma + ending for lemma in lemmas for ending in ("", "s", "es", "ed", "ing", "er", "est", "men", "ies")}
    for table in nltk_exception_map(wn).values():
        forms.update(random.Random(8).sample(sorted(table), min(len(table), 300)))
    _check_forms(wn, reader, forms, lemmas)


def test_synsets_of_odd_strings_are_nltks(wn, reader):
    for phrase in [
        "",
        " ",
        "_",
        "DOGS",
        "Chewing_Gum",
        "a" * 300,
        "dog\n",
        "dog cat",
        "\x00",
        "é",
        "ﬁsh",
        "zzzzzzzzz",
        "00",
        "'hood",
        ".22",
        "a-ok",
        "u.s.",
        "geese",
        "better",
        "axes",
        "mice",
    ]:
        assert reader.synset_keys(phrase) == _nltk_keys(wn, phrase.lower()), phrase


def test_lemma_tables_are_those_of_nltks_tables(wn):
    index = nltk_lemma_offsets(wn)
    forms = [lemma for lemma, by_pos in index.items() if by_pos]
    for table in nltk_exception_map(wn).values():
        forms.extend(table)
    assert wordnet_lookup.max_lemma_tokens() == 1 + max(form.count("_") for form in forms)
    prefixes = {"_".join(form.lower().split("_")[:k]) for form in forms for k in range(1, form.count("_") + 1)}
    assert wordnet_lookup._tables().prefixes == prefixes


@pytest.mark.slow
def test_every_synset_has_nltks_name_and_version(wn, reader):
    assert reader.version() == wn.get_version() == "3.0"
    wup = WuPalmer(reader, walk_table=None)
    checked = 0
    for pos in "nvar":
        for synset in wn.all_synsets(pos):  # "a" gives the satellites too
            name, _ = wup._synset_record("a" if synset.pos() == "s" else synset.pos(), synset.offset())
            assert name == synset.name()
            checked += 1
    assert checked == 117_659


@pytest.mark.slow
def test_every_synset_scores_as_nltk_against_partners(wn):
    # Wu-Palmer of every synset of WordNet 3.0 against rotating partners, NLTK's value to the bit.
    partners = [s for word in ("dog", "person", "run", "good", "quickly", "entity") for s in wn.synsets(word)]
    rng = random.Random(22)
    for synset in wn.all_synsets():
        other = rng.choice(partners)
        key = ("a" if synset.pos() == "s" else synset.pos(), synset.offset())
        okey = ("a" if other.pos() == "s" else other.pos(), other.offset())
        expected = synset.wup_similarity(other)
        assert wup_from_keys(key, okey) == (0.0 if expected is None else expected), (synset, other)


def _tiny_index(folder, lines: list[str], trailing_newline: bool = True) -> None:
    """An ``index.noun`` of ``lines`` (sorted by the caller) under a two-line licence header."""
    body = "\n".join(lines) + ("\n" if trailing_newline else "")
    (folder / "index.noun").write_text("  1 This software and database\n  2 is provided\n" + body, encoding="utf-8")


@pytest.mark.parametrize("block", [1, 16, 40, 64, 1 << 11])
@pytest.mark.parametrize("trailing_newline", [True, False])
def test_the_block_table_finds_every_line_a_scan_finds(tmp_path, monkeypatch, block, trailing_newline):
    import protoqa_core.wordnet.reader as reader_module

    monkeypatch.setattr(reader_module, "INDEX_BLOCK", block)
    # Lemmas that are prefixes of their neighbours, on and off block starts, and one long line.
    lemmas = sorted(["a", "ab", "abc", "abcd", "b", "dog", "dog's", "dog-eared", "dog_tag", "dogma", "dogs", "zz"])
    lines = [f"{lemma} n 1 0 1 0 {i:08d}" + (" x" * 40 if lemma == "dogma" else "") for i, lemma in enumerate(lemmas)]
    _tiny_index(tmp_path, lines, trailing_newline)
    wn = reader_module.WordNetReader(tmp_path)
    by_lemma = {line.split(" ", 1)[0]: line.encode() for line in lines}
    probes = set(lemmas) | {"", "0", "aa", "abcde", "c", "do", "dog_", "dogm", "dogmas", "zzz", "~", "a b", "é"}
    probes |= {lemma[:-1] for lemma in lemmas}
    for probe in sorted(probes):
        assert wn.index_line(probe, "n") == by_lemma.get(probe), (block, probe)
    assert wn.offsets("dogs", "n") == (lemmas.index("dogs"),)
    assert wn.offsets("dogm", "n") == () and not wn.has("dogm", "n")

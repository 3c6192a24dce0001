"""The synsets of a phrase: the memo of :func:`protoqa_core.wordnet.lookup.synset_keys` stays bounded."""

from __future__ import annotations

from protoqa_core.wordnet import lookup


def test_the_phrase_memo_starts_again_when_full_and_answers_the_same(monkeypatch):
    phrases = ["dog", "dogs", "hot dog", "cat", "running", "qwertyuiop", "dog"]
    first = {phrase: lookup.open_wordnet().synset_keys(phrase.replace(" ", "_")) for phrase in phrases}
    monkeypatch.setattr(lookup, "SYNSET_CACHE", 3)
    monkeypatch.setattr(lookup, "_synset_cache", {})
    for phrase in phrases:
        assert lookup.synset_keys(phrase) == first[phrase], phrase
        assert len(lookup._synset_cache) <= 3
    assert lookup.synset_keys("dogs") & lookup.synset_keys("dog")

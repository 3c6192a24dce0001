"""Signatures: every setting that can change a number has its key, in a fixed order, and the
optional keys appear only when they say something."""

from __future__ import annotations

from protoqa_core import __version__
from protoqa_core.signature import make_signature, settings_signature
from protoqa_core.wordnet.lookup import wordnet_version


def test_the_keys_come_in_a_fixed_order_and_end_with_the_version():
    signature = make_signature("wordnet", "standard", "zero", 3, all_stopword_match=False, approximated=2, uncounted=1)
    assert signature == (
        f"sim:wordnet|stop:zero|metrics:standard|missing:zero|n:3|wordnet:{wordnet_version()}"
        f"|approx:2|uncounted:1|version:{__version__}"
    )


def test_each_setting_changes_the_signature():
    base = make_signature("exact_match", "standard", "zero", 52)
    changed = [
        make_signature("jaro_winkler", "standard", "zero", 52),
        make_signature("exact_match", "paper", "zero", 52),
        make_signature("exact_match", "standard", "skip", 52),
        make_signature("exact_match", "standard", "zero", 51),
        make_signature("exact_match", "standard", "zero", 52, approximated=1),
        make_signature("exact_match", "standard", "zero", 52, uncounted=1),
    ]
    assert len({base, *changed}) == 1 + len(changed)


def test_the_stopword_rule_and_the_wordnet_version_come_together():
    plain = make_signature("exact_match", "standard", "zero", 1)
    assert "stop:" not in plain and "wordnet:" not in plain
    match = make_signature("wordnet", "standard", "zero", 1, all_stopword_match=True)
    assert "|stop:match|" in match and "|wordnet:" in match
    assert match != make_signature("wordnet", "standard", "zero", 1, all_stopword_match=False)


def test_settings_signature_keeps_order_flattens_and_drops_unset_values():
    settings = {"b": 1, "a": None, "nested": {"y": 2, "x": None, "z": {"deep": True}}, "stops": ("\n", ".")}
    assert settings_signature(settings) == "b:1|nested.y:2|nested.z.deep:True|stops:\n,."
    assert settings_signature({"nested": {"x": None}}) == ""
    assert settings_signature({}) == ""

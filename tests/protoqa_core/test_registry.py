"""Registries know their built-in plug-ins by name and place and import one only when it is asked for."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from protoqa_core.registry import Registry
from protoqa_core.similarity import ALL_SIMILARITIES, QUESTION_SIMILARITIES, SIMILARITIES


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_listing_and_checking_names_imports_no_similarity_module():
    out = run_python(
        """
        import sys
        from protoqa_core.similarity import ALL_SIMILARITIES, QUESTION_SIMILARITIES, SIMILARITIES
        names = (list(SIMILARITIES), SIMILARITIES.names(), "wordnet" in SIMILARITIES, len(QUESTION_SIMILARITIES))
        print(sorted(m for m in sys.modules if m.startswith("protoqa_core.similarity.")))
        print("numpy" in sys.modules, ALL_SIMILARITIES[-1])
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
    roberta = QUESTION_SIMILARITIES["roberta"]
    assert roberta.options == ("encoder", "device", "length_scale") and roberta.needs_question_text
    assert ALL_SIMILARITIES == (*SIMILARITIES.names(), "roberta")


def test_a_plugin_misplaced_or_misnamed_fails_when_asked_for_and_names_the_place():
    def same_name(name: str, plugin: object) -> None:
        if getattr(plugin, "__name__", name) != name:
            raise ValueError(f"{name!r} is {plugin!r}")

    things = Registry("thing", plugins={"dumps": "json:dumps", "loads": "json:dumps"}, check=same_name)
    assert things.get("dumps")("x") == '"x"' and things.is_loaded("dumps")
    with pytest.raises(ValueError, match="'loads' is <function dumps"):
        things.get("loads")
    assert not things.is_loaded("loads")
    missing = Registry("thing", plugins={"gone": "json:nothing_here"})
    with pytest.raises(AttributeError, match="nothing_here"):
        missing.get("gone")
    with pytest.raises(ValueError, match="placed at 'json', not at 'module:attribute'"):
        Registry("thing", plugins={"bad": "json"})


def test_a_name_is_registered_once_whether_declared_or_added():
    things = Registry("thing", plugins={"dumps": "json:dumps"})
    with pytest.raises(ValueError, match="the thing name 'dumps' is registered already"):
        things.add("dumps", len)
    things.add("size", len)
    assert list(things) == ["dumps", "size"] and things.place("size") is None
    with pytest.raises(ValueError, match="unknown thing 'other'; choose one of: dumps, size"):
        things.get("other")

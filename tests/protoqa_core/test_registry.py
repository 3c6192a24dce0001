"""Registries know their built-in plug-ins by name and place, import one only when it is asked for,
and refuse a plug-in that is misplaced, misnamed or registered twice."""

from __future__ import annotations

import pytest

from protoqa_core.registry import Registry


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

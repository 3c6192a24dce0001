"""A package face built with ``lazy_exports`` imports a module only when one of its names is read."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from protoqa_core.lazy_exports import lazy_exports


def test_a_name_is_imported_once_and_kept_in_the_package(monkeypatch):
    face = types.ModuleType("face")
    face.__getattr__ = lazy_exports(face, {"dedent": "textwrap", "loads": "json"})
    calls = []
    real = __import__("importlib").import_module

    def counting(name, package=None):
        calls.append(name)
        return real(name, package)

    monkeypatch.setattr("importlib.import_module", counting)
    assert face.dedent("  x") == "x" and face.dedent is vars(face)["dedent"]
    assert face.dedent("  y") == "y"
    assert calls == ["textwrap"]  # read twice, imported once; json not at all


def test_an_unknown_name_is_an_attribute_error_naming_the_package():
    face = types.ModuleType("face")
    face.__getattr__ = lazy_exports(face, {})
    with pytest.raises(AttributeError, match="module 'face' has no attribute 'nope'"):
        face.nope  # noqa: B018
    assert getattr(face, "nope", None) is None


def test_relative_homes_and_from_imports_load_only_their_module(tmp_path):
    package = tmp_path / "face"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import sys\n"
        "from protoqa_core.lazy_exports import lazy_exports\n"
        "__getattr__ = lazy_exports(sys.modules[__name__], {'A': '.heavy', 'B': '.light'})\n"
    )
    (package / "heavy.py").write_text("A = 'heavy'\n")
    (package / "light.py").write_text("B = 'light'\n")
    # A new process: whether a module is loaded must not depend on what other tests imported.
    code = "import sys\nfrom face import B\nprint(B, 'face.light' in sys.modules, 'face.heavy' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["light", "True", "False"]

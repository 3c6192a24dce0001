"""A package face built with ``lazy_exports`` imports a module only when one of its names is read."""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest

from protoqa_core.lazy_exports import homes, lazy_exports
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]
FACE = (
    "import sys\n"
    "from typing import TYPE_CHECKING\n"
    "from protoqa_core.lazy_exports import lazy_exports\n"
    "if TYPE_CHECKING:\n"
    "    from .heavy import A\n"
    "    from .light import B\n"
    "__all__ = ['A', 'B']\n"
    "__getattr__ = lazy_exports(sys.modules[__name__])\n"
)


def _face(tmp_path):
    package = tmp_path / "face"
    package.mkdir()
    (package / "__init__.py").write_text(FACE)
    (package / "heavy.py").write_text("A = 'heavy'\n")
    (package / "light.py").write_text("B = 'light'\n")


def _run(tmp_path, code):
    # A new process: whether a module is loaded must not depend on what other tests imported.
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = run_python(["-c", code], tmp_path, env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_homes_are_the_type_checking_imports_only():
    source = "from .eager import E\nif TYPE_CHECKING:\n    from .a import A, B\n    from json import loads\nif X:\n    from .x import Y\n"
    assert homes(source) == {"A": ".a", "B": ".a", "loads": "json"}


def test_relative_homes_and_from_imports_load_only_their_module(tmp_path):
    _face(tmp_path)
    code = "import sys\nfrom face import B\nprint(B, 'face.light' in sys.modules, 'face.heavy' in sys.modules)\n"
    assert _run(tmp_path, code) == ["light", "True", "False"]


def test_a_name_is_imported_once_and_kept_in_the_package(tmp_path):
    _face(tmp_path)
    code = (
        "import importlib, face\ncalls = []\nreal = importlib.import_module\n"
        "importlib.import_module = lambda name, package=None: calls.append(name) or real(name, package)\n"
        "print(face.A, face.A is vars(face)['A'], face.A, calls)\n"
    )
    assert _run(tmp_path, code) == ["heavy", "True", "heavy", "['.heavy']"]


def test_an_unknown_name_is_an_attribute_error_naming_the_package(tmp_path):
    _face(tmp_path)
    code = "import face\ntry:\n    face.nope\nexcept AttributeError as error:\n    print(error)\n"
    assert " ".join(_run(tmp_path, code)) == "module 'face' has no attribute 'nope'"


def test_a_face_without_source_is_an_import_error_naming_it_when_a_name_is_read():
    face = types.ModuleType("face")
    face.__loader__ = None
    face.__getattr__ = lazy_exports(face)  # importing the face reads nothing yet
    assert getattr(face, "__wrapped__", None) is None  # probes of special names read nothing either
    with pytest.raises(ImportError, match="face: its source is needed"):
        face.A  # noqa: B018

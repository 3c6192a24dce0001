"""Every ``protoqa_core`` import that the documentation shows works, each in a fresh process.

The documentation is docs/ (with the API reference's ``:::`` modules), the README and the
package cards. The flat module paths from before the subpackages, and the command-line modules' places in
``io/``, are gone: a module has one path.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(
    [*REPO.glob("docs/**/*.md"), REPO / "README.md", *REPO.glob("*/README.md")],
    key=lambda p: str(p.relative_to(REPO)),
)

# The flat module paths from before the subpackages, and the command-line modules' places in io/: gone.
OLD_PATHS = (
    "protoqa_core.readers",
    "protoqa_core.ids",
    "protoqa_core.data",
    "protoqa_core.string_similarity",
    "protoqa_core.wordnet_lookup",
    "protoqa_core.wu_palmer",
    "protoqa_core.embedding",
    "protoqa_core.wordnet_files",
    "protoqa_core.wordnet_reader",
    "protoqa_core.wordnet_cache",
    "protoqa_core.wordnet_nltk",
    "protoqa_core.walk_table",
    "protoqa_core.rows",
    "protoqa_core.cli_io",
    "protoqa_core.io.cli",
    "protoqa_core.io.cli_options",
    "protoqa_core.roberta_similarity",
    "protoqa_core.partition_alignment",
    "protoqa_core.gaussian_process",
)

_FROM_IMPORT = re.compile(r"^\s*(from protoqa_core[\w.]* import [\w, ]+?)\s*(?:#.*)?$", re.M)
_API_MODULE = re.compile(r"^::: (protoqa_core[\w.]*)\s*$", re.M)
_DOTTED = re.compile(r"(?<![\w./])protoqa_core(?:\.\w+)+")


def _statements() -> list[str]:
    """One Python statement per distinct documented import or dotted name, in document order."""
    found: dict[str, None] = {}
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for statement in _FROM_IMPORT.findall(text):
            found[statement] = None
        for module in _API_MODULE.findall(text):
            found[f"import {module}"] = None
        for name in _DOTTED.findall(text):
            if f"import {name}" not in found:
                found[f"_resolve({name!r})"] = None
    return list(found)


# A dotted name in prose is a module, or a name inside the longest module prefix of it.
_RESOLVE = """
import importlib
def _resolve(dotted):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            target = getattr(target, name)
        return target
    raise ModuleNotFoundError(dotted)
"""


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    return run_python(["-c", code], tmp_path, env, timeout=120)


def test_the_documentation_shows_imports_of_the_core():
    statements = _statements()
    assert any(s.startswith("from protoqa_core") for s in statements), statements
    assert sum(s.startswith("import protoqa_core") for s in statements) >= 10, statements


@pytest.mark.parametrize("statement", _statements())
def test_each_documented_import_works_in_a_fresh_process(statement, tmp_path):
    done = _run(_RESOLVE + statement + "\n", tmp_path)
    assert done.returncode == 0, f"{statement}\n{done.stderr[-2000:]}"


def test_the_api_reference_documents_no_old_path():
    text = (REPO / "docs" / "api" / "protoqa_core.md").read_text(encoding="utf-8")
    modules = _API_MODULE.findall(text)
    assert modules and not set(modules) & set(OLD_PATHS), modules


def test_no_old_path_is_left():
    left = [
        m for m in OLD_PATHS if (REPO / f"{m.replace('.', '/')}.py").exists() or (REPO / m.replace(".", "/")).exists()
    ]
    assert not left, left

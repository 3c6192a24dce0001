"""The import graph follows ARCHITECTURE.md: no module imports a layer above its own.

The layers are read from the ``layers`` block of ARCHITECTURE.md, so the document and
this check cannot drift apart. Every import statement counts, including those inside
functions; modules that only keep an old name alive (``alias_module`` calls, listed in
ARCHITECTURE.md) are the one allowed exception, and they must stay pure aliases.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES_OUTSIDE_THE_WHEEL = ("space", "studies", "benchmarks", "examples")


def _layers() -> dict[str, int]:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block, "ARCHITECTURE.md has no ```layers block"
    layers = {}
    for line in block.group(1).splitlines():
        match = re.match(r"\s*(\d+)\s*:\s*(.+)", line)
        if match:
            for package in match.group(2).split():
                layers[package] = int(match.group(1))
    return layers


def _aliases() -> set[str]:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = re.search(r"```aliases\n(.*?)```", text, re.S)
    assert block, "ARCHITECTURE.md has no ```aliases block"
    return {line.strip() for line in block.group(1).splitlines() if line.strip()}


def _modules() -> list[Path]:
    layers = _layers()
    files = []
    for package in layers:
        folder = REPO / package
        if folder.is_dir():
            files += [p for p in folder.rglob("*.py") if not p.is_symlink()]
    return sorted(files)


def _imported(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every import in ``path``, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    own = path.relative_to(REPO).parts[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, own if node.level else (node.module or "").split(".")[0]))
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "alias_module"
              and len(node.args) == 2 and isinstance(node.args[1], ast.Constant)):
            found.append((node.lineno, node.args[1].value.split(".")[0]))
    return found


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_layers_block_names_every_package():
    layers = _layers()
    assert {"protoqa_core", "protoqa_metric", "cfc_probeval", "protoqa_dataset", "protoqa_integrations"} <= set(layers)
    assert layers["protoqa_core"] < layers["protoqa_metric"] < layers["protoqa_integrations"]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_imports_upward_or_sideways(path):
    layers = _layers()
    own = path.relative_to(REPO).parts[0]
    aliases = _aliases()
    name = _module_name(path)
    wrong = []
    for line, package in _imported(path):
        if package not in layers or package == own:
            continue
        # below its own layer: always allowed; the same layer only for applications
        if layers[package] < layers[own] or (layers[package] == layers[own] and own in PACKAGES_OUTSIDE_THE_WHEEL):
            continue
        if name in aliases:
            continue
        wrong.append(f"{path.relative_to(REPO)}:{line} imports {package} (layer {layers[package]}) "
                     f"from layer {layers[own]}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", sorted(_aliases()))
def test_aliases_are_only_aliases(name):
    """An alias module holds a docstring, the alias call and at most a ``python -m`` entry."""
    path = REPO / (name.replace(".", "/") + ".py")
    if not path.exists():
        path = REPO / name.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "alias_module"]
    assert len(calls) == 1
    defined = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Assign))]
    assert not defined, f"{name} defines something besides the alias"


def test_wheel_layout_leaves_research_out():
    """setup.cfg installs the five packages and nothing from the applications."""
    text = (REPO / "setup.cfg").read_text(encoding="utf-8")
    include = re.search(r"\[options\.packages\.find\]\ninclude =\n((?:\s+.+\n)+)", text).group(1).split()
    assert not [p for p in include if p.split(".")[0] in PACKAGES_OUTSIDE_THE_WHEEL]
    assert {p for p in include if "." not in p} == {
        "protoqa_core", "protoqa_metric", "cfc_probeval", "protoqa_dataset", "protoqa_integrations"}

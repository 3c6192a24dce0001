"""Size rules: no installed module over 600 lines, no function over 80 anywhere in the code.

A function may be longer when a comment on the line above its ``def`` (or its decorators)
says ``one piece:`` and why it cannot be split. Line counts include docstrings and
decorators, as a reader scrolls them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.packages import INSTALLED

REPO = Path(__file__).resolve().parents[2]
MODULE_LINES, FUNCTION_LINES = 600, 80
# Not installed: the demo, the studies, the benchmarks and the example keep the function rule only.
TOP = ("space", "studies", "benchmarks", "examples")
MODULES = sorted(p for package in INSTALLED for p in (REPO / package).rglob("*.py"))
TOP_MODULES = sorted(p for folder in TOP for p in (REPO / folder).rglob("*.py"))


def long_functions(source: str) -> list[tuple[str, int]]:
    """``(name, lines)`` of each function over the limit without a ``one piece:`` comment above it.

    >>> long_functions("def f():\\n" + "    x = 1\\n" * 80)
    [('f', 81)]
    >>> long_functions("# one piece: a table\\ndef f():\\n" + "    x = 1\\n" * 80)
    []
    """
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - start + 1
            above = lines[start - 2] if start >= 2 else ""
            if length > FUNCTION_LINES and "one piece:" not in above:
                found.append((node.name, length))
    return found


def test_the_packages_have_modules():
    assert len(MODULES) > 10


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_or_function_is_over_its_size(path):
    source = path.read_text(encoding="utf-8")
    assert source.count("\n") <= MODULE_LINES, f"{path.name}: {source.count(chr(10))} lines"
    assert long_functions(source) == []


@pytest.mark.parametrize("path", TOP_MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_function_of_the_top_layer_is_over_its_size(path):
    assert long_functions(path.read_text(encoding="utf-8")) == []

"""Size rules: no installed module over 600 lines, no function over 80 anywhere in the code.

A function may be longer when a comment on the line above its ``def`` (or its decorators)
says ``one piece:`` and why it cannot be split. Line counts include docstrings and
decorators, as a reader scrolls them.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.packages import INSTALLED

REPO = Path(__file__).resolve().parents[2]
MODULE_LINES, FUNCTION_LINES = 600, 80
# Not installed: the demo, the studies, the benchmarks and the example keep the function rule only.
TOP = ("space", "studies", "benchmarks", "examples")
MODULES = sorted(p for package in INSTALLED for p in (REPO / package).rglob("*.py"))
TOP_MODULES = sorted(p for folder in TOP for p in (REPO / folder).rglob("*.py"))


def long_functions(source: str) -> list[tuple[int, str, int]]:
    """``(line, name, lines)`` of each function over the limit without a ``one piece:`` comment above it.

    >>> long_functions("def f():\\n" + "    x = 1\\n" * 80)
    [(1, 'f', 81)]
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
                found.append((start, node.name, length))
    return found


def _too_long(paths: list[Path], module_rule: bool, root: Path = REPO) -> list[str]:
    """``path:line`` and what is over its size, for every module over 600 lines (``module_rule``) and every
    function over 80 lines in ``paths``."""
    wrong = []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        where = path.relative_to(root)
        if module_rule and source.count("\n") > MODULE_LINES:
            wrong.append(f"{where}:{MODULE_LINES + 1}: the module has {source.count(chr(10))} lines")
        wrong += [f"{where}:{line}: {name} has {length} lines" for line, name, length in long_functions(source)]
    return wrong


def test_the_packages_have_modules():
    assert len(MODULES) > 10


def test_no_module_or_function_is_over_its_size():
    wrong = _too_long(MODULES, module_rule=True)
    assert not wrong, "\n".join(wrong)


def test_no_function_of_the_top_layer_is_over_its_size():
    wrong = _too_long(TOP_MODULES, module_rule=False)
    assert not wrong, "\n".join(wrong)


def test_the_size_check_names_the_module_and_the_function_line(tmp_path):
    long = tmp_path / "long.py"
    long.write_text("X = 1\n" * 598 + "def f():\n" + "    x = 1\n" * 81)
    short = tmp_path / "short.py"
    short.write_text("def g():\n    return 1\n")
    assert _too_long([long, short], module_rule=True, root=tmp_path) == [
        "long.py:601: the module has 680 lines",
        "long.py:599: f has 82 lines",
    ]
    assert _too_long([long, short], module_rule=False, root=tmp_path) == ["long.py:599: f has 82 lines"]

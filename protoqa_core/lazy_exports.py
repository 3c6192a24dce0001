"""A package's public names, imported from their modules when first read (PEP 562).

A face that imported every module it exports would pay for all of them (``protoqa_core.similarity``
with every name read: 455 ms of a new process, imported alone: 99 ms). The face's
``if TYPE_CHECKING:`` block, which type checkers follow, is read from its source as the table of
homes, so no third list is kept in step with ``__all__``.

>>> homes("from typing import TYPE_CHECKING\\nif TYPE_CHECKING:\\n    from .metric import ProtoQA, score\\n")
{'ProtoQA': '.metric', 'score': '.metric'}
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["homes", "lazy_exports"]


def homes(source: str) -> dict[str, str]:
    """``{name: module}`` for every name the ``if TYPE_CHECKING:`` blocks of ``source`` import.

    >>> homes("import sys\\nif TYPE_CHECKING:\\n    from ..text import tokens\\n    from json import loads\\n")
    {'tokens': '..text', 'loads': 'json'}
    """
    import ast  # only when a name is first read: importing it costs about 1 ms

    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    module = "." * statement.level + (statement.module or "")
                    found.update((alias.asname or alias.name, module) for alias in statement.names)
    return found


def lazy_exports(package: ModuleType) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package`` for the names its ``if TYPE_CHECKING:`` block imports.

    Each value read is kept in the package; ``dir(package)`` lists only the names read so far, or
    tools that read every attribute (pytest's collection) would import every module.
    """
    table: dict[str, str] = {}

    def __getattr__(name: str) -> Any:
        # The source is read when a name is first asked for, not at import: reading it costs
        # about 3 ms (``ast`` included), which ``import package`` alone need not pay.
        if not table and not (name.startswith("__") and name.endswith("__")):
            table.update(homes(_source(package)))
        if name not in table:
            raise AttributeError(f"module {package.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(table[name], package.__name__), name)
        setattr(package, name, value)
        return value

    return __getattr__


def _source(package: ModuleType) -> str:
    get_source = getattr(package.__loader__, "get_source", None)
    source = get_source(package.__name__) if get_source is not None else None
    if source is None:
        raise ImportError(
            f"{package.__name__}: its source is needed to find where its names live", name=package.__name__
        )
    return source

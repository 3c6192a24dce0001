"""A package's public names, imported from their modules when first read (PEP 562).

A package face that would import every module it exports pays for all of them at
``import``; with :func:`lazy_exports` it names where each public name lives and imports
that module only when the name is first read (``from package import name`` included), so
a command that needs one function loads that function's modules alone. Type checkers read
the same names from an ``if TYPE_CHECKING:`` import block beside it.

>>> import types, sys
>>> face = types.ModuleType("face")
>>> face.__getattr__ = lazy_exports(face, {"dedent": "textwrap"})
>>> "dedent" in vars(face), face.dedent("  a"), "dedent" in vars(face)
(False, 'a', True)
>>> face.indent_all
Traceback (most recent call last):
...
AttributeError: module 'face' has no attribute 'indent_all'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: ModuleType, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package`` for the names of ``homes`` (``{name: module}``).

    A module name starting with ``.`` is relative to ``package``. The value read is kept in
    the package, so each name is imported once. ``dir(package)`` lists the names read so far
    (its ``__all__`` lists them all): tools that read every attribute ``dir`` names, as
    pytest's collection does, would otherwise import every module.
    """

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name], package.__name__), name)
        setattr(package, name, value)
        return value

    return __getattr__

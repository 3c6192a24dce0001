"""Heavy libraries for the tests that use them, imported on first use rather than at collection.

``torch = lazy_import("torch")`` at the top of a test module costs nothing when pytest
collects it; the first test that reads ``torch.something`` imports torch, and where the
library is missing that test is skipped, as ``pytest.importorskip`` would skip it. So
``pytest -m "not slow"`` and ``--collect-only`` never load a library that only deselected
tests need.

>>> json = lazy_import("json")
>>> "json" in repr(json), json.dumps([1])
(True, '[1]')
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import types
from typing import Any, Optional

import pytest

__all__ = ["lazy_import", "require"]


class _LazyModule(types.ModuleType):
    """A stand-in for a module, importing it (or skipping the test) when an attribute is first read."""

    def __init__(self, name: str, minversion: Optional[str], optional: bool) -> None:
        super().__init__(name)
        self._lazy_minversion = minversion
        self._lazy_optional = optional
        self._lazy_module: Optional[types.ModuleType] = None

    def __getattr__(self, attribute: str) -> Any:
        # pytest's collection probes every module global for dunder names (``__test__``,
        # ``__wrapped__``) and for ``_mock_name``: those never import the module.
        if attribute.startswith(("_lazy_", "_mock_")) or (attribute.startswith("__") and attribute.endswith("__")):
            raise AttributeError(attribute)
        if self._lazy_module is None:
            self._lazy_module = (
                pytest.importorskip(self.__name__, minversion=self._lazy_minversion)
                if self._lazy_optional
                else importlib.import_module(self.__name__)
            )
        return getattr(self._lazy_module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._lazy_module is not None else "not imported yet"
        return f"<module {self.__name__!r}, {state}>"


def lazy_import(name: str, minversion: Optional[str] = None, *, optional: bool = True) -> Any:
    """The module ``name``, imported when a test first reads one of its attributes.

    An ``optional`` library that is missing skips the test; a module of the project
    (``optional=False``) that fails to import fails it.
    """
    return _LazyModule(name, minversion, optional)


def require(name: str, minversion: Optional[str] = None) -> None:
    """Skip the whole test module unless ``name`` (at least ``minversion``) is installed, without importing it.

    >>> require("json")
    """
    if importlib.util.find_spec(name.partition(".")[0]) is None:
        pytest.skip(f"could not import {name!r}: not installed", allow_module_level=True)
    if minversion is not None:
        from packaging.version import Version

        found = importlib.metadata.version(name)
        if Version(found) < Version(minversion):
            pytest.skip(f"{name} {found} is installed; these tests need {minversion} or later", allow_module_level=True)

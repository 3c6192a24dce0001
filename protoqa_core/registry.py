"""One registry for every kind of plug-in: similarities, clusterings, matchers, embedders, engines.

Built-in plug-ins are known by ``"module:attribute"`` and imported only when asked for (as
lm-eval's model registry does), so listing the names or printing ``--help`` imports no plug-in.
Code outside the package adds its own with ``@REGISTRY.register("name")`` or ``REGISTRY.add``.

>>> TOKENIZERS = Registry("tokenizer", plugins={"shell": "shlex:split"})
>>> @TOKENIZERS.register("whitespace")
... def whitespace(text: str) -> list[str]:
...     return text.split()
>>> list(TOKENIZERS), TOKENIZERS.get("whitespace")("a b"), TOKENIZERS.get("shell")("a 'b c'")
(['shell', 'whitespace'], ['a', 'b'], ['a', 'b c'])
>>> TOKENIZERS.get("bpe")
Traceback (most recent call last):
...
ValueError: unknown tokenizer 'bpe'; choose one of: shell, whitespace
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, Optional, TypeVar

__all__ = ["Registry"]

T = TypeVar("T")
P = TypeVar("P")


class Registry(Mapping[str, T], Generic[T]):
    """Plug-ins of one ``kind`` by name, in the order they joined (a read-only mapping).

    ``check(name, plugin)`` runs as a plug-in joins (a built-in one when first loaded) and raises to
    refuse it; ``error`` is the exception class :meth:`get` raises for an unknown name.

    >>> MODES = Registry("mode", plugins={"exact": "math:pi"})
    >>> MODES.add("fast", 1)
    1
    >>> MODES.add("fast", 2)
    Traceback (most recent call last):
    ...
    ValueError: the mode name 'fast' is registered already
    >>> MODES.names(), MODES.is_loaded("exact"), round(MODES["exact"], 2), MODES.is_loaded("exact")
    (('exact', 'fast'), False, 3.14, True)
    """

    def __init__(
        self,
        kind: str,
        *,
        plugins: Mapping[str, str] = {},
        check: Optional[Callable[[str, T], None]] = None,
        error: type[Exception] = ValueError,
    ) -> None:
        self.kind = kind
        self._check = check
        self._error = error
        self._places: dict[str, str] = {}
        self._items: dict[str, T] = {}
        self._order: list[str] = []
        for name, place in plugins.items():
            module, _, attribute = place.partition(":")
            if not module or not attribute:
                raise ValueError(f"the {kind} {name!r} is placed at {place!r}, not at 'module:attribute'")
            self._places[name] = place
            self._order.append(name)

    def add(self, name: str, plugin: P) -> P:
        """Register ``plugin`` under ``name`` and return it unchanged.

        >>> Registry("colour").add("red", "#f00")
        '#f00'
        """
        if name in self._places or name in self._items:
            raise ValueError(f"the {self.kind} name {name!r} is registered already")
        if self._check is not None:
            self._check(name, plugin)  # type: ignore[arg-type]
        self._items[name] = plugin  # type: ignore[assignment]
        self._order.append(name)
        return plugin

    def register(self, name: str) -> Callable[[P], P]:
        """A decorator registering the class or function it decorates under ``name``.

        >>> SHAPES = Registry("shape")
        >>> @SHAPES.register("square")
        ... class Square:
        ...     pass
        >>> SHAPES["square"].__name__
        'Square'
        """

        def decorate(plugin: P) -> P:
            return self.add(name, plugin)

        return decorate

    def get(self, name: str) -> T:  # type: ignore[override]
        """The plug-in called ``name``; an unknown name raises ``error`` listing the choices.

        >>> Registry("engine").get("gpu")
        Traceback (most recent call last):
        ...
        ValueError: unknown engine 'gpu'; choose one of: (none registered)
        """
        try:
            return self[name]
        except KeyError:
            choices = ", ".join(self._order) or "(none registered)"
            raise self._error(f"unknown {self.kind} {name!r}; choose one of: {choices}") from None

    def names(self) -> tuple[str, ...]:
        """The registered names, in order (``choices=`` for a command line); imports nothing.

        >>> Registry("mode").names()
        ()
        """
        return tuple(self._order)

    def is_loaded(self, name: str) -> bool:
        """Whether the plug-in ``name`` is loaded (a built-in one is loaded when first asked for).

        >>> Registry("mode", plugins={"exact": "math:pi"}).is_loaded("exact")
        False
        """
        return name in self._items

    def place(self, name: str) -> Optional[str]:
        """Where the built-in plug-in ``name`` lives, ``"module:attribute"`` (None for one added in code).

        >>> Registry("mode", plugins={"exact": "math:pi"}).place("exact")
        'math:pi'
        """
        return self._places.get(name)

    def __getitem__(self, name: str) -> T:
        if name in self._items:
            return self._items[name]
        if name not in self._places:
            raise KeyError(name)
        module, _, attribute = self._places[name].partition(":")
        plugin = getattr(importlib.import_module(module), attribute)
        if self._check is not None:
            self._check(name, plugin)
        self._items[name] = plugin
        return plugin

    def __contains__(self, name: object) -> bool:
        return name in self._places or name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._order)})"

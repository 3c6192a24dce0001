"""One registry for every kind of plug-in: similarities, clusterings, matchers, embedders, engines.

A :class:`Registry` maps names to plug-ins in the order they registered. A plug-in joins it
with one line, the decorator ``@REGISTRY.register("name")`` on its class or function (or
``REGISTRY.add("name", obj)`` for an object built in place); every command line, option
check and error message that lists the choices reads them from the registry, so a new
plug-in is one file and that line.

>>> TOKENIZERS = Registry("tokenizer")
>>> @TOKENIZERS.register("whitespace")
... def whitespace(text: str) -> list[str]:
...     return text.split()
>>> list(TOKENIZERS), TOKENIZERS.get("whitespace")("a b")
(['whitespace'], ['a', 'b'])
>>> TOKENIZERS.get("bpe")
Traceback (most recent call last):
...
ValueError: unknown tokenizer 'bpe'; choose one of: whitespace
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, Optional, TypeVar

__all__ = ["Registry"]

T = TypeVar("T")
P = TypeVar("P")


class Registry(Mapping[str, T], Generic[T]):
    """Plug-ins of one ``kind`` by name, in registration order (a read-only mapping).

    ``check(name, plugin)``, when given, runs at registration and raises to refuse a
    plug-in that the code built from the registry could not use. ``error`` is the exception
    class :meth:`get` raises for an unknown name (``ValueError`` unless a layer has its own).

    >>> MODES = Registry("mode")
    >>> MODES.add("fast", 1)
    1
    >>> MODES.add("fast", 2)
    Traceback (most recent call last):
    ...
    ValueError: the mode name 'fast' is registered already
    >>> dict(MODES), MODES.names()
    ({'fast': 1}, ('fast',))
    """

    def __init__(
        self,
        kind: str,
        *,
        check: Optional[Callable[[str, T], None]] = None,
        error: type[Exception] = ValueError,
    ) -> None:
        self.kind = kind
        self._check = check
        self._error = error
        self._items: dict[str, T] = {}

    def add(self, name: str, plugin: P) -> P:
        """Register ``plugin`` under ``name`` and return it unchanged.

        >>> Registry("colour").add("red", "#f00")
        '#f00'
        """
        if name in self._items:
            raise ValueError(f"the {self.kind} name {name!r} is registered already")
        if self._check is not None:
            self._check(name, plugin)  # type: ignore[arg-type]
        self._items[name] = plugin  # type: ignore[assignment]
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
            return self._items[name]
        except KeyError:
            choices = ", ".join(self._items) or "(none registered)"
            raise self._error(f"unknown {self.kind} {name!r}; choose one of: {choices}") from None

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order (``choices=`` for a command line).

        >>> Registry("mode").names()
        ()
        """
        return tuple(self._items)

    def __getitem__(self, name: str) -> T:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._items)})"

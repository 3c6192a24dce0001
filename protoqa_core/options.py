"""The declared option of a plug-in: its name, type, default, range and help, in one object.

The command-line flags, the library's checks, the ``evaluate`` modules, the defaults and the
signatures are read from these declarations, so adding an option to a plug-in is one edit. This
module imports nothing heavy: every ``--help`` reads the declarations.

>>> depth = Option("depth", int, 3, "tree depth", low=1, high=10)
>>> depth.check(4), depth.flag, depth.accepts
(4, '--depth', 'an integer in [1, 10]')
>>> depth.check(0)
Traceback (most recent call last):
...
ValueError: depth must be an integer in [1, 10], got 0
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from protoqa_core.cli import float_between, int_at_least

__all__ = ["Option"]


@dataclass(frozen=True)
class Option:
    """One option of a plug-in, declared on its class.

    ``name`` is the keyword and, with ``-`` for ``_``, the flag; ``kind`` is ``int``, ``float``,
    ``str`` or ``object`` (checked by the plug-in itself); ``low``/``high`` bound a number (ends
    included unless open); ``accepts`` words the accepted values for errors; ``label`` names it in
    the signature; a ``shared`` setting is never refused for a plug-in that does not read it.
    """

    name: str
    kind: type
    default: Any
    help: str
    low: Optional[float] = None
    high: Optional[float] = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[Any, ...] = ()
    accepts: str = ""
    label: str = ""
    shared: bool = False
    metavar: Optional[str] = None

    def __post_init__(self) -> None:
        if self.kind not in (int, float, str, object):
            raise TypeError(f"option {self.name!r}: kind must be int, float, str or object, not {self.kind!r}")
        if not self.accepts:
            object.__setattr__(self, "accepts", self._accepted_in_words())
        if not self.label:
            object.__setattr__(self, "label", self.name)

    @property
    def flag(self) -> str:
        """The command-line flag: ``--`` and the name with ``-`` for ``_``."""
        return "--" + self.name.replace("_", "-")

    def _interval(self) -> str:
        return (
            f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"
            if self.low is not None and self.high is not None
            else ""
        )

    def _accepted_in_words(self) -> str:
        if self.kind is object:
            return "what the plug-in accepts"
        if self.kind is str:
            return "one of " + ", ".join(self.choices)
        if self.choices:
            return f"one of {', '.join(f'{c:g}' for c in self.choices)} (a level in {self._interval()})"
        noun = "an integer" if self.kind is int else "a number"
        if self.high is None:
            return f"{noun} >= {self.low:g}" if self.low is not None else noun
        return f"{noun} in {self._interval()}"

    def check(self, value: Any) -> Any:
        """``value`` as an ``int``, ``float`` or ``str`` if the option accepts it, else ValueError naming both.

        >>> Option("seed", int, 0, "seed", low=0).check(True)
        Traceback (most recent call last):
        ...
        ValueError: seed must be an integer >= 0, got True
        """
        problem = ValueError(f"{self.name} must be {self.accepts}, got {value!r}")
        if self.kind is object:
            return value
        if self.kind is str:
            if not isinstance(value, str) or (self.choices and value not in self.choices):
                raise problem
            return value
        wanted = numbers.Integral if self.kind is int else numbers.Real
        if isinstance(value, bool) or not isinstance(value, wanted):
            raise problem
        number = self.kind(value)
        if not math.isfinite(number) or not self._in_range(number) or (self.choices and number not in self.choices):
            raise problem
        return number

    def _in_range(self, number: float) -> bool:
        above = self.low is None or (number > self.low if self.low_open else number >= self.low)
        below = self.high is None or (number < self.high if self.high_open else number <= self.high)
        return above and below

    def parse(self) -> Callable[[str], Any]:
        """The ``argparse`` type of its flag (``str`` for a string, which lists its ``choices``).

        >>> parse = Option("scale", object, None, "a number or a rule").parse()
        >>> parse("2"), parse("median*0.5")
        (2.0, 'median*0.5')
        """
        if self.kind is int:
            return int_at_least(
                int(self.low if self.low is not None else -(2**63)), None if self.high is None else int(self.high)
            )
        if self.kind is float:
            low = -math.inf if self.low is None else self.low
            high = math.inf if self.high is None else self.high
            return float_between(low, high, low_open=self.low_open, high_open=self.high_open)
        return _number_or_text if self.kind is object else str


def _number_or_text(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return text

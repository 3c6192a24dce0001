"""Progress of long runs on stderr: a bar on a terminal, a short line now and then in a log.

Every long job reports through :func:`report_progress` or :func:`track`, so that all look alike and
``--quiet`` turns them off. Elsewhere than on a terminal, one line at most every :data:`LOG_INTERVAL`
seconds and a last one (docs/evaluate-a-model.md). tqdm is imported only when there is something to
draw, so a command that ends within the interval never imports it.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Iterable, Iterator
from typing import Any, Optional, TextIO, TypeVar

from .environment import env_setting

__all__ = ["LOG_INTERVAL", "INTERVAL_ENV", "Progress", "report_progress", "track"]

T = TypeVar("T")

LOG_INTERVAL = 15.0
"""Seconds between two lines of a report that goes to a file or a pipe (and before the first)."""

INTERVAL_ENV = "PROTOQA_PROGRESS_INTERVAL"
"""Environment variable: seconds between two lines in a log (default :data:`LOG_INTERVAL`)."""

_TERMINAL_DELAY = 0.5  # a job that ends sooner leaves no bar behind

_LOG_FORMAT = (
    "{desc}: {n_fmt}/{total_fmt} {units} ({percentage:.0f}%), {elapsed} elapsed, {remaining} left, {speed}{postfix}"
)
_LOG_FORMAT_NO_TOTAL = "{desc}: {n_fmt} {units}, {elapsed} elapsed, {speed}{postfix}"


class Progress:
    """A report that draws nothing (reports that draw are tqdm bars, with the same methods).

    >>> with report_progress(3, "scoring", enabled=False) as bar:
    ...     bar.update(3)
    """

    def update(self, n: float = 1) -> None:
        """Count ``n`` more units done."""

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        """Show ``text`` after the counts."""

    def close(self) -> None:
        """End the report."""

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Lines:
    """A file for tqdm that turns its in-place redraws into whole lines (tqdm writes ``\\r`` + text)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = ""

    def write(self, text: str) -> None:
        line = text.replace("\r", "").strip()
        if line and line != self.last:
            self.stream.write(line + "\n")
            self.stream.flush()
            self.last = line

    def flush(self) -> None:
        self.stream.flush()


def _interval() -> float:
    text = env_setting(INTERVAL_ENV)
    if text is None:
        return LOG_INTERVAL
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if 0 <= value < 1e6:
        return value
    # A bad value is named once, as a bad $PROTOQA_CACHE_MAX_MB is, not passed over in silence.
    if text not in _named_bad_values:
        _named_bad_values.add(text)
        warnings.warn(
            f"${INTERVAL_ENV}={text!r} is not a number of seconds from 0 to 1e6; keeping {LOG_INTERVAL:g}", stacklevel=3
        )
    return LOG_INTERVAL


_named_bad_values: set[str] = set()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def report_progress(
    total: Optional[int],
    desc: str,
    unit: str = "question",
    *,
    enabled: Optional[bool] = True,
    stream: Optional[TextIO] = None,
) -> Any:
    """A progress report of a job of ``total`` units (None: unknown), on stderr unless ``stream``.

    ``enabled``: True reports on a terminal and in logs, None on a terminal only, False never.

    >>> import io
    >>> log = io.StringIO()
    >>> with report_progress(2, "scoring", stream=log) as bar:
    ...     bar.update(2)
    >>> log.getvalue()  # done within the interval: nothing to say
    ''
    """
    out = sys.stderr if stream is None else stream
    if enabled is False or out is None:
        return Progress()
    terminal = _is_terminal(out)
    if not terminal and enabled is None:
        return Progress()
    if terminal:
        from tqdm import tqdm  # here, so that starting a command does not import it

        return tqdm(total=total, desc=desc, unit=unit, file=out, delay=_TERMINAL_DELAY, dynamic_ncols=True)
    return _LogReport(total, desc, unit, out)


class _LogReport(Progress):
    """A report in a log: counts until its first line is due, then a tqdm bar writing lines does the rest."""

    def __init__(self, total: Optional[int], desc: str, unit: str, out: TextIO) -> None:
        self.total, self.desc, self.unit, self.out = total, desc, unit, out
        self.interval, self.started, self.postfix = _interval(), time.monotonic(), ""
        self.n: float = 0
        self.bar: Any = None

    def update(self, n: float = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)
            return
        self.n += n
        if time.monotonic() - self.started >= self.interval:
            self._start_bar()

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
        else:
            self.postfix = text

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def _start_bar(self) -> None:
        from tqdm import tqdm  # the first line is due: only now is there anything to draw

        bar = _log_bar_class(tqdm)(
            total=self.total,
            desc=self.desc,
            unit=self.unit,
            file=_Lines(self.out),
            delay=self.interval,
            mininterval=self.interval,
            maxinterval=max(self.interval, 1.0) * 2,
            miniters=1,
            ascii=True,
            bar_format=_LOG_FORMAT if self.total else _LOG_FORMAT_NO_TOTAL,
        )
        # The job started earlier than the bar: its clock and its first line count from the start.
        bar.start_t = bar.last_print_t = bar._time() - (time.monotonic() - self.started)
        if self.postfix:
            bar.set_postfix_str(self.postfix, refresh=False)
        self.bar = bar
        bar.update(int(self.n) if float(self.n).is_integer() else self.n)  # counts of whole units print as such


def _speed(rate: Optional[float], unit: str) -> str:
    """``rate`` units per second, as a log line says it (``2.5 questions/s``, ``12.0 s/question``).

    >>> _speed(2.5, "question"), _speed(1 / 12, "question"), _speed(None, "system")
    ('2.50 questions/s', '12.0 s/question', '? systems/s')
    """
    if not rate:
        return f"? {_plural(unit)}/s"
    return f"{rate:.2f} {_plural(unit)}/s" if rate >= 1 else f"{1 / rate:.1f} s/{unit}"


def _plural(unit: str) -> str:
    return unit if unit.endswith("s") else unit + "s"


def _log_bar_class(base: Any) -> Any:
    """tqdm's class, made to write log lines: counts in words, and a suffix that waits for the next line."""

    class LogBar(base):
        @property
        def format_dict(self) -> dict:
            values = super().format_dict
            elapsed = values.get("elapsed") or 0
            rate = values.get("rate") or (self.n / elapsed if elapsed and self.n else None)
            return {**values, "speed": _speed(rate, self.unit), "units": _plural(self.unit)}

        def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
            super().set_postfix_str(s, refresh=False)

        def close(self) -> None:
            if getattr(self, "last_print_n", None) == self.n:
                self.leave = False  # its last line is out already: no second line with the same count
            super().close()

    return LogBar


def track(
    items: Iterable[T],
    total: Optional[int],
    desc: str,
    unit: str = "question",
    *,
    enabled: Optional[bool] = True,
    stream: Optional[TextIO] = None,
) -> Iterator[T]:
    """Yield ``items``, reporting each as done (:func:`report_progress`); the report ends with the loop.

    >>> list(track(["a", "b"], 2, "reading", enabled=False))
    ['a', 'b']
    """
    with report_progress(total, desc, unit, enabled=enabled, stream=stream) as bar:
        for item in items:
            yield item
            bar.update(1)

"""Opening a data file safely: checked, gzip decompressed, bounded in size and time (docs/protoqa-metric.md
lists the caps), pipes read like files, every error naming the file; :mod:`protoqa_core.io.json_values` reads
the text.
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import reprlib
import stat
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional, Union

__all__ = [
    "DataFormatError",
    "ProtoQAWarning",
    "MAX_COUNT",
    "MAX_INPUT_ENV",
    "DEFAULT_MAX_INPUT_MB",
    "max_input_bytes",
    "MAX_SECONDS_ENV",
    "DEFAULT_MAX_INPUT_SECONDS",
    "max_input_seconds",
    "InputDeadline",
    "check_file",
    "file_error",
    "reading",
    "opened",
    "short_repr",
    "open_binary",
    "binary_stream",
    "PrefixedReader",
]

PathLike = Union[str, os.PathLike]

MAX_COUNT = 2**53
"""Largest count accepted: every count and every sum of a few of them stays exact as a float."""


class DataFormatError(ValueError):
    """A targets or predictions file (or in-memory record) is not in the expected format."""

    def __init__(
        self,
        message: str,
        path: Optional[PathLike] = None,
        line: Optional[int] = None,
        question_id: Optional[str] = None,
    ):
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if question_id is not None:
            where.append(f"question {question_id!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
        self.message = message  # without its place, for an error that names another place
        self.path, self.line, self.question_id = path, line, question_id


class ProtoQAWarning(UserWarning):
    """Something in the input was handled in a way the user should know about."""


_SHORT = reprlib.Repr()
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxlevel = 60, 60, 4, 4, 3


def short_repr(value: Any) -> str:
    """A bounded repr for messages: a hostile value must not make a megabyte-long error line."""
    return _SHORT.repr(value)


_COMPRESSED = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"PK\x03\x04": "zip", b"\x28\xb5\x2f\xfd": "zstd"}


def file_error(exc: OSError, path: PathLike) -> Exception:
    """An input/output error as one message naming the file."""
    if isinstance(exc, FileNotFoundError):
        return FileNotFoundError(f"file not found: {path}")
    reasons: dict[Optional[int], str] = {
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EISDIR: "is a directory, not a file",
        errno.ENAMETOOLONG: "file name too long",
        errno.ENOTDIR: "a part of the path is not a directory",
        errno.ELOOP: "too many symbolic links",
    }
    reason = reasons.get(exc.errno) or exc.strerror or type(exc).__name__
    return DataFormatError(f"cannot read the file: {reason}", path)


def check_file(path: Path, what: str) -> None:
    """Check that ``path`` is an existing file before reading it, else an error naming it."""
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as exc:  # e.g. a name too long to look up
        raise file_error(exc, path) from None
    if is_dir:
        raise DataFormatError("cannot read the file: is a directory, not a file", path)
    if not exists:
        raise FileNotFoundError(f"{what} file not found: {path}")


MAX_INPUT_ENV = "PROTOQA_MAX_INPUT_MB"
"""Environment variable that raises (or lowers) :data:`DEFAULT_MAX_INPUT_MB`."""
DEFAULT_MAX_INPUT_MB = 512
"""The most megabytes (after decompression) read from one input: the largest ProtoQA file is a few tens of MB;
the cap keeps ``/dev/zero`` or a gzip bomb from taking every byte of memory."""


_MAX_MB_SETTING = 2**20  # a terabyte: beyond it a setting is a typing error


def _positive_setting(name: str, unit: str, largest: float) -> Optional[float]:
    """The number set in environment variable ``name`` (None when unset), refused unless in ``(0, largest]``."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= largest:  # also refuses NaN and infinity
        raise DataFormatError(f"{name} must be a positive number of {unit}, got {text[:40]!r} (at most {largest:.0f})")
    return value


def max_input_bytes() -> int:
    """The input size cap in bytes: ``$PROTOQA_MAX_INPUT_MB`` megabytes, else :data:`DEFAULT_MAX_INPUT_MB`.

    >>> max_input_bytes() == DEFAULT_MAX_INPUT_MB * 2**20 or MAX_INPUT_ENV in os.environ
    True
    """
    value = _positive_setting(MAX_INPUT_ENV, "megabytes", _MAX_MB_SETTING)
    return DEFAULT_MAX_INPUT_MB * 2**20 if value is None else max(1, int(value * 2**20))


MAX_SECONDS_ENV = "PROTOQA_MAX_INPUT_SECONDS"
"""Environment variable that raises (or lowers) :data:`DEFAULT_MAX_INPUT_SECONDS`."""
DEFAULT_MAX_INPUT_SECONDS = 300
"""The most seconds spent reading one input: a 512 MB file takes well under a minute; the budget stops a file
that costs time rather than memory (a line of gigabytes) with one line naming it."""
_MAX_SECONDS_SETTING = 7 * 24 * 3600


def max_input_seconds() -> float:
    """The time budget of one input in seconds: ``$PROTOQA_MAX_INPUT_SECONDS``, else :data:`DEFAULT_MAX_INPUT_SECONDS`.

    >>> max_input_seconds() == DEFAULT_MAX_INPUT_SECONDS or MAX_SECONDS_ENV in os.environ
    True
    """
    value = _positive_setting(MAX_SECONDS_ENV, "seconds", _MAX_SECONDS_SETTING)
    return float(DEFAULT_MAX_INPUT_SECONDS) if value is None else value


class InputDeadline:
    """The time budget of reading one input, started when made; :meth:`check` raises once it is spent.

    >>> InputDeadline("p.json").check()  # well inside the budget
    """

    def __init__(self, path: PathLike, seconds: Optional[float] = None):
        self.path = path
        self.seconds = max_input_seconds() if seconds is None else seconds
        self._end = time.monotonic() + self.seconds

    def check(self) -> None:
        """Raise once the budget is spent."""
        if time.monotonic() > self._end:
            raise DataFormatError(
                f"reading took longer than {self.seconds:g} s, the time budget of one input; set "
                f"{MAX_SECONDS_ENV} to a larger number of seconds to read it",
                self.path,
            )


class PrefixedReader(io.RawIOBase):
    """The bytes already taken from a stream by the format probe (a pipe cannot seek back), then the rest."""

    def __init__(self, head: bytes, rest: Any):
        self._head, self._rest = memoryview(head), rest
        self._at = 0  # an offset, not a shorter copy of the head each read: a 16 MB head is read in 8 KB pieces

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._at < len(self._head):
            n = min(len(buffer), len(self._head) - self._at)
            buffer[:n] = self._head[self._at : self._at + n]
            self._at += n
            if self._at == len(self._head):
                self._head = memoryview(b"")  # let the head go once it is read
                self._at = 0
            return n
        return self._rest.readinto(buffer)

    def close(self) -> None:
        self._rest.close()
        super().close()


def _too_large(limit: int, path: PathLike) -> DataFormatError:
    return DataFormatError(
        f"the input is larger than {limit / 2**20:.4g} MB (after decompression); this is refused "
        f"to keep memory bounded: set {MAX_INPUT_ENV} to a larger number of megabytes to read it",
        path,
    )


class _Bounded(io.RawIOBase):
    """A stream that fails once more than ``limit`` bytes come out of it or its :class:`InputDeadline` passes."""

    def __init__(self, inner: Any, limit: int, path: PathLike):
        self._inner, self._left, self._limit, self._path = inner, limit, limit, path
        self._deadline = InputDeadline(path)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self._deadline.check()
        view = memoryview(buffer)
        # One byte more than allowed is asked for, so that a file of exactly the cap passes.
        want = min(len(view), self._left + 1)
        data = self._inner.read(want)
        if len(data) > self._left:
            raise _too_large(self._limit, self._path)
        self._left -= len(data)
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


@contextmanager
def reading(path: PathLike) -> Iterator[None]:
    """Errors met while a file is read, as one message naming it (:func:`file_error`, or damaged gzip data)."""
    try:
        yield
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, (gzip.BadGzipFile, EOFError, zlib.error)):
            raise DataFormatError(f"damaged gzip data ({exc})", path) from None
        raise file_error(exc, path) from None


@contextmanager
def opened(path: Path, what: Optional[str] = None) -> Iterator[Any]:
    """``path`` opened by :func:`open_binary`, checked first when ``what`` names it, its errors named (:func:`reading`).

    >>> import os, tempfile
    >>> name = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    >>> with open(name, "w") as fh: _ = fh.write("{}")
    >>> with opened(Path(name), "targets") as fh: fh.read()
    b'{}'
    """
    if what is not None:
        check_file(path, what)
    with reading(path), open_binary(path) as fh:
        yield fh


def _read_head(fh: Any, size: int) -> bytes:
    # A pipe may hand out fewer bytes per read than were asked for.
    head = b""
    while len(head) < size:
        chunk = fh.read(size - len(head))
        if not chunk:
            break
        head += chunk
    return head


def open_binary(path: Path):
    """``path`` opened once for binary reading, decompressed when it is gzip, capped in size."""
    return binary_stream(open(path, "rb", buffering=0), path)


def binary_stream(raw: Any, path: PathLike):
    """:func:`open_binary` of a file already open (unbuffered, binary) as ``raw``, which it takes over."""
    limit = max_input_bytes()
    try:
        head = _read_head(raw, 6)
        # A plain regular file is refused from its size, before its content is read; gzip and
        # pipes are counted while they are read (_Bounded).
        if head[:2] != b"\x1f\x8b" and stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
            if os.fstat(raw.fileno()).st_size > limit:
                raise _too_large(limit, path)
        if raw.seekable():
            raw.seek(0)
            stream: Any = raw
        else:
            stream = PrefixedReader(head, raw)
        for magic, name in _COMPRESSED.items():
            if head.startswith(magic):
                raise DataFormatError(f"the file is {name}-compressed; decompress it first (gzip is read as is)", path)
        if head[:2] == b"\x1f\x8b":
            stream = gzip.GzipFile(fileobj=io.BufferedReader(stream), mode="rb")
        return io.BufferedReader(_Bounded(stream, limit, path))
    except BaseException:
        raw.close()
        raise

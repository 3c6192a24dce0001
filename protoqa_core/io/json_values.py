"""A file's JSON values: its lines decoded and parsed strictly, errors naming the file and line.

A JSONL file is read a line at a time, a JSON document whole; a very long line or a large document
is parsed as it is read (ijson, :class:`Members`; docs/dependencies.md says why), one member's value
built at a time, with the same checks as :func:`parse_json`.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Optional

from .files import DataFormatError, PathLike, PrefixedReader, opened, short_repr

__all__ = [
    "LARGE_LINE_BYTES",
    "WHOLE_DOCUMENT_BYTES",
    "GROUP",
    "TooManyItems",
    "MalformedJSONError",
    "decode_line",
    "read_text",
    "iter_text_lines",
    "parse_json",
    "member_line",
    "json_events",
    "object_members",
    "Members",
    "json_values",
]

LARGE_LINE_BYTES = 1 << 20
"""A JSONL line longer than this is parsed incrementally rather than whole."""

WHOLE_DOCUMENT_BYTES = 16 << 20
"""A JSON document over several lines is parsed whole up to this size (its errors then give a line);
a larger one is parsed incrementally (:class:`Members`)."""

GROUP = object()
"""What :func:`object_members` yields as the value of a top-level member that is an object:
its members follow, each with the member's name as their group."""


class TooManyItems(Exception):
    """A value held more items than :func:`object_members`' limit; its argument is the member's key."""


_ESCAPE = re.compile(rb"(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})")
_WIDE_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}
_TYPE_OF_EVENT = {
    "start_array": "list",
    "string": "str",
    "number": "number",
    "boolean": "bool",
    "null": "NoneType",
}


class _SurrogateCheck(io.RawIOBase):
    """A binary stream passed through unchanged, refusing a lone surrogate escape (``"\\ud800"``):
    yajl would replace it by ``?`` where :func:`parse_json` refuses it."""

    _KEEP = 12  # an escape pair is 12 bytes: the end of a chunk waits for the next one

    def __init__(self, inner: Any, path: Optional[PathLike], line: Optional[int]):
        self._inner, self._path, self._line = inner, path, line
        self._tail = b""
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        while not self._pending:
            chunk = self._inner.read(max(len(view), 1 << 16))
            if not chunk:
                if self._tail:
                    self._check(self._tail, limit=len(self._tail))
                self._pending, self._tail = self._tail, b""
                if not self._pending:
                    return 0
                break
            data = self._tail + chunk
            # An escape pair never spans a line (a JSON string holds no raw newline): the bytes up
            # to a newline go out now, so that a reader of one line sees its end when the parser does.
            keep = min(self._KEEP, len(data))
            newline = data.rfind(b"\n", len(data) - keep)
            if newline >= 0:
                keep = len(data) - newline - 1
            self._check(data, limit=len(data) - keep)
            self._pending, self._tail = data[: len(data) - keep], data[len(data) - keep :]
        n = min(len(view), len(self._pending))
        view[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def _check(self, data: bytes, limit: int) -> None:
        """Refuse a lone surrogate escape that starts before ``limit`` (the rest wait for the next chunk)."""
        if b"\\u" not in data and b"\\U" not in data:
            return
        for match in _ESCAPE.finditer(data):
            if len(match.group(1)) % 2 == 0 or match.start() >= limit:
                continue  # an escaped backslash before "u", or checked with the next chunk
            unit = int(match.group(2), 16)
            end = match.end()
            if unit < 0xDC00:  # a high surrogate needs a low one right after it
                low = _ESCAPE.match(data, end)
                if low and len(low.group(1)) == 1 and int(low.group(2), 16) >= 0xDC00:
                    continue
            else:  # a low surrogate needs a high one right before it
                start = match.start(1) + len(match.group(1)) - 1
                before = data[max(0, start - 6) : start]
                if len(before) == 6 and before[:2].lower() == b"\\u" and 0xD800 <= int(before[2:], 16) < 0xDC00:
                    continue
            raise DataFormatError(
                f"string escape {match.group(0)[-6:].decode()!r} is a lone surrogate, which is not valid Unicode",
                self._path,
                self._line,
            )


def json_events(stream: Any, path: Optional[PathLike], line: Optional[int]) -> Iterator[tuple[str, Any]]:
    """ijson's ``(event, value)`` pairs of the JSON in the binary ``stream``; malformed JSON is a
    :class:`MalformedJSONError` naming ``path`` and ``line``.

    >>> list(json_events(io.BytesIO(b'{"q1": ["dog"]}'), "p.json", None))[:3]
    [('start_map', None), ('map_key', 'q1'), ('start_array', None)]
    """
    import ijson  # type: ignore[import-untyped]  # here: only large documents need it

    events = ijson.basic_parse(_SurrogateCheck(stream, path, line), use_float=True)
    try:
        yield from events
    except ijson.JSONError as exc:
        text = str(exc.args[0].decode("utf-8", "replace") if isinstance(exc.args[0], bytes) else exc)
        reason = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        raise MalformedJSONError(f"malformed JSON ({reason})", path, line) from None


def _build(event: str, value: Any, events: Iterator[tuple[str, Any]], limit: Optional[int], where: tuple) -> Any:
    """The value that starts with ``(event, value)``, built without recursion; :class:`TooManyItems` once it
    holds more than ``limit`` items at every depth."""
    if event == "start_map":
        root: Any = {}
    elif event == "start_array":
        root = []
    else:
        return value
    stack: list[Any] = [root]
    keys: list[Any] = [None]
    items = 0
    for event, value in events:
        if event == "map_key":
            if value in stack[-1]:
                raise DataFormatError(f"duplicate key {short_repr(value)} in a JSON object", *where)
            keys[-1] = value
            continue
        if event in ("end_map", "end_array"):
            done = stack.pop()
            keys.pop()
            if not stack:
                return done
            continue
        item: Any = {} if event == "start_map" else [] if event == "start_array" else value
        items += 1
        if limit is not None and items > limit:
            raise TooManyItems(where[2] if len(where) > 2 else None)
        parent = stack[-1]
        if isinstance(parent, list):
            parent.append(item)
        else:
            parent[keys[-1]] = item
        if event in ("start_map", "start_array"):
            stack.append(item)
            keys.append(None)
    raise MalformedJSONError("malformed JSON (the document ends inside a value)", *where[:2])


def object_members(
    events: Iterator[tuple[str, Any]],
    path: Optional[PathLike],
    line: Optional[int],
    limit: Optional[int] = None,
    ended: Optional[Callable[[], None]] = None,
) -> Iterator[tuple[Optional[str], str, Any]]:
    """``(group, key, value)`` for each member of the one top-level JSON object in ``events``.

    A member whose value is an object comes as ``(None, key, GROUP)``, then its members as
    ``(key, inner key, value)``; others as ``(None, key, value)``. ``ended`` is called once the
    closing brace is read, before anything after it (so a first line's reader learns the value ended there).

    >>> events = json_events(io.BytesIO(b'{"model_answers": {"q1": ["dog"]}, "q2": []}'), None, None)
    >>> [(g, k, v if v is not GROUP else "GROUP") for g, k, v in object_members(events, None, None)]
    [(None, 'model_answers', 'GROUP'), ('model_answers', 'q1', ['dog']), (None, 'q2', [])]
    """
    where = (path, line)
    first = next(events, None)
    if first is None:
        return
    if first[0] != "start_map":
        raise DataFormatError(f"expected a JSON object, got {_TYPE_OF_EVENT.get(first[0], first[0])}", *where)
    top_keys: set[str] = set()
    for event, key in events:
        if event == "end_map":
            break
        if key in top_keys:
            raise DataFormatError(f"duplicate key {short_repr(key)} in a JSON object", path, line)
        event, value = next(events)
        if event != "start_map":
            yield None, key, _build(event, value, events, limit, (path, line, key))
            continue
        top_keys.add(key)
        yield None, key, GROUP
        # The group's keys are not kept here (a group may hold a million): the caller checks ids.
        for event, inner in events:
            if event == "end_map":
                break
            event, value = next(events)
            yield key, inner, _build(event, value, events, limit, (path, line, inner))
    if ended is not None:
        ended()
    rest = next(events, None)
    if rest is not None:
        raise MalformedJSONError("malformed JSON (more than one value in the document)", path, line)


def decode_line(data: bytes, path: PathLike, line: Optional[int], first: bool) -> str:
    """One line's bytes as strict UTF-8 text (a byte-order mark dropped on the ``first`` line).

    >>> decode_line(b"\\xef\\xbb\\xbfdog", "f.jsonl", 1, True)
    'dog'
    """
    if first:
        for bom, name in _WIDE_BOMS.items():
            if data.startswith(bom):
                raise DataFormatError(f"the file is {name}-encoded; save it as UTF-8", path)
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        if b"\x00" in data[:4]:
            raise DataFormatError(
                "the file holds NUL bytes (UTF-16 or UTF-32 without a byte order mark?); save it as UTF-8", path
            )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(f"not valid UTF-8 (byte {data[exc.start]:#04x})", path, at) from None


def read_text(path: PathLike) -> str:
    """The whole text of a UTF-8 file (gzip read transparently).

    >>> import gzip, tempfile, os
    >>> name = os.path.join(tempfile.mkdtemp(), "p.json.gz")
    >>> with gzip.open(name, "wt", encoding="utf-8") as fh: _ = fh.write('{"q1": ["dog"]}')
    >>> read_text(name)
    '{"q1": ["dog"]}'
    """
    path = Path(path)
    with opened(path, "input") as fh:
        data = fh.read()
    return decode_line(data, path, None, first=True)


def iter_text_lines(path: Path, spool: Optional[Any] = None, what: Optional[str] = None) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line of a UTF-8 (or gzip) file, read as a stream; every line's
    bytes are copied to ``spool`` too, and with ``what`` the file is checked first under that name."""
    with opened(path, what) as fh:
        for number, raw in enumerate(fh, start=1):
            if spool is not None:
                spool.write(raw)
            yield number, decode_line(raw, path, number, first=number == 1)


class _DuplicateKey(Exception):
    pass


class MalformedJSONError(DataFormatError):
    """Text that is not JSON at all (as opposed to JSON with a value we refuse)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _first_bad_string(value: Any) -> Optional[str]:
    """The first string in ``value`` that is not valid Unicode (holds a lone surrogate)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def member_line(text: str, key: str, *, after: Optional[str] = None, occurrence: int = 1) -> Optional[int]:
    """The line of member ``key`` in the JSON ``text``, for an error message: its ``occurrence``-th (else its
    last), searched from member ``after`` when that is there; None when ``key`` is not. A name may be written
    with or without ``\\u`` escapes.

    >>> member_line('{\\n "q1": [],\\n "caf\u00e9": []\\n}', "caf\u00e9")
    3
    >>> member_line('{"a": {"q1": []},\\n "b": {"q1": []}}', "q1", after="b")
    2
    """
    start = 0
    if after is not None:
        found = _member_name(after).search(text)
        start = found.start() if found else 0
    hits = list(itertools.islice(_member_name(key).finditer(text, start), occurrence))
    return text.count("\n", 0, hits[-1].start()) + 1 if hits else None


def _member_name(key: str) -> re.Pattern[str]:
    """``key`` as a member name: quoted as ``json.dumps`` writes it, with ``ensure_ascii`` or without, then ``:``."""
    forms = dict.fromkeys((json.dumps(key), json.dumps(key, ensure_ascii=False)))
    return re.compile("(?:" + "|".join(map(re.escape, forms)) + r")\s*:")


def parse_json(text: str, path: Optional[PathLike] = None, line: Optional[int] = None) -> Any:
    """Parse one JSON document strictly; every problem is a :class:`DataFormatError` naming file and line.

    Refused: duplicate keys, nesting past the recursion limit, ``NaN``/``Infinity``, ``1e999``,
    integers of over 4,300 digits, lone surrogates.

    >>> parse_json('{"q1": ["dog"]}')
    {'q1': ['dog']}
    >>> parse_json('{"q1": [], "q1": ["cat"]}', "p.json", 3)
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: p.json, line 3: duplicate key 'q1' in a JSON object
    """
    # ``line`` is given for one line of a JSONL file: the error is on that line.
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        at: Optional[int] = exc.lineno if line is None else line
        raise MalformedJSONError(f"malformed JSON ({exc.msg} at column {exc.colno})", path, at) from None
    except _DuplicateKey as exc:
        at = member_line(text, exc.args[0], occurrence=2) if line is None else line
        raise DataFormatError(f"duplicate key {short_repr(exc.args[0])} in a JSON object", path, at) from None
    except (RecursionError, MemoryError):
        raise DataFormatError("JSON nested too deeply", path, line) from None
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        raise DataFormatError(f"unsupported JSON value ({exc})", path, line) from None
    if _SURROGATE_ESCAPE.search(text):
        bad = _first_bad_string(value)
        if bad is not None:
            raise DataFormatError(
                f"string {short_repr(bad)} holds a lone surrogate escape, which is not valid Unicode", path, line
            )
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # json.loads would turn it into the Infinity it refuses by name
        raise ValueError(f"number {text[:30]} is beyond a float's range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


class Members:
    """The members of one top-level JSON object, parsed as they are read (:func:`object_members`).

    >>> [m for m in Members(io.BytesIO(b'{"q1": ["dog"]}'), "p.json", 1, None)]
    [(None, 'q1', ['dog'])]
    """

    def __init__(
        self,
        stream: Any,
        path: Optional[PathLike],
        line: Optional[int],
        limit: Optional[int],
        ended: Optional[Callable[[], None]] = None,
    ):
        self._stream = stream
        self._members = object_members(json_events(stream, path, line), path, line, limit, ended)

    def __iter__(self) -> Iterator[tuple[Optional[str], str, Any]]:
        return self._members

    @property
    def spans_lines(self) -> bool:
        """Whether the object, begun on a long first line, went on past it (a document over several lines)."""
        return bool(getattr(self._stream, "spans_lines", False))


def json_values(
    fh: Any, path: Path, limit: Optional[int] = None, parsed: Optional[tuple[Optional[int], Any]] = None
) -> Iterator[tuple[Optional[int], Any]]:
    """``(line, value)`` of each top-level JSON value of the open binary file ``fh``.

    A file whose first non-blank line is a JSON value is JSONL; otherwise it is one document (``line``
    None, or 1 on one line). A long line or a large document comes as :class:`Members`. ``parsed`` is
    the first value already parsed, ``(line, value)``, and ``fh`` holds what follows it.

    >>> list(json_values(io.BytesIO(b'{"q1": []}\\n\\n{"q2": ["a"]}\\n'), Path("p.jsonl")))
    [(1, {'q1': []}), (3, {'q2': ['a']})]
    """
    number = 0
    if parsed is not None:
        yield parsed
        if parsed[0] is None:
            return  # a document over several lines: nothing follows it
        number = parsed[0]
    else:
        head: list[bytes] = []
        raw = b""
        while True:
            raw = fh.readline(LARGE_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            head.append(raw)
            if raw.strip() or _is_long(raw):
                break
        for at, blank in enumerate(head[:-1], start=1):
            decode_line(blank, path, at, first=at == 1)
        if _is_long(raw):  # too long to parse whole: parsed as it is read, one value at a time
            first_value = _FirstValue(_without_bom(raw, path, number), fh)
            yield number, Members(first_value, path, number, limit, first_value)
            if first_value.spans_lines:
                return  # a document over several lines: the parser has read the file to its end
        else:
            text = decode_line(raw, path, number, first=number == 1)
            try:
                first = parse_json(text, path, number)
            except MalformedJSONError:
                yield from _document_values(fh, head, path, limit)
                return
            yield number, first
    while raw := fh.readline(LARGE_LINE_BYTES + 1):
        number += 1
        if _is_long(raw):
            yield number, Members(_RestOfLine(raw, fh), path, number, limit)
            continue
        text = decode_line(raw, path, number, first=False)
        if text.strip():
            yield number, parse_json(text, path, number)


def _document_values(
    fh: Any, head: list[bytes], path: Path, limit: Optional[int]
) -> Iterator[tuple[Optional[int], Any]]:
    """One JSON document over several lines: parsed whole when small (its errors give a line), else as :class:`Members`."""
    read = sum(len(h) for h in head)
    while read <= WHOLE_DOCUMENT_BYTES:
        chunk = fh.read(1 << 20)
        if not chunk:
            break
        head.append(chunk)
        read += len(chunk)
    else:
        data = _without_bom(b"".join(head), path, 1)
        head.clear()
        yield None, Members(PrefixedReader(data, fh), path, None, limit)
        return
    whole = decode_line(b"".join(head), path, None, first=True)
    head.clear()
    # A one-line file is also a JSONL file: keep its line number for errors.
    one_line = 1 if "\n" not in whole.strip() else None
    try:
        value = parse_json(whole, path, one_line)
    except MalformedJSONError:
        # Not one document either: report the first line that is not JSON.
        for at, line_text in enumerate(whole.split("\n"), start=1):
            if line_text.strip():
                parse_json(line_text, path, at)
        raise
    yield one_line, value


def _is_long(raw: bytes) -> bool:
    """Whether ``raw``, read with a limit of :data:`LARGE_LINE_BYTES` + 1, is only the start of its line."""
    return len(raw) > LARGE_LINE_BYTES and not raw.endswith(b"\n")


class _FirstValue(io.RawIOBase):
    """A long first line, then the rest of the file only when the value does not end with the line.

    So a long first line is never taken for JSONL, and each byte is parsed once. The parser calls this
    object when the value's closing brace is read (:class:`_SurrogateCheck` passes bytes up to a newline
    at once, so the brace is seen before the line's end).
    """

    def __init__(self, head: bytes, fh: Any):
        self._line = _RestOfLine(head, fh)
        self._fh = fh
        self._ended = False
        self.spans_lines = False  # the value went on past its first line: the file is one document

    def readable(self) -> bool:
        return True

    def __call__(self) -> None:
        self._ended = True

    def readinto(self, buffer: Any) -> int:
        if not self.spans_lines:
            n = self._line.readinto(buffer)
            if n or self._ended:
                return n
            self.spans_lines = True
        data = self._fh.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _RestOfLine(io.RawIOBase):
    """One line of ``fh``: ``head`` (already read), then the rest up to its newline, a piece at a time."""

    def __init__(self, head: bytes, fh: Any):
        self._head, self._fh = head, fh
        self._done = head.endswith(b"\n")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            data, self._head = self._head[: len(buffer)], self._head[len(buffer) :]
        elif self._done:
            return 0
        else:
            data = self._fh.readline(len(buffer))
            self._done = not data or data.endswith(b"\n")
        buffer[: len(data)] = data
        return len(data)


def _without_bom(raw: bytes, path: Path, number: int) -> bytes:
    if number == 1:
        decode_line(raw[:4], path, number, first=True)  # wide encodings and NUL bytes are refused
        if raw.startswith(b"\xef\xbb\xbf"):
            return raw[3:]
    return raw

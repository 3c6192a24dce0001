"""Large JSON read a piece at a time: the members of a top-level object, each value built alone.

A predictions file may be one JSON document of hundreds of megabytes, or a JSONL file with
one very long line. Parsed whole, such a document takes several times its size in Python
objects. Here it is parsed incrementally (ijson, over the yajl C library), and only one
member's value is built at a time, so memory is that of the largest single value, not of
the file. The checks match :func:`protoqa_core.io.files.parse_json`: strict JSON, UTF-8,
no duplicate key, no lone surrogate escape.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from typing import Any, Optional

from .files import DataFormatError, MalformedJSONError, PathLike, short_repr

__all__ = ["LARGE_LINE_BYTES", "GROUP", "TooManyItems", "object_members", "json_events"]

LARGE_LINE_BYTES = 1 << 20
"""A JSONL line longer than this is parsed incrementally rather than whole."""

GROUP = object()
"""What :func:`object_members` yields as the value of a top-level member that is an object:
its members follow, each with the member's name as their group."""


class TooManyItems(Exception):
    """A value held more items than the limit given to :func:`object_members`; its one argument is
    the key of the member being built."""


_ESCAPE = re.compile(rb"(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})")
_TYPE_OF_EVENT = {
    "start_array": "list",
    "string": "str",
    "number": "number",
    "boolean": "bool",
    "null": "NoneType",
}


class _SurrogateCheck(io.RawIOBase):
    """A binary stream passed through unchanged, refusing a lone surrogate escape (``"\\ud800"``).

    yajl replaces such an escape by ``?``, where the standard library's parser keeps a string
    that no UTF-8 file can hold and :func:`~protoqa_core.io.files.parse_json` refuses it.
    """

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
        """Refuse a lone surrogate escape that starts before ``limit`` (those after it are checked with the
        next chunk)."""
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
    """ijson's ``(event, value)`` pairs of the JSON in the binary ``stream``, strict, errors named.

    Numbers come as ``int`` or ``float``; malformed JSON and invalid UTF-8 are a
    :class:`~protoqa_core.io.files.MalformedJSONError` naming ``path`` and ``line``.

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
    """The whole value that starts with ``(event, value)``, built without recursion.

    Raises :class:`TooManyItems` once the value holds more than ``limit`` items in all
    (its containers' items, at every depth), before building the rest.
    """
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

    A member whose value is not an object comes as ``(None, key, value)``. One whose
    value is an object comes as ``(None, key, GROUP)``, then each of its members as
    ``(key, inner key, value)``. A value with more than ``limit`` items raises
    :class:`TooManyItems` while it is built; a key seen twice in one object is an error.
    ``ended`` is called when the object's closing brace has been read, before anything
    after it is: a reader of the first line of a file learns there that the value ended with it.

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

"""Zip archives (Inspect's ``.eval`` logs) measured by the bytes their entries really unpack to.

An entry that declares 1,000 bytes may unpack to gigabytes: :func:`check_archive` counts what
really comes out, within the input cap (``PROTOQA_MAX_INPUT_MB``) and time budget, before
``inspect-ai`` opens the archive.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import IO, Any, cast

from protoqa_core.io.files import MAX_INPUT_ENV, DataFormatError, InputDeadline, max_input_bytes

__all__ = ["ZIP_MAGIC", "check_archive", "exception_reason"]

ZIP_MAGIC = b"PK\x03\x04"
"""How a zip archive (an Inspect ``.eval`` log) starts."""
_ZIP_STORED, _ZIP_DEFLATED, _ZIP_ZSTD = 0, 8, 93
_UNPACK_CHUNK = 1 << 20
"""Bytes asked of a decompressor at a time while an archive is measured: memory stays near this, whatever
an entry declares."""


def _produced(source: Any, method: int, length: int, left: int, deadline: InputDeadline) -> int:
    """The bytes one entry of ``length`` compressed bytes read from ``source`` unpacks to, stopping as soon
    as they pass ``left`` (the count then returned is ``left + 1``): counted, never taken from the archive."""
    import zlib

    import zstandard

    remaining = [length]

    def compressed(size: int) -> bytes:
        data = source.read(min(size, remaining[0]))
        remaining[0] -= len(data)
        return data

    total = 0
    if method == _ZIP_STORED:
        return length
    if method == _ZIP_DEFLATED:
        inflate = zlib.decompressobj(-15)
        pending = b""
        while True:
            deadline.check()
            if not pending:
                pending = compressed(_UNPACK_CHUNK)
                if not pending:
                    return total
            total += len(inflate.decompress(pending, _UNPACK_CHUNK))
            pending = inflate.unconsumed_tail
            if total > left or inflate.eof:
                return total

    class _Range(io.RawIOBase):
        """The entry's compressed bytes, and no byte past them."""

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            return compressed(_UNPACK_CHUNK if size < 0 else size)

    # zstandard reads its source through ``read`` only; a multi-frame entry (as inspect-ai writes large ones)
    # is read across its frames.
    reader = zstandard.ZstdDecompressor().stream_reader(cast(IO[bytes], _Range()), read_across_frames=True)
    while True:
        deadline.check()
        piece = reader.read(_UNPACK_CHUNK)
        if not piece:
            return total
        total += len(piece)
        if total > left:
            return total


def check_archive(path: Path, deadline: InputDeadline) -> None:
    """Refuse a ``.eval`` archive whose entries unpack to more than the input cap, all entries together.

    Entries are unpacked as streams and counted as they come out, before inspect-ai reads them: the
    sizes an archive declares bound nothing.
    """
    import struct
    import zipfile
    import zlib

    import zstandard

    limit = max_input_bytes()
    try:
        with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
            left, names = limit, set()
            for info in archive.infolist():
                if info.filename in names:
                    sample = re.fullmatch(r"samples/(.+)_epoch_(\d+)\.json", info.filename)
                    raise DataFormatError(
                        f"the archive holds entry {info.filename[:80]!r} twice"
                        + (f": the sample of epoch {sample.group(2)} appears twice" if sample else ""),
                        path,
                        None,
                        sample.group(1) if sample else None,
                    )
                names.add(info.filename)
                if info.file_size > left:
                    raise DataFormatError(f"an entry of the archive unpacks to more than {limit / 2**20:.4g} MB", path)
                if info.compress_type not in (_ZIP_STORED, _ZIP_DEFLATED, _ZIP_ZSTD):
                    raise DataFormatError(
                        f"entry {info.filename[:80]!r} is compressed with method {info.compress_type}; "
                        "an Inspect log uses zstd or deflate",
                        path,
                    )
                raw.seek(info.header_offset)
                local = raw.read(30)
                if len(local) < 30 or not local.startswith(ZIP_MAGIC):
                    raise zipfile.BadZipFile(f"entry {info.filename[:80]!r} has no local header")
                name_length, extra_length = struct.unpack("<HH", local[26:30])
                raw.seek(info.header_offset + 30 + name_length + extra_length)
                left -= _produced(raw, info.compress_type, info.compress_size, left, deadline)
                if left < 0:
                    raise DataFormatError(
                        f"entry {info.filename[:80]!r} unpacks past the input cap: the archive's entries together "
                        f"unpack to more than {limit / 2**20:.4g} MB, whatever sizes it declares; set "
                        f"{MAX_INPUT_ENV} to a larger number of megabytes to read it",
                        path,
                    )
    except (zipfile.BadZipFile, zlib.error, zstandard.ZstdError, OSError, EOFError, struct.error) as exc:
        raise DataFormatError(f"not an Inspect log: a damaged zip archive ({exception_reason(exc)})", path) from None


def exception_reason(exc: BaseException) -> str:
    """An exception as a short reason: its words on one line, or its type where it has none (``MemoryError``).

    >>> exception_reason(MemoryError()), exception_reason(ValueError("bad\\n  value"))
    ('MemoryError', 'bad value')
    """
    return " ".join(str(exc).split())[:200] or type(exc).__name__

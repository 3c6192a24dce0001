"""Zip archives written by hand, so that an entry may declare any size: the bombs of the archive readers' tests."""

from __future__ import annotations

import struct
import zlib

ZSTD, DEFLATE, STORED = 93, 8, 0


def zip_bytes(entries: list[tuple[str, int, bytes, int]]) -> bytes:
    """A zip archive of ``(name, method, packed data, declared size)`` entries, in that order."""
    body, central = b"", b""
    for name, method, data, declared in entries:
        raw = name.encode()
        offset = len(body)
        body += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 63, 0, method, 0, 0, 0, len(data), declared, len(raw), 0)
        body += raw + data
        central += struct.pack(
            "<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 63, 63, 0, method, 0, 0, 0, len(data), declared, len(raw),
            0, 0, 0, 0, 0, offset,
        ) + raw  # fmt: skip
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(body), 0)
    return body + central + end


def packed(method: int, size: int) -> bytes:
    """``size`` zero digits (a whole number of megabytes) packed with zstd or raw deflate, a megabyte at a time."""
    import zstandard

    packer = zstandard.ZstdCompressor().compressobj() if method == ZSTD else zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = b"0" * (1 << 20)
    return b"".join([*(packer.compress(chunk) for _ in range(size >> 20)), packer.flush()])


def inspect_bomb(method: int, size: int) -> bytes:
    """An archive that starts as an Inspect log does, whose ``header.json`` declares 1,000 bytes and unpacks to ``size``."""
    return zip_bytes([("_journal/start.json", STORED, b"{}", 2), ("header.json", method, packed(method, size), 1000)])

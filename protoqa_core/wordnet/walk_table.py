"""A memory-mapped file of Wu-Palmer walks, one per WordNet synset.

Computing a synset's walk reads the data line of every hypernym, which was most of the cost of a
Wu-Palmer evaluation in a fresh process. So the walks of all 117,659 synsets of WordNet 3.0 are
written once per installation to a 13 MB file and read through a memory map, a walk decoded when
first asked for; a test compares them with computed walks for every synset.

Layout (little-endian; every section starts at a multiple of 8 bytes; ``n``
synsets, ``m`` walk steps in all):

==================  ============================================================
header              ``MAGIC``, ``n``, ``m``, the length of the names, the SHA-256
                    digest of everything after the header
codes               ``n`` int64, sorted: ``part of speech << 32 | offset``
starts              ``n + 1`` int64: where each synset's steps begin
root paths          ``n`` int32: each synset's path length to the simulated root
step synsets        ``m`` int32: the synset of each step (an index into codes)
step depths         ``m`` int16: its Wu-Palmer depth
step lengths        ``m`` int16: its path length from the walk's synset
step to root        ``m`` int8: 1 where NLTK takes the simulated root instead
name starts         ``n + 1`` int64: where each synset's name begins
names               UTF-8 NLTK names (``dog.n.01``), one after another
==================  ============================================================

Parallel arrays let a walk be decoded by slicing, with no per-step arithmetic. The
digest is checked when the file is opened (about 10 ms), so a damaged file is refused
as a whole, with its name, instead of giving wrong walks.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from itertools import accumulate
from pathlib import Path
from typing import Optional

from ..io.cache_files import write_atomically

__all__ = ["MAGIC", "WalkTable", "Walk", "write_walk_table"]

MAGIC = b"PQWALK03"
_SECTION_TYPES = "qqiihhbq"  # the array sections' item types, in file order
_HEADER = struct.Struct("<8sQQQ32s")
_POS_CODE = {"n": 0, "v": 1, "a": 2, "r": 3}

Step = tuple[str, int, int, bool]  # (synset name, depth, path length, to root)
Walk = tuple[tuple[Step, ...], int]  # (steps, root path)


def _code(key: tuple[str, int]) -> int:
    return _POS_CODE[key[0]] << 32 | key[1]


def _aligned(size: int) -> int:
    return (size + 7) // 8 * 8


def write_walk_table(path: Path, walks: Iterable[tuple[tuple[str, int], str, Walk]]) -> None:
    """Write the walks of every synset (``(key, name, walk)`` each) to ``path``, atomically.

    Every synset on a walk needs its own entry and names must be unique (else ValueError, before writing).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "walks.bin"
    >>> write_walk_table(p, [(("n", 2), "dog.n.01", ((("dog.n.01", 2, 0, False), ("animal.n.01", 1, 1, False)), 2)),
    ...                      (("n", 1), "animal.n.01", ((("animal.n.01", 1, 0, False),), 1))])
    >>> WalkTable(p).walk(("n", 2))
    ((('dog.n.01', 2, 0, False), ('animal.n.01', 1, 1, False)), 2)
    """
    rows = sorted(walks, key=lambda row: _code(row[0]))
    index: dict[str, int] = {}
    for i, (key, name, _) in enumerate(rows):
        seen = index.setdefault(name, i)
        if seen != i:
            first = rows[seen][0]
            raise ValueError(
                f"synset names must be unique: {name} is the name of {first[0]} {first[1]} and of {key[0]} {key[1]}"
            )
    codes = [_code(key) for key, _, _ in rows]
    starts = [0]
    root_paths: list[int] = []
    synsets: list[int] = []
    depths: list[int] = []
    lengths: list[int] = []
    to_roots: list[int] = []
    for key, walk_name, (steps, root_path) in rows:
        root_paths.append(root_path)
        for name, depth, length, to_root in steps:
            if not (0 <= depth < 1 << 15 and 0 <= length < 1 << 15):
                raise ValueError(f"depth or path length out of range at {name}")
            step = index.get(name)
            if step is None:  # every hypernym of a WordNet synset has a walk of its own
                raise ValueError(
                    f"the walk of {walk_name} ({key[0]} {key[1]}) names {name}, which has no entry of its own"
                )
            synsets.append(step)
            depths.append(depth)
            lengths.append(length)
            to_roots.append(int(to_root))
        starts.append(len(synsets))
    names = [name.encode("utf-8") for _, name, _ in rows]
    name_starts = [0, *accumulate(len(encoded) for encoded in names)]
    columns = (codes, starts, root_paths, synsets, depths, lengths, to_roots, name_starts)
    arrays = [array(kind, column) for kind, column in zip(_SECTION_TYPES, columns, strict=True)]
    if sys.byteorder != "little":
        for section in arrays:
            section.byteswap()
    sections = [bytes(section) for section in arrays] + [b"".join(names)]
    body = b"".join(section + b"\0" * (_aligned(len(section)) - len(section)) for section in sections)
    header = _HEADER.pack(MAGIC, len(rows), len(synsets), len(sections[-1]), hashlib.sha256(body).digest())
    write_atomically(path, header + body)


class WalkTable:
    """The walks of a file written by :func:`write_walk_table`, read through a memory map.

    Raises ValueError when the file is not such a file (or is cut short).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size < _HEADER.size:
                raise ValueError(f"{path}: not a walk table (shorter than its header)")
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        view = memoryview(self._map)
        magic, n, m, n_name_bytes, digest = _HEADER.unpack_from(view)
        if magic != MAGIC:
            raise ValueError(f"{path}: not a walk table of this version")
        sizes = (8 * n, 8 * (n + 1), 4 * n, 4 * m, 2 * m, 2 * m, m, 8 * (n + 1), n_name_bytes)
        if len(view) != _HEADER.size + sum(_aligned(size) for size in sizes):
            raise ValueError(f"{path}: cut short or padded (its size does not match its header)")
        if hashlib.sha256(view[_HEADER.size :]).digest() != digest:
            raise ValueError(f"{path}: damaged (its checksum does not match)")
        if sys.byteorder != "little":
            raise ValueError(f"{path}: walk tables are read on little-endian machines only")
        at = _HEADER.size
        parts = []
        for size in sizes:
            parts.append(view[at : at + size])
            at += _aligned(size)
        self._codes = parts[0].cast("q")
        self._starts = parts[1].cast("q")
        self._root_paths = parts[2].cast("i")
        self._synsets = parts[3].cast("i")
        self._depths = parts[4].cast("h")
        self._lengths = parts[5].cast("h")
        self._to_roots = parts[6].cast("b")
        self._name_starts = parts[7].cast("q")
        self._names = parts[8]
        self._name_cache: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._codes)

    def _damaged(self, what: str) -> ValueError:
        return ValueError(f"{self.path}: damaged ({what}, although its checksum matches)")

    def _name(self, i: int) -> str:
        name = self._name_cache.get(i)
        if name is None:
            if not 0 <= i < len(self._codes):
                raise self._damaged(f"a walk names synset {i} of {len(self._codes)}")
            start, end = self._name_starts[i], self._name_starts[i + 1]
            if not 0 <= start <= end <= len(self._names):
                raise self._damaged(f"the name of synset {i} lies outside the file")
            try:
                name = self._name_cache[i] = bytes(self._names[start:end]).decode()
            except UnicodeDecodeError:
                raise self._damaged(f"the name of synset {i} is not UTF-8") from None
        return name

    def forget_names(self) -> None:
        """Drop the decoded names (benchmarks use it to start cold)."""
        self._name_cache.clear()

    def _index(self, key: tuple[str, int]) -> Optional[int]:
        code = _code(key)
        i = bisect_left(self._codes, code)
        return i if i < len(self._codes) and self._codes[i] == code else None

    def walk(self, key: tuple[str, int]) -> Optional[Walk]:
        """The walk of the synset ``(part of speech, offset)``, or None if the file has none; a ValueError
        naming the file when the walk points outside it (a file altered, its checksum made again)."""
        i = self._index(key)
        if i is None:
            return None
        start, end = self._starts[i], self._starts[i + 1]
        if not 0 <= start <= end <= len(self._synsets):
            raise self._damaged(f"the walk of synset {i} lies outside the file")
        ids = self._synsets[start:end].tolist()
        cache = self._name_cache
        for j in ids:
            if j not in cache:
                self._name(j)
        steps = tuple(
            zip(
                map(cache.__getitem__, ids),
                self._depths[start:end].tolist(),
                self._lengths[start:end].tolist(),
                map(bool, self._to_roots[start:end].tolist()),
                strict=True,
            )
        )
        return steps, self._root_paths[i]

    def name(self, key: tuple[str, int]) -> Optional[str]:
        """NLTK's name of the synset ``(part of speech, offset)``, or None if the file has none."""
        i = self._index(key)
        return None if i is None else self._name(i)

"""Per-installation cache files derived from a WordNet database, each verified before use.

The lemma tables and the Wu-Palmer walk file live in ``<cache folder>/wordnet_tables/``, named
after the database files' sizes and modification times, each with a SHA-256 digest of its
contents. A damaged file is rebuilt (logged with its name); where the folder cannot be written,
the tables are computed in the process. Values never depend on which way they were obtained.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Optional

from ..io.cache_files import cache_dir, write_atomically
from .files import REQUIRED_FILES
from .reader import WordNetReader

__all__ = ["LemmaTables", "installation_digest", "table_path", "lemma_tables"]

_LEMMA_MAGIC = "PQLEMMAS01"


def installation_digest(reader: WordNetReader, fmt: str) -> str:
    """A short digest of the database files' sizes and modification times and a file format name."""
    parts = [fmt]
    for fileid in REQUIRED_FILES:
        info = os.stat(reader.path(fileid))
        parts.append(f"{fileid}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def table_path(reader: WordNetReader, stem: str, fmt: str, suffix: str) -> Path:
    """Where the cache file ``stem`` of this WordNet installation lives."""
    return cache_dir() / "wordnet_tables" / f"{stem}-{installation_digest(reader, fmt)}{suffix}"


class LemmaTables:
    """The most words a WordNet look-up can match, and the prefixes of multi-word entries."""

    __slots__ = ("max_tokens", "prefixes")

    def __init__(self, max_tokens: int, prefixes: frozenset[str]) -> None:
        self.max_tokens = max_tokens
        self.prefixes = prefixes

    @classmethod
    def compute(cls, reader: WordNetReader) -> LemmaTables:
        """Scan every index and exception file (what NLTK's lemma table and exception map hold)."""
        # Single words add no prefix and at most one token: only the multi-word forms are read.
        forms: list[str] = []
        for pos in ("n", "v", "a", "r"):
            forms.extend(reader.multiword_lemmas(pos))
            forms.extend(form for form in reader.exceptions(pos) if "_" in form)
        longest = max((form.count("_") for form in forms), default=0)
        prefixes: set[str] = set()
        add = prefixes.add
        for form in forms:
            prefix = form.lower()
            # Longest prefix first, stopping at one already held: it came with all of its own
            # prefixes (the forms are sorted, so neighbours share them and stop early).
            while "_" in prefix:
                prefix = prefix.rpartition("_")[0]
                if prefix in prefixes:
                    break
                add(prefix)
        return cls(longest + 1, frozenset(prefixes))

    def encode(self) -> bytes:
        body = "\n".join(sorted(self.prefixes)).encode("utf-8")
        head = f"{_LEMMA_MAGIC} {self.max_tokens} {hashlib.sha256(body).hexdigest()}\n".encode()
        return head + body

    @classmethod
    def decode(cls, data: bytes, path: Path) -> LemmaTables:
        """Read a file written by :meth:`encode`; ValueError naming ``path`` if it is not intact."""
        head, _, body = data.partition(b"\n")
        fields = head.split(b" ")
        if len(fields) != 3 or fields[0] != _LEMMA_MAGIC.encode() or not fields[1].isdigit():
            raise ValueError(f"{path}: not a lemma table of this version")
        if hashlib.sha256(body).hexdigest().encode() != fields[2]:
            raise ValueError(f"{path}: damaged or cut short (checksum mismatch)")
        return cls(int(fields[1]), frozenset(body.decode("utf-8").split("\n")) if body else frozenset())


def _log(level: str, message: str, *args: object) -> None:
    # Imported here: a run that finds its tables intact logs nothing and need not load logging.
    import logging

    getattr(logging.getLogger(__name__), level)(message, *args)


def lemma_tables(reader: WordNetReader) -> LemmaTables:
    """The lemma tables of ``reader``'s WordNet: read from the cache file, built when missing or damaged."""
    path: Optional[Path] = None
    try:
        path = table_path(reader, "lemma-tables", _LEMMA_MAGIC, ".txt")
        return LemmaTables.decode(path.read_bytes(), path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        _log("warning", "rebuilding the WordNet lemma tables: %s", exc)
    tables = LemmaTables.compute(reader)
    if path is not None:
        try:
            write_atomically(path, tables.encode())
        except OSError as exc:
            _log("info", "WordNet lemma tables are computed in each process (cannot write %s: %s)", path, exc)
    return tables

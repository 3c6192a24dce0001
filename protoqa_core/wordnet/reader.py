"""A reader of the WordNet 3.0 database files that gives NLTK's answers without NLTK.

NLTK reads every index and exception file into Python objects first, about a second per
process. This reader answers from the files as they are, read-only (a system copy such as
Debian's ``/usr/share/wordnet`` works in place): a lemma by bisecting the first lemmas of an
index file's 2 KB blocks, then scanning one block; a synset by its data line's byte offset. A
test compares it with NLTK on every lemma of WordNet 3.0.
"""

from __future__ import annotations

import mmap
import re
import threading
from bisect import bisect_right
from pathlib import Path
from typing import Optional

__all__ = ["POS_FILES", "SynsetKey", "WordNetFormatError", "WordNetReader", "SUBSTITUTIONS"]

SynsetKey = tuple[str, int]  # (part of speech, byte offset in its data file); satellites are "a"

POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

#: Look-ups a reader remembers (see :meth:`WordNetReader.offsets`); past this the memo starts again empty.
INDEX_LINE_CACHE = 1 << 15

#: Bytes of an index file between two lemmas of its block table: a look-up scans one block.
INDEX_BLOCK = 1 << 11

# NLTK's rules of detachment (WordNet's morphy(7WN)), applied once to the end of a form.
SUBSTITUTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}

# An index line's lemma holding a "_", at the file's start and after a newline (a pattern starting
# with a literal is found by a fast scan instead of being tried at every position).
_MULTIWORD_LEMMA_AT = re.compile(rb"[^ \n_]*_[^ \n]*")
_MULTIWORD_LEMMA_AFTER = re.compile(rb"\n([^ \n_]*_[^ \n]*)")
_VERSION = re.compile(rb"Word[nN]et (\d+\+?|\d+\.\d+) Copyright")


class WordNetFormatError(ValueError):
    """A WordNet database file is not as WordNet 3.0 writes it; the message names the file."""


def _open_map(path: Path) -> mmap.mmap:
    with open(path, "rb") as f:
        # The map stays valid after the file is closed; reading it needs no system call
        # and no file position, so threads can share it.
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def _block_table(data: mmap.mmap, body: int) -> tuple[list[bytes], list[int]]:
    """The lemma and start of the first line at or after every :data:`INDEX_BLOCK` bytes of
    an index file's body, in file order (so the lemmas are sorted)."""
    lemmas: list[bytes] = []
    starts: list[int] = []
    at, size = body, len(data)
    while at < size:
        end = data.find(b"\n", at)
        end = size if end < 0 else end
        space = data.find(b" ", at, end)
        lemmas.append(data[at : space if space >= 0 else end])
        starts.append(at)
        if end + 1 >= at + INDEX_BLOCK:
            at = end + 1
        else:
            newline = data.find(b"\n", at + INDEX_BLOCK)
            at = size if newline < 0 else newline + 1
    return lemmas, starts


def _body_start(data: mmap.mmap) -> int:
    """Where the lines after the license header (lines starting with a space) begin."""
    at = 0
    while at < len(data) and data[at : at + 1] == b" ":
        end = data.find(b"\n", at)
        at = len(data) if end < 0 else end + 1
    return at


class WordNetReader:
    """Look-ups in the WordNet database in ``folder`` (``index.noun``, ``data.noun``, ``noun.exc``, ...).

    >>> from protoqa_core.wordnet.files import find_wordnet
    >>> wn = WordNetReader(find_wordnet())
    >>> wn.morphy("dogs", "n"), wn.offsets("dog", "n")[:2]
    (['dog'], (2084071, 10114209))
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._index: dict[str, tuple[mmap.mmap, int]] = {}
        self._blocks: dict[str, tuple[mmap.mmap, list[bytes], list[int]]] = {}
        self._data: dict[str, mmap.mmap] = {}
        self._exceptions: dict[str, dict[str, list[str]]] = {}
        self._version: Optional[str] = None
        self._offsets: dict[tuple[str, str], tuple[int, ...]] = {}  # see offsets()

    def path(self, name: str) -> Path:
        """The path of one of the database files, e.g. ``path("index.noun")``."""
        return self.folder / name

    # --- index files -------------------------------------------------------------------

    def _index_map(self, pos: str) -> tuple[mmap.mmap, int]:
        found = self._index.get(pos)
        if found is None:
            with self._lock:
                found = self._index.get(pos)
                if found is None:
                    data = _open_map(self.path(f"index.{POS_FILES[pos]}"))
                    found = self._index[pos] = (data, _body_start(data))
        return found

    def _block_index(self, pos: str) -> tuple[mmap.mmap, list[bytes], list[int]]:
        found = self._blocks.get(pos)
        if found is None:
            data, body = self._index_map(pos)
            lemmas, starts = _block_table(data, body)
            with self._lock:
                found = self._blocks.setdefault(pos, (data, lemmas, starts))
        return found

    def index_line(self, lemma: str, pos: str) -> Optional[bytes]:
        """The line of ``index.<pos>`` for ``lemma`` (lower case, words joined by ``_``), or None.

        >>> from protoqa_core.wordnet.files import find_wordnet
        >>> WordNetReader(find_wordnet()).index_line("hot_dog", "n")[:12]
        b'hot_dog n 3 '
        """
        key = lemma.encode("utf-8")
        if not key or b" " in key or b"\n" in key:
            return None
        data, lemmas, starts = self._blocks.get(pos) or self._block_index(pos)
        block = bisect_right(lemmas, key) - 1
        if block < 0:
            return None
        start = starts[block]
        if lemmas[block] != key:
            # The line starts inside the block, after a newline, and comes first of the lines
            # that start with ``key`` (a space sorts before every lemma character): the first
            # line that starts with it is the one, if its lemma ends there. (Searching without
            # the space is faster: a space is in every line, the lemma's last letter is not.)
            stop = starts[block + 1] if block + 1 < len(starts) else len(data)
            newline = data.find(b"\n" + key, start, stop)
            start = newline + 1
            if newline < 0 or data[start + len(key) : start + len(key) + 1] != b" ":
                return None
        end = data.find(b"\n", start)
        return data[start : end if end >= 0 else len(data)]

    def offsets(self, lemma: str, pos: str) -> tuple[int, ...]:
        """The synset offsets of ``lemma`` in part of speech ``pos``, in sense order; empty when WordNet has none.

        Memoized: a scoring run asks for the same lemmas again and again.

        >>> from protoqa_core.wordnet.files import find_wordnet
        >>> WordNetReader(find_wordnet()).offsets("hot_dog", "n")
        (10187710, 7697537, 7676602)
        """
        found = self._offsets.get((lemma, pos))
        if found is None:
            found = self._parse_offsets(lemma, pos, self.index_line(lemma, pos))
            if len(self._offsets) >= INDEX_LINE_CACHE:
                self._offsets.clear()
            self._offsets[lemma, pos] = found
        return found

    def _parse_offsets(self, lemma: str, pos: str, line: Optional[bytes]) -> tuple[int, ...]:
        if line is None:
            return ()
        fields = line.split()
        try:
            n_synsets = int(fields[2])
            n_pointers = int(fields[3])
            first = 4 + n_pointers + 2
            found = tuple(map(int, fields[first : first + n_synsets]))
            if n_synsets < 1 or len(found) != n_synsets:
                raise ValueError("wrong number of synset offsets")
        except (IndexError, ValueError) as exc:
            raise WordNetFormatError(f"{self.path(f'index.{POS_FILES[pos]}')}: bad line for {lemma!r}: {exc}") from None
        return found

    def has(self, lemma: str, pos: str) -> bool:
        """Whether ``lemma`` has a synset in part of speech ``pos``."""
        return bool(self.offsets(lemma, pos))

    # --- morphology --------------------------------------------------------------------

    def exceptions(self, pos: str) -> dict[str, list[str]]:
        """The exception list of ``pos``: inflected form -> base forms (a later line wins, as in NLTK)."""
        found = self._exceptions.get(pos)
        if found is None:
            path = self.path(f"{POS_FILES[pos]}.exc")
            table: dict[str, list[str]] = {}
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    terms = line.split()
                    if not terms:
                        raise WordNetFormatError(f"{path}, line {number}: empty line")
                    table[terms[0]] = terms[1:]
            with self._lock:
                found = self._exceptions.setdefault(pos, table)
        return found

    def _candidates(self, form: str, pos: str) -> list[str]:
        """The form itself, then its exception-list bases or, when it has none, the forms one
        rule of detachment gives (possibly repeated)."""
        exceptions = self._exceptions.get(pos) or self.exceptions(pos)
        bases = exceptions.get(form)
        if bases is not None:
            return [form, *bases]
        return [form, *(form[: -len(old)] + new for old, new in SUBSTITUTIONS[pos] if form.endswith(old))]

    def morphy(self, form: str, pos: str) -> list[str]:
        """The base forms of ``form`` that WordNet has in ``pos`` (NLTK's ``_morphy`` with exceptions), each once.

        >>> from protoqa_core.wordnet.files import find_wordnet
        >>> WordNetReader(find_wordnet()).morphy("geese", "n")
        ['goose']
        """
        found: list[str] = []
        for candidate in self._candidates(form, pos):
            if candidate not in found and self.offsets(candidate, pos):
                found.append(candidate)
        return found

    def synset_keys(self, lemma: str) -> frozenset[SynsetKey]:
        """The keys of ``nltk.corpus.wordnet.synsets(lemma)`` (``lemma`` as NLTK gets it: ``_`` for spaces).

        >>> from protoqa_core.wordnet.files import find_wordnet
        >>> sorted(WordNetReader(find_wordnet()).synset_keys("Hot_Dogs"))
        [('n', 7676602), ('n', 7697537), ('n', 10187710)]
        """
        lemma = lemma.lower()
        # morphy() for each part of speech, each base form's offsets read from the same memo
        # (a form listed twice adds the same keys again).
        offsets = self.offsets
        return frozenset(
            (pos, offset)
            for pos in ("n", "v", "a", "r")
            for candidate in self._candidates(lemma, pos)
            for offset in offsets(candidate, pos)
        )

    # --- data files --------------------------------------------------------------------

    def _data_map(self, pos: str) -> mmap.mmap:
        found = self._data.get(pos)
        if found is None:
            with self._lock:
                found = self._data.get(pos)
                if found is None:
                    found = self._data[pos] = _open_map(self.path(f"data.{POS_FILES['a' if pos == 's' else pos]}"))
        return found

    def data_line(self, pos: str, offset: int) -> str:
        """The line of a data file at a byte offset (a synset), checked to be that synset's."""
        data = self._data_map(pos)
        end = data.find(b"\n", offset)
        raw = data[offset : end if end >= 0 else len(data)]
        if not raw.startswith(b"%08d " % offset):
            name = f"data.{POS_FILES['a' if pos == 's' else pos]}"
            raise WordNetFormatError(f"{self.path(name)} has no synset at offset {offset}")
        return raw.decode("utf-8")

    def data_lines(self, pos: str):
        """Every synset line of a data file, as ``(offset, line)``, in file order."""
        data = self._data_map(pos)
        at = _body_start(data)
        while at < len(data):
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end
            yield at, data[at:end].decode("utf-8")
            at = end + 1

    def is_satellite(self, offset: int) -> bool:
        """Whether the adjective synset at ``offset`` is a satellite (``s`` in its data line)."""
        # The type is the third field: the line's head is enough, its gloss is not decoded.
        head = self._data_map("a")[offset : offset + 32].split(b"\n", 1)[0]
        fields = head.split(b" ", 3)
        if len(fields) < 3 or fields[0] != b"%08d" % offset:
            raise WordNetFormatError(f"{self.path('data.adj')} has no synset at offset {offset}")
        return fields[2] == b"s"

    def sense_number(self, lemma: str, line_pos: str, offset: int) -> int:
        """NLTK's sense number of a synset: its place among its first lemma's synsets of that part of speech
        (for satellites, as NLTK 3.10, among the satellites).

        >>> from protoqa_core.wordnet.files import find_wordnet
        >>> WordNetReader(find_wordnet()).sense_number("dog", "n", 2084071)
        1
        """
        pos = "a" if line_pos == "s" else line_pos
        offsets = self.offsets(lemma, pos)
        if line_pos == "s":
            offsets = tuple(o for o in offsets if self.is_satellite(o))
        try:
            return offsets.index(offset) + 1
        except ValueError:
            raise WordNetFormatError(
                f"{self.path(f'index.{POS_FILES[pos]}')} does not list synset {offset} under {lemma!r}"
            ) from None

    def version(self) -> str:
        """The version in the header of ``data.adj`` (as NLTK reads it), e.g. ``"3.0"``."""
        if self._version is None:
            head = self._data_map("a")[:4000]
            match = _VERSION.search(head)
            if match is None:
                raise WordNetFormatError(f"{self.path('data.adj')} names no WordNet version in its header")
            self._version = match.group(1).decode()
        return self._version

    def multiword_lemmas(self, pos: str) -> list[str]:
        """The lemmas of ``index.<pos>`` that join words with ``_``, in file order, in one regular-expression pass.

        >>> from protoqa_core.wordnet.files import find_wordnet
        >>> "hot_dog" in WordNetReader(find_wordnet()).multiword_lemmas("n")
        True
        """
        data, at = self._index_map(pos)
        first = _MULTIWORD_LEMMA_AT.match(data, at)
        found = ([first.group()] if first else []) + _MULTIWORD_LEMMA_AFTER.findall(data, at)
        # One decoding for all of them; no lemma holds a newline.
        return b"\n".join(found).decode("utf-8").split("\n") if found else []

    def lemmas(self, pos: str):
        """Every lemma of ``index.<pos>``, in file order."""
        data, at = self._index_map(pos)
        while at < len(data):
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end
            space = data.find(b" ", at, end)
            yield data[at : space if space >= 0 else end].decode("utf-8")
            at = end + 1

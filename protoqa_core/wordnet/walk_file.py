"""The per-installation file of every synset's Wu-Palmer walk: where it lives, and building it
(:func:`prepare_wordnet`, run by ``scripts/setup.sh`` and ``protoqa-eval prepare``)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from .cache import table_path
from .files import REQUIRED_FILES, WordNetUnavailableError, is_wordnet_db
from .lookup import max_lemma_tokens, open_wordnet
from .reader import SynsetKey, WordNetReader
from .synset_tables import SynsetTables
from .walk_table import MAGIC, Walk, WalkTable, write_walk_table

logger = logging.getLogger(__name__)

__all__ = ["prepare_wordnet", "open_walk_file", "walk_file_path"]

# How long a build waits for another process's build of the same file (one takes about
# 12 s of CPU) before it gives up with an error.
_LOCK_WAIT_SECONDS = 600.0


def walk_file_path(reader: WordNetReader) -> Path:
    """Where the walk file of ``reader``'s WordNet lives."""
    return table_path(reader, "wup-walks", MAGIC.decode(), ".bin")


def open_walk_file(path: Path) -> Optional[WalkTable]:
    """The walk file at ``path``, verified, or None when there is none (OSError, ValueError: unreadable or damaged)."""
    if not path.exists():
        return None
    return WalkTable(path)


def prepare_wordnet(wordnet_dir: Optional[str | os.PathLike] = None) -> Path:
    """Find WordNet and build its cache files now (the lemma tables and the walk file); return the walk file's path.

    An intact walk file is kept; a missing or damaged one is built (about 12 s of CPU and 250 MB).
    A ``wordnet_dir`` that holds no WordNet is an error, never replaced by another WordNet.

    >>> prepare_wordnet()  # doctest: +SKIP
    PosixPath('/root/.cache/protoqa_eval/wordnet_tables/wup-walks-10377ce4d5a7a342.bin')
    """
    if wordnet_dir is not None and not is_wordnet_db(Path(wordnet_dir).expanduser()):
        raise WordNetUnavailableError(
            f"{wordnet_dir}: not a WordNet database folder (it needs {', '.join(REQUIRED_FILES)})"
        )
    reader = open_wordnet(wordnet_dir)
    max_lemma_tokens()  # reads the lemma tables, writing their file first if there is none
    path = walk_file_path(reader)
    _build_walk_file(path, reader.folder)
    return path


def _intact(path: Path) -> bool:
    """Whether ``path`` is a readable, verified walk file (a damaged one is named in the log)."""
    try:
        return open_walk_file(path) is not None
    except (OSError, ValueError) as exc:
        logger.warning("the Wu-Palmer walk file is rebuilt: %s", exc)
        return False


def _build_walk_file(path: Path, wordnet_folder: Path) -> None:
    """Write the walk file of the WordNet in ``wordnet_folder`` to ``path``, unless an intact one is there.

    An exclusive ``flock`` on ``<path>.lock`` makes a second builder wait and find the first's file;
    the system releases it when its holder ends, killed or not.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        _lock_exclusively(fd, lock)
        if not _intact(path):  # checked under the lock: another process may have just built it
            _write_walks(path, wordnet_folder)
    finally:
        os.close(fd)  # releases the lock


def _lock_exclusively(fd: int, lock: Path) -> None:
    """Take an exclusive ``flock`` on ``fd``, waiting at most ``_LOCK_WAIT_SECONDS`` for its holder."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock (Windows): builders may overlap; each writes whole files
        return
    deadline = time.monotonic() + _LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise OSError(
                    f"{lock}: another process has been building the Wu-Palmer walk file for "
                    f"{_LOCK_WAIT_SECONDS:.0f} s; try again when it has finished"
                ) from None
            time.sleep(0.1)


def _write_walks(path: Path, wordnet_folder: Path) -> None:
    """Compute the walk of every synset of the WordNet in ``wordnet_folder`` and write the file."""
    reader = WordNetReader(wordnet_folder)
    wup = SynsetTables(reader)  # its tables (about 250 MB) go when it returns

    def rows() -> Iterator[tuple[SynsetKey, str, Walk]]:
        for pos in "nvar":  # satellites ("s") are lines of data.adj, filed under "a"
            for offset, _ in reader.data_lines(pos):
                key = (pos, offset)
                name = wup._register(key)
                yield key, name, wup._walk(name)

    write_walk_table(path, rows())

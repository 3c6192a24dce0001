"""Where data files come from: a local folder, or a checked download. The one data locator.

:func:`locate_source` finds a :class:`SourceFile` in (1) the folder given (``--data-dir``, ``data_dir=``),
(2) ``$PROTOQA_DATA_DIR``, (3) ``../shared/data`` beside a checkout, (4) a download into
:func:`data_cache_dir`, checked against the pinned checksum (a cached copy is checked again). A folder
given by argument or environment is used alone: a file missing there is an error, never a silent
download. The registry of files is :data:`protoqa_dataset.sources.SOURCES` (docs/datasets.md).

>>> EXAMPLE.url()
'https://raw.githubusercontent.com/iesl/protoqa-data/master/data/test/test.questions.jsonl'
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from ..environment import env_setting
from .cache_files import cache_dir, write_atomically

__all__ = [
    "DATA_DIR_ENV",
    "SourceFile",
    "SourceError",
    "SourceNotFoundError",
    "SourceDownloadError",
    "SourceVerificationError",
    "data_dir_from_env",
    "checkout_data_dir",
    "named_data_dir",
    "resolve_data_dir",
    "data_cache_dir",
    "sha256_of",
    "locate_local",
    "fetch",
    "download_file",
    "MAX_DOWNLOAD_BYTES",
    "verify_checksum",
    "verify_row_count",
    "locate_source",
]

PathLike = Union[str, os.PathLike]

DATA_DIR_ENV = "PROTOQA_DATA_DIR"
"""Environment variable naming a local data directory; used when no ``data_dir`` is given."""

MAX_DOWNLOAD_BYTES = 64 * 2**20
"""The most a data download may hold (the largest pinned data file is about 3 MB)."""

_CHECKOUT = Path(__file__).resolve().parents[2]


class SourceError(Exception):
    """A source file could not be found, downloaded or verified."""


class SourceNotFoundError(SourceError, FileNotFoundError):
    """A split's file is not in the local data directory."""


class SourceDownloadError(SourceError, ConnectionError):
    """A split's file could not be downloaded."""


class SourceVerificationError(SourceError, ValueError):
    """A split's file is not the one upstream published (checksum or row count differs)."""


@dataclass(frozen=True)
class SourceFile:
    """One upstream file feeding one split: its name in messages, upstream root and path, the names it may
    have in a local folder (upstream layout first, then flat names), its sha256 (None where none could be
    pinned), whether rows carry answer clusters, and the number of questions checked without a checksum."""

    name: str
    base_url: str
    upstream_path: str
    local_names: tuple[str, ...]
    sha256: Optional[str]
    has_answers: bool = True
    expected_rows: Optional[int] = None

    def url(self, base_url: Optional[str] = None) -> str:
        """The download URL, from upstream or from a mirror with the same layout.

        >>> EXAMPLE.url("https://mirror.example/protoqa-data/")
        'https://mirror.example/protoqa-data/data/test/test.questions.jsonl'
        """
        return f"{(base_url or self.base_url).rstrip('/')}/{self.upstream_path}"


def data_dir_from_env() -> Optional[str]:
    """The data directory named by ``PROTOQA_DATA_DIR``, or None when unset or empty.

    >>> data_dir_from_env()  # with PROTOQA_DATA_DIR=../shared/data  # doctest: +SKIP
    '../shared/data'
    """
    return env_setting(DATA_DIR_ENV)


def sha256_of(path: PathLike) -> str:
    """Hex sha256 of a file.

    >>> sha256_of(__file__) == sha256_of(__file__)
    True
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _label(source: SourceFile, where: str) -> str:
    return f"{source.name} ({where})" if where else source.name


def _how_to_use_local(source: SourceFile) -> str:
    return (
        f"download {source.url()} yourself and pass data_dir=DIR (or set {DATA_DIR_ENV}=DIR, "
        f"or --data-dir DIR on the command line) with the file at DIR/{source.local_names[0]} "
        f"(also accepted: {', '.join(source.local_names[1:])})"
    )


def locate_local(source: SourceFile, data_dir: PathLike, where: str = "") -> Path:
    """Find ``source`` in a local directory under any of its accepted names; two accepted names holding
    different files are an error (the choice is never made silently).

    >>> locate_local(EXAMPLE, "../shared/data")  # doctest: +SKIP
    PosixPath('../shared/data/protoqa/test.questions.jsonl')
    """
    data_dir = Path(data_dir)
    label = _label(source, where)
    if not data_dir.is_dir():
        raise SourceNotFoundError(f"{label}: data directory {data_dir} does not exist")
    found = [data_dir / name for name in source.local_names if (data_dir / name).is_file()]
    if not found:
        tried = ", ".join(source.local_names)
        raise SourceNotFoundError(
            f"{label}: no file in {data_dir} under any accepted name ({tried}). "
            f"Upstream it is {source.url()}; put it at {data_dir / source.local_names[0]}, "
            f"or build without data_dir/{DATA_DIR_ENV} to download it."
        )
    if len(found) > 1 and len({sha256_of(p) for p in found}) > 1:
        raise SourceError(
            f"{label}: {data_dir} holds different files under accepted names "
            f"{', '.join(str(p) for p in found)}; keep only one of them."
        )
    return found[0]


def fetch(
    source: SourceFile, download: Callable[[str], str], base_url: Optional[str] = None, where: str = ""
) -> tuple[Path, str]:
    """Download ``source`` with ``download(url) -> local path``; return (path, url). A failure is a
    :class:`SourceDownloadError` saying how to use a local copy instead.

    >>> fetch(EXAMPLE, lambda url: "/tmp/cached.jsonl")[0]
    PosixPath('/tmp/cached.jsonl')
    """
    url = source.url(base_url)
    try:
        path = download(url)
    except Exception as exc:  # any failure of the transport is reported the same way
        raise SourceDownloadError(
            f"{_label(source, where)}: could not download {url} ({type(exc).__name__}: {exc}). "
            f"To build from a local copy, {_how_to_use_local(source)}."
        ) from exc
    return Path(path), url


def verify_checksum(source: SourceFile, path: PathLike, origin: str, where: str = "") -> None:
    """Check ``path``, from ``origin`` (a URL or path), against the pinned sha256 (if any).

    >>> verify_checksum(SourceFile("train", "https://x", "train.jsonl", ("train.jsonl",), None), __file__, "here")
    """
    if source.sha256 is None:
        return
    actual = sha256_of(path)
    if actual != source.sha256:
        raise SourceVerificationError(
            f"{_label(source, where)}: {origin} has sha256 {actual}, expected {source.sha256} "
            f"(upstream changed or the file is damaged). To use a copy you trust, "
            f"{_how_to_use_local(source)}; to accept a modified file, pass verify_sources=False."
        )


def verify_row_count(
    source: SourceFile, path: PathLike, rows: int, expected: Optional[int] = None, where: str = ""
) -> None:
    """Check the number of questions where no checksum is pinned (the train file).

    >>> verify_row_count(SourceFile("train", "https://x", "train.jsonl", ("train.jsonl",), None, expected_rows=3), "train.jsonl", 3)
    """
    expected = source.expected_rows if expected is None else expected
    if expected is not None and rows != expected:
        raise SourceVerificationError(
            f"{_label(source, where)}: {path} has {rows} questions, expected {expected}. This file has no "
            f"pinned checksum, so its row count is what identifies it; pass verify_sources=False "
            f"to accept it anyway."
        )


def checkout_data_dir() -> Optional[Path]:
    """``../shared/data`` beside this project's checkout, when running from one and the folder exists.

    >>> path = checkout_data_dir()
    >>> path is None or path.name == "data"
    True
    """
    if not (_CHECKOUT / "setup.cfg").is_file():
        return None  # an installed package: there is no checkout beside it
    folder = _CHECKOUT.parent / "shared" / "data"
    return folder if folder.is_dir() else None


def named_data_dir(data_dir: Optional[PathLike] = None) -> Optional[Path]:
    """The data folder someone named: ``data_dir``, else ``$PROTOQA_DATA_DIR``, with ``~`` expanded; None when
    neither names one (a blank name counts as none). A named folder is used alone (the module docstring).

    >>> named_data_dir("~/data") == Path.home() / "data"
    True
    """
    if data_dir is not None and str(data_dir).strip():
        return Path(data_dir).expanduser()
    from_env = data_dir_from_env()
    return Path(from_env).expanduser() if from_env else None


def resolve_data_dir(data_dir: Optional[PathLike] = None) -> Optional[Path]:
    """The local data folder: :func:`named_data_dir`, else :func:`checkout_data_dir` (None: download).

    >>> resolve_data_dir("/some/where")
    PosixPath('/some/where')
    """
    named = named_data_dir(data_dir)
    return named if named is not None else checkout_data_dir()


def data_cache_dir() -> Path:
    """Where downloaded data files are kept: ``data`` in the user's cache folder (:func:`.cache_files.cache_dir`).

    >>> data_cache_dir().name
    'data'
    """
    return cache_dir() / "data"


def download_file(url: str, target: Path, timeout: float = 60) -> None:
    """Download ``url`` (at most :data:`MAX_DOWNLOAD_BYTES`) to ``target`` in one rename, so an interrupted
    download leaves nothing behind and a link planted in the cache is not followed.

    >>> download_file("https://example.invalid/x", Path("/tmp/x"))  # doctest: +SKIP
    """
    # urllib.request pulls in http, email and ssl: 15 ms that only a download needs.
    import urllib.request

    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (fixed https URLs)
        data = response.read(MAX_DOWNLOAD_BYTES + 1)
    if len(data) > MAX_DOWNLOAD_BYTES:
        raise SourceError(f"{url} is larger than {MAX_DOWNLOAD_BYTES // 2**20} MB, far more than any data file")
    write_atomically(target, data)


def locate_source(
    source: SourceFile,
    data_dir: Optional[PathLike] = None,
    *,
    verify: bool = True,
    verify_local: Optional[bool] = None,
    cache_dir: Optional[PathLike] = None,
    download: Optional[Callable[[str, Path], None]] = None,
    where: str = "",
) -> tuple[Path, str]:
    """Find ``source`` (order in the module doc); returns ``(path, origin)``, origin the URL or local path.

    ``verify`` checks the checksum of a download and, unless ``verify_local=False``, of a local file;
    ``cache_dir`` and ``download(url, target)`` replace :func:`data_cache_dir` and :func:`download_file`.

    >>> path, origin = locate_source(EXAMPLE, "../shared/data")  # doctest: +SKIP
    >>> str(path)  # doctest: +SKIP
    '../shared/data/protoqa/test.questions.jsonl'
    """
    verify_local = verify if verify_local is None else verify_local
    named = named_data_dir(data_dir)
    folder = named if named is not None else checkout_data_dir()
    if folder is not None:
        try:
            path = locate_local(source, folder, where)
        except SourceNotFoundError:
            if named is not None:
                raise  # a folder someone named must hold the file; no silent download
        else:
            if verify_local:
                verify_checksum(source, path, str(path), where)
            return path, str(path)
    cached = Path(cache_dir).expanduser() if cache_dir is not None else data_cache_dir()
    cached = cached / source.upstream_path
    if cached.is_file() and verify and source.sha256 is not None and sha256_of(cached) != source.sha256:
        cached.unlink()  # a damaged or outdated copy: download it again
    url = source.url()
    if not cached.is_file():

        def into_cache(url: str) -> str:
            (download or download_file)(url, cached)
            return str(cached)

        fetch(source, into_cache, where=where)
    if verify:
        verify_checksum(source, cached, url, where)
    return cached, url


EXAMPLE = SourceFile(
    "ProtoQA test questions",
    "https://raw.githubusercontent.com/iesl/protoqa-data/master",
    "data/test/test.questions.jsonl",
    ("protoqa/test.questions.jsonl",),
    None,
    has_answers=False,
)
"""A source for the examples above (the registry is :data:`protoqa_dataset.sources.SOURCES`)."""

"""Finding the WordNet 3.0 database files, and the cache folder.

WordNet is looked for in this order, and read where it is found (nothing is copied):

1. the folder given by the ``wordnet_dir`` argument, then ``$PROTOQA_WORDNET_DIR``;
2. NLTK data that is already present (a ``corpora/wordnet`` folder under ``$NLTK_DATA``,
   NLTK's usual data folders, or this package's cache folder from an earlier download;
   a ``corpora/wordnet.zip`` is unpacked into the cache folder once);
3. a system WordNet 3.0 database, such as Debian's ``wordnet-base`` in ``/usr/share/wordnet``;
4. ``nltk.download("wordnet")`` into the cache folder, when NLTK is installed.

If none works, :class:`WordNetUnavailableError` says how to fix it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Optional, Union

from ..environment import env_setting
from ..io.cache_files import CACHE_DIR_ENV, cache_dir

__all__ = [
    "WordNetUnavailableError",
    "WORDNET_DIR_ENV",
    "SYSTEM_WORDNET_DIRS",
    "REQUIRED_FILES",
    "FIX_HINT",
    "is_wordnet_db",
    "nltk_data_dirs",
    "find_wordnet",
]

WORDNET_DIR_ENV = "PROTOQA_WORDNET_DIR"
SYSTEM_WORDNET_DIRS = (
    "/usr/share/wordnet",
    "/usr/share/wordnet/dict",
    "/usr/local/WordNet-3.0/dict",
    "/usr/local/share/wordnet",
    "/opt/homebrew/share/wordnet",
)
REQUIRED_FILES = tuple(f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")) + tuple(
    f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")
)

FIX_HINT = (
    "Fix it with one of:\n"
    "  * Debian/Ubuntu: apt-get install wordnet-base wordnet-sense-index\n"
    "  * with network access: pip install nltk && python -m nltk.downloader wordnet\n"
    f"  * point ${WORDNET_DIR_ENV} at a folder holding the WordNet 3.0 database files "
    "(index.noun, data.noun, ...), or $NLTK_DATA at an nltk_data folder with corpora/wordnet\n"
    f"  * where the home folder is read-only, point ${CACHE_DIR_ENV} at a writable folder"
)


class WordNetUnavailableError(RuntimeError):
    """WordNet 3.0 could not be found, installed from the system, or downloaded."""


def is_wordnet_db(folder: Path) -> bool:
    """Whether ``folder`` holds every WordNet database file the similarities read.

    >>> is_wordnet_db(Path("/nonexistent"))
    False
    """
    return all((folder / name).is_file() for name in REQUIRED_FILES)


def nltk_data_dirs() -> list[Path]:
    """NLTK's data folders as ``nltk.data.path`` lists them by default, and this package's own.

    >>> cache_dir() / "nltk_data" in nltk_data_dirs()
    True
    """
    folders = [Path(p) for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    home = os.path.expanduser("~/")
    if home != "~/":
        folders.append(Path(home) / "nltk_data")
    folders += [Path(sys.prefix, *under, "nltk_data") for under in ((), ("share",), ("lib",))]
    folders += [Path(f"/usr{local}/{under}/nltk_data") for under in ("share", "lib") for local in ("", "/local")]
    folders.append(cache_dir() / "nltk_data")
    return folders


def _check_version(folder: Path) -> None:
    try:
        with open(folder / "data.noun", "rb") as f:
            header = f.read(3000).decode("utf-8", "replace")
    except OSError as exc:
        raise WordNetUnavailableError(f"cannot read {folder / 'data.noun'}: {exc}") from None
    if "WordNet 3.0" not in header:
        raise WordNetUnavailableError(
            f"The WordNet database in {folder} is not WordNet 3.0 (the version NLTK and "
            f"the ProtoQA paper use).\n{FIX_HINT}"
        )


def _unpack_zip(archive: Path) -> Path:
    """The WordNet files of an NLTK ``wordnet.zip``, unpacked once into the cache folder."""
    digest = hashlib.sha256(f"{archive.resolve()}:{archive.stat().st_size}:{archive.stat().st_mtime_ns}".encode())
    target = cache_dir() / "wordnet" / f"nltk-zip-{digest.hexdigest()[:16]}"
    if is_wordnet_db(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
    try:
        with zipfile.ZipFile(archive) as zipped:
            for info in zipped.infolist():
                name = info.filename.rsplit("/", 1)[-1]
                if name in REQUIRED_FILES and not info.is_dir():
                    if info.file_size > 64 << 20:  # WordNet 3.0's largest file is 15 MB
                        raise WordNetUnavailableError(f"{archive}: {info.filename} is implausibly large")
                    with zipped.open(info) as src, open(tmp / name, "wb") as dst:
                        shutil.copyfileobj(src, dst)
        if not is_wordnet_db(tmp):
            raise WordNetUnavailableError(f"{archive} lacks some WordNet database files")
        try:
            os.replace(tmp, target)
        except OSError:  # another process unpacked it first
            if not is_wordnet_db(target):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def find_wordnet(wordnet_dir: Optional[Union[str, os.PathLike]] = None, download: bool = True) -> Path:
    """The folder of a WordNet 3.0 database, found as the module docstring says; else WordNetUnavailableError,
    listing what was tried and how to fix it.

    >>> (find_wordnet() / "index.noun").is_file()
    True
    """
    tried: list[str] = []
    explicit = (("the wordnet_dir argument", wordnet_dir), (f"${WORDNET_DIR_ENV}", env_setting(WORDNET_DIR_ENV)))
    for label, cand in explicit:
        if cand:
            folder = Path(cand).expanduser()
            if is_wordnet_db(folder):
                _check_version(folder)
                return folder
            tried.append(f"{label}: {folder} (missing or incomplete)")
    for data in nltk_data_dirs():
        folder = data / "corpora" / "wordnet"
        if is_wordnet_db(folder):
            _check_version(folder)
            return folder
        archive = data / "corpora" / "wordnet.zip"
        if archive.is_file():
            try:
                folder = _unpack_zip(archive)
                _check_version(folder)
                return folder
            except (OSError, zipfile.BadZipFile, WordNetUnavailableError) as exc:
                tried.append(f"NLTK archive {archive}: {exc}")
    tried.append("NLTK data folders: " + ", ".join(str(d) for d in nltk_data_dirs()))
    for cand in SYSTEM_WORDNET_DIRS:
        folder = Path(cand)
        if is_wordnet_db(folder):
            _check_version(folder)
            return folder
        tried.append(f"system WordNet folder {folder} (missing or incomplete)")
    if download:
        own = cache_dir() / "nltk_data"
        try:
            import nltk  # optional: the downloader is the only use of NLTK at run time
        except ImportError:
            tried.append("nltk.download('wordnet'): nltk is not installed")
        else:
            try:
                own.mkdir(parents=True, exist_ok=True)
                ok = nltk.download("wordnet", download_dir=str(own), quiet=True, raise_on_error=True)
            except Exception as exc:  # noqa: BLE001 - network and file errors come in many types
                ok = False
                tried.append(f"nltk.download('wordnet') into {own} failed: {exc}")
            if ok:
                folder = own / "corpora" / "wordnet"
                if is_wordnet_db(folder):
                    _check_version(folder)
                    return folder
                if (own / "corpora" / "wordnet.zip").is_file():
                    folder = _unpack_zip(own / "corpora" / "wordnet.zip")
                    _check_version(folder)
                    return folder
                tried.append("nltk.download('wordnet') reported success but left no corpus")
            elif not tried[-1].startswith("nltk.download"):
                tried.append("nltk.download('wordnet') could not download the corpus")
    raise WordNetUnavailableError(
        "WordNet 3.0 is needed for WordNet similarity but was not found.\nTried:\n  - "
        + "\n  - ".join(tried)
        + "\n"
        + FIX_HINT
    )

"""NLTK's WordNet reader, for those who want NLTK ``Synset`` objects and for the tests' oracle.

The similarities do not use NLTK (see :mod:`protoqa_core.wordnet_reader`); this module
is the one place that touches NLTK's WordNet reader and its private attributes. NLTK
is found in this order: NLTK data that is already present (``nltk.data.path``,
``$NLTK_DATA``, and this package's cache folder from an earlier run); a system
WordNet 3.0 database (see :mod:`protoqa_core.wordnet_files`), copied into the cache as
an NLTK ``corpora/wordnet`` folder with the ``lexnames`` file that Debian does not
ship; ``nltk.download("wordnet")`` into the cache folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from . import wordnet_files
from .wordnet_files import FIX_HINT, REQUIRED_FILES, WORDNET_DIR_ENV, WordNetUnavailableError, cache_dir, is_wordnet_db

if TYPE_CHECKING:  # pragma: no cover
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

__all__ = ["get_wordnet", "nltk_lemma_offsets", "nltk_morphy", "nltk_exception_map"]

_OPTIONAL_FILES = ("index.sense", "cntlist.rev", "cntlist")

# The 45 lexicographer files of WordNet 3.0 in file-number order, as listed by the
# lexnames(5WN) manual page. NLTK needs them in a "lexnames" file; Debian's packages
# do not install that file, and minimal images often drop manual pages, so the list
# is kept here.
_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact "
    "noun.attribute noun.body noun.cognition noun.communication noun.event "
    "noun.feeling noun.food noun.group noun.location noun.motive noun.object "
    "noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time "
    "verb.body verb.change verb.cognition verb.communication verb.competition "
    "verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_LEX_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}

_lock = threading.Lock()
_wordnet: Optional[WordNetCorpusReader] = None


def _nltk_data_dir() -> Path:
    return cache_dir() / "nltk_data"


def _install_system_wordnet(source: Path, nltk_data: Path) -> Path:
    """Copy a WordNet database into ``nltk_data/corpora/wordnet`` (atomically)."""
    header = (source / "data.noun").read_text(encoding="utf-8", errors="replace")[:3000]
    if "WordNet 3.0" not in header:
        raise WordNetUnavailableError(
            f"The WordNet database in {source} is not WordNet 3.0 (the version NLTK and "
            f"the ProtoQA paper use).\n{FIX_HINT}"
        )
    corpora = nltk_data / "corpora"
    corpora.mkdir(parents=True, exist_ok=True)
    target = corpora / "wordnet"
    tmp = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=corpora))
    try:
        for name in REQUIRED_FILES + _OPTIONAL_FILES:
            if (source / name).is_file():
                # Copied, not linked: NLTK seeks in these files and some set-ups
                # mount /usr/share read-only or remove it later.
                shutil.copyfile(source / name, tmp / name)
        lines = [f"{i:02d}\t{name}\t{_LEX_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(_LEXNAMES)]
        (tmp / "lexnames").write_text("".join(lines), encoding="utf-8")
        if target.exists():
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _load_reader(nltk_data_path: Optional[str] = None) -> WordNetCorpusReader:
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class EnglishWordNetReader(WordNetCorpusReader):
        """NLTK's reader without the Open Multilingual Wordnet sense mapping.

        NLTK builds that mapping (reading index.sense twice, about 4 s) on every
        load, even when it maps WordNet 3.0 onto itself; English synset look-ups
        never use it.
        """

        def map_wn(self, version: str = "wordnet") -> None:
            return None

        def get_version(self) -> str:
            # NLTK re-reads the data file header on every call, and its Wu-Palmer
            # similarity asks twice per synset pair.
            version = self.__dict__.get("_cached_version")
            if version is None:
                version = self._cached_version = super().get_version()
            return version

        def open(self, fileid: str):
            # The index, exception and lexnames files are read once, line by line;
            # a plain file object reads them about 4x faster than NLTK's seekable
            # stream. Data files keep NLTK's stream, which look-ups seek in.
            path = os.path.join(str(getattr(self._root, "path", "")), fileid)
            sequential = fileid in {
                "lexnames",
                "index.noun",
                "index.verb",
                "index.adj",
                "index.adv",
            } or fileid.endswith(".exc")
            if sequential and os.path.isfile(path):
                return open(path, encoding=self._ENCODING)
            return super().open(fileid)

    pointer = nltk.data.find("corpora/wordnet", paths=[nltk_data_path] if nltk_data_path else None)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*multilingual functions.*")
        return EnglishWordNetReader(pointer, None)


def get_wordnet(wordnet_dir: Optional[str | os.PathLike] = None, download: bool = True) -> WordNetCorpusReader:
    """Return the WordNet 3.0 reader, finding or installing WordNet on first use.

    Args:
        wordnet_dir: a folder with a WordNet 3.0 database (``index.noun``,
            ``data.noun``, ...) to use when NLTK has no WordNet yet. Defaults to
            ``$PROTOQA_WORDNET_DIR`` and then the usual system locations.
        download: whether to fall back to ``nltk.download("wordnet")``.

    Raises:
        WordNetUnavailableError: no WordNet could be found, installed or downloaded.

    >>> get_wordnet().synsets("dog")[0].name()
    'dog.n.01'
    """
    global _wordnet
    if _wordnet is not None:
        return _wordnet
    with _lock:
        if _wordnet is not None:
            return _wordnet
        import nltk

        own = str(_nltk_data_dir())
        if own not in nltk.data.path:
            nltk.data.path.append(own)
        tried: list[str] = []
        # 1. NLTK data already present (including our own earlier copy).
        try:
            _wordnet = _load_reader()
            return _wordnet
        except LookupError:
            tried.append("NLTK data folders: " + ", ".join(map(str, nltk.data.path)))
        # 2. A system WordNet 3.0 database.
        candidates = [wordnet_dir, os.environ.get(WORDNET_DIR_ENV)]
        for cand in candidates[:2] + list(wordnet_files.SYSTEM_WORDNET_DIRS):
            if not cand:
                continue
            folder = Path(cand).expanduser()
            if is_wordnet_db(folder):
                _install_system_wordnet(folder, _nltk_data_dir())
                _wordnet = _load_reader(own)
                return _wordnet
            tried.append(f"system WordNet folder {folder} (missing or incomplete)")
        # 3. Download.
        if download:
            try:
                ok = nltk.download("wordnet", download_dir=own, quiet=True, raise_on_error=True)
            except Exception as exc:  # noqa: BLE001 (network errors come in many types; the failure is reported)
                ok = False
                tried.append(f"nltk.download('wordnet') failed: {exc}")
            if ok:
                try:
                    _wordnet = _load_reader(own)
                    return _wordnet
                except LookupError:
                    tried.append("nltk.download('wordnet') reported success but left no corpus")
            elif not tried[-1].startswith("nltk.download"):
                tried.append("nltk.download('wordnet') could not download the corpus")
        raise WordNetUnavailableError(
            "WordNet 3.0 is needed for WordNet similarity but was not found.\nTried:\n  - "
            + "\n  - ".join(tried)
            + "\n"
            + FIX_HINT
        )


# NLTK's private attributes, reached only here; tests/test_wordnet_reader.py fails loudly
# if a new NLTK renames them.


def nltk_lemma_offsets(wn: WordNetCorpusReader) -> dict[str, dict[str, list[int]]]:
    """NLTK's lemma -> part of speech -> synset offsets table."""
    return wn._lemma_pos_offset_map


def nltk_morphy(wn: WordNetCorpusReader, form: str, pos: str) -> list[str]:
    """NLTK's morphological reduction with exception lists, as ``synsets()`` applies it."""
    return wn._morphy(form, pos, True)


def nltk_exception_map(wn: WordNetCorpusReader) -> dict[str, dict[str, list[str]]]:
    """NLTK's part of speech -> inflected form -> base forms table."""
    return wn._exception_map

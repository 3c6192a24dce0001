"""NLTK's WordNet reader, for those who want NLTK ``Synset`` objects and for the tests' oracle.

The similarities do not use NLTK; this module is the one place that touches NLTK's WordNet reader
and its private attributes. A WordNet that NLTK does not find is copied into the cache as an NLTK
``corpora/wordnet`` folder, with the ``lexnames`` file that Debian does not ship.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..io.cache_files import cache_dir
from . import files as wordnet_files
from .files import FIX_HINT, REQUIRED_FILES, WordNetUnavailableError

if TYPE_CHECKING:  # pragma: no cover
    from nltk.corpus.reader.wordnet import Synset, WordNetCorpusReader

__all__ = [
    "get_wordnet",
    "NLTK_PRIVATE_ATTRIBUTES",
    "NLTK_OVERRIDDEN_METHODS",
    "missing_nltk_attributes",
    "nltk_lemma_offsets",
    "nltk_morphy",
    "nltk_exception_map",
    "nltk_hypernym_pointers",
    "nltk_shortest_hypernym_paths",
]

_OPTIONAL_FILES = ("index.sense", "cntlist.rev", "cntlist")

# The 45 lexicographer files of WordNet 3.0 in file-number order (lexnames(5WN)), which NLTK needs
# and Debian does not install.
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
        """NLTK's reader without the Open Multilingual Wordnet sense mapping (about 4 s a load, unused in English)."""

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
            # Files read once, line by line, read 4x faster from a plain file object than from NLTK's
            # seekable stream, which data files keep for look-ups.
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
    """Return NLTK's WordNet 3.0 reader: NLTK data already present, else as :func:`~protoqa_core.wordnet.files.find_wordnet`
    finds it (``wordnet_dir``, ``download``); WordNetUnavailableError when none is found.

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
        # NLTK data already present (including our own earlier copy) comes first.
        try:
            _wordnet = _load_reader()
            return _wordnet
        except LookupError:
            pass
        # Else the similarities' search: the folder given, NLTK data, a system database,
        # then nltk.download() into our own NLTK data folder.
        folder = wordnet_files.find_wordnet(wordnet_dir, download)
        try:
            _wordnet = _load_reader()  # what nltk.download() left in our own folder
        except LookupError:
            _install_system_wordnet(folder, _nltk_data_dir())
            _wordnet = _load_reader(own)
        return _wordnet


#: NLTK's private attributes that this module reads, by the class that has them (a test names any a new NLTK drops).
NLTK_PRIVATE_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "WordNetCorpusReader": ("_lemma_pos_offset_map", "_morphy", "_exception_map", "_root", "_ENCODING"),
    "Synset": ("_hypernyms", "_instance_hypernyms", "_shortest_hypernym_paths"),
}
#: The methods of NLTK's ``WordNetCorpusReader`` that this module's reader overrides: an
#: override of a method NLTK renamed would silently do nothing.
NLTK_OVERRIDDEN_METHODS = ("map_wn", "get_version", "open")


def missing_nltk_attributes(wn: WordNetCorpusReader) -> list[str]:
    """What the installed NLTK lacks of :data:`NLTK_PRIVATE_ATTRIBUTES` and :data:`NLTK_OVERRIDDEN_METHODS`.

    >>> missing_nltk_attributes(get_wordnet())
    []
    """
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    # Overridden methods are looked up on NLTK's class, which this module's subclass would hide.
    owners = {"WordNetCorpusReader": wn, "Synset": wn.synset("dog.n.01")}
    missing = [
        f"{owner}.{name}"
        for owner, names in NLTK_PRIVATE_ATTRIBUTES.items()
        for name in names
        if not hasattr(owners[owner], name)
    ]
    missing += [
        f"WordNetCorpusReader.{name}" for name in NLTK_OVERRIDDEN_METHODS if not hasattr(WordNetCorpusReader, name)
    ]
    return missing


def nltk_lemma_offsets(wn: WordNetCorpusReader) -> dict[str, dict[str, list[int]]]:
    """NLTK's lemma -> part of speech -> synset offsets table.

    >>> nltk_lemma_offsets(get_wordnet())["dog"]["n"][:2]
    [2084071, 10114209]
    """
    return wn._lemma_pos_offset_map


def nltk_morphy(wn: WordNetCorpusReader, form: str, pos: str) -> list[str]:
    """NLTK's morphological reduction with exception lists, as ``synsets()`` applies it.

    >>> nltk_morphy(get_wordnet(), "geese", "n")
    ['goose']
    """
    return wn._morphy(form, pos, True)


def nltk_exception_map(wn: WordNetCorpusReader) -> dict[str, dict[str, list[str]]]:
    """NLTK's part of speech -> inflected form -> base forms table.

    >>> nltk_exception_map(get_wordnet())["n"]["geese"]
    ['goose']
    """
    return wn._exception_map


def nltk_hypernym_pointers(synset: Synset) -> list[Synset]:
    """The synsets that ``synset``'s hypernym and instance-hypernym pointers name, as NLTK reads them.

    >>> [s.name() for s in nltk_hypernym_pointers(get_wordnet().synset("einstein.n.01"))]
    ['physicist.n.01']
    """
    return synset._hypernyms() + synset._instance_hypernyms()


def nltk_shortest_hypernym_paths(synset: Synset, simulate_root: bool) -> dict[Synset, int]:
    """NLTK's distance from ``synset`` to each of its hypernyms (and itself), as Wu-Palmer uses it.

    >>> wn = get_wordnet()
    >>> nltk_shortest_hypernym_paths(wn.synset("dog.n.01"), False)[wn.synset("canine.n.02")]
    1
    """
    return synset._shortest_hypernym_paths(simulate_root)

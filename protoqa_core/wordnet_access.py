"""Finding, installing and querying WordNet 3.0 through NLTK.

WordNet is looked for in this order:

1. NLTK data that is already present (``nltk.data.path``, ``$NLTK_DATA``, and this
   package's own cache folder from an earlier run);
2. a system WordNet 3.0 database, such as Debian's ``wordnet-base`` and
   ``wordnet-sense-index`` packages in ``/usr/share/wordnet`` (or the folder given by
   the ``wordnet_dir`` argument or ``$PROTOQA_WORDNET_DIR``). Its files are copied
   into the cache as an NLTK ``corpora/wordnet`` folder, with the ``lexnames`` file
   that Debian does not ship;
3. ``nltk.download("wordnet")`` into the cache folder.

If none works, :class:`WordNetUnavailableError` says how to fix it.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from .walk_table import MAGIC, WalkTable, write_walk_table

if TYPE_CHECKING:  # pragma: no cover
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

logger = logging.getLogger(__name__)

__all__ = [
    "WordNetUnavailableError",
    "WORDNET_DIR_ENV",
    "CACHE_DIR_ENV",
    "cache_dir",
    "get_wordnet",
    "wordnet_version",
    "synset_keys",
    "synset_from_key",
    "max_lemma_tokens",
    "may_start_collocation",
    "wup_from_keys",
    "best_wup",
    "best_wup_reaches",
]

WORDNET_DIR_ENV = "PROTOQA_WORDNET_DIR"
CACHE_DIR_ENV = "PROTOQA_CACHE_DIR"
SYSTEM_WORDNET_DIRS = (
    "/usr/share/wordnet",
    "/usr/share/wordnet/dict",
    "/usr/local/WordNet-3.0/dict",
    "/usr/local/share/wordnet",
    "/opt/homebrew/share/wordnet",
)
_REQUIRED_FILES = tuple(
    f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))
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

_FIX_HINT = (
    "Fix it with one of:\n"
    "  * Debian/Ubuntu: apt-get install wordnet-base wordnet-sense-index\n"
    "  * with network access: python -m nltk.downloader wordnet\n"
    f"  * point ${WORDNET_DIR_ENV} at a folder holding the WordNet 3.0 database files "
    "(index.noun, data.noun, ...), or $NLTK_DATA at an nltk_data folder with corpora/wordnet"
)


class WordNetUnavailableError(RuntimeError):
    """WordNet 3.0 could not be found, installed from the system, or downloaded."""


_lock = threading.Lock()
_wordnet: Optional["WordNetCorpusReader"] = None
_synset_cache: dict[str, frozenset[tuple[str, int]]] = {}
_max_lemma_tokens: Optional[int] = None
_collocation_prefixes: Optional[frozenset[str]] = None


def cache_dir() -> Path:
    """Folder for this package's cached data (``$PROTOQA_CACHE_DIR`` or ``~/.cache/protoqa_eval``).

    >>> cache_dir().name == "protoqa_eval" or "PROTOQA_CACHE_DIR" in os.environ
    True
    """
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "protoqa_eval"


def _nltk_data_dir() -> Path:
    return cache_dir() / "nltk_data"


def _is_wordnet_db(folder: Path) -> bool:
    return all((folder / name).is_file() for name in _REQUIRED_FILES)


def _install_system_wordnet(source: Path, nltk_data: Path) -> Path:
    """Copy a WordNet database into ``nltk_data/corpora/wordnet`` (atomically)."""
    header = (source / "data.noun").read_text(encoding="utf-8", errors="replace")[:3000]
    if "WordNet 3.0" not in header:
        raise WordNetUnavailableError(
            f"The WordNet database in {source} is not WordNet 3.0 (the version NLTK and "
            f"the ProtoQA paper use).\n{_FIX_HINT}"
        )
    corpora = nltk_data / "corpora"
    corpora.mkdir(parents=True, exist_ok=True)
    target = corpora / "wordnet"
    tmp = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=corpora))
    try:
        for name in _REQUIRED_FILES + _OPTIONAL_FILES:
            if (source / name).is_file():
                # Copied, not linked: NLTK seeks in these files and some set-ups
                # mount /usr/share read-only or remove it later.
                shutil.copyfile(source / name, tmp / name)
        lines = [
            f"{i:02d}\t{name}\t{_LEX_CATEGORY[name.split('.')[0]]}\n"
            for i, name in enumerate(_LEXNAMES)
        ]
        (tmp / "lexnames").write_text("".join(lines), encoding="utf-8")
        if target.exists():
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _load_reader(nltk_data_path: Optional[str] = None) -> "WordNetCorpusReader":
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

        def open(self, fileid: str):  # type: ignore[override]
            # The index, exception and lexnames files are read once, line by line;
            # a plain file object reads them about 4x faster than NLTK's seekable
            # stream. Data files keep NLTK's stream, which look-ups seek in.
            path = os.path.join(str(getattr(self._root, "path", "")), fileid)
            sequential = fileid in {"lexnames", "index.noun", "index.verb", "index.adj", "index.adv"} or fileid.endswith(".exc")
            if sequential and os.path.isfile(path):
                return open(path, encoding=self._ENCODING)
            return super().open(fileid)

    pointer = nltk.data.find("corpora/wordnet", paths=[nltk_data_path] if nltk_data_path else None)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*multilingual functions.*")
        return EnglishWordNetReader(pointer, None)


def get_wordnet(wordnet_dir: Optional[str | os.PathLike] = None, download: bool = True) -> "WordNetCorpusReader":
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
        candidates = [wordnet_dir, os.environ.get(WORDNET_DIR_ENV), *SYSTEM_WORDNET_DIRS]
        for cand in candidates:
            if not cand:
                continue
            folder = Path(cand).expanduser()
            if _is_wordnet_db(folder):
                _install_system_wordnet(folder, _nltk_data_dir())
                _wordnet = _load_reader(own)
                return _wordnet
            tried.append(f"system WordNet folder {folder} (missing or incomplete)")
        # 3. Download.
        if download:
            try:
                ok = nltk.download("wordnet", download_dir=own, quiet=True, raise_on_error=True)
            except Exception as exc:  # network errors come in many types
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
            + _FIX_HINT
        )


def wordnet_version() -> str:
    """The version string of the loaded WordNet database, e.g. ``"3.0"``.

    >>> wordnet_version()
    '3.0'
    """
    return str(get_wordnet().get_version())


SynsetKey = tuple[str, int]


def synset_keys(phrase: str) -> frozenset[SynsetKey]:
    """The synsets WordNet gives for ``phrase``, as ``(data file, offset)`` keys.

    Exactly the synsets of ``wordnet.synsets(phrase.replace(" ", "_"))`` (NLTK's
    morphological reduction applies, so plural nouns find their lemma), identified
    without building NLTK ``Synset`` objects, which is most of the cost of a
    look-up. Two phrases share a synset exactly when their key sets intersect.
    Results are cached for the life of the process.

    >>> keys = synset_keys("dogs")
    >>> keys == {(s.pos().replace("s", "a"), s.offset()) for s in get_wordnet().synsets("dog")}
    True
    """
    found = _synset_cache.get(phrase)
    if found is None:
        wn = get_wordnet()
        lemma = phrase.replace(" ", "_").lower()
        index = wn._lemma_pos_offset_map
        found = frozenset(
            (pos, offset)
            for pos in ("n", "v", "a", "r")
            for form in wn._morphy(lemma, pos, True)
            for offset in index.get(form, {}).get(pos, ())
        )
        _synset_cache[phrase] = found
    return found


def synset_from_key(key: SynsetKey):
    """The NLTK ``Synset`` for a key from :func:`synset_keys`.

    >>> synset_from_key(min(synset_keys("dog"))).pos() in {"n", "v"}
    True
    """
    return get_wordnet().synset_from_pos_and_offset(*key)


def max_lemma_tokens() -> int:
    """The most space-separated words a WordNet look-up can match (longest collocation).

    A group of more tokens than this can never share a synset with anything, which
    bounds the spans the similarity search has to look up.

    >>> max_lemma_tokens() >= 2
    True
    """
    global _max_lemma_tokens
    if _max_lemma_tokens is None:
        wn = get_wordnet()
        longest = max(name.count("_") for name in wn._lemma_pos_offset_map)
        for exc in wn._exception_map.values():
            if exc:
                longest = max(longest, max(form.count("_") for form in exc))
        _max_lemma_tokens = longest + 1
    return _max_lemma_tokens


def may_start_collocation(words: str) -> bool:
    """Whether some multi-word WordNet entry starts with ``words`` followed by more words.

    ``words`` is one or more words joined by spaces or underscores. NLTK's
    morphological reduction only rewrites the end of a look-up, so a group of
    ``k`` tokens can match a collocation only if its first ``k - 1`` tokens begin
    one literally (up to case). This lets the similarity skip look-ups that cannot
    succeed.

    >>> may_start_collocation("chewing"), may_start_collocation("qwertyuiop")
    (True, False)
    """
    global _collocation_prefixes
    if _collocation_prefixes is None:
        wn = get_wordnet()
        prefixes = set()
        forms = list(wn._lemma_pos_offset_map)
        for exc in wn._exception_map.values():
            forms.extend(exc)
        for form in forms:
            parts = form.lower().split("_")
            for k in range(1, len(parts)):
                prefixes.add("_".join(parts[:k]))
        _collocation_prefixes = frozenset(prefixes)
    return words.lower().replace(" ", "_") in _collocation_prefixes


# --- Wu-Palmer similarity from synset keys ---------------------------------------------
#
# NLTK's Synset.wup_similarity recomputes hypernym closures by breadth-first search on
# every call (and re-reads a file header twice per call). The functions below compute
# the same value from per-synset tables, each built once, and cache every pair.

_ROOT = "*ROOT*"  # NLTK's simulated root, which joins the verb (and adjective) trees
_parents_by_name: dict[str, tuple[str, ...]] = {_ROOT: ()}
_min_depth_by_name: dict[str, int] = {_ROOT: 0}
_max_depth_by_name: dict[str, int] = {_ROOT: 0}
_distances_by_name: dict[str, dict[str, int]] = {_ROOT: {_ROOT: 0}}
_distances_with_root_by_name: dict[str, dict[str, int]] = {_ROOT: {_ROOT: 0}}
_name_by_key: dict[SynsetKey, str] = {}
_wup_cache: dict[tuple[SynsetKey, SynsetKey], float] = {}
_path_cache: dict[tuple[str, str, bool], Optional[int]] = {}


_data_maps: dict[str, "mmap.mmap"] = {}
_DATA_FILES = {"n": "data.noun", "v": "data.verb", "a": "data.adj", "s": "data.adj", "r": "data.adv"}


def _data_map(pos: str) -> "mmap.mmap":
    """A read-only memory map of a WordNet data file, opened once per process."""
    found = _data_maps.get(pos)
    if found is None:
        path = get_wordnet().abspath(_DATA_FILES[pos])  # before the lock, which get_wordnet takes
        with _lock:
            found = _data_maps.get(pos)
            if found is None:
                with open(path, "rb") as f:
                    # The map stays valid after the file is closed; reading it needs no
                    # system call and no file position, so threads can share it.
                    found = _data_maps[pos] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return found


def _data_line(pos: str, offset: int) -> str:
    """The line of a WordNet data file at a byte offset, read without NLTK's stream."""
    data = _data_map(pos)
    end = data.find(b"\n", offset)
    line = data[offset : end if end >= 0 else len(data)].decode("utf-8")
    if not line.startswith(f"{offset:08d} "):
        raise WordNetUnavailableError(f"WordNet {_DATA_FILES[pos]} has no synset at offset {offset}")
    return line


# A hypernym or instance-hypernym pointer between whole synsets ("0000"), as it stands
# in a data line's pointer list: symbol, target offset, target part of speech, source/
# target. Only a pointer symbol can be "@" or "@i" (offsets are digits, parts of speech
# letters, source/target hex digits, verb frames "+ NN NN"), so a match is a pointer field.
_HYPERNYM_POINTER = re.compile(r" @i? (\d{8}) ([nvasr]) 0000(?= |$)")


def _synset_record(pos: str, offset: int) -> tuple[str, tuple[tuple[str, int], ...]]:
    """NLTK's name of a synset and its hypernym and instance-hypernym pointers.

    Parsed from the data line as NLTK's reader parses it, without building the
    ``Synset`` (its glosses, lemmas and sense keys are most of the cost).
    """
    head = _data_line(pos, offset).split("|", 1)[0].split(" ", 4)
    line_pos = head[2]
    n_lemmas = int(head[3], 16)
    # the lemmas and their lexical ids, then the pointer count and the pointers
    rest = head[4].split(" ", 2 * n_lemmas)
    first_lemma = rest[0]
    if first_lemma.endswith(")") and "(" in first_lemma:  # a syntactic marker, as "(a)"
        first_lemma = first_lemma[: first_lemma.rindex("(")]
    first_lemma = first_lemma.lower()
    sense = get_wordnet()._lemma_pos_offset_map[first_lemma][line_pos].index(offset) + 1
    name = "%s.%s.%02i" % (first_lemma, line_pos, sense)
    # NLTK's hypernyms() follow only the pointers between whole synsets.
    parents = tuple((target_pos, int(target)) for target, target_pos in _HYPERNYM_POINTER.findall(" " + rest[-1]))
    return name, parents


_records: dict[SynsetKey, tuple[str, tuple[SynsetKey, ...]]] = {}
# NLTK's preference among common hypernyms: greatest minimum depth first, then by name
_order_key: dict[str, tuple[int, str]] = {_ROOT: (0, _ROOT)}


def _record(key: SynsetKey) -> tuple[str, tuple[SynsetKey, ...]]:
    found = _records.get(key)
    if found is None:
        name, parents = _synset_record(*key)
        # Satellite adjectives are filed under "a", as synset_keys() gives them.
        found = _records[key] = (name, tuple(("a" if p == "s" else p, o) for p, o in parents))
    return found


def _register(key: SynsetKey) -> str:
    """Record the hypernym links, depths and hypernym distances of a synset and all its
    ancestors; return its name.

    A synset's tables follow from its parents' (which come first): NLTK's
    ``min_depth``/``max_depth`` are one more than the least/greatest of the parents',
    and its ``_shortest_hypernym_paths`` distance to an ancestor is one more than the
    least of the parents' distances to it (the breadth-first search NLTK runs).
    """
    name = _name_by_key.get(key)
    if name is not None:
        return name
    name, parent_keys = _record(key)
    if name not in _parents_by_name:
        # Recursion depth is the synset's depth in the hypernym graph (under 20).
        parents = tuple(_register(p) for p in parent_keys)
        if not parents:
            _min_depth_by_name[name] = _max_depth_by_name[name] = 0
            distances = {name: 0}
        else:
            _min_depth_by_name[name] = 1 + min(_min_depth_by_name[p] for p in parents)
            _max_depth_by_name[name] = 1 + max(_max_depth_by_name[p] for p in parents)
            distances = {c: d + 1 for c, d in _distances_by_name[parents[0]].items()}
            for p in parents[1:]:
                for c, d in _distances_by_name[p].items():
                    if d + 1 < distances.get(c, d + 2):
                        distances[c] = d + 1
            distances[name] = 0
        _distances_by_name[name] = distances
        _order_key[name] = (-_min_depth_by_name[name], name)
        _parents_by_name[name] = parents
    _name_by_key[key] = name
    return name


def _clear_wup_tables() -> None:
    """Forget every Wu-Palmer table built so far (benchmarks use it to start cold)."""
    _records.clear()
    _name_by_key.clear()
    _key_walks.clear()
    if isinstance(_walk_file_state, WalkTable):
        _walk_file_state.forget_names()
    _order_cache.clear()
    _walk_cache.clear()
    _senses_cache.clear()
    _wup_cache.clear()
    _path_cache.clear()
    for table in (_parents_by_name, _min_depth_by_name, _max_depth_by_name, _distances_by_name,
                  _distances_with_root_by_name, _order_key):
        root = table[_ROOT]
        table.clear()
        table[_ROOT] = root


def _depths(name: str) -> tuple[int, int]:
    """NLTK's ``min_depth()`` and ``max_depth()`` of a registered synset."""
    return _min_depth_by_name[name], _max_depth_by_name[name]


def _distances(name: str, simulate_root: bool) -> dict[str, int]:
    """NLTK's ``_shortest_hypernym_paths``: each ancestor (and the synset) with its distance."""
    found = _distances_by_name[name]
    if not simulate_root:
        return found
    with_root = _distances_with_root_by_name.get(name)
    if with_root is None:
        with_root = _distances_with_root_by_name[name] = {**found, _ROOT: max(found.values()) + 1}
    return with_root


def _path_distance(name: str, subsumer: str, simulate_root: bool) -> Optional[int]:
    """NLTK's ``shortest_path_distance`` from a synset to one of its common hypernyms."""
    if name == subsumer:
        return 0
    key = (name, subsumer, simulate_root)
    if key in _path_cache:
        return _path_cache[key]
    mine = _distances(name, simulate_root)
    theirs = _distances(subsumer, simulate_root) if subsumer != _ROOT else {_ROOT: 0}
    best = None
    for n, d2 in theirs.items():
        d1 = mine.get(n)
        if d1 is not None and (best is None or d1 + d2 < best):
            best = d1 + d2
    _path_cache[key] = best
    return best


def _synset_name(key: SynsetKey) -> str:
    name = _name_by_key.get(key)
    return _register(key) if name is None else name


def _subsumer_order(name: str) -> tuple[str, ...]:
    """The synset and its hypernyms, deepest minimum depth first, then by name."""
    order = _order_cache.get(name)
    if order is None:
        dist = _distances(name, False)
        for c in dist:
            _depths(c)
        order = _order_cache[name] = tuple(sorted(dist, key=lambda c: (-_min_depth_by_name[c], c)))
    return order


_order_cache: dict[str, tuple[str, ...]] = {}


def _wup_names(n1: str, n2: str, simulate_root: bool) -> float:
    d2 = _distances(n2, False)
    subsumer = None
    for c in _subsumer_order(n1):  # NLTK's lowest_common_hypernyms(use_min_depth=True)[0]
        if c in d2:
            subsumer = c
            break
    if subsumer is None:
        if not simulate_root:
            return 0.0
        subsumer = _ROOT
    elif simulate_root and _min_depth_by_name[subsumer] == 0 and _ROOT < subsumer:
        subsumer = _ROOT  # the simulated root ties at depth 0 and sorts first by name
    # NLTK prefers the first synset itself among the lowest common hypernyms.
    if subsumer != n1 and n1 in d2 and _min_depth_by_name[n1] == _min_depth_by_name.get(subsumer, 0):
        subsumer = n1
    depth = _max_depth_by_name[subsumer] + 1
    len1 = _path_distance(n1, subsumer, simulate_root)
    len2 = _path_distance(n2, subsumer, simulate_root)
    if len1 is None or len2 is None:
        return 0.0
    return (2.0 * depth) / (len1 + depth + len2 + depth)


def wup_from_keys(first: SynsetKey, second: SynsetKey) -> float:
    """NLTK's ``first.wup_similarity(second)`` (0.0 where NLTK gives None), from cached tables.

    Follows NLTK 3 exactly, including its choice of subsumer (the common hypernym of
    greatest *minimum* depth, ties by name, the first synset itself first), which is
    why a synset with several hypernym paths scores below 1 with itself.

    >>> person = min(k for k in synset_keys("person") if synset_from_key(k).name() == "person.n.01")
    >>> round(wup_from_keys(person, person), 4)
    0.8571
    """
    cached = _wup_cache.get((first, second))
    if cached is None:
        # NLTK's Synset._needs_root for WordNet 3.0: only the nouns share one root.
        cached = _wup_names(_synset_name(first), _synset_name(second), first[0] != "n" or second[0] != "n")
        if len(_wup_cache) >= 1_000_000:  # keep memory bounded; the tables make a miss cheap
            _wup_cache.clear()
        _wup_cache[(first, second)] = cached
    return cached


_walk_cache: dict[str, tuple[tuple[tuple[str, int, int, bool], ...], int]] = {}


def _walk(name: str) -> tuple[tuple[tuple[str, int, int, bool], ...], int]:
    """The candidate subsumers of a synset in the order NLTK prefers them, and its root path.

    Each hypernym (or the synset itself) comes as ``(name, depth, path length, to
    root)``: ``depth`` is NLTK's Wu-Palmer depth (``max_depth() + 1``), ``path
    length`` its ``shortest_path_distance`` from the synset (the same with or without
    the simulated root, since a path through the root is longer), and ``to root``
    whether NLTK takes the simulated root instead when it simulates one (minimum
    depth 0 and named after ``*ROOT*``). The order is NLTK's
    ``lowest_common_hypernyms(use_min_depth=True)`` followed by its preference for
    the synset itself: greatest minimum depth first, the synset before its equals,
    then by name. So for any other synset, the first entry it also has is the
    subsumer of the pair. The root path is the path length to the simulated root.
    """
    found = _walk_cache.get(name)
    if found is None:
        dist = _distances_by_name[name]
        max_depth = _max_depth_by_name
        min_depth = _min_depth_by_name
        # NLTK's shortest_path_distance to a hypernym c goes up from the synset to
        # some common hypernym and down to c, so it is the direct distance or one
        # more than the distance to a parent of c; parents have lower max depth.
        paths: dict[str, int] = {}
        for c in sorted(dist, key=max_depth.__getitem__):
            length = dist[c]
            for parent in _parents_by_name[c]:
                if paths[parent] + 1 < length:
                    length = paths[parent] + 1
            paths[c] = length
        order = sorted(dist, key=_order_key.__getitem__)
        # The synset itself goes first among its equals in minimum depth.
        at = order.index(name)
        first = at
        while first and min_depth[order[first - 1]] == min_depth[name]:
            first -= 1
        if first != at:
            del order[at]
            order.insert(first, name)
        found = _walk_cache[name] = (
            tuple(
                (c, max_depth[c] + 1, paths[c], c != name and min_depth[c] == 0 and _ROOT < c)
                for c in order
            ),
            max(dist.values()) + 1,
        )
    return found


_key_walks: dict[SynsetKey, tuple[tuple[tuple[str, int, int, bool], ...], int, frozenset[str]]] = {}


def _key_walk(key: SynsetKey) -> tuple[tuple[tuple[str, int, int, bool], ...], int, frozenset[str]]:
    """A synset's walk and root path (see :func:`_walk`), and the names on its walk (the
    synset and its hypernyms): read from the walk file when there is one, else computed."""
    found = _key_walks.get(key)
    if found is None:
        table = _walk_file()
        walk = table.walk(key) if table is not None else None
        if walk is None:
            walk = _walk(_synset_name(key))
        steps, root_path = walk
        found = _key_walks[key] = (steps, root_path, frozenset(step[0] for step in steps))
    return found


_table_lock = threading.Lock()
_UNTRIED = object()
_walk_file_state: object = _UNTRIED


def _walk_file_path() -> Path:
    """Where the walk file of the loaded WordNet lives: named after its database files'
    sizes and modification times, and the file format."""
    wn = get_wordnet()
    parts = [MAGIC.decode()]
    for fileid in _REQUIRED_FILES:
        info = os.stat(wn.abspath(fileid))
        parts.append(f"{fileid}:{info.st_size}:{info.st_mtime_ns}")
    digest = hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
    return cache_dir() / "wordnet_tables" / f"wup-walks-{digest}.bin"


def _walk_file() -> Optional[WalkTable]:
    """The walk file (see :mod:`protoqa_core.walk_table`), built on first use; None when it
    cannot be built or read, and walks are then computed in the process."""
    global _walk_file_state
    if _walk_file_state is _UNTRIED:
        with _table_lock:
            if _walk_file_state is _UNTRIED:
                table: Optional[WalkTable] = None
                try:
                    path = _walk_file_path()
                    if not path.is_file():
                        _build_walk_file(path)
                    table = WalkTable(path)
                except Exception as exc:  # noqa: BLE001 - any failure leaves the exact in-process path
                    logger.info("Wu-Palmer walks are computed in this process (no walk file: %s)", exc)
                _walk_file_state = table
    return _walk_file_state  # type: ignore[return-value]


def _build_walk_file(path: Path) -> None:
    """Compute every synset's walk in a child process (its tables would take about 250 MB
    here) and write them to ``path``."""
    root = Path(str(get_wordnet().root))
    # A folder that cannot be written fails here, at once, not after the child's work.
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=path.parent):
        pass
    env = dict(os.environ)
    package_parent = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = package_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    code = ("import sys; from protoqa_core.wordnet_access import _write_all_walks; "
            "_write_all_walks(sys.argv[1], sys.argv[2])")
    done = subprocess.run([sys.executable, "-c", code, str(path), str(root)], env=env, timeout=600,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode != 0:
        last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
        raise OSError(f"computing the walk file failed: {last}")


def _write_all_walks(path: str, wordnet_root: str) -> None:
    """Compute the walk of every synset of the WordNet in ``wordnet_root`` and write the file."""
    global _wordnet
    import nltk

    root = Path(wordnet_root)
    nltk_data = str(root.parent.parent)  # root is <nltk_data>/corpora/wordnet
    if nltk_data not in nltk.data.path:
        nltk.data.path.append(nltk_data)  # NLTK reads corpora only under its data path
    _wordnet = _load_reader(nltk_data)  # the same WordNet as the parent process
    if Path(str(_wordnet.root)).resolve() != root.resolve():
        raise WordNetUnavailableError(f"could not load the WordNet in {root}")

    def rows():
        for pos in "nvar":  # satellites ("s") are lines of data.adj, filed under "a"
            with open(_wordnet.abspath(_DATA_FILES[pos]), "rb") as f:
                for line in f:
                    if not line.startswith(b" "):  # the license header
                        key = (pos, int(line[:8]))
                        name = _register(key)
                        yield key, name, _walk(name)

    write_walk_table(Path(path), rows())


class _Senses:
    """The synsets of one group, with what Wu-Palmer needs to score them all at once."""

    __slots__ = ("walks", "noun_mask", "root_paths", "shortest", "hypernyms", "ancestors", "root_any",
                 "root_non_noun", "_holders")

    def __init__(self, keys: frozenset[SynsetKey]) -> None:
        ordered = sorted(keys)
        found = [_key_walk(k) for k in ordered]
        # each synset's key, candidate subsumers and root path (see _walk), in key order
        self.walks = tuple((key, steps, root_path) for key, (steps, root_path, _) in zip(ordered, found))
        self.root_paths = tuple(root_path for _, _, root_path in self.walks)  # to the simulated root
        # hypernym (or synset) c -> (the group's shortest path m to c, the first synset
        # with that path, c's depth D), for the bound 2D / (m1 + m2 + 2D) on pairs with c
        if len(ordered) == 1:
            shortest = {c: (length, 0, depth) for c, depth, length, _ in self.walks[0][1]}
        else:
            shortest = {}
            for index, (_, walk, _) in enumerate(self.walks):
                for c, depth, length, _ in walk:
                    known = shortest.get(c)
                    if known is None or length < known[0]:
                        shortest[c] = (length, index, depth)
        self.shortest = shortest
        self.hypernyms = frozenset(shortest)
        self.ancestors = tuple(names for _, _, names in found)  # each synset's hypernyms (and itself)
        nouns = [k[0] == "n" for k in ordered]
        self.noun_mask = sum(1 << i for i, noun in enumerate(nouns) if noun)  # bit i: synset i is a noun
        # (root path, synset) of the shortest root path, over all synsets and over non-nouns
        self.root_any = min((length, i) for i, length in enumerate(self.root_paths))
        self.root_non_noun = min(((length, i) for i, length in enumerate(self.root_paths) if not nouns[i]),
                                 default=None)
        self._holders: Optional[dict[str, tuple[int, tuple[tuple[int, int], ...], int]]] = None

    @property
    def holders(self) -> dict[str, tuple[int, tuple[tuple[int, int], ...], int]]:
        """Hypernym (or synset) -> (bit mask of the synsets having it, (synset, path length)
        pairs shortest path first, the shortest of those path lengths); built on first use."""
        if self._holders is None:
            members: dict[str, list[tuple[int, int]]] = {}
            for index, (_, walk, _) in enumerate(self.walks):
                for c, _, length, _ in walk:
                    members.setdefault(c, []).append((index, length))
            self._holders = {
                c: (sum(1 << i for i, _ in pairs), tuple(sorted(pairs, key=lambda pair: (pair[1], pair[0]))),
                    min(length for _, length in pairs))
                for c, pairs in members.items()
            }
        return self._holders


_senses_cache: dict[frozenset[SynsetKey], _Senses] = {}


def _senses(keys: frozenset[SynsetKey]) -> _Senses:
    found = _senses_cache.get(keys)
    if found is None:
        if len(_senses_cache) >= 200_000:  # keep memory bounded; a miss only rebuilds from the tables
            _senses_cache.clear()
        found = _senses_cache[keys] = _Senses(keys)
    return found


def _bound_reached(mine: _Senses, other: _Senses) -> tuple[Optional[float], float]:
    """The best Wu-Palmer of two groups when one pair reaches the bound on all pairs (else
    None), and that bound: no pair scores more.

    A pair whose subsumer is the common hypernym ``c`` scores at most
    ``2D / (m1 + m2 + 2D)``, with ``m1`` and ``m2`` the two groups' shortest paths
    to ``c`` (the same float expression NLTK evaluates, which only falls as the
    paths grow); pairs with the simulated root score at most ``2 / (r1 + r2 + 2)``
    with the shortest root paths. When the pair behind the greatest bound has
    ``c`` as its subsumer, it scores exactly that bound, which is then the best.
    The common hypernyms come from one set intersection (a few, against dozens of
    hypernyms a side); ties go to the greatest ``2D / (m1 + 2D)``, then the first
    name, so the pair checked does not depend on set order.
    """
    mine_shortest = mine.shortest
    other_shortest = other.shortest
    bound = 0.0
    behind = None
    for c in mine.hypernyms & other.hypernyms:
        m1, _, depth = mine_shortest[c]
        value = (2.0 * depth) / (m1 + depth + other_shortest[c][0] + depth)
        if value > bound:
            bound = value
            behind = c
        elif value == bound and behind is not None and _earlier(c, behind, mine_shortest):
            behind = c
    # The pairs NLTK simulates a root for (those with a non-noun) with the shortest root paths.
    # (the least sum of root paths, then the first synsets: min() over the two candidates)
    mine_non_noun, other_non_noun = mine.root_non_noun, other.root_non_noun
    if mine_non_noun is None and other_non_noun is None:
        rooted = None  # nouns only: one root, nothing simulated
    else:
        rooted = None
        if mine_non_noun is not None:
            rooted = (mine_non_noun[0] + other.root_any[0], mine_non_noun[1], other.root_any[1])
        if other_non_noun is not None:
            candidate = (mine.root_any[0] + other_non_noun[0], mine.root_any[1], other_non_noun[1])
            if rooted is None or candidate < rooted:
                rooted = candidate
    if behind is None:  # no common hypernym: every pair scores 0 or with the simulated root
        value = 2.0 / (rooted[0] + 1 + 1) if rooted else 0.0
        return value, value
    if rooted:
        total, index, other_index = rooted
        root_value = 2.0 / (total + 1 + 1)
        if root_value > bound:
            x, walk, _ = mine.walks[index]
            above_y = other.ancestors[other_index]
            for subsumer, _, _, to_root in walk:
                if subsumer in above_y:
                    return (root_value if to_root else None), root_value
            return root_value, root_value
    c = behind
    index = mine_shortest[c][1]
    other_index = other_shortest[c][1]
    x, walk, _ = mine.walks[index]
    above_y = other.ancestors[other_index]
    for subsumer, _, _, to_root in walk:
        if subsumer in above_y:
            if subsumer != c or (to_root and (x[0] != "n" or not other.noun_mask >> other_index & 1)):
                return None, bound
            return bound, bound
    return None, bound


def _earlier(c: str, behind: str, shortest: dict[str, tuple[int, int, int]]) -> bool:
    """Whether hypernym ``c`` comes before ``behind`` among equal bounds: greater
    ``2D / (m + 2D)`` on this side first, then the first name."""
    m1, _, d1 = shortest[c]
    m0, _, d0 = shortest[behind]
    return (-(2.0 * d1) / (m1 + d1 + d1), c) < (-(2.0 * d0) / (m0 + d0 + d0), behind)


def best_wup(first: frozenset[SynsetKey], second: frozenset[SynsetKey]) -> float:
    """``max(wup_from_keys(x, y) for x in first for y in second)``, 0.0 for none.

    Most group pairs are settled by :func:`_bound_reached`, which checks one pair
    against a bound on all of them. Otherwise scores every pair as
    :func:`wup_from_keys` does, but finds the subsumers of one synset ``x`` with
    all synsets ``y`` of the other group in one walk down ``x``'s candidate
    subsumers (see :func:`_walk`): the first that ``y`` also has is the
    subsumer of ``(x, y)``, or the simulated root in its place. The synsets ``y``
    that share a subsumer ``c`` share its depth ``D`` and the path length ``L`` from
    ``x``, so ``2D / (L + 2D + m)``, with ``m`` the shortest path to ``c`` in the
    group, bounds all of them; groups that cannot beat the best so far are not
    scored one by one. No value exceeds 1, so the search stops at 1. Shared synsets
    go first, as they most often reach it.

    >>> best_wup(synset_keys("dog"), synset_keys("dog")) == max(
    ...     wup_from_keys(x, y) for x in synset_keys("dog") for y in synset_keys("dog"))
    True
    """
    if not first or not second:
        return 0.0
    mine = _senses_cache.get(first) or _senses(first)
    other = _senses_cache.get(second) or _senses(second)
    found, _ = _bound_reached(mine, other)
    if found is not None:
        return found
    return _search_pairs(mine, other, first, second, 1.0)


def best_wup_reaches(first: frozenset[SynsetKey], second: frozenset[SynsetKey], level: float) -> bool:
    """Whether ``best_wup(first, second) >= level``.

    Decided by the bound of :func:`_bound_reached` where it suffices (no pair scores
    more than the bound, so a bound below the level settles it), else by the search of
    :func:`best_wup`, stopped at the first pair that reaches the level.

    >>> best_wup_reaches(synset_keys("dog"), synset_keys("cat"), 0.5)
    True
    >>> best_wup_reaches(synset_keys("dog"), synset_keys("run"), 0.5)
    False
    """
    if not first or not second:
        return 0.0 >= level
    mine = _senses_cache.get(first) or _senses(first)
    other = _senses_cache.get(second) or _senses(second)
    found, bound = _bound_reached(mine, other)
    if found is not None:
        return found >= level
    if bound < level:
        return False
    return _search_pairs(mine, other, first, second, level) >= level


def _search_pairs(mine: _Senses, other: _Senses, first: frozenset[SynsetKey], second: frozenset[SynsetKey],
                  enough: float) -> float:
    """The best Wu-Palmer over every pair of the two groups (see :func:`best_wup`), or, once
    a pair reaches ``enough``, that pair's value."""
    holders = other.holders.get
    root_paths = other.root_paths
    everyone = (1 << len(root_paths)) - 1
    noun_mask = other.noun_mask
    best = 0.0
    walks = mine.walks
    if not first.isdisjoint(second):
        walks = sorted(walks, key=lambda entry: entry[0] not in second)
    for x, walk, root_x in walks:
        # Pairs with a non-noun get NLTK's simulated root.
        simulated = everyone & ~noun_mask if x[0] == "n" else everyone
        seen = 0
        for c, depth, len1, to_root in walk:
            held = holders(c)
            if held is None:
                continue
            mask, pairs, shortest = held
            fresh = mask & ~seen
            if not fresh:
                continue
            seen |= fresh
            if to_root and fresh & simulated:
                for index, len2 in pairs:
                    if fresh >> index & 1:
                        if simulated >> index & 1:
                            value = 2.0 / (root_x + 1 + root_paths[index] + 1)
                        else:
                            value = (2.0 * depth) / (len1 + depth + len2 + depth)
                        if value > best:
                            best = value
            elif (2.0 * depth) / (len1 + depth + shortest + depth) > best:
                # The pairs go shortest path first, and the value falls as the path grows.
                for index, len2 in pairs:
                    if fresh >> index & 1:
                        value = (2.0 * depth) / (len1 + depth + len2 + depth)
                        if value > best:
                            best = value
                        break
            if seen == everyone:
                break
        # No common hypernym: the simulated root where NLTK simulates one, else 0.
        rootless = everyone & ~seen & simulated
        index = 0
        while rootless:
            if rootless & 1:
                value = 2.0 / (root_x + 1 + root_paths[index] + 1)
                if value > best:
                    best = value
            rootless >>= 1
            index += 1
        if best >= enough:
            return best
    return best

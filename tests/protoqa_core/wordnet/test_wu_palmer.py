"""The Wu-Palmer tables belong to one WuPalmer object: made once per process, dropped whole."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from protoqa_core.wordnet import walk_file, wu_palmer
from protoqa_core.wordnet.lookup import open_wordnet, synset_keys
from protoqa_core.wordnet.walk_table import WalkTable, write_walk_table
from protoqa_core.wordnet.wu_palmer import WuPalmer, best_wup, best_wup_reaches, wup_from_keys

WORDS = ["dog", "cat", "person", "run", "good", "quickly", "bank", "ice cream"]


def _all_pairs(score) -> dict[tuple[str, str], float]:
    return {(x, y): score(synset_keys(x), synset_keys(y)) for x in WORDS for y in WORDS}


def test_the_process_object_is_made_once_even_when_threads_race(monkeypatch):
    expected = _all_pairs(best_wup)
    monkeypatch.setattr(wu_palmer, "_shared", None)  # dropped: every table goes with it
    seen: list[object] = []
    results: list[dict] = []
    start = threading.Barrier(6)

    def work() -> None:
        start.wait()
        results.append(_all_pairs(best_wup))
        seen.append(wu_palmer._shared)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 6 and all(s is seen[0] for s in seen) and isinstance(seen[0], WuPalmer)
    assert all(r == expected for r in results)


def test_objects_keep_their_own_tables_and_agree():
    shared = _all_pairs(best_wup)
    own = WuPalmer(open_wordnet(), walk_table=None)
    assert own._wup_cache == {} and own._senses_cache == {}
    assert _all_pairs(own.best_wup) == shared
    assert own._senses_cache and own._key_walks  # built its own walks, without the walk file
    keys = sorted(synset_keys("dog"))[:3] + sorted(synset_keys("run"))[:3]
    assert {(a, b): own.wup_from_keys(a, b) for a in keys for b in keys} == {
        (a, b): wup_from_keys(a, b) for a in keys for b in keys
    }
    for level in (0.3, 0.5, 0.9):
        assert _all_pairs(lambda x, y, level=level: own.best_wup_reaches(x, y, level)) == _all_pairs(
            lambda x, y, level=level: best_wup_reaches(x, y, level)
        )


# --- building the walk file: one builder at a time, and no lock outlives its holder ---------

_TINY_WALKS = [
    (("n", 2), "dog.n.01", ((("dog.n.01", 2, 0, False), ("animal.n.01", 1, 1, False)), 2)),
    (("n", 1), "animal.n.01", ((("animal.n.01", 1, 0, False),), 1)),
]


@pytest.fixture
def writes(monkeypatch):
    """The builds of the walk file, each writing a two-synset file instead of WordNet's."""
    done: list[Path] = []

    def write(path: Path, folder: Path) -> None:
        done.append(path)
        write_walk_table(path, _TINY_WALKS)

    monkeypatch.setattr(walk_file, "_write_walks", write)
    return done


def _hold_lock_in_a_child(lock: Path) -> subprocess.Popen:
    code = (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
        "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(600)"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(lock)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "locked\n"
    return child


def test_a_lock_left_by_a_killed_build_blocks_nothing(tmp_path, writes):
    path = tmp_path / "walks.bin"
    child = _hold_lock_in_a_child(path.with_name(path.name + ".lock"))
    child.kill()  # a build killed mid-way: its lock file stays, its lock goes with it
    child.wait()
    start = time.monotonic()
    walk_file._build_walk_file(path, tmp_path)
    assert time.monotonic() - start < 5
    assert writes == [path] and WalkTable(path).walk(("n", 1)) == _TINY_WALKS[1][2]
    walk_file._build_walk_file(path, tmp_path)  # intact: kept, not built again
    assert writes == [path]


def test_a_second_build_waits_for_the_first_and_uses_its_file(tmp_path, writes):
    path = tmp_path / "walks.bin"
    child = _hold_lock_in_a_child(path.with_name(path.name + ".lock"))
    try:
        waiting = threading.Thread(target=walk_file._build_walk_file, args=(path, tmp_path))
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive() and writes == []  # waits while the first holds the lock
        write_walk_table(path, _TINY_WALKS)  # the first build's file
    finally:
        child.kill()
        child.wait()
    waiting.join(30)
    assert not waiting.is_alive() and writes == []  # found the file: nothing built twice


def test_a_build_that_cannot_get_the_lock_says_so(tmp_path, writes, monkeypatch):
    monkeypatch.setattr(walk_file, "_LOCK_WAIT_SECONDS", 0.3)
    path = tmp_path / "walks.bin"
    lock = path.with_name(path.name + ".lock")
    child = _hold_lock_in_a_child(lock)
    try:
        with pytest.raises(OSError, match="another process has been building"):
            walk_file._build_walk_file(path, tmp_path)
    finally:
        child.kill()
        child.wait()
    assert writes == [] and not path.exists()


def test_a_lock_file_planted_as_a_symlink_is_not_followed(tmp_path, writes):
    path = tmp_path / "walks.bin"
    target = tmp_path / "elsewhere"
    path.with_name(path.name + ".lock").symlink_to(target)
    with pytest.raises(OSError):
        walk_file._build_walk_file(path, tmp_path)
    assert writes == [] and not target.exists()


def test_the_object_starts_nothing_without_a_walk_file(monkeypatch, tmp_path, caplog):
    # The process's reader and Wu-Palmer object first, from the usual cache: made under the empty
    # cache, the reader would copy WordNet there and every later test in this process would read
    # that copy, with no walk file.
    reader = open_wordnet()
    expected = best_wup(synset_keys("dog"), synset_keys("cat"))
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(tmp_path / "empty"))
    own = WuPalmer(reader)
    started: list[str] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append("Popen"))
    with caplog.at_level("WARNING", logger=wu_palmer.__name__):
        assert own.walk_table() is None
        assert own.best_wup(synset_keys("dog"), synset_keys("cat")) == expected
    assert started == [] and not list((tmp_path / "empty").glob("**/wup-walks-*"))
    (record,) = [r for r in caplog.records if r.name == wu_palmer.__name__]
    assert "protoqa-eval prepare" in record.getMessage()


@pytest.mark.parametrize("stride", [pytest.param(1, marks=pytest.mark.slow), 29])
def test_walks_by_key_code_are_the_named_walks(stride):
    # A run without the walk file knows synsets by key codes and names only those NLTK's
    # order needs; mapped to names, its walks are those of the named tables (and the file).
    reader = open_wordnet()
    named = WuPalmer(reader, walk_table=None)
    coded = WuPalmer(reader, walk_table=None)
    checked = 0
    for code, pos in enumerate("nvar"):
        for i, (offset, _) in enumerate(reader.data_lines(pos)):
            if i % stride:
                continue
            steps, root_path = coded._coded_walk(code << 32 | offset)
            mapped = tuple((coded._coded_name(c), depth, length, to_root) for c, depth, length, to_root in steps)
            assert (mapped, root_path) == named._walk(named._register((pos, offset))), (pos, offset)
            checked += 1
    assert checked >= 117_659 // stride

"""The walk file: where it lives, opening it verified, and building it once, one builder at a time."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from protoqa_core.wordnet import walk_file
from protoqa_core.wordnet.cache import table_path
from protoqa_core.wordnet.files import REQUIRED_FILES, WordNetUnavailableError
from protoqa_core.wordnet.lookup import open_wordnet
from protoqa_core.wordnet.walk_file import open_walk_file, prepare_wordnet, walk_file_path
from protoqa_core.wordnet.walk_table import MAGIC, WalkTable, write_walk_table

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


def test_the_walk_file_is_named_after_the_installation_and_its_format(tmp_path, monkeypatch):
    reader = open_wordnet()  # the process's reader, from the usual cache, before the cache moves
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(tmp_path))
    path = walk_file_path(reader)
    assert path.parent == tmp_path / "wordnet_tables" and re.fullmatch(r"wup-walks-[0-9a-f]{16}\.bin", path.name)
    assert path == table_path(reader, "wup-walks", MAGIC.decode(), ".bin")
    assert path.name.split("-")[-1] != table_path(reader, "wup-walks", "PQWALK02", ".bin").name.split("-")[-1]


def test_opening_gives_none_without_a_file_and_refuses_a_damaged_one(tmp_path):
    path = tmp_path / "walks.bin"
    assert open_walk_file(path) is None
    write_walk_table(path, _TINY_WALKS)
    table = open_walk_file(path)
    assert table is not None and table.name(("n", 2)) == "dog.n.01"
    path.write_bytes(path.read_bytes()[:-1] + b"\x01")
    with pytest.raises(ValueError, match=r"walks\.bin: damaged"):
        open_walk_file(path)


def test_a_damaged_file_is_rebuilt_and_named_in_the_log(tmp_path, writes, caplog):
    path = tmp_path / "walks.bin"
    path.write_bytes(b"PQWALK03 but cut short")
    with caplog.at_level(logging.WARNING, logger=walk_file.__name__):
        walk_file._build_walk_file(path, tmp_path)
    assert writes == [path] and WalkTable(path).walk(("n", 2)) == _TINY_WALKS[0][2]
    assert any(
        "the Wu-Palmer walk file is rebuilt" in r.getMessage() and str(path) in r.getMessage() for r in caplog.records
    )


def test_preparing_a_folder_that_is_not_wordnet_names_what_it_lacks(tmp_path, writes):
    (tmp_path / "index.noun").write_text("")
    with pytest.raises(WordNetUnavailableError, match=rf"{re.escape(str(tmp_path))}: not a WordNet database folder"):
        prepare_wordnet(tmp_path)
    with pytest.raises(WordNetUnavailableError, match=", ".join(map(re.escape, REQUIRED_FILES))):
        prepare_wordnet(str(tmp_path / "missing"))
    assert writes == []


def test_preparing_again_keeps_the_intact_walk_file(writes):
    # The usual cache: the stand-in build of ``writes`` must never replace a real walk file there.
    expected = walk_file_path(open_wordnet())
    try:
        intact = open_walk_file(expected) is not None
    except (OSError, ValueError):
        intact = False
    if not intact:
        pytest.skip("no intact walk file in the cache (protoqa-eval prepare builds it)")
    path = prepare_wordnet()
    assert path == walk_file_path(open_wordnet()) and writes == []
    assert len(WalkTable(path)) == 117_659

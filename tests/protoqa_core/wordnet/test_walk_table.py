"""The memory-mapped walk table: written atomically, read back exactly, refused whole when damaged."""

from __future__ import annotations

import os
import re

import pytest

from protoqa_core.wordnet.walk_table import MAGIC, WalkTable, write_walk_table

ENTITY = (("n", 1), "entity.n.01", ((("entity.n.01", 1, 0, False),), 1))
ANIMAL = (("n", 5), "animal.n.01", ((("animal.n.01", 2, 0, False), ("entity.n.01", 1, 1, False)), 2))
RUN = (("v", 5), "run.v.01", ((("run.v.01", 1, 0, True),), 3))
CAFE = (
    ("n", 9),
    "café.n.01",
    ((("café.n.01", 3, 0, False), ("animal.n.01", 2, 1, False), ("entity.n.01", 1, 2, True)), 4),
)
ROWS = [RUN, CAFE, ANIMAL, ENTITY]


def test_a_damaged_walk_file_is_refused(tmp_path):
    from protoqa_core.wordnet.walk_table import WalkTable, write_walk_table

    path = tmp_path / "walks.bin"
    write_walk_table(path, [(("n", 1), "entity.n.01", ((("entity.n.01", 1, 0, False),), 1))])
    assert WalkTable(path).walk(("n", 1)) == ((("entity.n.01", 1, 0, False),), 1)
    assert WalkTable(path).walk(("n", 2)) is None
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(ValueError, match="cut short"):
        WalkTable(path)
    path.write_bytes(b"not a table at all, but long enough for a header")
    with pytest.raises(ValueError, match="not a walk table"):
        WalkTable(path)


def test_every_walk_and_name_reads_back_whatever_the_order_written(tmp_path):
    path = tmp_path / "walks.bin"
    write_walk_table(path, iter(ROWS))
    table = WalkTable(path)
    assert len(table) == 4
    for key, name, walk in ROWS:
        assert table.walk(key) == walk and table.name(key) == name
    # The same offset under another part of speech is another synset.
    assert table.walk(("v", 1)) is None and table.name(("a", 5)) is None and table.walk(("n", 10**9)) is None


def test_names_decoded_again_after_being_forgotten(tmp_path):
    path = tmp_path / "walks.bin"
    write_walk_table(path, ROWS)
    table = WalkTable(path)
    first = table.walk(CAFE[0])
    table.forget_names()
    assert table.walk(CAFE[0]) == first and table.name(CAFE[0]) == "café.n.01"


def test_an_empty_table_holds_no_walk(tmp_path):
    path = tmp_path / "walks.bin"
    write_walk_table(path, [])
    table = WalkTable(path)
    assert len(table) == 0 and table.walk(("n", 1)) is None and table.name(("n", 1)) is None


def test_the_file_is_a_readable_cache_file_written_whole(tmp_path):
    path = tmp_path / "sub" / "walks.bin"
    write_walk_table(path, ROWS)
    assert path.read_bytes().startswith(MAGIC) and path.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["walks.bin"]


@pytest.mark.parametrize(
    "rows, message",
    [
        (
            [ENTITY, (("n", 2), "entity.n.01", ((("entity.n.01", 1, 0, False),), 1))],
            "synset names must be unique: entity.n.01 is the name of n 1 and of n 2",
        ),
        (
            [(("n", 1), "deep.n.01", ((("deep.n.01", 1 << 15, 0, False),), 1))],
            "depth or path length out of range at deep.n.01",
        ),
        ([(("n", 1), "neg.n.01", ((("neg.n.01", 1, -1, False),), 1))], "depth or path length out of range at neg.n.01"),
        (
            [ENTITY, ANIMAL, (("n", 9), "cat.n.01", ((("cat.n.01", 3, 0, False), ("feline.n.01", 2, 1, False)), 3))],
            "the walk of cat.n.01 (n 9) names feline.n.01, which has no entry of its own",
        ),
    ],
)
def test_a_table_that_cannot_be_written_leaves_no_file(tmp_path, rows, message):
    path = tmp_path / "walks.bin"
    with pytest.raises(ValueError, match=re.escape(message)):
        write_walk_table(path, rows)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "walks.bin"
    write_walk_table(path, [ENTITY])
    before = path.read_bytes()

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_walk_table(path, ROWS)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["walks.bin"]


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda data: data[:10], "not a walk table (shorter than its header)"),
        (lambda data: b"PQWALK02" + data[8:], "not a walk table of this version"),
        (lambda data: data + b"\0" * 8, "cut short or padded"),
        (lambda data: data[:-1] + bytes([data[-1] ^ 1]), "damaged (its checksum does not match)"),
    ],
)
def test_a_damaged_file_is_refused_whole_with_its_name(tmp_path, damage, message):
    path = tmp_path / "walks.bin"
    write_walk_table(path, ROWS)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(ValueError, match=r"walks\.bin: " + re.escape(message)):
        WalkTable(path)


def test_a_file_altered_with_its_checksum_made_again_is_named_when_a_walk_points_outside_it(tmp_path):
    import hashlib
    import struct

    from protoqa_core.wordnet.walk_table import _HEADER, _aligned

    path = tmp_path / "walks.bin"
    write_walk_table(path, iter(ROWS))
    data = bytearray(path.read_bytes())
    _, n, m, names, _ = _HEADER.unpack_from(data)
    synsets = _HEADER.size + sum(_aligned(size) for size in (8 * n, 8 * (n + 1), 4 * n))
    for at in range(synsets, synsets + 4 * m, 4):
        struct.pack_into("<i", data, at, n + 3)  # every step of every walk names a synset past the last
    data[_HEADER.size - 32 : _HEADER.size] = hashlib.sha256(bytes(data[_HEADER.size :])).digest()
    path.write_bytes(bytes(data))
    table = WalkTable(path)  # the checksum matches
    with pytest.raises(ValueError, match=re.escape(f"{path}: damaged (a walk names synset {n + 3} of {n}")):
        table.walk(("n", 5))

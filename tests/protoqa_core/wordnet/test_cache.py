"""Per-installation cache files: the lemma tables built once, verified when read, rebuilt when damaged."""

from __future__ import annotations

import logging
import re

import pytest

from protoqa_core.io.cache_files import write_atomically
from protoqa_core.wordnet import cache
from protoqa_core.wordnet.cache import LemmaTables, installation_digest, lemma_tables, table_path
from protoqa_core.wordnet.lookup import open_wordnet


@pytest.fixture(scope="module")
def computed() -> LemmaTables:
    return LemmaTables.compute(open_wordnet())


def test_the_tables_read_back_exactly(tmp_path, computed):
    assert computed.max_tokens == 9 and "ice" in computed.prefixes and "ice_cream" not in computed.prefixes
    again = LemmaTables.decode(computed.encode(), tmp_path / "t.txt")
    assert (again.max_tokens, again.prefixes) == (computed.max_tokens, computed.prefixes)
    empty = LemmaTables.decode(LemmaTables(1, frozenset()).encode(), tmp_path / "t.txt")
    assert (empty.max_tokens, empty.prefixes) == (1, frozenset())


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda data: b"PQLEMMAS00" + data[10:], "not a lemma table of this version"),
        (lambda data: data.replace(b" 3 ", b" x ", 1), "not a lemma table of this version"),
        (lambda data: data[: data.index(b"\n")], "damaged or cut short"),
        (lambda data: data[:-1], "damaged or cut short (checksum mismatch)"),
        (lambda data: b"", "not a lemma table of this version"),
    ],
)
def test_a_damaged_table_is_refused_naming_its_file(tmp_path, damage, message):
    data = LemmaTables(3, frozenset({"ice", "new_york"})).encode()
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / 't.txt'}: {message}")):
        LemmaTables.decode(damage(data), tmp_path / "t.txt")


def test_the_file_is_written_once_then_read(tmp_path, monkeypatch, computed):
    reader = open_wordnet()  # the process's reader, from the usual cache, before the cache moves
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(tmp_path))
    path = table_path(reader, "lemma-tables", "PQLEMMAS01", ".txt")
    assert path.parent == tmp_path / "wordnet_tables" and not path.exists()
    first = lemma_tables(reader)
    assert path.read_bytes() == computed.encode() and first.prefixes == computed.prefixes
    monkeypatch.setattr(LemmaTables, "compute", classmethod(lambda cls, reader: pytest.fail("computed again")))
    assert lemma_tables(reader).prefixes == computed.prefixes


def test_a_damaged_file_is_rebuilt_and_named_in_the_log(tmp_path, monkeypatch, caplog, computed):
    reader = open_wordnet()  # the process's reader, from the usual cache, before the cache moves
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(tmp_path))
    path = table_path(reader, "lemma-tables", "PQLEMMAS01", ".txt")
    write_atomically(path, computed.encode()[:-100])
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        assert lemma_tables(reader).prefixes == computed.prefixes
    assert any(
        "rebuilding the WordNet lemma tables" in r.getMessage() and str(path) in r.getMessage() for r in caplog.records
    )
    assert path.read_bytes() == computed.encode()


def test_a_cache_that_cannot_be_written_computes_the_same_tables(tmp_path, monkeypatch, caplog, computed):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    reader = open_wordnet()
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(blocked))
    with caplog.at_level(logging.INFO, logger=cache.__name__):
        tables = lemma_tables(reader)
    assert (tables.max_tokens, tables.prefixes) == (computed.max_tokens, computed.prefixes)
    assert any("computed in each process (cannot write" in r.getMessage() for r in caplog.records)


def test_another_format_or_installation_gets_its_own_name():
    reader = open_wordnet()
    digest = installation_digest(reader, "PQLEMMAS01")
    assert re.fullmatch(r"[0-9a-f]{16}", digest) and digest == installation_digest(reader, "PQLEMMAS01")
    assert digest != installation_digest(reader, "PQLEMMAS02")

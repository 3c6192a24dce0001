"""Archives measured by what their entries really unpack to: lying sizes, several frames, the time budget."""

from __future__ import annotations

import pytest
import zstandard

from protoqa_core.io.files import DataFormatError, InputDeadline
from protoqa_integrations.harnesses.archives import check_archive, exception_reason
from tests.support.archives import DEFLATE, STORED, ZSTD, inspect_bomb, packed, zip_bytes


@pytest.mark.parametrize("method", [ZSTD, DEFLATE], ids=["zstd", "deflate"])
def test_an_entry_is_counted_as_it_unpacks_whatever_it_declares(tmp_path, monkeypatch, method):
    monkeypatch.setenv("PROTOQA_MAX_INPUT_MB", "3")
    under, over = tmp_path / "under.eval", tmp_path / "over.eval"
    under.write_bytes(inspect_bomb(method, 2 << 20))  # declares 1,000 bytes, unpacks to 2 MB: under the cap
    check_archive(under, InputDeadline(under))
    over.write_bytes(inspect_bomb(method, 8 << 20))
    with pytest.raises(DataFormatError, match=r"over.eval: entry 'header.json' unpacks past the input cap") as error:
        check_archive(over, InputDeadline(over))
    assert "more than 3 MB, whatever sizes it declares" in str(error.value)


def test_the_entries_are_counted_together_and_several_zstd_frames_are_read_across(tmp_path, monkeypatch):
    monkeypatch.setenv("PROTOQA_MAX_INPUT_MB", "3")
    frames = zstandard.ZstdCompressor().compress(b"1" * (1 << 20)) * 2  # two frames, 2 MB in all
    two = tmp_path / "two.eval"
    two.write_bytes(zip_bytes([("a.json", ZSTD, frames, 10), ("b.json", STORED, b"{}", 2)]))
    check_archive(two, InputDeadline(two))
    three = tmp_path / "three.eval"
    three.write_bytes(zip_bytes([("a.json", ZSTD, frames, 10), ("b.json", DEFLATE, packed(DEFLATE, 2 << 20), 10)]))
    with pytest.raises(DataFormatError, match="entry 'b.json' unpacks past the input cap"):
        check_archive(three, InputDeadline(three))


def test_a_spent_budget_a_damaged_archive_and_an_unknown_method_are_one_line_each(tmp_path):
    bomb = tmp_path / "bomb.eval"
    bomb.write_bytes(inspect_bomb(ZSTD, 4 << 20))
    with pytest.raises(DataFormatError, match=r"bomb.eval: reading took longer than 0 s"):
        check_archive(bomb, InputDeadline(bomb, seconds=0.0))
    cut = tmp_path / "cut.eval"
    cut.write_bytes(bomb.read_bytes()[:200])
    with pytest.raises(DataFormatError, match=r"cut.eval: not an Inspect log: a damaged zip archive \(.+\)"):
        check_archive(cut, InputDeadline(cut))
    odd = tmp_path / "odd.eval"
    odd.write_bytes(zip_bytes([("a.json", 14, b"LZMA", 4)]))
    with pytest.raises(DataFormatError, match="entry 'a.json' is compressed with method 14"):
        check_archive(odd, InputDeadline(odd))
    assert exception_reason(MemoryError()) == "MemoryError"

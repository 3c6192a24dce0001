"""Reading one data file safely: the size cap, compression, encodings and strict JSON, each error naming the file."""

from __future__ import annotations

import gzip
import io
import os
import time

import pytest

from protoqa_core.io.files import (
    DEFAULT_MAX_INPUT_MB,
    DEFAULT_MAX_INPUT_SECONDS,
    MAX_INPUT_ENV,
    MAX_SECONDS_ENV,
    DataFormatError,
    InputDeadline,
    PrefixedReader,
    binary_stream,
    check_file,
    file_error,
    max_input_bytes,
    max_input_seconds,
    open_binary,
    opened,
    reading,
    short_repr,
)
from protoqa_core.io.json_values import iter_text_lines, read_text


def test_the_error_names_file_line_and_question_in_that_order():
    error = DataFormatError("bad count", "t.jsonl", 4, "q1")
    assert str(error) == "t.jsonl, line 4, question 'q1': bad count"
    assert (error.path, error.line, error.question_id) == ("t.jsonl", 4, "q1")
    assert str(DataFormatError("bad count", question_id="q1")) == "question 'q1': bad count"
    assert str(DataFormatError("bad count")) == "bad count"


def test_the_error_keeps_its_message_without_the_place_for_a_reraise_elsewhere():
    error = DataFormatError("bad count: 1, 2", "t.jsonl", 4, "q1")
    assert error.message == "bad count: 1, 2"
    moved = DataFormatError(error.message, "t.jsonl", None, error.question_id)
    assert str(moved) == "t.jsonl, question 'q1': bad count: 1, 2"


def test_short_repr_bounds_a_hostile_value():
    text = short_repr("x" * 1_000_000)
    assert len(text) < 80 and text.startswith("'xxx")
    assert len(short_repr(list(range(10_000)))) < 80


def test_opened_checks_the_file_under_its_name_first_and_names_a_damaged_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="^targets file not found: "):
        with opened(tmp_path / "none.jsonl", "targets"):
            pass
    path = tmp_path / "p.json.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 20)
    with pytest.raises(DataFormatError, match="damaged gzip data"):
        with opened(path) as fh:
            fh.read()
    with pytest.raises(DataFormatError, match="cannot read the file: permission denied"):
        with reading(path):
            raise PermissionError(13, "Permission denied")


def test_check_file_names_a_missing_file_and_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"targets file not found: .*nope\.jsonl"):
        check_file(tmp_path / "nope.jsonl", "targets")
    with pytest.raises(DataFormatError, match=r"is a directory, not a file"):
        check_file(tmp_path, "targets")
    with pytest.raises(DataFormatError, match="file name too long"):
        check_file(tmp_path / ("x" * 5000), "targets")


@pytest.mark.parametrize(
    "code, reason",
    [(13, "permission denied"), (21, "is a directory, not a file"), (40, "too many symbolic links")],
)
def test_file_error_is_one_message_naming_the_file(code, reason):
    error = file_error(OSError(code, os.strerror(code)), "in.jsonl")
    assert isinstance(error, DataFormatError) and str(error) == f"in.jsonl: cannot read the file: {reason}"
    missing = file_error(FileNotFoundError(2, "No such file"), "in.jsonl")
    assert isinstance(missing, FileNotFoundError) and str(missing) == "file not found: in.jsonl"


def test_the_input_cap_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(MAX_INPUT_ENV, raising=False)
    assert max_input_bytes() == DEFAULT_MAX_INPUT_MB * 2**20
    monkeypatch.setenv(MAX_INPUT_ENV, "0.5")
    assert max_input_bytes() == 2**19
    for bad in ("0", "-3", "nan", "inf", "lots", "1e308", "2000000"):
        monkeypatch.setenv(MAX_INPUT_ENV, bad)
        with pytest.raises(
            DataFormatError, match=f"{MAX_INPUT_ENV} must be a positive number of megabytes, got '{bad}'"
        ):
            max_input_bytes()


def test_the_time_budget_comes_from_the_environment_and_stops_a_slow_read_naming_the_file(tmp_path, monkeypatch):
    monkeypatch.delenv(MAX_SECONDS_ENV, raising=False)
    assert max_input_seconds() == DEFAULT_MAX_INPUT_SECONDS
    for bad in ("0", "nan", "inf", "1e308", "soon"):
        monkeypatch.setenv(MAX_SECONDS_ENV, bad)
        with pytest.raises(DataFormatError, match=f"{MAX_SECONDS_ENV} must be a positive number of seconds"):
            max_input_seconds()
    monkeypatch.setenv(MAX_SECONDS_ENV, "0.05")
    slow = tmp_path / "slow.txt"
    slow.write_bytes(b"a\n" * 100_000)
    lines = iter_text_lines(slow)
    next(lines)
    time.sleep(0.1)
    with pytest.raises(
        DataFormatError, match=r"slow.txt: reading took longer than 0.05 s, the time budget of one input"
    ):
        for _ in lines:
            pass
    deadline = InputDeadline("x.json", seconds=0.0)
    time.sleep(0.01)
    with pytest.raises(DataFormatError, match="x.json: reading took longer than 0 s"):
        deadline.check()


def test_a_file_over_the_cap_is_refused_plain_or_gzip_but_one_at_the_cap_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv(MAX_INPUT_ENV, str(100 / 2**20))  # 100 bytes
    exact = tmp_path / "exact.txt"
    exact.write_bytes(b"a" * 100)
    assert read_text(exact) == "a" * 100
    over = tmp_path / "over.txt"
    over.write_bytes(b"a" * 101)
    with pytest.raises(DataFormatError, match=rf"over\.txt: the input is larger than .* set {MAX_INPUT_ENV}"):
        read_text(over)
    bomb = tmp_path / "bomb.txt.gz"
    bomb.write_bytes(gzip.compress(b"a" * 10_000))
    assert bomb.stat().st_size < 100
    with pytest.raises(DataFormatError, match=r"bomb\.txt\.gz: the input is larger than .*after decompression"):
        read_text(bomb)


@pytest.mark.parametrize(
    "head, name",
    [(b"BZh91AY", "bzip2"), (b"\xfd7zXZ\x00\x00", "xz"), (b"PK\x03\x04rest", "zip"), (b"\x28\xb5\x2f\xfd..", "zstd")],
)
def test_other_compressions_are_named(tmp_path, head, name):
    path = tmp_path / "p.json"
    path.write_bytes(head)
    with pytest.raises(DataFormatError, match=rf"p\.json: the file is {name}-compressed; decompress it first"):
        read_text(path)


def test_damaged_gzip_is_named(tmp_path):
    path = tmp_path / "p.json.gz"
    path.write_bytes(gzip.compress(b'{"q1": ["dog"]}' * 100)[:-20])
    with pytest.raises(DataFormatError, match=r"p\.json\.gz: damaged gzip data"):
        read_text(path)
    with pytest.raises(DataFormatError, match=r"p\.json\.gz: damaged gzip data"):
        list(iter_text_lines(path))


def test_a_pipe_is_read_like_a_file(tmp_path):
    read_end, write_end = os.pipe()
    os.write(write_end, gzip.compress(b'{"q1": ["dog"]}\n'))
    os.close(write_end)
    with binary_stream(os.fdopen(read_end, "rb", buffering=0), "<pipe>") as fh:
        assert fh.read() == b'{"q1": ["dog"]}\n'


def test_prefixed_reader_hands_out_the_probed_bytes_first():
    reader = io.BufferedReader(PrefixedReader(b"abc", io.BytesIO(b"defgh")))
    assert reader.read() == b"abcdefgh"


def test_open_binary_reads_plain_and_gzip_alike(tmp_path):
    plain, packed = tmp_path / "a.txt", tmp_path / "a.txt.gz"
    plain.write_bytes(b"same\n")
    packed.write_bytes(gzip.compress(b"same\n"))
    with open_binary(plain) as a, open_binary(packed) as b:
        assert a.read() == b.read() == b"same\n"

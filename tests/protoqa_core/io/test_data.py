"""The data locator: a named folder, the environment, the checkout's data, else a checked download."""

from __future__ import annotations

import hashlib

import pytest

from protoqa_core.io import data
from protoqa_core.io.cache_files import CACHE_DIR_ENV
from protoqa_core.io.data import (
    DATA_DIR_ENV,
    SourceDownloadError,
    SourceError,
    SourceFile,
    SourceNotFoundError,
    SourceVerificationError,
    data_cache_dir,
    data_dir_from_env,
    download_file,
    fetch,
    locate_local,
    locate_source,
    named_data_dir,
    resolve_data_dir,
    sha256_of,
    verify_checksum,
    verify_row_count,
)

BODY = b'{"metadata": {"id": "q1"}}\n'
PINNED = SourceFile(
    "Tiny dev",
    "https://upstream.example/repo",
    "data/dev/dev.jsonl",
    ("data/dev/dev.jsonl", "flat/dev.jsonl"),
    hashlib.sha256(BODY).hexdigest(),
)
UNPINNED = SourceFile(
    "Tiny train", "https://upstream.example/repo", "data/train.jsonl", ("train.jsonl",), None, expected_rows=2
)


@pytest.fixture(autouse=True)
def no_inherited_folders(monkeypatch, tmp_path):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(data, "checkout_data_dir", lambda: None)


def _put(folder, name, body=BODY):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return path


def _downloads(calls, body=BODY):
    def download(url, target):
        calls.append(url)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)

    return download


def test_urls_from_upstream_or_a_mirror():
    assert PINNED.url() == "https://upstream.example/repo/data/dev/dev.jsonl"
    assert PINNED.url("https://mirror.example/m//") == "https://mirror.example/m/data/dev/dev.jsonl"


def test_every_accepted_name_is_found_and_two_different_files_are_refused(tmp_path):
    flat = _put(tmp_path, "flat/dev.jsonl")
    assert locate_local(PINNED, tmp_path) == flat
    upstream = _put(tmp_path, "data/dev/dev.jsonl")
    assert locate_local(PINNED, tmp_path) == upstream  # the same bytes under both names: the first name
    flat.write_bytes(b"other\n")
    with pytest.raises(SourceError, match=r"Tiny dev \(dev split\): .* holds different files under accepted names"):
        locate_local(PINNED, tmp_path, "dev split")


def test_a_missing_file_names_every_name_tried_and_the_url(tmp_path):
    with pytest.raises(SourceNotFoundError, match=r"Tiny dev: data directory .*nope does not exist"):
        locate_local(PINNED, tmp_path / "nope")
    with pytest.raises(SourceNotFoundError) as missing:
        locate_local(PINNED, tmp_path)
    message = str(missing.value)
    assert "data/dev/dev.jsonl, flat/dev.jsonl" in message and PINNED.url() in message


def test_a_named_folder_is_used_alone_never_a_silent_download(tmp_path):
    calls: list[str] = []
    with pytest.raises(SourceNotFoundError, match="no file in"):
        locate_source(PINNED, tmp_path, download=_downloads(calls))
    assert calls == []


def test_the_environment_names_the_folder_when_no_argument_does(tmp_path, monkeypatch):
    path = _put(tmp_path / "env", "flat/dev.jsonl")
    monkeypatch.setenv(DATA_DIR_ENV, f"  {tmp_path / 'env'}  ")
    assert data_dir_from_env() == str(tmp_path / "env")
    assert locate_source(PINNED) == (path, str(path))
    monkeypatch.setenv(DATA_DIR_ENV, "   ")
    assert data_dir_from_env() is None and resolve_data_dir() is None
    assert resolve_data_dir("~/x") == resolve_data_dir("~/x").expanduser() and resolve_data_dir(" ") is None


def test_a_local_file_is_checked_against_the_pin_unless_told_not_to(tmp_path):
    path = _put(tmp_path, "flat/dev.jsonl", b"modified\n")
    with pytest.raises(
        SourceVerificationError, match=r"Tiny dev: .*dev\.jsonl has sha256 .*, expected .*verify_sources=False"
    ):
        locate_source(PINNED, tmp_path)
    assert locate_source(PINNED, tmp_path, verify_local=False)[0] == path
    assert locate_source(PINNED, tmp_path, verify=False)[0] == path


def test_without_a_folder_the_file_is_downloaded_once_into_the_cache(tmp_path):
    calls: list[str] = []
    path, origin = locate_source(PINNED, download=_downloads(calls))
    assert path == tmp_path / "cache" / "data" / "data/dev/dev.jsonl" and origin == PINNED.url()
    assert locate_source(PINNED, download=_downloads(calls))[0] == path
    assert calls == [PINNED.url()] and data_cache_dir() == tmp_path / "cache" / "data"


def test_a_damaged_cached_copy_is_downloaded_again(tmp_path):
    _put(tmp_path / "cache" / "data", PINNED.upstream_path, b"damaged\n")
    calls: list[str] = []
    path, _ = locate_source(PINNED, download=_downloads(calls))
    assert calls == [PINNED.url()] and path.read_bytes() == BODY


def test_a_download_that_differs_from_the_pin_is_refused(tmp_path):
    with pytest.raises(SourceVerificationError, match=r"https://upstream\.example/repo/data/dev/dev\.jsonl has sha256"):
        locate_source(PINNED, cache_dir=tmp_path / "c", download=_downloads([], b"forged\n"))
    calls: list[str] = []
    locate_source(UNPINNED, cache_dir=tmp_path / "c", download=_downloads(calls, b"any\n"))
    assert calls == [UNPINNED.url()]


def test_a_failed_download_names_the_file_the_url_and_the_local_way(tmp_path):
    def refuse(url, target):
        raise ConnectionRefusedError("no network")

    with pytest.raises(SourceDownloadError) as failed:
        locate_source(PINNED, cache_dir=tmp_path / "c", download=refuse, where="validation")
    message = str(failed.value)
    assert message.startswith(
        f"Tiny dev (validation): could not download {PINNED.url()} (ConnectionRefusedError: no network)"
    )
    assert f"set {DATA_DIR_ENV}=DIR" in message and "DIR/data/dev/dev.jsonl (also accepted: flat/dev.jsonl)" in message
    assert isinstance(failed.value.__cause__, ConnectionRefusedError)
    with pytest.raises(SourceDownloadError, match="could not download https://mirror.example/data/dev/dev.jsonl"):
        fetch(PINNED, lambda url: (_ for _ in ()).throw(OSError("down")), base_url="https://mirror.example")


def test_row_counts_identify_a_file_without_a_pin():
    verify_row_count(UNPINNED, "train.jsonl", 2)
    verify_row_count(UNPINNED, "train.jsonl", 5, expected=5)
    verify_row_count(PINNED, "dev.jsonl", 99)  # nothing expected: nothing checked
    with pytest.raises(
        SourceVerificationError, match=r"Tiny train \(train\): train\.jsonl has 3 questions, expected 2"
    ):
        verify_row_count(UNPINNED, "train.jsonl", 3, where="train")


def test_checksums(tmp_path):
    path = _put(tmp_path, "f.jsonl")
    assert sha256_of(path) == PINNED.sha256
    verify_checksum(PINNED, path, "here")
    verify_checksum(UNPINNED, path, "here")  # no pin: nothing to check


def test_download_file_goes_through_a_partial_file(tmp_path):
    source = _put(tmp_path, "upstream.jsonl")
    target = tmp_path / "cache" / "sub" / "dev.jsonl"
    download_file(source.as_uri(), target)
    assert target.read_bytes() == BODY
    with pytest.raises(OSError):
        download_file((tmp_path / "missing.jsonl").as_uri(), tmp_path / "cache" / "other.jsonl")
    assert sorted(p.name for p in (tmp_path / "cache").rglob("*")) == ["dev.jsonl", "sub"]


def test_a_download_never_writes_through_a_planted_link_and_has_a_size_bound(tmp_path, monkeypatch):
    import protoqa_core.io.data as data

    source = _put(tmp_path, "upstream.jsonl")
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(b"keep")
    cache = tmp_path / "cache"
    cache.mkdir()
    for planted in ("dev.jsonl", "dev.jsonl.download"):
        (cache / planted).symlink_to(elsewhere)
    download_file(source.as_uri(), cache / "dev.jsonl")
    assert (cache / "dev.jsonl").read_bytes() == BODY and not (cache / "dev.jsonl").is_symlink()
    assert elsewhere.read_bytes() == b"keep"
    monkeypatch.setattr(data, "MAX_DOWNLOAD_BYTES", len(BODY) - 1)
    with pytest.raises(data.SourceError, match="larger than 0 MB"):
        download_file(source.as_uri(), cache / "big.jsonl")
    assert not (cache / "big.jsonl").exists()


def test_the_checkout_s_data_is_found_beside_it(shared_data, monkeypatch):
    monkeypatch.undo()
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    assert data.checkout_data_dir().resolve() == shared_data.resolve()
    assert resolve_data_dir() == data.checkout_data_dir()


def test_a_named_folder_comes_from_the_argument_else_the_environment_with_home_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(DATA_DIR_ENV, "~/env")
    assert named_data_dir("~/arg") == tmp_path / "arg"
    assert named_data_dir(" ") == named_data_dir() == tmp_path / "env"
    monkeypatch.setenv(DATA_DIR_ENV, " ")
    assert named_data_dir() is None and named_data_dir("") is None

"""The cache folder: entries checked against their key and contents, warned about once, size-bounded, switchable."""

from __future__ import annotations

import os
import warnings

import pytest

from protoqa_core.io import cache_files
from protoqa_core.io.cache_files import (
    CACHE_DIR_ENV,
    CacheFolder,
    CacheWarning,
    cache_dir,
    caching_enabled,
    write_atomically,
)


def _read_warning(folder: CacheFolder, key: str):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = folder.read(key)
    return value, [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


def test_an_entry_reads_back_and_a_damaged_one_is_named_once_and_rebuilt(user_cache):
    folder = CacheFolder("things")
    folder.write("key one", b"value one")
    assert folder.read("key one") == b"value one" and folder.path("key one").parent == user_cache / "things"
    path = folder.path("key one")
    data = path.read_bytes()
    path.write_bytes(data[:-1] + b"X")  # one byte of the contents changed
    value, messages = _read_warning(folder, "key one")
    assert value is None and messages == [
        f"cache entry {path} is damaged or cut short (checksum mismatch); rebuilding it"
    ]
    value, messages = _read_warning(folder, "key one")
    assert value is None and messages == []  # named once
    folder.write("key one", b"value one")
    assert _read_warning(folder, "key one") == (b"value one", [])


def test_an_entry_of_another_key_or_format_is_not_used(user_cache):
    folder = CacheFolder("things")
    folder.write("key one", b"one")
    folder.write("key two", b"two")
    os.replace(folder.path("key one"), folder.path("key two"))
    value, messages = _read_warning(folder, "key two")
    assert value is None and messages[0].endswith("is written for another key; rebuilding it")
    folder.path("key three").write_bytes(b"three")
    value, messages = _read_warning(folder, "key three")
    assert value is None and messages[0].endswith("is not a cache entry of this version; rebuilding it")


def test_nothing_is_read_or_written_with_caching_off(user_cache, monkeypatch):
    folder = CacheFolder("things")
    folder.write("key", b"kept")
    monkeypatch.setenv("PROTOQA_NO_CACHE", "1")
    assert not caching_enabled() and folder.read("key") is None
    folder.write("other", b"not kept")
    assert not folder.path("other").exists()


def test_the_folder_keeps_the_entries_used_last_under_its_limit(user_cache, monkeypatch):
    folder = CacheFolder("things")
    for i in range(5):
        folder.write(f"key {i}", b"x" * 1000)
        os.utime(folder.path(f"key {i}"), ns=(i * 10**9, i * 10**9))
    os.utime(folder.path("key 0"), ns=(10 * 10**9, 10 * 10**9))  # read last
    assert folder.prune(limit=2500) == 3
    assert sorted(p.name for p in folder.folder.iterdir()) == sorted(folder.path(k).name for k in ("key 0", "key 4"))
    monkeypatch.setenv("PROTOQA_CACHE_MAX_MB", "0.002")
    CacheFolder("things").write("key 5", b"y" * 1000)  # a write keeps the folder under $PROTOQA_CACHE_MAX_MB
    assert sum(p.stat().st_size for p in folder.folder.iterdir()) <= 2000


def test_a_folder_that_cannot_be_written_is_named_once(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(blocker))
    monkeypatch.setenv("PROTOQA_NO_CACHE", "0")
    folder = CacheFolder("things")
    with pytest.warns(CacheWarning, match="cannot be written"):
        folder.write("key", b"value")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        folder.write("key", b"value")
        assert folder.read("key") is None


def test_every_cache_lives_in_one_folder_found_by_one_rule(tmp_path, monkeypatch):
    from protoqa_core.io.data import data_cache_dir
    from protoqa_core.wordnet.files import nltk_data_dirs

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv(CACHE_DIR_ENV, "  ")  # blank: unset
    default = cache_dir()
    assert default.parent == tmp_path / "home" / ".cache" and default.name.startswith("protoqa")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / default.name
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    assert data_cache_dir() == tmp_path / "mine" / "data"
    assert tmp_path / "mine" / "nltk_data" in nltk_data_dirs()
    assert CacheFolder("demo").folder == tmp_path / "mine" / "demo"


def test_write_atomically_makes_folders_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "a" / "b" / "t.bin"
    write_atomically(path, b"one")
    assert path.read_bytes() == b"one" and path.stat().st_mode & 0o777 == 0o644
    monkeypatch.setattr(
        cache_files.os, "replace", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    )
    with pytest.raises(OSError, match="No space left"):
        write_atomically(path, b"two")
    assert path.read_bytes() == b"one" and [p.name for p in path.parent.iterdir()] == ["t.bin"]
    monkeypatch.undo()
    elsewhere = tmp_path / "elsewhere.bin"
    elsewhere.write_bytes(b"keep")
    path.unlink()
    path.symlink_to(elsewhere)  # a planted link is replaced, not written through
    write_atomically(path, b"three")
    assert not path.is_symlink() and path.read_bytes() == b"three" and elsewhere.read_bytes() == b"keep"


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e400", "many"])
def test_a_cache_limit_that_is_not_a_finite_number_is_named_and_the_default_kept(monkeypatch, text):
    monkeypatch.setenv("PROTOQA_CACHE_MAX_MB", text)
    monkeypatch.setattr(cache_files, "_warned", set())
    with pytest.warns(CacheWarning, match=f"PROTOQA_CACHE_MAX_MB={text!r} is not a number of megabytes; keeping 256"):
        assert cache_files.cache_limit_bytes() == 256 * 2**20


def test_a_megabyte_of_the_cache_limit_is_a_megabyte_of_the_input_cap(monkeypatch):
    from protoqa_core.io.files import max_input_bytes

    monkeypatch.setenv("PROTOQA_CACHE_MAX_MB", "3")
    monkeypatch.setenv("PROTOQA_MAX_INPUT_MB", "3")
    assert cache_files.cache_limit_bytes() == max_input_bytes() == 3 * 2**20

"""A size-bounded folder of cache entries in the user's cache, each checked against its key and contents.

An entry is one file in ``<cache folder>/<name>/`` (:func:`cache_dir`), named by
the SHA-256 of its key (a text the caller writes, holding everything that can change the value); it opens
with a format mark and the SHA-256 of its key and of its contents. An entry that does not check is named in
one :class:`CacheWarning` and rebuilt; the rules (limit, ``$PROTOQA_NO_CACHE``) are in docs/probeval.md.

>>> import tempfile, os
>>> saved = {name: os.environ.get(name) for name in ("PROTOQA_CACHE_DIR", NO_CACHE_ENV)}
>>> os.environ.update({"PROTOQA_CACHE_DIR": tempfile.mkdtemp(), NO_CACHE_ENV: "0"})
>>> folder = CacheFolder("demo")
>>> folder.read("answers:dog,cat") is None
True
>>> folder.write("answers:dog,cat", b"[[0, 1]]"); folder.read("answers:dog,cat")
b'[[0, 1]]'
>>> for name, value in saved.items():
...     _ = os.environ.pop(name, None) if value is None else os.environ.update({name: value})
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
import warnings
from pathlib import Path
from typing import Optional

from ..environment import env_flag, env_setting

__all__ = [
    "CACHE_DIR_ENV",
    "cache_dir",
    "write_atomically",
    "CacheFolder",
    "CacheWarning",
    "caching_enabled",
    "cache_limit_bytes",
    "NO_CACHE_ENV",
    "CACHE_MAX_ENV",
    "disable_caching",
    "file_identity",
]

CACHE_DIR_ENV = "PROTOQA_CACHE_DIR"
"""Environment variable naming the user's cache folder, where every cache of this package lives."""


def cache_dir() -> Path:
    """The user's cache folder: ``$PROTOQA_CACHE_DIR``, else ``$XDG_CACHE_HOME/protoqa_eval``, else
    ``~/.cache/protoqa_eval``; a blank variable counts as unset.

    >>> cache_dir().name == "protoqa_eval" or bool(os.environ.get(CACHE_DIR_ENV, "").strip())
    True
    """
    env = env_setting(CACHE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    base = env_setting("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base).expanduser() / "protoqa_eval"


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a unique temporary file and one rename: readers see all of it or none,
    and a link planted at ``path`` is replaced, not followed.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "sub" / "file.bin"
    >>> write_atomically(path, b"one"); path.read_bytes()
    b'one'
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".partial-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # a cache file like any other, not mkstemp's owner-only mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


NO_CACHE_ENV = "PROTOQA_NO_CACHE"
"""Set to ``1`` (or ``true``, ``yes``, ``on``) to read and write no cache entry."""
CACHE_MAX_ENV = "PROTOQA_CACHE_MAX_MB"
"""The most megabytes one cache folder keeps (default 256)."""
_DEFAULT_MAX_MB = 256
_MAGIC = b"PQCACHE01"
_warned: set[str] = set()


class CacheWarning(UserWarning):
    """A cache entry that could not be used (and is rebuilt), or a cache folder that cannot be written."""


def caching_enabled() -> bool:
    """Whether caches are read and written: unless ``$PROTOQA_NO_CACHE`` is on (:func:`~protoqa_core.environment.env_flag`).

    >>> caching_enabled() in (True, False)
    True
    """
    return not env_flag(NO_CACHE_ENV)


def disable_caching() -> None:
    """Turn every cache off in this process and the processes it starts (what ``--no-cache`` does).

    >>> import os
    >>> before = os.environ.pop(NO_CACHE_ENV, None)
    >>> disable_caching(); caching_enabled()
    False
    >>> _ = os.environ.pop(NO_CACHE_ENV) if before is None else os.environ.update({NO_CACHE_ENV: before})
    """
    os.environ[NO_CACHE_ENV] = "1"


def cache_limit_bytes() -> int:
    """The most bytes a cache folder keeps: ``$PROTOQA_CACHE_MAX_MB`` megabytes (default 256).

    >>> cache_limit_bytes() > 0
    True
    """
    text = os.environ.get(CACHE_MAX_ENV, "")
    try:
        megabytes = float(text) if text else _DEFAULT_MAX_MB
        if not math.isfinite(megabytes):  # refused as $PROTOQA_MAX_INPUT_MB refuses them
            raise ValueError(text)
    except ValueError:
        _warn_once(CACHE_MAX_ENV, f"${CACHE_MAX_ENV}={text!r} is not a number of megabytes; keeping {_DEFAULT_MAX_MB}")
        megabytes = _DEFAULT_MAX_MB
    return max(int(megabytes * 2**20), 0)  # a megabyte of 2**20 bytes, as every other setting in MB


def _warn_once(what: str, message: str) -> None:
    if what not in _warned:
        _warned.add(what)
        warnings.warn(message, CacheWarning, stacklevel=3)


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).hexdigest().encode()


class CacheFolder:
    """The entries of one kind, in ``<cache folder>/<name>/``, found when first used (so a later
    ``$PROTOQA_CACHE_DIR`` counts)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._written = 0

    @property
    def folder(self) -> Path:
        """Where the entries are."""
        return cache_dir() / self.name

    def path(self, key: str) -> Path:
        """The file of the entry of ``key``."""
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()[:40]}.entry"

    def read(self, key: str) -> Optional[bytes]:
        """The contents kept for ``key``, or None (not kept, caching off, or an entry that does not check)."""
        if not caching_enabled():
            return None
        path = self.path(key)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):  # not kept (a folder that cannot be is named on writing)
            return None
        except OSError as exc:
            _warn_once(str(path), f"cache entry {path} cannot be read ({exc}); computing it again")
            return None
        head, newline, body = data.partition(b"\n")
        fields = head.split(b" ")
        if not newline or len(fields) != 3 or fields[0] != _MAGIC:
            problem = "not a cache entry of this version"
        elif fields[1] != _digest(key.encode()):
            problem = "written for another key"
        elif fields[2] != _digest(body):
            problem = "damaged or cut short (checksum mismatch)"
        else:
            try:  # read recently: the last to be removed when the folder is full
                os.utime(path)
            except OSError:
                pass
            return body
        _warn_once(str(path), f"cache entry {path} is {problem}; rebuilding it")
        return None

    def write(self, key: str, body: bytes) -> None:
        """Keep ``body`` for ``key`` (replacing an entry atomically), then keep the folder under its limit."""
        if not caching_enabled():
            return
        path = self.path(key)
        data = b" ".join((_MAGIC, _digest(key.encode()), _digest(body))) + b"\n" + body
        try:
            write_atomically(path, data)
        except OSError as exc:
            _warn_once(str(self.folder), f"cache folder {self.folder} cannot be written ({exc}); computing in each run")
            return
        # The folder is measured on the first write of a process and after each tenth of the limit written.
        limit = cache_limit_bytes()
        first = self._written == 0
        self._written += len(data)
        if first or self._written >= limit // 10:
            self._written = 1
            self.prune(limit)

    def prune(self, limit: Optional[int] = None) -> int:
        """Remove the least recently used entries until at most ``limit`` bytes are left; returns how many."""
        limit = cache_limit_bytes() if limit is None else limit
        try:
            entries = []
            for entry in os.scandir(self.folder):
                if entry.name.endswith(".entry") and entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    entries.append((info.st_mtime_ns, entry.name, info.st_size))
        except OSError:
            return 0
        total = sum(size for _, _, size in entries)
        removed = 0
        for _, name, size in sorted(entries):
            if total <= limit:
                break
            try:
                (self.folder / name).unlink()
            except OSError:
                continue
            total -= size
            removed += 1
        return removed


def file_identity(path: Path) -> str:
    """A file's resolved path, size and modification time, for a cache key.

    >>> file_identity(Path("/nowhere/model.safetensors"))
    '/nowhere/model.safetensors:missing'
    """
    try:
        info = path.stat()
    except OSError:
        return f"{path}:missing"
    return f"{path.resolve()}:{info.st_size}:{info.st_mtime_ns}"

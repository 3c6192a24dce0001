"""Faults of the environment, not of the input, each end in one line naming the cause and the remedy, never
"unexpected", and finished work is written rather than lost: each command runs in a new process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.offline import offline_env

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
TARGETS = DATA / "cfc" / "test.targets.jsonl"
HUMAN = DATA / "cfc" / "test.predictions.human.json"
needs_data = pytest.mark.skipif(not TARGETS.is_file(), reason=f"shared CFC data not found under {DATA}")

# The command line with a file-size limit: SQLite's temporary index cannot grow past it.
LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
from protoqa_integrations.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _leaderboard(tmp_path: Path, *systems: str, stdout=subprocess.PIPE, prefix=(), **env: str):
    command = [*prefix] or [sys.executable, "-m", "protoqa_integrations"]
    return subprocess.run(
        [*command, "leaderboard", str(TARGETS), *systems, "--metrics", "protoqa", "--resamples", "20"],
        cwd=tmp_path,
        env=offline_env(**env),
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=300,
    )


@needs_data
def test_a_temporary_folder_without_room_is_named_with_its_free_space(tmp_path):
    ids = [json.loads(line)["metadata"]["id"] for line in TARGETS.read_text(encoding="utf-8").splitlines() if line]
    many = {qid: ["a car"] for qid in ids} | {f"x{i}": ["a"] for i in range(300_000)}
    (tmp_path / "many.json").write_text(json.dumps(many), encoding="utf-8")
    index = tmp_path / "index-tmp"
    index.mkdir()
    ran = _leaderboard(
        tmp_path, "a=many.json", prefix=[sys.executable, "-c", LIMITED], TMPDIR=str(index), SQLITE_TMPDIR=str(index)
    )
    [line] = ran.stderr.decode().strip().splitlines()[-1:]
    assert ran.returncode == 2 and "unexpected" not in line, line
    assert f"temporary index could not be written in {index} (TMPDIR; " in line and "MB free)" in line
    assert "set TMPDIR to a folder with more room, or raise the file-size limit" in line
    assert not list(index.iterdir())  # nothing left behind


@needs_data
def test_a_closed_stdout_is_refused_before_any_work_and_an_ascii_one_gets_utf8(tmp_path):
    closed = _leaderboard(tmp_path, f"a={HUMAN}", stdout=None, prefix=[sys.executable, "-c", _CLOSED])
    assert closed.returncode == 2
    assert closed.stderr.decode().strip() == (
        "protoqa-eval leaderboard: error: standard output is closed; run it with its output open, sent to a file "
        "or to /dev/null"
    )
    named = tmp_path / "é.json"
    named.write_bytes(HUMAN.read_bytes())
    ran = _leaderboard(tmp_path, f"sÿstème={named}", "--json", LANG="C", LC_ALL="C", PYTHONIOENCODING="ascii")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout.decode("utf-8"))["systems"][0]["name"] == "sÿstème"
    warning = "warning: standard output's encoding ascii cannot write every character: writing UTF-8"
    assert ran.stderr.decode("ascii").count(warning) == 1


# Standard output closed before the interpreter starts, as ``>&-`` leaves it.
_CLOSED = """
import os, sys
os.close(1)
os.execv(sys.executable, [sys.executable, "-m", "protoqa_integrations", *sys.argv[1:]])
"""


@needs_data
@pytest.mark.parametrize("setting", ["1e308", "inf", "-1", "lots"])
def test_a_bad_input_cap_is_one_line_naming_the_setting(tmp_path, setting):
    ran = _leaderboard(tmp_path, f"a={HUMAN}", PROTOQA_MAX_INPUT_MB=setting)
    [line] = ran.stderr.decode().strip().splitlines()[-1:]
    assert ran.returncode == 2 and "unexpected" not in line
    assert f"PROTOQA_MAX_INPUT_MB must be a positive number of megabytes, got '{setting}'" in line

"""Progress reports of long runs: the line form in a log, --quiet, and no tqdm at start-up.

Each case runs a new process with stderr sent to a file, as a job log or ``2> log`` does;
``$PROTOQA_PROGRESS_INTERVAL`` shortens the interval between lines so that a short run shows it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from protoqa_core.progress import LOG_INTERVAL, _speed, report_progress, track
from tests.support.offline import offline_env

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
DEV = DATA / "protoqa" / "dev.crowdsourced.jsonl"
DEV_PREDICTIONS = DATA / "protoqa" / "dev.predictions.gpt2finetuned.json"
needs_data = pytest.mark.skipif(not DEV.is_file(), reason=f"shared ProtoQA data not found under {DATA}")

TIME = r"\d\d:\d\d"
SPEED = r"(\d+\.\d\d (questions|systems|candidates)/s|\d+\.\d s/(question|system|candidate)|\? \w+/s)"
LINE = re.compile(
    rf"^(?P<desc>[^:]+(: [^:]+)?): (?P<done>\d+)/(?P<total>\d+) \w+ \(\d+%\), {TIME} elapsed, {TIME} left, {SPEED}(, .*)?$"
)

SLOW_LOOP = """
import time
from protoqa_core.progress import track
for _ in track(range(8), 8, "scoring (demo)"):
    time.sleep(0.1)
"""


def run_logged(args: list[str], tmp_path: Path, interval: str = "0.2", **env: str) -> tuple[int, str]:
    """Run ``args`` with stderr written to a file (not a terminal); its status and the file's text."""
    log = tmp_path / "stderr.log"
    with open(log, "w", encoding="utf-8") as err:
        done = subprocess.run(
            args,
            cwd=tmp_path,
            env=offline_env(PROTOQA_PROGRESS_INTERVAL=interval, **env),
            stdout=subprocess.DEVNULL,
            stderr=err,
            timeout=600,
        )
    return done.returncode, log.read_text(encoding="utf-8")


def progress_lines(log: str) -> list[re.Match]:
    return [m for m in map(LINE.match, log.splitlines()) if m]


def test_a_log_gets_whole_lines_with_done_total_rate_and_time_left(tmp_path):
    status, log = run_logged([sys.executable, "-c", SLOW_LOOP], tmp_path)
    assert status == 0
    lines = log.splitlines()
    assert lines and "\r" not in log and "\x1b" not in log  # lines, not a bar redrawn in place
    assert all(LINE.match(line) for line in lines), lines
    first, last = LINE.match(lines[0]), LINE.match(lines[-1])
    assert first and first["desc"] == "scoring (demo)" and first["total"] == "8"
    assert last and last["done"] == last["total"] == "8"  # the last line says the job ended
    # 0.8 s at one line per 0.2 s at most: a short log, not a line per question, each with news
    assert 2 <= len(lines) <= 6, lines
    done = [int(LINE.match(line)["done"]) for line in lines]
    assert done == sorted(set(done)), lines


def test_a_job_shorter_than_the_interval_leaves_the_log_empty(tmp_path):
    status, log = run_logged([sys.executable, "-c", SLOW_LOOP], tmp_path, interval=str(LOG_INTERVAL))
    assert status == 0 and log == ""


def test_off_and_terminal_only_reports_draw_nothing_in_a_log(capsys):
    for enabled in (False, None):
        with report_progress(3, "scoring", enabled=enabled) as bar:
            bar.update(3)
        assert list(track(range(3), 3, "scoring", enabled=enabled)) == [0, 1, 2]
    assert capsys.readouterr().err == ""


def test_speed_reads_as_words():
    assert _speed(4.0, "question") == "4.00 questions/s"
    assert _speed(0.05, "system") == "20.0 s/system"


@pytest.mark.parametrize(
    "argv",
    [
        ["protoqa_integrations", "--help"],
        ["protoqa_integrations", "generate", "--help"],
        ["protoqa_integrations", "leaderboard", "--help"],
        ["cfc_probeval", "--help"],
    ],
)
def test_help_does_not_import_the_progress_library(argv):
    code = (
        "import runpy, sys\n"
        f"sys.argv = {argv!r}\n"
        "try:\n"
        f"    runpy.run_module({argv[0]!r}, run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('tqdm' in sys.modules, 'rich' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=offline_env(), timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "False False", done.stderr[-2000:]


@needs_data
@pytest.mark.parametrize("quiet", [False, True], ids=["reported", "quiet"])
def test_evaluate_reports_scoring_in_a_log_and_quiet_turns_it_off(tmp_path, quiet):
    args = [sys.executable, "-m", "protoqa_integrations", str(DEV), str(DEV_PREDICTIONS), "--similarity", "wordnet"]
    status, log = run_logged([*args, *(["--quiet"] if quiet else [])], tmp_path, interval="0")
    assert status == 0, log
    if quiet:
        assert log == ""
        return
    lines = progress_lines(log)
    assert lines, log
    assert lines[-1]["desc"] == "scoring (wordnet)" and lines[-1]["done"] == lines[-1]["total"] == "52"


@needs_data
def test_leaderboard_reports_the_systems_scored(tmp_path):
    cfc = DATA / "cfc"
    systems = [
        f"{p.name.split('.')[2]}-{p.name.split('.')[3]}={p}" for p in sorted(cfc.glob("test.samples.*.jsonl"))[:3]
    ]
    args = [sys.executable, "-m", "protoqa_integrations", "leaderboard", str(cfc / "test.targets.jsonl"), *systems]
    status, log = run_logged([*args, "--metrics", "probeval", "--resamples", "50"], tmp_path, interval="0")
    assert status == 0, log
    lines = progress_lines(log)
    assert lines and lines[-1]["desc"] == "leaderboard: ProbEval" and lines[-1]["done"] == "3", log


@needs_data
@pytest.mark.parametrize("quiet", [False, True], ids=["reported", "quiet"])
def test_probeval_reports_in_a_log_and_quiet_turns_it_off(tmp_path, quiet):
    cfc = DATA / "cfc"
    args = [sys.executable, "-m", "cfc_probeval", str(cfc / "dev.targets.jsonl")]
    args += [str(cfc / "dev.predictions.gpt2-xl.oneshot.json"), "--ignore-unknown"]
    status, log = run_logged([*args, *(["--quiet"] if quiet else [])], tmp_path, interval="0")
    assert status == 0, log
    lines = progress_lines(log)
    if quiet:
        assert log == ""
        return
    assert lines and lines[-1]["desc"].startswith("ProbEval (") and lines[-1]["done"] == lines[-1]["total"], log

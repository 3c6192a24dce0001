"""Progress reports of long runs: the line form in a log, terminal-only and switched-off reports.

A loop runs in a new process with stderr sent to a file, as a job log or ``2> log`` does;
``$PROTOQA_PROGRESS_INTERVAL`` shortens the interval between lines so that a short run shows it.
The commands' reports are checked in tests/project/test_progress_reports.py.
"""

from __future__ import annotations

import sys
import warnings

import pytest

from protoqa_core import progress
from protoqa_core.progress import INTERVAL_ENV, LOG_INTERVAL, _speed, report_progress, track
from tests.support.progress_logs import LINE, run_logged

SLOW_LOOP = """
import time
from protoqa_core.progress import track
for _ in track(range(8), 8, "scoring (demo)"):
    time.sleep(0.1)
"""


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


def test_a_bad_interval_is_named_once_and_the_default_kept(monkeypatch):
    monkeypatch.setattr(progress, "_named_bad_values", set())
    for good, expected in ((" 0.5 ", 0.5), ("0", 0.0), (" ", LOG_INTERVAL)):
        monkeypatch.setenv(INTERVAL_ENV, good)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert progress._interval() == expected
    for bad in ("fast", "-1", "nan", "1e9"):
        monkeypatch.setenv(INTERVAL_ENV, bad)
        with pytest.warns(UserWarning, match=f"PROTOQA_PROGRESS_INTERVAL={bad!r} is not a number of seconds"):
            assert progress._interval() == LOG_INTERVAL
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # named once
            assert progress._interval() == LOG_INTERVAL

"""Running a command with its stderr sent to a file, as a job log or ``2> log`` does, and reading
the progress lines it left there."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.offline import offline_env

TIME = r"\d\d:\d\d"
SPEED = r"(\d+\.\d\d (questions|systems|candidates)/s|\d+\.\d s/(question|system|candidate)|\? \w+/s)"
LINE = re.compile(
    rf"^(?P<desc>[^:]+(: [^:]+)?): (?P<done>\d+)/(?P<total>\d+) \w+ \(\d+%\), {TIME} elapsed, {TIME} left, {SPEED}(, .*)?$"
)


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

"""Whole-process measurements shared by the scale benchmarks: one command's wall and CPU
time and peak memory, and a git revision unpacked as the baseline to run beside this checkout."""

from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path
from typing import NamedTuple, Optional

REPO = Path(__file__).resolve().parents[1]


class ProcessRun(NamedTuple):
    """What one run of a command cost; ``stdout`` is None when it was killed at the timeout."""

    stdout: Optional[bytes]
    wall: float
    cpu: float
    rss_mb: float


def run_measured(command: list[str], cwd: Path, env: dict[str, str], timeout: float, what: str) -> ProcessRun:
    """Run ``command`` to the end (or kill it after ``timeout`` seconds) and measure it.

    CPU time and peak RSS come from ``os.wait4``, so they are the process's own, read
    once it has ended. A non-zero exit ends the benchmark with the command's last error
    lines, naming ``what`` ran.

    >>> import sys
    >>> run = run_measured([sys.executable, "-c", "print(6 * 7)"], REPO, dict(os.environ), 60, "python")
    >>> run.stdout, run.cpu > 0, run.rss_mb > 1
    (b'42\\n', True, True)
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=cwd, env=env)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                return ProcessRun(
                    None, time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
                )
            time.sleep(0.05)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{what} failed:\n{err.read().decode(errors='replace')[-2000:]}")
        out.seek(0)
        return ProcessRun(out.read(), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def extract_revision(ref: str, folder: Path) -> Path:
    """The files of git revision ``ref`` of this repository, unpacked in ``folder / "baseline"``."""
    archive = folder / "baseline.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", "-o", str(archive), ref], check=True)
    target = folder / "baseline"
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return target

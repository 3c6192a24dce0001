"""Whole-process measurements shared by the scale benchmarks: one command's wall and CPU
time and peak memory, and a git revision unpacked as the baseline to run beside this checkout."""

from __future__ import annotations

import datetime
import json
import os
import platform
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
    killed: str = ""
    """Why the run was killed: "timeout", "memory" (past ``max_rss_mb``), or "" when it ran to its end."""


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) / 1024 for line in fh if line.startswith("VmRSS:")), 0.0)
    except OSError:
        return 0.0


def run_measured(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    what: str,
    max_rss_mb: Optional[float] = None,
) -> ProcessRun:
    """Run ``command`` to the end (or kill it after ``timeout`` seconds, or once its resident memory
    passes ``max_rss_mb``, so that a baseline that needs more than the machine can spare is stopped
    and reported as such) and measure it.

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
            over = max_rss_mb is not None and _rss_mb(process.pid) > max_rss_mb
            if over or time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                return ProcessRun(
                    None,
                    time.perf_counter() - start,
                    usage.ru_utime + usage.ru_stime,
                    usage.ru_maxrss / 1024,
                    "memory" if over else "timeout",
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


def machine() -> str:
    """The machine in words: its CPU model and count, memory and Python (for a results file)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            names = [line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")]
        model = names[0] if names else model
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} CPUs ({model}), {memory:.0f} GiB, Python {platform.python_version()}"


def portable_command(command: str) -> str:
    """``command`` without ``--json-out FILE`` and ``--data-dir DIR``: the command line to run from the
    repository root with the default data folder and results file.

    >>> portable_command("python b.py --data-dir /x --sizes 1 --json-out /tmp/r.json")
    'python b.py --sizes 1'
    """
    words = command.split()
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--json-out", "--data-dir"):
            skip = True
        elif not word.startswith(("--json-out=", "--data-dir=")):
            kept.append(word)
    return " ".join(kept)


class ResultsFile:
    """A benchmark's figures as JSON: the command that wrote them, the machine, and one record per
    measurement, rewritten whole after each one (so that a run cut short keeps what it measured)."""

    def __init__(self, path: Path, command: str):
        self.path = path
        self.data = {
            "command": portable_command(command),
            "machine": machine(),
            "started": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "finished": None,
            "load_at_start": [round(x, 1) for x in os.getloadavg()],
            "rows": [],
        }

    def add(self, row: dict) -> None:
        """Record one measurement (the load average when it ended is added)."""
        self.data["rows"].append({**row, "load_after": round(os.getloadavg()[0], 1)})
        self.data["finished"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".part")
        partial.write_text(json.dumps(self.data, indent=1) + "\n", encoding="utf-8")
        partial.replace(self.path)

"""The openai engine and lm-eval's chat backend against servers that misbehave: exit status, wall time, peak memory.

Each case runs one client process against :mod:`tests.support.hostile_server` on 127.0.0.1 (or
against a port where nothing listens), once with the code under ``--baseline`` (another
checkout, e.g. the main branch) and once with this checkout, side by side in one run:

* ``endless``: a chunked reply that never ends;
* ``trickle``: a reply sent one byte a second;
* ``huge``: a 300 MB reply;
* ``retry-after``: ``429`` with ``Retry-After: 1000000000``;
* ``refused``: nothing listens on the port;
* ``lm-eval-endless``: ``protoqa-local-chat-completions`` (lm-eval) against the endless reply.

The ``generate`` cases run::

    python -m protoqa_integrations generate tiny -o OUT --engine openai --base-url URL \\
        --data-dir DATA --no-progress --limit 2 --num-samples 8 --concurrency 1 \\
        --request-timeout 10 --max-retries 1      # refused: the default --max-retries (6)

and the lm-eval case::

    python -m protoqa_integrations.harnesses.lm_eval_tasks run --model protoqa-local-chat-completions \\
        --model_args model=tiny,base_url=URL/chat/completions,num_concurrent=2,max_retries=1,timeout=10 \\
        --tasks protoqa_chat --apply_chat_template --limit 1     # with PROTOQA_DATA_DIR=DATA/protoqa

A process still running after ``--kill-after`` seconds, or whose resident memory passes
``--kill-rss-mb``, is killed (its row says so). Peak memory is the process's maximum
resident set size as the kernel reports it (``wait4``); CPU seconds are user plus system time,
less sensitive than wall time to a busy machine.

    python benchmarks/bench_hostile_servers.py --baseline ../main [--data-dir ../shared/data] [--cases ...]

Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.hostile_server import (  # noqa: E402
    HostileServer,
    client_env,
    closed_port_url,
    generate_command,
    lm_eval_chat_command,
)

CASES = ("endless", "trickle", "huge", "retry-after", "refused", "lm-eval-endless")


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_client(args: list[str], env: dict, cwd: Path, kill_after: float, kill_rss_mb: float) -> dict:
    """Run one client; its exit status, wall seconds, peak RSS (MB), last stderr line and why it was killed."""
    err = tempfile.TemporaryFile()
    start = time.monotonic()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    killed = ""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        elapsed = time.monotonic() - start
        rss = _rss_mb(proc.pid)
        if not killed and elapsed > kill_after:
            killed = f"killed at {kill_after:.0f} s"
        elif not killed and rss > kill_rss_mb:
            killed = f"killed at {rss:,.0f} MB"
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    err.seek(0)
    lines = err.read().decode("utf-8", "replace").strip().splitlines()
    traceback_lines = sum(1 for line in lines if line.startswith("Traceback"))
    return {
        "rc": proc.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "stderr_lines": len(lines),
        "tracebacks": traceback_lines,
        "last": (lines[-1] if lines else "")[:150],
        "killed": killed,
    }


def case_command(case: str, url: str, data: Path, out: Path) -> tuple[list[str], dict]:
    if case == "lm-eval-endless":
        return lm_eval_chat_command(url, 2), {"PROTOQA_DATA_DIR": str(data / "protoqa")}
    # A refused connection with the default retries (6): what a user meets first.
    retries = [] if case == "refused" else ["--max-retries", "1"]
    return generate_command(url, out, data, "--request-timeout", "10", *retries), {}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="checkout of the code to compare with")
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--sides", nargs="+", choices=("before", "after"), default=["before", "after"])
    parser.add_argument("--kill-after", type=float, default=120.0)
    parser.add_argument("--kill-rss-mb", type=float, default=2000.0)
    args = parser.parse_args(argv)
    sides = [(side, args.baseline.resolve() if side == "before" else REPO) for side in args.sides]
    print(f"{'case':16} {'side':6} {'rc':>4} {'wall s':>7} {'cpu s':>6} {'peak MB':>8} {'lines':>5}  outcome")
    for case in args.cases:
        for side, source in sides:
            server = None if case == "refused" else HostileServer(case.replace("lm-eval-", ""))
            url = closed_port_url() if server is None else server.url
            with tempfile.TemporaryDirectory() as work:
                command, extra_env = case_command(case, url, args.data_dir.resolve(), Path(work) / "answers.json")
                env = client_env(source, **extra_env)
                result = run_client(command, env, Path(work), args.kill_after, args.kill_rss_mb)
            if server is not None:
                server.close()
            outcome = result["killed"] or result["last"]
            if result["tracebacks"]:
                outcome = f"{result['tracebacks']} traceback(s); {outcome}"
            print(
                f"{case:16} {side:6} {result['rc']:>4} {result['wall_s']:>7.1f} {result['cpu_s']:>6.1f} "
                f"{result['peak_mb']:>8,.0f} "
                f"{result['stderr_lines']:>5}  {outcome}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

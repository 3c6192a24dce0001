"""Python run in a new process, as the tests that check a command or a script from outside run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional


def run_python(args: list[str], cwd: Path, env: Optional[dict[str, str]] = None, timeout: float = 600) -> Any:
    """``python ARGS`` (this interpreter) in ``cwd`` with ``env`` (this process's by default), its output captured
    as text: the ``subprocess.CompletedProcess``.

    >>> run_python(["-c", "print(6 * 7)"], Path.cwd()).stdout
    '42\\n'
    """
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def python_json(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> Any:
    """The JSON on the last line ``python ARGS`` prints, once it has ended with status 0 (else its stderr's end fails
    the test).

    >>> python_json(["-c", "print('[1, 2]')"], Path.cwd(), {})
    [1, 2]
    """
    done = run_python(args, cwd, env, timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])

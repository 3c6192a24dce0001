"""A selection run in a new process that fails the moment it opens a CFC test file, for the studies' tests that
choose on dev and report on test."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.paths import REPO
from tests.support.processes import run_python

_HOOK = r"""
import os, sys
opened = []

def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0]).replace(os.sep, "/")
        if "/cfc/test." in path:
            opened.append(path)
            raise PermissionError(f"the selection opened a CFC test file: {path}")

sys.addaudithook(hook)
"""

_CHECK = r"""
print("test files opened by the selection:", len(opened))
try:  # the hook does catch a test file
    open(os.path.join(sys.argv[1], "cfc", "test.targets.jsonl")).close()
except PermissionError:
    print("hook active")
"""


def audited_selection(code: str, data: Path, cwd: Path) -> str:
    """The output of ``code`` (reading the data folder as ``sys.argv[1]``) run offline in ``cwd`` under a hook
    that refuses every CFC test file, after checking that it ran, opened no test file and that the hook was on."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    done = run_python(["-c", _HOOK + code + _CHECK, str(data)], cwd, env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "test files opened by the selection: 0" in done.stdout
    assert "hook active" in done.stdout
    return done.stdout

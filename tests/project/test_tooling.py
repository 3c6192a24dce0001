"""CI checks with pinned tools: setup.cfg's ``test`` extra pins ruff and mypy, the pre-commit
hooks name the same versions, and CI runs the README's command, whose scripts/check.sh
runs lint, format and type checks before the tests.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECK_COMMAND = "bash scripts/setup.sh --test && bash scripts/check.sh"


def _test_extra_pins() -> dict[str, str]:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf-8")
    pins = {}
    for requirement in config.get("options.extras_require", "test", raw=True).split():
        name, _, version = requirement.partition("==")
        if version:
            pins[name] = version
    return pins


def test_ruff_and_mypy_are_pinned_and_pre_commit_uses_the_pins():
    pins = _test_extra_pins()
    assert set(pins) >= {"ruff", "mypy"}, pins
    hooks = (REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert set(re.findall(r"ruff==([\w.]+)", hooks)) == {pins["ruff"]}
    assert set(re.findall(r"mypy==([\w.]+)", hooks)) == {pins["mypy"]}
    # the mypy hook runs the checkout's environment, where the `test` extra installed the pin
    assert re.search(r"entry: \.venv/bin/mypy\n", hooks)


def test_ci_runs_the_readme_command_and_checks_before_the_tests():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.strip().splitlines()[-1] == CHECK_COMMAND
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"```bash\n{CHECK_COMMAND}\n```" in readme
    script = (REPO / "scripts" / "check.sh").read_text(encoding="utf-8")
    assert "set -euo pipefail" in script
    steps = [
        ".venv/bin/ruff check .",
        ".venv/bin/ruff format --check .",
        ".venv/bin/mypy",
        # --fast stops here: lint, types and the fast subset, no documentation build
        'exec .venv/bin/python -m pytest -q -n 2 --dist loadfile -m "not slow and not browser" "$@"',
        'NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site"',
        '.venv/bin/python -m pytest -q -n 2 --dist loadfile "$@"',
    ]
    commands = [line.strip() for line in script.splitlines() if ".venv/bin/" in line and not line.startswith("#")]
    assert commands == steps

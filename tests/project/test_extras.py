"""The extras as users install them: one spelling, the wheel's, everywhere, and pip 23.2 installs them.

pip before 23.3 matches an extra only under the spelling the wheel records (PEP 685's
normalized name: lower case, ``-`` for runs of ``-``, ``_``, ``.``); asked for another spelling
it warns and installs nothing.
"""

from __future__ import annotations

import configparser
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PIP = "23.2.1"  # the pip of Python 3.11's venv


def extras() -> list[str]:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf-8")
    return list(config["options.extras_require"])


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def documented_extras() -> list[tuple[str, str]]:
    """``(file, extra)`` for every ``protoqa-eval[...]`` or ``.[...]`` in the docs, README files, scripts and code."""
    files = [REPO / "README.md", REPO / "CHANGELOG.md", *(REPO / "docs").rglob("*.md"), *(REPO / "scripts").glob("*")]
    for package in ("protoqa_core", "protoqa_metric", "protoqa_dataset", "cfc_probeval", "protoqa_integrations"):
        files += [*(REPO / package).rglob("*.py"), *(REPO / package).rglob("*.md")]
    found = []
    for path in files:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for group in re.findall(r"(?:protoqa-eval|\s\.|-e \"?\.)\[([A-Za-z0-9_,.\- ]+)\]", text):
            found += [(str(path.relative_to(REPO)), name.strip()) for name in group.split(",") if name.strip()]
    return found


def test_every_extra_is_spelled_as_the_wheel_records_it():
    names = extras()
    assert "lm-eval" in names
    assert [n for n in names if n != normalized(n)] == []


def test_the_docs_and_scripts_name_extras_that_exist_in_that_spelling():
    found = documented_extras()
    assert ("docs/evaluate-a-model.md", "lm-eval") in found
    assert ("scripts/setup.sh", "lm-eval") in found
    names = set(extras())
    assert [(path, name) for path, name in found if name not in names and name != "$extra"] == []


@pytest.mark.slow
def test_pip_23_2_installs_lm_eval_for_the_documented_extra(tmp_path, project_wheel):
    wheel = project_wheel
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: lm-eval" in metadata
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    version = subprocess.run([*pip, "--version"], capture_output=True, text=True, check=True).stdout.split()[1]
    if version != PIP:
        subprocess.run([*pip, "install", "--quiet", f"pip=={PIP}"], check=True, timeout=600)

    def would_install(extra: str) -> tuple[set[str], str]:
        report = tmp_path / f"{extra}.json"
        result = subprocess.run(
            [
                *pip,
                "install",
                "--dry-run",
                "--ignore-installed",
                "--report",
                str(report),
                f"protoqa-eval[{extra}] @ {wheel.as_uri()}",
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        document = json.loads(report.read_text())
        assert document["pip_version"] == PIP
        return {normalized(item["metadata"]["name"]) for item in document["install"]}, result.stderr

    installed, _ = would_install("lm-eval")
    assert {"lm-eval", "accelerate", "aiohttp", "tenacity"} <= installed
    # the spelling pip 23.2 does not match: what the docs must not say
    installed, warnings = would_install("lm_eval")
    assert "lm-eval" not in installed and "does not provide the extra 'lm_eval'" in warnings

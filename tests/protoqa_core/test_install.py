"""The pip command of a missing extra names where this installation came from."""

from __future__ import annotations

from pathlib import Path

from protoqa_core.install import install_command
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]


def test_each_recorded_source_gives_its_own_command():
    assert install_command("plots", {"dir_info": {}, "url": "file:///srv/protoqa%20eval"}) == (
        "pip install '/srv/protoqa eval[plots]'"
    )
    assert install_command("vllm", {"url": "https://h/r.git", "vcs_info": {"vcs": "git", "commit_id": "abc"}}) == (
        "pip install 'protoqa-eval[vllm] @ git+https://h/r.git'"
    )


def test_this_installation_names_a_folder_or_archive_that_exists():
    command = install_command("openai")
    assert command.startswith("pip install ") and command.endswith("[openai]'")
    if " @ " not in command:
        path = command.split("'")[1].rsplit("[", 1)[0]
        assert Path(path).exists(), command


def test_run_from_the_checkout_without_an_installation_it_names_the_checkout(tmp_path):
    # A fresh interpreter that sees no installed distribution: metadata finds none on a bare path.
    script = (
        "import sys; sys.path[:] = [p for p in sys.path if 'site-packages' not in p]\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from protoqa_core.install import install_command\n"
        "print(install_command('plots'))\n"
    )
    done = run_python(["-S", "-c", script], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"pip install -e '{REPO}[plots]'"
    assert "\n" not in done.stdout.strip()

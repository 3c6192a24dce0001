"""The commands' progress reports in a log: ``protoqa-eval`` (evaluate, leaderboard) and ``probeval``
report in whole lines and ``--quiet`` turns them off; ``--help`` does not import a progress library.

Each case runs a new process with stderr sent to a file; ``$PROTOQA_PROGRESS_INTERVAL`` shortens the
interval between lines so that a short run shows it. The line form itself is tested in
tests/protoqa_core/test_progress.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.offline import offline_env
from tests.support.progress_logs import progress_lines, run_logged

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
DEV = DATA / "protoqa" / "dev.crowdsourced.jsonl"
DEV_PREDICTIONS = DATA / "protoqa" / "dev.predictions.gpt2finetuned.json"
needs_data = pytest.mark.skipif(not DEV.is_file(), reason=f"shared ProtoQA data not found under {DATA}")


@pytest.mark.parametrize(
    "argv",
    [
        ["protoqa_integrations", "--help"],
        ["protoqa_integrations", "generate", "--help"],
        ["protoqa_integrations", "leaderboard", "--help"],
        ["cfc_probeval", "--help"],
    ],
)
def test_help_does_not_import_the_progress_library(argv):
    code = (
        "import runpy, sys\n"
        f"sys.argv = {argv!r}\n"
        "try:\n"
        f"    runpy.run_module({argv[0]!r}, run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('tqdm' in sys.modules, 'rich' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=offline_env(), timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "False False", done.stderr[-2000:]


@needs_data
@pytest.mark.parametrize("quiet", [False, True], ids=["reported", "quiet"])
def test_evaluate_reports_scoring_in_a_log_and_quiet_turns_it_off(tmp_path, quiet):
    args = [sys.executable, "-m", "protoqa_integrations", str(DEV), str(DEV_PREDICTIONS), "--similarity", "wordnet"]
    status, log = run_logged([*args, *(["--quiet"] if quiet else [])], tmp_path, interval="0")
    assert status == 0, log
    if quiet:
        assert log == ""
        return
    lines = progress_lines(log)
    assert lines, log
    assert lines[-1]["desc"] == "scoring (wordnet)" and lines[-1]["done"] == lines[-1]["total"] == "52"


@pytest.mark.slow
@needs_data
def test_leaderboard_reports_the_systems_scored(tmp_path):
    cfc = DATA / "cfc"
    systems = [
        f"{p.name.split('.')[2]}-{p.name.split('.')[3]}={p}" for p in sorted(cfc.glob("test.samples.*.jsonl"))[:3]
    ]
    args = [sys.executable, "-m", "protoqa_integrations", "leaderboard", str(cfc / "test.targets.jsonl"), *systems]
    # The files hold distinct answers, a different number per question in each: ranked with that accepted.
    args += ["--accept-mismatch", "samples"]
    status, log = run_logged([*args, "--metrics", "probeval", "--resamples", "50"], tmp_path, interval="0")
    assert status == 0, log
    lines = progress_lines(log)
    assert lines and lines[-1]["desc"] == "leaderboard: ProbEval" and lines[-1]["done"] == "3", log


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("quiet", [False, True], ids=["reported", "quiet"])
def test_probeval_reports_in_a_log_and_quiet_turns_it_off(tmp_path, quiet):
    cfc = DATA / "cfc"
    args = [sys.executable, "-m", "cfc_probeval", str(cfc / "dev.targets.jsonl")]
    args += [str(cfc / "dev.predictions.gpt2-xl.oneshot.json"), "--ignore-unknown"]
    status, log = run_logged([*args, *(["--quiet"] if quiet else [])], tmp_path, interval="0")
    assert status == 0, log
    lines = progress_lines(log)
    if quiet:
        # No progress, and of the warnings only the one --quiet never hides: 23 questions have fewer than 100 samples.
        assert log.splitlines() and all(
            line.startswith("probeval: warning: 23 question(s) have fewer") for line in log.splitlines()
        ), log
        return
    assert lines and lines[-1]["desc"].startswith("ProbEval (") and lines[-1]["done"] == lines[-1]["total"], log

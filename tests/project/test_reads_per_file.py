"""How many times a command opens each input file, counted in a new process by an audit hook.

Each file is parsed once and the parsed document is handed to whatever needs it (the
field discovery and the readers of samples and ranked lists); ``protoqa-eval`` reads each
file once into its on-disk index.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
CFC = DATA / "cfc"
PROTOQA = DATA / "protoqa"

pytestmark = pytest.mark.skipif(
    not (CFC / "test.targets.jsonl").is_file(), reason=f"shared data not found under {DATA}"
)

_COUNTING = """
import collections, json, os, runpy, sys
watched = {os.path.realpath(p) for p in json.loads(sys.argv[1])}
counts = collections.Counter()
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        name = os.path.realpath(os.fsdecode(args[0]))
        if name in watched:
            counts[name] += 1
sys.addaudithook(hook)
module, sys.argv = sys.argv[2], sys.argv[2:]
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
except SystemExit as exc:
    status = exc.code
else:
    status = 0
print(json.dumps({"status": status, "opens": counts}), file=sys.stderr)
"""


def opens(tmp_path: Path, module: str, *args: object, files: list[Path]) -> dict[str, int]:
    """Opens of each of ``files`` by ``python -m module args...``, run from ``tmp_path``."""
    done = subprocess.run(
        [sys.executable, "-c", _COUNTING, json.dumps([str(f) for f in files]), module, *map(str, args)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["status"] in (0, None), done.stderr[-2000:]
    return {Path(name).name: count for name, count in report["opens"].items()}


def test_probeval_reads_each_file_once(tmp_path):
    targets, samples = CFC / "test.targets.jsonl", CFC / "test.samples.gpt2-xl.oneshot.jsonl"
    counted = opens(tmp_path, "cfc_probeval", targets, samples, "--json", files=[targets, samples])
    assert counted == {targets.name: 1, samples.name: 1}


def test_protoqa_eval_reads_each_file_once(tmp_path):
    targets, predictions = PROTOQA / "dev.crowdsourced.jsonl", PROTOQA / "dev.predictions.gpt2finetuned.json"
    counted = opens(
        tmp_path,
        "protoqa_metric",
        targets,
        predictions,
        "--similarity",
        "exact_match,lcs",
        "--json",
        "--no-progress",
        files=[targets, predictions],
    )
    assert counted == {targets.name: 1, predictions.name: 1}


def test_the_leaderboard_reads_each_system_file_once_after_detecting_its_format(tmp_path):
    targets = CFC / "test.targets.jsonl"
    systems = [CFC / "test.samples.gpt2-xl.oneshot.jsonl", CFC / "test.predictions.human.json"]
    counted = opens(
        tmp_path,
        "protoqa_integrations",
        "leaderboard",
        targets,
        *(f"s{i}={path}" for i, path in enumerate(systems)),
        "--json",
        files=[targets, *systems],
    )
    # Format detection opens a system file twice (its first bytes, then its text); the one read
    # that parses it serves the field discovery, the samples and the ranked lists. The targets
    # are read once and hashed once more for the provenance check (their checksum).
    assert counted == {targets.name: 2, **{path.name: 3 for path in systems}}

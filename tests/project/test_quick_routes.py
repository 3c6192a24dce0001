"""The three quick routes on the same questions, end to end: the recipe of docs/evaluate-a-model.md run as written.

``generate``, lm-eval (``--samples``) and lighteval (``--max-samples 3``) sample the tiny fitted GPT-2
on the three ProtoQA dev questions lighteval picks, and ``leaderboard --only-common`` ranks the three
outputs together. lighteval runs from its own environment (:func:`tests.support.harnesses.lighteval_python`),
put on the ``PATH`` after this one, as a user with both installed has them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.harnesses import lighteval_python
from tests.support.offline import isolated_env
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
DEV = SHARED / "data" / "protoqa" / "dev.crowdsourced.jsonl"
PAGE = REPO / "docs" / "evaluate-a-model.md"
HEADING = "### Quick runs of the three routes on the same questions"
LIGHTEVAL_IDS = ["r1q11", "r2q9", "r2q11"]  # lighteval 0.13's --max-samples 3 on ProtoQA dev

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not DEV.is_file(), reason=f"no ProtoQA data at {DEV}")]


def recipe() -> str:
    """The first bash block under the recipe's heading."""
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(r"```bash\n(.*?)```", text[text.index(HEADING) :], re.DOTALL)
    assert found, f"no bash block under {HEADING!r} in {PAGE.name}"
    return found.group(1)


def test_the_three_quick_routes_rank_on_the_same_questions(tmp_path, fitted_gpt2):
    pytest.importorskip("lm_eval")
    lighteval = lighteval_python()
    if lighteval is None:
        pytest.skip("no interpreter imports lighteval: set $LIGHTEVAL_PYTHON or run bash scripts/setup.sh --test")
    # A folder outside the checkout, with ../shared beside it, and the model where the page names it.
    (tmp_path / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(fitted_gpt2, work / "tiny-gpt2")
    env = isolated_env(tmp_path, MPLBACKEND="Agg")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(Path(lighteval).parent), env["PATH"]])
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", recipe()],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-4000:]
    assert "[9, 23, 25]" in done.stdout.splitlines()[0]
    # Every route answered exactly lighteval's three questions...
    lm_eval_file = next(work.glob("quick-lm-eval/*/samples_protoqa_*.jsonl"))
    lighteval_file = next(work.glob("quick-lighteval/details/*/*/details_protoqa*.parquet"))
    generated = json.loads((work / "quick-generate.json").read_text())
    assert list(generated["model_answers"]) == LIGHTEVAL_IDS
    assert [json.loads(line)["doc"]["id"] for line in lm_eval_file.read_text().splitlines()] == LIGHTEVAL_IDS
    import pyarrow.parquet as pq

    rows = pq.read_table(lighteval_file).to_pylist()
    assert sorted(r["doc"]["specific"]["row"]["id"] for r in rows) == sorted(LIGHTEVAL_IDS)
    # ... and the leaderboard the page ends with ranks the three on them, every metric, nothing accepted.
    assert "signature: protoqa:sim:wordnet" in done.stdout and "|n:3|" in done.stdout
    assert "no target question is answered by every system" not in done.stderr
    board = run_python(
        ["-m", "protoqa_integrations", "leaderboard", str(DEV), "--only-common", "--json"]
        + [f"generate={work / 'quick-generate.json'}", f"lm-eval={lm_eval_file}", f"lighteval={lighteval_file}"],
        work,
        env,
        timeout=600,
    )
    assert board.returncode == 0, board.stderr[-3000:]
    document = json.loads(board.stdout)
    assert document["num_questions"] == 3 and document["accepted_mismatches"] == []
    assert [s["name"] for s in document["systems"]] == ["generate", "lm-eval", "lighteval"]
    assert [s["format"] for s in document["systems"]] == ["answers", "lm-eval", "lighteval"]
    for system in document["systems"]:
        assert set(system["scores"]) == {m["key"] for m in document["metrics"]}, system["name"]
        assert all(score["rank"][0] >= 1 for score in system["scores"].values())
    # Each figure is a mean over the same three questions: the per-system KL is finite and positive.
    assert all(0 < s["scores"]["probeval_kl"]["mean"] < 20 for s in document["systems"])

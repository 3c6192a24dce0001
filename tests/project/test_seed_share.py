"""The clustering seed's share in the board's intervals, in new processes as users run the commands: under
G-means from seeded starts a board's interval is not the one-clustering interval and its signature names
``clustering_draws:5``; its KL is the one ``probeval compare`` prints; under human clusters nothing is drawn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from protoqa_core.significance import resample_indices
from tests.support.offline import offline_env

REPO = Path(__file__).resolve().parents[2]
CFC = REPO.parent / "shared" / "data" / "cfc"
SYSTEMS = ("gpt2-xl.oneshot", "protoqa-ft.oneshot")
RESAMPLES = 300

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CFC / "test.targets.jsonl").is_file(), reason="the shared data is not available"),
]


def _run(*args: object, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", *map(str, args)], cwd=cwd, env=offline_env(), capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """The first 10 CFC test questions with their clusters and without them."""
    folder = tmp_path_factory.mktemp("seed-share")
    lines = (CFC / "test.targets.jsonl").read_text(encoding="utf-8").splitlines()[:10]
    (folder / "human.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    raw = []
    for line in lines:
        record = json.loads(line)
        record["answers"].pop("clusters", None)
        raw.append(json.dumps(record))
    (folder / "raw.jsonl").write_text("\n".join(raw) + "\n", encoding="utf-8")
    return {"folder": folder, "human": folder / "human.jsonl", "raw": folder / "raw.jsonl"}


def _board(targets: Path, folder: Path, *extra: str) -> dict:
    systems = [f"{name}={CFC / f'test.samples.{name}.jsonl'}" for name in SYSTEMS]
    out = _run(
        "protoqa_integrations", "leaderboard", targets, *systems, "--metrics", "probeval", "--only-common",
        "--accept-mismatch", "samples", "--resamples", RESAMPLES, "--quiet", *extra, cwd=folder,
    )  # fmt: skip
    return json.loads(out) if "--json" in extra else {"text": out}


def _one_clustering_interval(values: list[float], board: dict) -> tuple[float, float]:
    """The one-clustering interval: the questions resampled, the clustering fixed."""
    idx = resample_indices(len(values), board["resamples"], board["seed"])
    low, high = np.percentile(np.asarray(values)[idx].mean(axis=1), [2.5, 97.5])
    return float(low), float(high)


def test_a_board_under_seeded_gmeans_holds_the_seed_s_share(files):
    board = _board(files["raw"], files["folder"], "--json", "--question-scores", "--cluster-seed", "3")
    metric = next(m for m in board["metrics"] if m["key"] == "probeval_kl")
    assert "clustering:auto->gmeans(" in metric["signature"] and ",seed=3," in metric["signature"]
    assert "|clustering_draws:5" in metric["signature"] and "clustering_draws:5" in board["signature"]
    for entry in board["systems"]:
        name, score = entry["name"], entry["scores"]["probeval_kl"]
        drawn = board["per_question_draws"]["probeval_kl"][name]
        assert len(drawn) == 5 and score["mean"] == pytest.approx(float(np.mean(drawn)), abs=1e-12)
        assert (score["low"], score["high"]) != pytest.approx(_one_clustering_interval(drawn[0], board), abs=1e-6)
    # probeval compare scores the same two systems under the same five clusterings: the same KLs.
    a, b = (CFC / f"test.samples.{name}.jsonl" for name in SYSTEMS)
    compared = json.loads(
        _run("cfc_probeval", "compare", files["raw"], a, b, "--only-common", "--ignore-unknown", "--accept-mismatch",
             "samples", "--cluster-seed", "3", "--resamples", "50", "--json", cwd=files["folder"])
    )  # fmt: skip
    assert compared["clustering_draws"] == 5 and "|clustering_draws:5" in compared["signature"]
    means = {e["name"]: e["scores"]["probeval_kl"]["mean"] for e in board["systems"]}
    assert (compared["kl_a"], compared["kl_b"]) == pytest.approx((means[SYSTEMS[0]], means[SYSTEMS[1]]), abs=1e-9)
    table = _board(files["raw"], files["folder"], "--cluster-seed", "3")["text"]
    assert "mean over 5 automatic clusterings" in table and "seed's share" in table


def test_a_board_under_human_clusters_draws_nothing(files):
    board = _board(files["human"], files["folder"], "--json", "--question-scores")
    assert "clustering_draws" not in json.dumps(board) and "per_question_draws" not in board
    for entry in board["systems"]:
        score = entry["scores"]["probeval_kl"]
        values = board["per_question"]["probeval_kl"][entry["name"]]
        assert (score["low"], score["high"]) == pytest.approx(_one_clustering_interval(values, board), rel=1e-12)
    assert "automatic clusterings" not in _board(files["human"], files["folder"])["text"]

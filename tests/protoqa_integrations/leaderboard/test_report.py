"""The leaderboard's outputs name what they show: the plot's title names the data set and split,
a metric without spread gets a readable axis, and ``--model-index`` records a Hub data-set id."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from protoqa_integrations.cli import main
from tests.support.processes import run_python

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parents[3]
CFC = REPO.parent / "shared" / "data" / "cfc"
needs_data = pytest.mark.skipif(not (CFC / "dev.targets.jsonl").is_file(), reason="shared CFC data not found")


def protoqa_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_python(["-m", "protoqa_integrations", *args, "--quiet"], cwd, timeout=600)


@pytest.fixture
def zeros(tmp_path):
    """Three questions that two systems both miss: every ProtoQA metric is 0 for both."""
    rows = [
        {
            "metadata": {"id": f"q{i}"},
            "question": {"normalized": "name a pet"},
            "answers": {"clusters": {f"q{i}.0": {"count": 6, "answers": ["dog"]}}},
        }
        for i in range(3)
    ]
    (tmp_path / "targets.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "a.json").write_text(json.dumps({f"q{i}": ["rock"] for i in range(3)}))
    (tmp_path / "b.json").write_text(json.dumps({f"q{i}": ["tree"] for i in range(3)}))
    return tmp_path


def _drawn(monkeypatch) -> list[dict]:
    """What every saved figure shows: its title and each panel's x range."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    seen: list[dict] = []
    save = Figure.savefig

    def spy(self, *args, **kwargs):
        title = self._suptitle.get_text() if self._suptitle is not None else ""
        seen.append({"title": title, "xlim": [ax.get_xlim() for ax in self.axes if ax.axison]})
        return save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    return seen


def test_a_plot_without_spread_gets_the_metrics_range(zeros, monkeypatch, capsys):
    seen = _drawn(monkeypatch)
    args = ["targets.jsonl", "a=a.json", "b=b.json", "--metrics", "protoqa", "--similarity", "exact_match"]
    monkeypatch.chdir(zeros)
    assert main(["leaderboard", *args, "--plot", "board.png", "--quiet", "--split", "test"]) == 0
    (figure,) = seen
    assert figure["xlim"] and all(xlim == (0.0, 1.0) for xlim in figure["xlim"]), figure
    # an unknown file: its name, and the split the command was given
    assert figure["title"].startswith("targets.jsonl (test): 3 questions, 95% bootstrap intervals")


@needs_data
def test_the_plot_title_names_a_known_data_set_and_split(tmp_path, monkeypatch):
    seen = _drawn(monkeypatch)
    monkeypatch.chdir(tmp_path)
    args = [str(CFC / "dev.targets.jsonl"), f"gpt2-xl={CFC / 'dev.predictions.gpt2-xl.oneshot.json'}"]
    assert (
        main(
            [
                "leaderboard",
                *args,
                "--metrics",
                "probeval",
                "--resamples",
                "50",
                "--only-common",
                "--plot",
                "b.png",
                "--quiet",
            ]
        )
        == 0
    )
    assert seen[0]["title"].startswith("CFC dev (validation): ") and "questions, 95% bootstrap" in seen[0]["title"]


@needs_data
def test_model_index_records_the_hub_id_config_and_split_and_says_so(tmp_path):
    args = [str(CFC / "dev.targets.jsonl"), f"gpt2-xl={CFC / 'dev.predictions.gpt2-xl.oneshot.json'}"]
    out = protoqa_eval(
        "leaderboard", *args, "--metrics", "probeval", "--resamples", "50", "--only-common", "--model-index", "cards",
        "--dataset-type", "someone/cfc", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    card = yaml.safe_load((tmp_path / "cards" / "gpt2-xl.yaml").read_text())["model-index"][0]
    dataset = card["results"][0]["dataset"]
    assert dataset == {"type": "someone/cfc", "name": "CFC dev", "config": "cfc", "split": "validation"}
    assert "--model-index: data set someone/cfc (CFC dev; config cfc, split validation)" in out.stderr


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "--model-index needs --dataset-type HUB_ID"),
        (["--dataset-type", "dev.crowdsourced.jsonl"], "is a file name"),
        (["--dataset-type", "a/b/c"], "is not a Hugging Face Hub id"),
    ],
    ids=["missing", "file-name", "not-an-id"],
)
def test_model_index_asks_for_a_hub_id_before_any_work(zeros, extra, message):
    out = protoqa_eval(
        "leaderboard", "targets.jsonl", "a=a.json", "b=b.json", "--model-index", "cards", *extra, cwd=zeros
    )
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and not (zeros / "cards").exists()


def test_a_rank_range_is_written_one_way_in_every_output():
    # The table, the plot and the Space's tables all write ranks with rank_text.
    from protoqa_integrations.leaderboard.report import rank_text

    assert [rank_text(r) for r in [(1, 1), (1, 3), (10, 12)]] == ["1", "1-3", "10-12"]

"""The ProtoQA/CFC ``datasets`` builder: every config, local layouts, downloads, and every error path.

Real ``datasets`` throughout; downloads go through its DownloadManager, pointed at
local mirrors (``base_url``) or refused by offline mode, since there is no network.
"""

from __future__ import annotations

import doctest
import importlib
import json
import shutil
from pathlib import Path

import pytest

import protoqa_dataset  # its names are read when used: datasets loads with the first test that needs it
from protoqa_core.io.data import (
    DATA_DIR_ENV,
    SourceDownloadError,
    SourceError,
    SourceNotFoundError,
    SourceVerificationError,
)
from protoqa_core.io.files import DataFormatError
from protoqa_dataset.sources import SOURCES
from tests.support.datasets_cache import offline_datasets
from tests.support.lazy import lazy_import

datasets = lazy_import("datasets")


@pytest.fixture(autouse=True)
def isolated_hf(tmp_path, monkeypatch):
    """Caches under tmp_path, no Hub access, and no data dir inherited from the environment."""
    return offline_datasets(monkeypatch, tmp_path / "hf_cache")


def copy_into(data_dir: Path, files: dict[str, Path]) -> Path:
    """Copy source files into a fresh data dir under the given relative names."""
    for relative, source in files.items():
        target = data_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return data_dir


def json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(name, cache, **kwargs):
    return protoqa_dataset.load_protoqa(name, cache_dir=str(cache), **kwargs)


# --- the configs -------------------------------------------------------------------------


def test_cfc_config_matches_the_jsonl_files(shared, isolated_hf):
    ds = load("cfc", isolated_hf, data_dir=shared)
    assert {split: ds[split].num_rows for split in ds} == {"validation": 54, "test": 46}
    for split, relative in (("validation", "cfc/dev.targets.jsonl"), ("test", "cfc/test.targets.jsonl")):
        assert ds[split].features == protoqa_dataset.FEATURES
        records = json_lines(shared / relative)
        assert ds[split]["id"] == [r["metadata"]["id"] for r in records]
        for row, record in zip(ds[split], records, strict=True):
            clusters = record["answers"]["clusters"]
            assert row["question"] == record["question"]["normalized"]
            assert row["question_original"] == record["question"]["original"]
            assert row["source"] == record["metadata"].get("source", "")
            assert row["clusters"] == {
                "id": list(clusters),
                "answers": [c["answers"] for c in clusters.values()],
                "count": [c["count"] for c in clusters.values()],
            }
            assert row["raw_answers"] == {
                "answer": list(record["answers"]["raw"]),
                "count": list(record["answers"]["raw"].values()),
            }
            assert row["num_answers"] == sum(c["count"] for c in clusters.values())
    assert ds["validation"][0]["id"] == "r1q1" and ds["test"][0]["id"] == "r4q1"


def test_scraped_dev_config(shared, isolated_hf):
    ds = load("protoqa_scraped_dev", isolated_hf, data_dir=shared)
    assert list(ds) == ["validation"]
    validation = ds["validation"]
    assert validation.num_rows == 980 and validation.features == protoqa_dataset.FEATURES
    assert validation[0]["id"] == "dev-scraped_q3"
    assert validation[0]["clusters"]["answers"][:2] == [["9"], ["10"]]
    # Scraped data has one string per cluster.
    assert all(len(answers) == 1 for row in validation["clusters"] for answers in row["answers"])


def protoqa_dir(shared: Path, root: Path) -> Path:
    """A full ProtoQA data dir: train.jsonl is not available here, so a copy of the
    scraped dev file (same format) stands at the upstream train path."""
    return copy_into(
        root,
        {
            "data/train/train.jsonl": shared / "protoqa/dev.scraped.jsonl",
            "protoqa/dev.crowdsourced.jsonl": shared / "protoqa/dev.crowdsourced.jsonl",
            "protoqa/test.questions.jsonl": shared / "protoqa/test.questions.jsonl",
        },
    )


def test_protoqa_config_all_splits(shared, isolated_hf, tmp_path):
    data_dir = protoqa_dir(shared, tmp_path / "data")
    ds = load("protoqa", isolated_hf, data_dir=data_dir, expected_train_rows=980)
    assert {split: ds[split].num_rows for split in ds} == {"train": 980, "validation": 52, "test": 102}
    assert all(ds[split].features == protoqa_dataset.FEATURES for split in ds)
    r1q1 = ds["validation"][0]
    assert r1q1["id"] == "r1q1"
    largest = max(range(len(r1q1["clusters"]["count"])), key=lambda i: r1q1["clusters"]["count"][i])
    assert r1q1["clusters"]["count"][largest] == 35 and "age" in r1q1["clusters"]["answers"][largest]
    test = ds["test"]
    assert test[0]["question_original"] == "Name a complaint people have about their parents."
    assert all(row["clusters"] == {"id": [], "answers": [], "count": []} for row in test)
    assert all(row["raw_answers"] == {"answer": [], "count": []} for row in test)
    assert set(test["num_answers"]) == {0}


@pytest.mark.slow
def test_train_row_count_is_checked(shared, isolated_hf, tmp_path):
    data_dir = protoqa_dir(shared, tmp_path / "data")
    with pytest.raises(SourceVerificationError) as err:
        load("protoqa", isolated_hf, data_dir=data_dir)
    message = str(err.value)
    assert "980 questions, expected 8781" in message and str(data_dir / "data/train/train.jsonl") in message
    # verify_sources=False accepts it (the escape hatch for modified copies).
    assert load("protoqa", isolated_hf, data_dir=data_dir, verify_sources=False)["train"].num_rows == 980


def test_missing_train_is_an_error_unless_skipped(shared, isolated_hf):
    with pytest.raises(SourceNotFoundError) as err:
        load("protoqa", isolated_hf, data_dir=shared)
    message = str(err.value)
    assert "train" in message and "data/train/train.jsonl" in message and "protoqa/train.jsonl" in message
    assert "https://raw.githubusercontent.com/iesl/protoqa-data/master/data/train/train.jsonl" in message
    assert "skip_unavailable=True" in message

    with pytest.warns(UserWarning, match="train not built"):
        ds = load("protoqa", isolated_hf, data_dir=shared, skip_unavailable=True)
    assert {split: ds[split].num_rows for split in ds} == {"validation": 52, "test": 102}
    with pytest.raises(ValueError, match="split 'train' was not built"), pytest.warns(UserWarning):
        load("protoqa", isolated_hf, data_dir=shared, skip_unavailable=True, split="train")
    builder = protoqa_dataset.ProtoQA(
        config_name="protoqa", data_dir=shared, cache_dir=str(isolated_hf), skip_unavailable=True
    )
    builder.download_and_prepare(download_mode="reuse_cache_if_exists")
    assert list(builder.skipped_splits) == ["train"]


def test_nonexistent_data_dir(isolated_hf, tmp_path):
    with pytest.raises(SourceNotFoundError, match=r"data directory .*nowhere does not exist"):
        load("cfc", isolated_hf, data_dir=tmp_path / "nowhere")


def test_data_dir_from_environment(shared, isolated_hf, monkeypatch):
    monkeypatch.setenv(DATA_DIR_ENV, str(shared))
    builder = protoqa_dataset.ProtoQA(config_name="cfc", cache_dir=str(isolated_hf))
    assert builder.config.data_dir == str(shared.resolve())
    assert load("cfc", isolated_hf, split="test").num_rows == 46
    # A blank data_dir names no folder, as for every reader of the data (protoqa_core.io.data.named_data_dir).
    blank = protoqa_dataset.ProtoQA(config_name="cfc", cache_dir=str(isolated_hf), data_dir="  ")
    assert blank.config.data_dir == str(shared.resolve())


def test_upstream_layout_is_accepted(shared, isolated_hf, tmp_path):
    data_dir = copy_into(
        tmp_path / "clone",
        {
            "CFC_evaluator_data/Evaluator_Input/all_dev_targets.jsonl": shared / "cfc/dev.targets.jsonl",
            "CFC_evaluator_data/Evaluator_Input/20220715_ground_truth_targets.jsonl": shared / "cfc/test.targets.jsonl",
            "data/dev/dev.scraped.jsonl": shared / "protoqa/dev.scraped.jsonl",
        },
    )
    ds = load("cfc", isolated_hf, data_dir=data_dir)  # checksums verified against the upstream files
    assert (ds["validation"].num_rows, ds["test"].num_rows) == (54, 46)
    assert load("protoqa_scraped_dev", isolated_hf, data_dir=data_dir, split="validation").num_rows == 980


def test_two_different_files_under_accepted_names_is_an_error(shared, isolated_hf, tmp_path):
    data_dir = copy_into(
        tmp_path / "data",
        {
            "cfc/dev.targets.jsonl": shared / "cfc/dev.targets.jsonl",
            "cfc/all_dev_targets.jsonl": shared / "cfc/test.targets.jsonl",
            "cfc/test.targets.jsonl": shared / "cfc/test.targets.jsonl",
        },
    )
    with pytest.raises(SourceError, match="different files under accepted names"):
        load("cfc", isolated_hf, data_dir=data_dir)


def test_cache_follows_local_file_contents(shared, isolated_hf, tmp_path):
    data_dir = copy_into(
        tmp_path / "data",
        {
            "cfc/dev.targets.jsonl": shared / "cfc/dev.targets.jsonl",
            "cfc/test.targets.jsonl": shared / "cfc/test.targets.jsonl",
        },
    )
    assert load("cfc", isolated_hf, data_dir=data_dir, verify_sources=False)["validation"].num_rows == 54
    dev = data_dir / "cfc/dev.targets.jsonl"
    dev.write_text("\n".join(dev.read_text(encoding="utf-8").splitlines()[:3]) + "\n", encoding="utf-8")
    assert load("cfc", isolated_hf, data_dir=data_dir, verify_sources=False)["validation"].num_rows == 3


# --- downloads -----------------------------------------------------------------------------


def mirror(shared: Path, root: Path) -> Path:
    """A local mirror with the layout of the CFC repository, used as base_url."""
    return copy_into(
        root,
        {
            "CFC_evaluator_data/Evaluator_Input/all_dev_targets.jsonl": shared / "cfc/dev.targets.jsonl",
            "CFC_evaluator_data/Evaluator_Input/20220715_ground_truth_targets.jsonl": shared / "cfc/test.targets.jsonl",
        },
    )


def test_download_from_mirror(shared, isolated_hf, tmp_path):
    base = mirror(shared, tmp_path / "mirror")
    ds = load("cfc", isolated_hf, base_url=str(base))
    assert (ds["validation"].num_rows, ds["test"].num_rows) == (54, 46)


def test_failed_download_names_file_url_and_local_alternative(isolated_hf):
    with pytest.raises(SourceDownloadError) as err:  # offline: the real URL is refused
        load("cfc", isolated_hf)
    message = str(err.value)
    assert "CFC dev" in message and "split 'validation'" in message
    assert SOURCES["cfc"]["validation"].url() in message
    assert "data_dir=DIR" in message and DATA_DIR_ENV in message and "cfc/dev.targets.jsonl" in message


def test_missing_file_on_mirror_is_a_download_error(isolated_hf, tmp_path):
    with pytest.raises(SourceDownloadError, match="could not download .*all_dev_targets.jsonl"):
        load("cfc", isolated_hf, base_url=str(tmp_path / "empty-mirror"))


def test_downloaded_file_with_wrong_checksum(shared, isolated_hf, tmp_path):
    base = mirror(shared, tmp_path / "mirror")
    test_file = base / "CFC_evaluator_data/Evaluator_Input/20220715_ground_truth_targets.jsonl"
    test_file.write_text(
        test_file.read_text(encoding="utf-8").replace('"count": 23', '"count": 24', 1), encoding="utf-8"
    )
    with pytest.raises(SourceVerificationError) as err:
        load("cfc", isolated_hf, base_url=str(base))
    message = str(err.value)
    assert "CFC test" in message and str(test_file) in message
    assert SOURCES["cfc"]["test"].sha256 in message and "data_dir=DIR" in message
    # A verification failure is never skipped.
    with pytest.raises(SourceVerificationError):
        load("cfc", isolated_hf, base_url=str(base), skip_unavailable=True)


def test_local_file_with_wrong_checksum(shared, isolated_hf, tmp_path):
    data_dir = copy_into(
        tmp_path / "data",
        {
            "cfc/dev.targets.jsonl": shared / "cfc/dev.targets.jsonl",
            "cfc/test.targets.jsonl": shared / "cfc/test.targets.jsonl",
        },
    )
    with open(data_dir / "cfc/dev.targets.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n")
    with pytest.raises(SourceVerificationError, match=r"cfc/dev\.targets\.jsonl has sha256"):
        load("cfc", isolated_hf, data_dir=data_dir)


# --- malformed input -----------------------------------------------------------------------


def question(qid: str, clusters=None, **extra) -> dict:
    record = {
        "metadata": {"id": qid, "source": "test"},
        "question": {"original": f"Name {qid}.", "normalized": f"name {qid}."},
    }
    if clusters is not None:
        record["answers"] = {"raw": {}, "clusters": clusters}
    record.update(extra)
    return record


GOOD = question("q1", {"q1.0": {"count": 3, "answers": ["a"]}})


def bad_cfc_dir(tmp_path: Path, dev_lines: list[str]) -> Path:
    data_dir = tmp_path / "bad"
    (data_dir / "cfc").mkdir(parents=True)
    (data_dir / "cfc/dev.targets.jsonl").write_text("\n".join(dev_lines) + "\n", encoding="utf-8")
    (data_dir / "cfc/test.targets.jsonl").write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    return data_dir


@pytest.mark.parametrize(
    "second_line, line, fragment",
    [
        ('{"metadata": {"id": "q2"', 2, "malformed JSON"),
        (json.dumps({"question": {"normalized": "x"}}), 2, "missing question id"),
        (json.dumps({"metadata": {"id": "q2"}}), 2, "missing question text"),
        (json.dumps(question("q2", {"q2.0": {"answers": ["a"]}})), 2, "needs 'count' and 'answers'"),
        (json.dumps(question("q2", {"q2.0": {"count": -1, "answers": ["a"]}})), 2, "non-negative integer"),
        (json.dumps(question("q2", {"q2.0": {"count": "3", "answers": ["a"]}})), 2, "non-negative integer"),
        (json.dumps(question("q2", {"q2.0": {"count": 2.5, "answers": ["a"]}})), 2, "non-negative integer"),
        (json.dumps(question("q2", {"q2.0": {"count": True, "answers": ["a"]}})), 2, "non-negative integer"),
        (json.dumps(GOOD), 2, "duplicate question id (first on line 1)"),
        (json.dumps(question("q2")), 2, "no answer clusters"),
        (json.dumps(question("q2", {})), 2, "no answer clusters"),
    ],
    ids=[
        "malformed",
        "no-id",
        "no-question",
        "no-count",
        "negative",
        "string",
        "float",
        "bool",
        "duplicate",
        "no-answers",
        "empty-clusters",
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, isolated_hf, second_line, line, fragment):
    data_dir = bad_cfc_dir(tmp_path, [json.dumps(GOOD), second_line])
    with pytest.raises(DataFormatError) as err:
        load("cfc", isolated_hf, data_dir=data_dir, verify_sources=False)
    message = str(err.value)
    assert str(data_dir / "cfc/dev.targets.jsonl") in message and f"line {line}" in message
    assert fragment in message


def test_blank_lines_do_not_shift_line_numbers(tmp_path, isolated_hf):
    data_dir = bad_cfc_dir(tmp_path, [json.dumps(GOOD), "", json.dumps(question("q2"))])
    with pytest.raises(DataFormatError, match=r"line 3, question 'q2': no answer clusters"):
        load("cfc", isolated_hf, data_dir=data_dir, verify_sources=False)


def test_answers_in_the_test_questions_file_are_an_error(shared, isolated_hf, tmp_path):
    data_dir = protoqa_dir(shared, tmp_path / "data")
    (data_dir / "protoqa/test.questions.jsonl").write_text(
        json.dumps(question("t1")) + "\n" + json.dumps(GOOD) + "\n", encoding="utf-8"
    )
    with pytest.raises(DataFormatError, match=r"test\.questions\.jsonl, line 2, question 'q1': has answers"):
        load("protoqa", isolated_hf, data_dir=data_dir, verify_sources=False)


def test_unknown_config_is_refused(isolated_hf):
    with pytest.raises(ValueError, match="BuilderConfig 'nope' not found"):
        protoqa_dataset.ProtoQA(config_name="nope", cache_dir=str(isolated_hf))


@pytest.mark.parametrize("module", ["sources", "schema", "parsing", "card", "export", "upload"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(f"protoqa_dataset.{module}"), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0

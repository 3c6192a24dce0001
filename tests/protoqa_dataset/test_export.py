"""The Parquet export read back with stock ``datasets.load_dataset``, its card, and the CLI (export, dry-run upload).

Exports are built from ``../shared/data`` (read in place). The train file is not
there: the complete export uses a temporary data dir with a copy of the scraped dev
file (same format) at the train path and the row-count check set to match.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import protoqa_dataset  # its names are read when used: datasets loads with the first test that needs it
from protoqa_core.io.readers import clusters_from_records, read_targets
from protoqa_core.io.records import Question
from protoqa_dataset.__main__ import main
from tests.support.datasets_cache import offline_datasets
from tests.support.lazy import lazy_import

datasets = lazy_import("datasets")
huggingface_hub = lazy_import("huggingface_hub")

SPLIT_ROWS = {
    "protoqa": {"train": 980, "validation": 52, "test": 102},  # train: the stand-in, see module docstring
    "protoqa_scraped_dev": {"validation": 980},
    "cfc": {"validation": 54, "test": 46},
}


@pytest.fixture(scope="module")
def hf_env(tmp_path_factory):
    """Caches under a temporary directory and no Hub access, for the whole module."""
    cache = tmp_path_factory.mktemp("hf_cache")
    patch = pytest.MonkeyPatch()
    yield offline_datasets(patch, cache)
    patch.undo()


def full_data_dir(shared: Path, root: Path) -> Path:
    files = {
        "data/train/train.jsonl": "protoqa/dev.scraped.jsonl",
        "protoqa/dev.crowdsourced.jsonl": "protoqa/dev.crowdsourced.jsonl",
        "protoqa/dev.scraped.jsonl": "protoqa/dev.scraped.jsonl",
        "protoqa/test.questions.jsonl": "protoqa/test.questions.jsonl",
        "cfc/dev.targets.jsonl": "cfc/dev.targets.jsonl",
        "cfc/test.targets.jsonl": "cfc/test.targets.jsonl",
    }
    for target, source in files.items():
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared / source, root / target)
    return root


@pytest.fixture(scope="module")
def full_export(shared, hf_env, tmp_path_factory):
    data_dir = full_data_dir(shared, tmp_path_factory.mktemp("data"))
    out = tmp_path_factory.mktemp("export") / "repo"
    report = protoqa_dataset.export_dataset(out, data_dir=data_dir, expected_train_rows=980)
    return out, report, data_dir


@pytest.fixture(scope="module")
def partial_export(shared, hf_env, tmp_path_factory):
    out = tmp_path_factory.mktemp("partial") / "repo"
    report = protoqa_dataset.export_dataset(out, data_dir=shared, skip_unavailable=True)
    return out, report


def load(folder: Path, *args, hf_env, **kwargs):
    return datasets.load_dataset(str(folder), *args, cache_dir=str(hf_env / "load"), **kwargs)


# --- reading the export back with stock load_dataset ------------------------------------------


def test_every_split_reads_back(full_export, hf_env):
    out, report, _ = full_export
    assert report.complete
    for config, rows in SPLIT_ROWS.items():
        ds = load(out, config, hf_env=hf_env)
        assert {split: ds[split].num_rows for split in ds} == rows
        assert all(ds[split].features == protoqa_dataset.FEATURES for split in ds)
    assert load(out, "cfc", split="validation", hf_env=hf_env).num_rows == 54
    default = load(out, hf_env=hf_env)  # the card marks protoqa as the default config
    assert {split: default[split].num_rows for split in default} == SPLIT_ROWS["protoqa"]


def test_known_rows(full_export, hf_env):
    out, _, _ = full_export
    validation = load(out, "protoqa", split="validation", hf_env=hf_env)
    r1q1 = validation[0]
    assert r1q1["id"] == "r1q1"
    counts = r1q1["clusters"]["count"]
    largest = counts.index(max(counts))
    assert counts[largest] == 35 and "age" in r1q1["clusters"]["answers"][largest]
    assert r1q1["clusters"]["id"][largest] == "r1q1.0"
    test = load(out, "protoqa", split="test", hf_env=hf_env)
    assert test[0]["id"] == "r1q4" and test[0]["clusters"] == {"id": [], "answers": [], "count": []}
    cfc_test = load(out, "cfc", split="test", hf_env=hf_env)
    assert cfc_test[cfc_test.num_rows - 1]["id"] == "r4q46"


def test_rows_hold_the_questions_and_clusters_of_the_jsonl(full_export, shared, hf_env):
    out, _, _ = full_export
    validation = load(out, "protoqa", split="validation", hf_env=hf_env)
    from_rows = {
        qid: Question(qid, text, clusters_from_records(clusters, qid))
        for qid, text, clusters in zip(validation["id"], validation["question"], validation["clusters"], strict=True)
    }
    from_file = read_targets(shared / "protoqa/dev.crowdsourced.jsonl")
    assert list(from_rows) == list(from_file)
    assert all(from_rows[qid].clusters == from_file[qid].clusters for qid in from_file)


# --- the card ---------------------------------------------------------------------------------


def test_card_metadata(full_export):
    out, report, _ = full_export
    card = huggingface_hub.DatasetCard.load(out / "README.md")
    meta = card.data.to_dict()
    assert meta["license"] == ["cc-by-4.0", "unknown"]
    assert "question-answering" in meta["task_categories"]
    configs = {entry["config_name"]: entry for entry in meta["configs"]}
    assert list(configs) == list(SPLIT_ROWS)
    assert configs["protoqa"].get("default") is True
    for config, entry in configs.items():
        assert [f["split"] for f in entry["data_files"]] == list(SPLIT_ROWS[config])
        assert all((out / f["path"]).is_file() for f in entry["data_files"])
    infos = {info["config_name"]: info for info in meta["dataset_info"]}
    assert {c: {s["name"]: s["num_examples"] for s in infos[c]["splits"]} for c in infos} == SPLIT_ROWS
    text = card.text
    assert "Boratko" in text and "Every Answer Matters" in text and "2406.04145" in text
    assert "no licence is stated" in text and "CC BY 4.0" in text
    assert "US English" in text and "stereotyp" in text
    # The stand-in train file is declared in the card, nothing else is.
    assert "## About this copy" in text and "accepted with 980 rows instead of upstream's 8781" in text
    assert "is missing" not in text and "not included" not in text


def test_export_is_deterministic(full_export, hf_env, tmp_path):
    out, _, data_dir = full_export
    again = tmp_path / "again"
    protoqa_dataset.export_dataset(again, data_dir=data_dir, expected_train_rows=980)
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((out / f).read_bytes() == (again / f).read_bytes() for f in files)


# --- the missing train file -------------------------------------------------------------------


def test_export_without_train_fails_and_writes_nothing(shared, hf_env, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(protoqa_dataset.SourceNotFoundError, match="train"):
        protoqa_dataset.export_dataset(out, data_dir=shared)
    assert not out.exists()


def test_partial_export_says_what_is_missing(partial_export, shared, hf_env):
    out, report = partial_export
    assert not report.complete and list(report.skipped) == ["protoqa"] and list(report.skipped["protoqa"]) == ["train"]
    assert "NOT EXPORTED: protoqa train" in report.summary()
    assert not (out / "protoqa" / "train-00000-of-00001.parquet").exists()
    card = huggingface_hub.DatasetCard.load(out / "README.md")
    assert "## About this copy" in card.text and "`protoqa` split `train` is missing" in card.text
    assert "https://raw.githubusercontent.com/iesl/protoqa-data/master/data/train/train.jsonl" in card.text
    assert str(shared) not in card.text  # no paths of the exporting machine in a public card
    protoqa = next(c for c in card.data.to_dict()["configs"] if c["config_name"] == "protoqa")
    assert [f["split"] for f in protoqa["data_files"]] == ["validation", "test"]
    ds = load(out, "protoqa", hf_env=hf_env)
    assert {split: ds[split].num_rows for split in ds} == {"validation": 52, "test": 102}


def test_cli_export(shared, hf_env, tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["export", str(out), "--data-dir", str(shared)]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "train" in err and "--skip-unavailable" in err
    assert not out.exists()

    assert main(["export", str(out), "--data-dir", str(shared), "--config", "cfc"]) == 0
    captured = capsys.readouterr()
    assert "cfc test, 46 rows" in captured.out and "NOT EXPORTED: config protoqa" in captured.out
    assert "incomplete export" in captured.err
    assert load(out, "cfc", split="test", hf_env=hf_env).num_rows == 46

    assert main(["export", str(out), "--data-dir", str(shared), "--config", "cfc"]) == 2
    assert "not empty" in capsys.readouterr().err


def test_overwrite_replaces_only_export_files(full_export, shared, hf_env, tmp_path):
    out = tmp_path / "repo"
    shutil.copytree(full_export[0], out)
    (out / ".gitattributes").write_text("*.parquet filter=lfs\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        protoqa_dataset.export_dataset(out, data_dir=shared, skip_unavailable=True)
    protoqa_dataset.export_dataset(out, data_dir=shared, skip_unavailable=True, overwrite=True)
    assert not (out / "protoqa" / "train-00000-of-00001.parquet").exists()  # stale split removed
    assert (out / ".gitattributes").is_file()
    assert "train" not in load(out, "protoqa", hf_env=hf_env)


# --- upload -----------------------------------------------------------------------------------


def test_upload_dry_run_touches_no_network(full_export, monkeypatch, capsys):
    out, _, _ = full_export

    def no_network(*args, **kwargs):
        raise AssertionError("a dry run must not create an HfApi")

    monkeypatch.setattr("protoqa_dataset.upload.HfApi", no_network)
    assert main(["upload", str(out), "someone/protoqa", "--dry-run"]) == 0
    listing = capsys.readouterr().out
    assert "dry run, nothing sent" in listing and "https://huggingface.co/datasets/someone/protoqa" in listing
    assert "repo_type=dataset" in listing and "cfc/test-00000-of-00001.parquet" in listing


def test_overwrite_deletes_only_what_an_export_wrote(full_export, shared, hf_env, tmp_path):
    from protoqa_dataset.export import MANIFEST

    out = tmp_path / "repo"
    shutil.copytree(full_export[0], out)
    mine = out / "protoqa" / "my-own-shard.parquet"
    mine.write_bytes(b"not from the export")
    notes = out / "cfc" / "notes.txt"
    notes.write_text("keep me", encoding="utf-8")
    protoqa_dataset.export_dataset(out, data_dir=shared, skip_unavailable=True, overwrite=True)
    assert mine.read_bytes() == b"not from the export" and notes.read_text(encoding="utf-8") == "keep me"
    assert not (out / "protoqa" / "train-00000-of-00001.parquet").exists()  # listed in the manifest: removed
    listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert "README.md" in listed and "protoqa/train-00000-of-00001.parquet" not in listed


def test_overwrite_never_replaces_a_readme_that_is_not_an_export_card(shared, hf_env, tmp_path, capsys):
    out = tmp_path / "project"
    out.mkdir()
    (out / "README.md").write_text("# My project\n", encoding="utf-8")
    assert main(["export", str(out), "--data-dir", str(shared), "--config", "cfc", "--overwrite"]) == 2
    assert "README.md is not the card of an earlier export" in capsys.readouterr().err
    assert (out / "README.md").read_text(encoding="utf-8") == "# My project\n"
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]


def test_export_refuses_to_write_into_the_data_folder(hf_env, tmp_path, capsys, shared):
    data = full_data_dir(shared, tmp_path / "data")
    readme = data / "README.md"
    readme.write_text("the data's own README\n", encoding="utf-8")
    for out in (data, data / "export"):
        assert main(["export", str(out), "--data-dir", str(data), "--config", "cfc", "--overwrite"]) == 2
        assert "inside the data folder" in capsys.readouterr().err
    assert readme.read_text(encoding="utf-8") == "the data's own README\n"
    assert not (data / "export").exists()


def test_export_refuses_the_data_folder_it_reads_however_the_folder_is_named(hf_env, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "data").mkdir()
    with pytest.raises(ValueError, match="inside the data folder"):
        protoqa_dataset.export_dataset(tmp_path / "data" / "export", data_dir="~/data", configs=["cfc"])
    monkeypatch.setenv("PROTOQA_DATA_DIR", "~/data")
    with pytest.raises(ValueError, match="inside the data folder"):
        protoqa_dataset.export_dataset(tmp_path / "data" / "export", configs=["cfc"])
    assert list((tmp_path / "data").iterdir()) == []


def _clustered_file(shared: Path, path: Path, questions: int) -> Path:
    """The first ``questions`` CFC test questions as a clustered targets file: the clusters renamed as an
    automatic clustering names them and a provenance block on every line, as the format has them (the export
    checks the file's form and carries its block; how the clusters were made is the block's to say)."""
    block = {"source_sha256": "0" * 64, "clustering": "gmeans(k_init=8,seed=0)", "embedder": "e", "version": "v"}
    lines = []
    for text in (shared / "cfc" / "test.targets.jsonl").read_text(encoding="utf-8").splitlines()[:questions]:
        record = json.loads(text)
        qid = record["metadata"]["id"]
        clusters = record["answers"]["clusters"].values()
        record["answers"]["clusters"] = {f"{qid}.auto{i}": c for i, c in enumerate(clusters)}
        lines.append(json.dumps({**record, "clusters_provenance": block}) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_the_clustered_cfc_is_a_config_of_its_own_with_its_provenance_in_the_card(shared, hf_env, tmp_path):
    clustered = _clustered_file(shared, tmp_path / "clustered.jsonl", 5)
    out = tmp_path / "repo"
    assert (
        main(["export", str(out), "--data-dir", str(shared), "--config", "cfc", "--clustered", f"test={clustered}"])
        == 0
    )
    rows = load(out, "cfc_clustered", split="test", hf_env=hf_env)
    expected = read_targets(clustered)
    assert rows.num_rows == 5 and rows["id"] == list(expected)
    first = clusters_from_records(rows[0]["clusters"], rows[0]["id"])
    assert first == expected[rows[0]["id"]].clusters and first[0].id.endswith(".auto0")
    assert load(out, "cfc", split="test", hf_env=hf_env).num_rows == 46  # the human clusters stay as they were
    card = (out / "README.md").read_text(encoding="utf-8")
    digest = __import__("hashlib").sha256(clustered.read_bytes()).hexdigest()
    assert "config_name: cfc_clustered" in card and "## Automatic clusters (`cfc_clustered`)" in card
    assert "- `test`: clustering `gmeans(k_init=8,seed=0)`, embedder `e`" in card and f"file SHA-256 `{digest}`" in card
    # Human clusters or raw answers are not a clustered file; CFC has no train split.
    plain, elsewhere = shared / "cfc" / "test.targets.jsonl", tmp_path / "other"
    with pytest.raises(ValueError, match="not a clustered targets file .*probeval cluster"):
        protoqa_dataset.export_dataset(elsewhere, data_dir=shared, configs=["cfc"], clustered={"test": plain})
    with pytest.raises(ValueError, match="cfc_clustered: unknown split 'train'"):
        protoqa_dataset.export_dataset(elsewhere, data_dir=shared, configs=["cfc"], clustered={"train": clustered})
    assert not elsewhere.exists()

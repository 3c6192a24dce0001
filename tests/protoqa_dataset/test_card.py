"""The dataset card an export writes: the package's card text with the ``configs:`` and
``dataset_info:`` that stock ``load_dataset`` reads, and a note on every way a copy differs."""

from __future__ import annotations

import importlib

import pytest

from protoqa_dataset.sources import SOURCES
from tests.support.lazy import lazy_import

card = lazy_import("protoqa_dataset.card")  # imports datasets: loaded by the first test that needs it
huggingface_hub = lazy_import("huggingface_hub")

EVERY_SPLIT = {
    config: {split: (f"{config}/{split}-00000-of-00001.parquet", 10 + i, 1000 + i) for i, split in enumerate(splits)}
    for config, splits in SOURCES.items()
}


def metadata(text: str) -> dict:
    return huggingface_hub.DatasetCard(text).data.to_dict()


def test_each_split_has_the_file_name_push_to_hub_gives_it():
    assert card.parquet_path("cfc", "validation") == "cfc/validation-00000-of-00001.parquet"
    assert all(
        path == card.parquet_path(c, s) for c, splits in EVERY_SPLIT.items() for s, (path, _, _) in splits.items()
    )


def test_the_template_is_the_packaged_card_without_configs():
    template = card.card_template()
    assert template == card.CARD_PATH.read_text(encoding="utf-8") and card.CARD_PATH.name == "README.md"
    assert "configs" not in metadata(template) and "dataset_info" not in metadata(template)


def test_a_complete_export_declares_every_file_and_adds_no_note():
    text = card.render_card(EVERY_SPLIT, download_sizes={"cfc": 4242})
    meta = metadata(text)
    assert [c["config_name"] for c in meta["configs"]] == list(SOURCES)
    assert [c["config_name"] for c in meta["configs"] if c.get("default")] == ["protoqa"]
    for entry in meta["configs"]:
        assert entry["data_files"] == [
            {"split": split, "path": path} for split, (path, _, _) in EVERY_SPLIT[entry["config_name"]].items()
        ]
    infos = {info["config_name"]: info for info in meta["dataset_info"]}
    cfc = infos["cfc"]
    assert {s["name"]: (s["num_examples"], s["num_bytes"]) for s in cfc["splits"]} == {
        "validation": (10, 1000),
        "test": (11, 1001),
    }
    assert cfc["dataset_size"] == 2001 and cfc["download_size"] == 4242 and "download_size" not in infos["protoqa"]
    assert [f["name"] for f in cfc["features"]] == [
        "id",
        "question",
        "question_original",
        "source",
        "raw_answers",
        "clusters",
        "num_answers",
    ]
    assert "## About this copy" not in text
    # Everything after the YAML header is the packaged card's text.
    assert text.split("\n---\n", 1)[1].strip() == card.card_template().split("\n---\n", 1)[1].strip()


def test_a_partial_copy_says_what_it_lacks_above_the_split_table():
    written = {"protoqa": dict(list(EVERY_SPLIT["protoqa"].items())[1:]), "cfc": EVERY_SPLIT["cfc"]}
    text = card.render_card(written, notes=["`protoqa` split `train` was accepted with 980 rows."])
    note = text[text.index("## About this copy") : text.index("## Configs and splits")]
    url = SOURCES["protoqa"]["train"].url()
    assert f"- `protoqa` split `train` is missing: its source file ({url})" in note
    assert "- Config `protoqa_scraped_dev` is not included." in note
    assert note.index("is missing") < note.index("not included") < note.index("accepted with 980 rows")
    assert [c["config_name"] for c in metadata(text)["configs"]] == ["protoqa", "cfc"]


def test_a_card_without_the_split_table_gets_the_note_at_its_end(monkeypatch, tmp_path):
    template = tmp_path / "README.md"
    template.write_text("---\nlicense: cc-by-4.0\n---\n# An edited card\n", encoding="utf-8")
    monkeypatch.setattr(importlib.import_module("protoqa_dataset.card"), "CARD_PATH", template)
    text = card.render_card({"cfc": EVERY_SPLIT["cfc"]})
    assert text.rstrip().endswith("- Config `protoqa_scraped_dev` is not included.")
    assert text.index("# An edited card") < text.index("## About this copy")


@pytest.mark.parametrize("notes", [["a stand-in train file"], []])
def test_notes_alone_make_a_note(notes):
    text = card.render_card(EVERY_SPLIT, notes=notes)
    assert ("## About this copy" in text) == bool(notes)
    assert ("- a stand-in train file" in text) == bool(notes)

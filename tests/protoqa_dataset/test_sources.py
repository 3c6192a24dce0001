"""The registry of source files: every split's upstream file, the local names it may have, the
checksums pinned against the public copies, the errors for a config or split that does not
exist, and the fingerprint that ties the ``datasets`` cache to a local folder's contents."""

from __future__ import annotations

import re
import shutil
from collections import Counter

import pytest

from protoqa_core.io.data import SourceError, sha256_of
from protoqa_dataset.sources import CONFIG_NAMES, PAPER_PREDICTIONS, SOURCES, TRAIN_ROWS, local_fingerprint, source_path

SHARED_COPIES = {
    ("protoqa", "validation"): "protoqa/dev.crowdsourced.jsonl",
    ("protoqa", "test"): "protoqa/test.questions.jsonl",
    ("protoqa_scraped_dev", "validation"): "protoqa/dev.scraped.jsonl",
    ("cfc", "validation"): "cfc/dev.targets.jsonl",
    ("cfc", "test"): "cfc/test.targets.jsonl",
}


def test_the_configs_and_their_splits():
    assert CONFIG_NAMES == ("protoqa", "protoqa_scraped_dev", "cfc")
    assert {c: list(s) for c, s in SOURCES.items()} == {
        "protoqa": ["train", "validation", "test"],
        "protoqa_scraped_dev": ["validation"],
        "cfc": ["validation", "test"],
    }
    assert [(c, s) for c, splits in SOURCES.items() for s, f in splits.items() if not f.has_answers] == [
        ("protoqa", "test")
    ]


def test_every_split_is_pinned_by_a_checksum_or_else_by_its_row_count():
    train = SOURCES["protoqa"]["train"]
    assert train.sha256 is None and train.expected_rows == TRAIN_ROWS == 8781
    for config, splits in SOURCES.items():
        for split, source in splits.items():
            if source is not train:
                assert re.fullmatch(r"[0-9a-f]{64}", source.sha256 or ""), (config, split)


def test_the_pinned_checksums_are_those_of_the_public_copies(shared):
    for (config, split), name in SHARED_COPIES.items():
        assert sha256_of(shared / name) == SOURCES[config][split].sha256, name
        assert name in SOURCES[config][split].local_names
    assert sha256_of(shared / "protoqa" / "dev.predictions.gpt2finetuned.json") == PAPER_PREDICTIONS.sha256


def test_no_local_name_belongs_to_two_splits_and_the_upstream_layout_comes_first():
    names = Counter(name for splits in SOURCES.values() for source in splits.values() for name in source.local_names)
    assert [name for name, count in names.items() if count > 1] == []
    for splits in SOURCES.values():
        for source in splits.values():
            assert source.url().startswith("https://raw.githubusercontent.com/")
            assert source.url().endswith("/" + source.local_names[0]) and source.local_names[0] == source.upstream_path


def test_a_split_is_found_in_a_folder_of_the_public_copies(shared):
    path, origin = source_path("cfc", "test", shared)
    assert path == shared / "cfc" / "test.targets.jsonl" and origin == str(path)


@pytest.mark.parametrize(
    "config, split, message",
    [
        ("squad", "train", "unknown config 'squad'; choose one of protoqa, protoqa_scraped_dev, cfc"),
        ("protoqa_scraped_dev", "test", "config 'protoqa_scraped_dev' has no split 'test'; choose one of validation"),
    ],
    ids=["config", "split"],
)
def test_an_unknown_config_or_split_names_the_known_ones(config, split, message, tmp_path):
    with pytest.raises(SourceError) as error:
        source_path(config, split, tmp_path)
    assert str(error.value) == message


def test_the_fingerprint_follows_the_names_and_contents_of_the_recognised_files(shared, tmp_path):
    empty = local_fingerprint(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{16}", empty) and local_fingerprint(tmp_path / "nonexistent") == empty
    (tmp_path / "notes.txt").write_text("not a source file", encoding="utf-8")
    assert local_fingerprint(tmp_path) == empty
    (tmp_path / "cfc").mkdir()
    copy = shutil.copyfile(shared / "cfc" / "dev.targets.jsonl", tmp_path / "cfc" / "dev.targets.jsonl")
    with_dev = local_fingerprint(tmp_path)
    assert with_dev != empty
    copy.write_bytes(copy.read_bytes() + b"\n")
    assert local_fingerprint(tmp_path) not in (empty, with_dev)
    # The same file under another accepted name is another folder for the cache.
    copy.write_bytes((shared / "cfc" / "dev.targets.jsonl").read_bytes())
    copy.rename(tmp_path / "all_dev_targets.jsonl")
    assert local_fingerprint(tmp_path) not in (empty, with_dev)

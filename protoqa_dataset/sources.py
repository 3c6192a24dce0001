"""Where the ProtoQA and CFC files come from, and proof that we got the right ones: each split's upstream file,
local names and checksum (:data:`SOURCES`); finding and checking one is :mod:`protoqa_core.io.data`.

>>> SOURCES["cfc"]["validation"].url()
'https://raw.githubusercontent.com/qxc101/PROBEVAL_CFC/HEAD/CFC_evaluator_data/Evaluator_Input/all_dev_targets.jsonl'
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional, Union

from protoqa_core.io.data import (
    SourceError,
    SourceFile,
    locate_source,
    sha256_of,
)

__all__ = ["TRAIN_ROWS", "SOURCES", "PAPER_PREDICTIONS", "CONFIG_NAMES", "source_path", "local_fingerprint"]

PathLike = Union[str, os.PathLike]

TRAIN_ROWS = 8781
"""Questions in upstream ``data/train/train.jsonl`` (protoqa-data README: 8,781 instances)."""

PROTOQA_BASE = "https://raw.githubusercontent.com/iesl/protoqa-data/master"
# The CFC repository's default branch is not recorded anywhere we could check offline;
# raw.githubusercontent.com resolves HEAD to it, and the checksums catch any drift.
CFC_BASE = "https://raw.githubusercontent.com/qxc101/PROBEVAL_CFC/HEAD"


# Checksums are those of the copies in ../shared/data (README there: copies of the
# public files); the CFC copies have the same sizes as the upstream files.
def _protoqa_source(name: str, upstream_path: str, sha256: Optional[str], **options: Any) -> SourceFile:
    filename = upstream_path.rsplit("/", 1)[-1]
    # A clone of the repository, its data/ folder, the shared-data layout, and flat.
    names = (upstream_path, upstream_path.removeprefix("data/"), f"protoqa/{filename}", filename)
    return SourceFile(name, PROTOQA_BASE, upstream_path, names, sha256, **options)


# No checksum for train: no copy of train.jsonl was available to hash when this was
# written, so the file is verified by structure (full parse) and row count.
_TRAIN = _protoqa_source("ProtoQA scraped train", "data/train/train.jsonl", None, expected_rows=TRAIN_ROWS)
_DEV_CROWDSOURCED = _protoqa_source(
    "ProtoQA crowdsourced dev",
    "data/dev/dev.crowdsourced.jsonl",
    "cd3bec04e9ec9294ebf5b75eda6eb0d5abcffec926407eaf852be9c744c67ce5",
)
_DEV_SCRAPED = _protoqa_source(
    "ProtoQA scraped dev",
    "data/dev/dev.scraped.jsonl",
    "ed2d094741de9e7eae0091eaeeca8a94104aa49792efdd75bed91d3ab6177576",
)
_TEST_QUESTIONS = _protoqa_source(
    "ProtoQA test questions",
    "data/test/test.questions.jsonl",
    "e09f227f397a5a1bb35e31746aa81a6fe81d058d92f4065a0c66daedc81f249f",
    has_answers=False,
)


def _cfc_source(name: str, upstream_filename: str, shared_name: str, sha256: str) -> SourceFile:
    upstream_path = f"CFC_evaluator_data/Evaluator_Input/{upstream_filename}"
    inside = f"Evaluator_Input/{upstream_filename}"
    names = (upstream_path, inside, f"cfc/{upstream_filename}", upstream_filename, f"cfc/{shared_name}")
    return SourceFile(name, CFC_BASE, upstream_path, names, sha256)


_CFC_DEV = _cfc_source(
    "CFC dev",
    "all_dev_targets.jsonl",
    "dev.targets.jsonl",
    "2eefef0b81bd3c7238fdd649e9f1f18e91fb96cf76e442dade74674f4dea1502",
)
_CFC_TEST = _cfc_source(
    "CFC test",
    "20220715_ground_truth_targets.jsonl",
    "test.targets.jsonl",
    "518a2044fe10875b5a2d14f671f0af8544e870f3bedac53ca5e0c6c9f90727af",
)

SOURCES: Mapping[str, Mapping[str, SourceFile]] = {
    "protoqa": {"train": _TRAIN, "validation": _DEV_CROWDSOURCED, "test": _TEST_QUESTIONS},
    "protoqa_scraped_dev": {"validation": _DEV_SCRAPED},
    "cfc": {"validation": _CFC_DEV, "test": _CFC_TEST},
}
"""config name -> split name -> source file."""

CONFIG_NAMES: tuple[str, ...] = tuple(SOURCES)

PAPER_PREDICTIONS = _protoqa_source(
    "ProtoQA paper's fine-tuned GPT-2 dev answers",
    "data/dev/dev.predictions.gpt2finetuned.json",
    "2e97b518632dca3ee90eb7da8f161bb33dc1712ddd70a045686948930deb5a56",
)
"""The ranked answers of the ProtoQA paper's GPT-2 baseline for the crowdsourced dev questions."""


def source_path(config: str, split: str, data_dir: Optional[PathLike] = None, **options: Any) -> tuple[Path, str]:
    """``(path, origin)`` of one split's file, found by :func:`protoqa_core.io.data.locate_source` (with its
    ``options``).

    >>> source_path("cfc", "dev")
    Traceback (most recent call last):
    ...
    protoqa_core.io.data.SourceError: config 'cfc' has no split 'dev'; choose one of validation, test
    """
    if config not in SOURCES:
        raise SourceError(f"unknown config {config!r}; choose one of {', '.join(SOURCES)}")
    if split not in SOURCES[config]:
        raise SourceError(f"config {config!r} has no split {split!r}; choose one of {', '.join(SOURCES[config])}")
    return locate_source(SOURCES[config][split], data_dir, where=f"config {config!r}, split {split!r}", **options)


def local_fingerprint(data_dir: PathLike) -> str:
    """A digest of every recognised source file in ``data_dir``, so that editing one invalidates the ``datasets``
    cache instead of silently serving the old rows.

    >>> len(local_fingerprint("/nonexistent"))
    16
    """
    data_dir = Path(data_dir)
    names = sorted({name for splits in SOURCES.values() for s in splits.values() for name in s.local_names})
    digest = hashlib.sha256()
    for name in names:
        path = data_dir / name
        if path.is_file():
            digest.update(f"{name}\0{sha256_of(path)}\0".encode())
    return digest.hexdigest()[:16]

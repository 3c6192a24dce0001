"""ProtoQA and CFC as a ``datasets`` builder, used directly since ``datasets`` 4 runs no loading scripts (stock
``load_dataset`` reads the Parquet export, :mod:`protoqa_dataset.export`, made by this builder). Files are
downloaded from upstream and verified, or read from ``data_dir`` / ``PROTOQA_DATA_DIR``.

>>> ds = load_protoqa("cfc", data_dir="../shared/data")  # doctest: +SKIP
>>> ds["validation"].num_rows, ds["test"].num_rows  # doctest: +SKIP
(54, 46)
"""

from __future__ import annotations

import hashlib
import inspect
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import datasets
from datasets.utils import logging as ds_logging

from protoqa_core.citations import PROBEVAL_CITATION, PROTOQA_CITATION
from protoqa_core.io import readers as _readers
from protoqa_core.io.data import (
    DATA_DIR_ENV,
    SourceDownloadError,
    SourceFile,
    SourceNotFoundError,
    fetch,
    locate_local,
    named_data_dir,
    verify_checksum,
    verify_row_count,
)

from . import parsing as _parsing
from . import schema as _schema
from . import sources as _sources
from .parsing import read_rows
from .schema import FEATURES
from .sources import SOURCES, TRAIN_ROWS, local_fingerprint

__all__ = ["ProtoQAConfig", "ProtoQA", "load_protoqa", "CITATION", "DATASET_NAME", "VERSION"]

logger = ds_logging.get_logger(__name__)

DATASET_NAME = "protoqa"
VERSION = datasets.Version("1.0.0")

# CFC was introduced with ProbEval, so its citation is ProbEval's paper.
CFC_CITATION = PROBEVAL_CITATION

CITATION = PROTOQA_CITATION + "\n" + CFC_CITATION

_DESCRIPTIONS = {
    "protoqa": (
        "ProtoQA: questions about prototypical situations ('Name something people do before they leave "
        "the house for work') with answers clustered and counted. train: 8,781 questions scraped from "
        "Family Feud fan sites (one string per cluster); validation: the crowdsourced dev set (about 100 "
        "answers per question, clustered by hand); test: 102 questions without answers."
    ),
    "protoqa_scraped_dev": (
        "ProtoQA scraped dev: 980 Family Feud questions from the same fan sites as train, one string per "
        "cluster. Meant for model development, not for the generative evaluation."
    ),
    "cfc": (
        "CFC (commonsense frame completion): a context sentence and a question about one missing slot, "
        "roughly 100 crowd answers each (82 on average in dev, 104 in test), clustered by hand. "
        "validation: 54 questions; test: 46 questions."
    ),
}
_HOMEPAGES = {
    "protoqa": "https://github.com/iesl/protoqa-data",
    "protoqa_scraped_dev": "https://github.com/iesl/protoqa-data",
    "cfc": "https://github.com/qxc101/PROBEVAL_CFC",
}
_LICENSES = {
    "protoqa": "cc-by-4.0",
    "protoqa_scraped_dev": "cc-by-4.0",
    "cfc": "unknown (no licence is stated in the upstream repository)",
}


def _code_hash() -> str:
    # Like datasets does for scripts: a new version of the loading code gets a new
    # cache directory instead of serving rows built by the old one.
    digest = hashlib.sha256()
    for module in (_sources, _parsing, _schema, _readers):
        digest.update(Path(inspect.getfile(module)).read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


_CODE_HASH = _code_hash()


@dataclass
class ProtoQAConfig(datasets.BuilderConfig):
    """Builder options on top of ``name`` and ``data_dir``: a mirror's ``base_url``, whether to verify checksums
    and the train row count (which stands in for the train file's checksum), whether to build the other splits
    when one's file is unavailable (never when verification fails), and the local files' fingerprint, set by
    :class:`ProtoQA` so that the cache follows them."""

    base_url: Optional[str] = None
    verify_sources: bool = True
    expected_train_rows: int = TRAIN_ROWS
    skip_unavailable: bool = False
    source_fingerprint: Optional[str] = None


class ProtoQA(datasets.GeneratorBasedBuilder):
    """ProtoQA and CFC questions with answer clusters, one schema for every config; ``data_dir`` may use the upstream
    layouts or the flat one of ``../shared/data`` (:data:`protoqa_dataset.sources.SOURCES`).

    >>> builder = ProtoQA(config_name="cfc", data_dir="../shared/data", cache_dir="/tmp/hf")  # doctest: +SKIP
    >>> builder.download_and_prepare()  # doctest: +SKIP
    >>> builder.as_dataset("validation")[0]["clusters"]["count"][:3]  # doctest: +SKIP
    [14, 66, 4]
    """

    BUILDER_CONFIG_CLASS = ProtoQAConfig
    BUILDER_CONFIGS = [ProtoQAConfig(name=name, version=VERSION, description=_DESCRIPTIONS[name]) for name in SOURCES]
    DEFAULT_CONFIG_NAME = "protoqa"

    def __init__(
        self,
        cache_dir: Optional[str] = None,
        dataset_name: Optional[str] = None,
        config_name: Optional[str] = None,
        hash: Optional[str] = None,
        data_dir: Optional[Union[str, os.PathLike]] = None,
        **kwargs: Any,
    ):
        named = named_data_dir(data_dir)
        data_dir = None if named is None else str(named.resolve())
        if data_dir is not None:
            kwargs.setdefault("source_fingerprint", local_fingerprint(data_dir))
        # Without dataset_name the builder would be named after this module ("builder").
        super().__init__(
            cache_dir=cache_dir,
            dataset_name=dataset_name or DATASET_NAME,
            config_name=config_name,
            hash=hash or _CODE_HASH,
            data_dir=data_dir,
            **kwargs,
        )
        self.skipped_splits: dict[str, str] = {}

    def _info(self) -> datasets.DatasetInfo:
        name = self.config.name
        return datasets.DatasetInfo(
            description=_DESCRIPTIONS.get(name, ""),
            features=FEATURES,
            homepage=_HOMEPAGES.get(name, ""),
            license=_LICENSES.get(name, ""),
            citation=CFC_CITATION + "\n" + PROTOQA_CITATION if name == "cfc" else PROTOQA_CITATION,
        )

    def _obtain(self, source: SourceFile, dl_manager: datasets.DownloadManager, where: str) -> Path:
        """Local or downloaded path of ``source``, checksum-verified unless disabled."""
        if self.config.data_dir:
            path = locate_local(source, self.config.data_dir, where)
            origin = str(path)
        else:
            path, origin = fetch(source, dl_manager.download, self.config.base_url, where)
        if self.config.verify_sources:
            verify_checksum(source, path, origin, where)
        return path

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        if self.config.name not in SOURCES:
            raise ValueError(f"unknown config {self.config.name!r}; choose one of {', '.join(SOURCES)}")
        self.skipped_splits = {}
        generators = []
        for split, source in SOURCES[self.config.name].items():
            where = f"config {self.config.name!r}, split {split!r}"
            try:
                path = self._obtain(source, dl_manager, where)
            except (SourceNotFoundError, SourceDownloadError) as exc:
                if not self.config.skip_unavailable:
                    raise type(exc)(
                        f"{str(exc).rstrip('.')}. To build the other splits without it, pass skip_unavailable=True."
                    ) from exc
                self.skipped_splits[split] = str(exc)
                logger.warning(f"skipping split {split!r} of {self.config.name!r}: {exc}")
                continue
            # Parse everything now: errors surface here with file and line, rather
            # than wrapped in a DatasetGenerationError halfway through writing.
            rows = read_rows(path, has_answers=source.has_answers)
            if self.config.verify_sources and source.sha256 is None:
                expected = self.config.expected_train_rows if split == "train" else None
                verify_row_count(source, path, len(rows), expected, where)
            generators.append(
                datasets.SplitGenerator(name=split, gen_kwargs={"path": str(path), "has_answers": source.has_answers})
            )
        if not generators:
            raise SourceNotFoundError(
                f"config {self.config.name!r}: no split is available: " + " | ".join(self.skipped_splits.values())
            )
        return generators

    def _generate_examples(self, path: str, has_answers: bool) -> Iterator[tuple[str, dict[str, Any]]]:
        for row in read_rows(path, has_answers=has_answers):
            yield row["id"], row


def load_protoqa(
    name: str = "protoqa",
    *,
    data_dir: Optional[Union[str, Path]] = None,
    split: Optional[str] = None,
    cache_dir: Optional[str] = None,
    download_mode: Optional[Union[str, datasets.DownloadMode]] = None,
    **config_kwargs: Any,
) -> Union[datasets.DatasetDict, datasets.Dataset]:
    """Build (or reuse from cache) one config and return it, like ``load_dataset``; ``config_kwargs`` are
    :class:`ProtoQAConfig` options, and splits skipped with ``skip_unavailable=True`` are named in a warning.

    >>> ds = load_protoqa("protoqa", data_dir="../shared/data", skip_unavailable=True)  # doctest: +SKIP
    >>> sorted(ds)  # doctest: +SKIP
    ['test', 'validation']
    """
    builder = ProtoQA(config_name=name, data_dir=data_dir, cache_dir=cache_dir, **config_kwargs)
    builder.download_and_prepare(download_mode=download_mode)
    missing = [s for s in SOURCES[name] if s not in (builder.info.splits or {})]
    if missing:
        warnings.warn(
            f"{name}: split(s) {', '.join(missing)} not built: their source files were unavailable "
            f"(skip_unavailable=True). Set data_dir or {DATA_DIR_ENV} to a directory that has them.",
            stacklevel=2,
        )
    if split is not None and split in missing:
        raise ValueError(f"{name}: split {split!r} was not built because its source file was unavailable")
    return builder.as_dataset(split=split)

"""Write a Hub-ready dataset repository folder that stock ``load_dataset`` reads: one Parquet file per config
and split, built by :class:`protoqa_dataset.builder.ProtoQA`, and the card with ``configs:`` in its YAML.

>>> report = export_dataset("/tmp/protoqa-export", data_dir="../shared/data", skip_unavailable=True)  # doctest: +SKIP
>>> print(report.summary())  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import datasets

from protoqa_core.cli import replace_file, write_output_file
from protoqa_core.io.data import resolve_data_dir
from protoqa_core.io.readers import CLUSTERS_PROVENANCE_KEY, ChecksumSpool, read_targets_and_block

from .builder import ProtoQA
from .card import SplitFile, parquet_path, render_card
from .parsing import read_rows
from .schema import FEATURES
from .sources import SOURCES, TRAIN_ROWS

__all__ = ["ExportReport", "export_dataset", "MANIFEST", "CLUSTERED_CONFIG"]

PathLike = Union[str, os.PathLike]

MANIFEST = ".cache/huggingface/protoqa-export-manifest.json"
"""Where an export lists the files it wrote, relative to its folder. ``--overwrite``
deletes only files listed there. The Hub client never uploads ``.cache/huggingface``."""

CLUSTERED_CONFIG = "cfc_clustered"
"""The config an export adds for CFC with automatic clusters, one split per clustered targets file given
(``clustered=``, ``--clustered SPLIT=FILE``): files that ``probeval cluster`` writes from CFC's raw answers."""
_CLUSTERED_SPLITS = ("validation", "test")


@dataclass
class ExportReport:
    """What an export wrote (config -> split -> (relative Parquet path, rows, Arrow bytes)) and what it left out:
    the splits ``skipped`` (config -> split -> why) and the configs ``excluded``."""

    out_dir: Path
    files: dict[str, dict[str, SplitFile]] = field(default_factory=dict)
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)
    excluded: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when every split of every config was exported."""
        return not self.skipped and not self.excluded

    def summary(self) -> str:
        """A human-readable account, one line per split, missing ones flagged.

        >>> print(ExportReport(Path("out"), {"cfc": {"test": ("cfc/t.parquet", 46, 1)}}, excluded=["protoqa"]).summary())
        out/cfc/t.parquet: cfc test, 46 rows
        NOT EXPORTED: config protoqa (not requested)
        """
        lines = [
            f"{self.out_dir / path}: {config} {split}, {rows} rows"
            for config, splits in self.files.items()
            for split, (path, rows, _) in splits.items()
        ]
        lines += [
            f"NOT EXPORTED: {config} {split}: {reason}"
            for config, splits in self.skipped.items()
            for split, reason in splits.items()
        ]
        lines += [f"NOT EXPORTED: config {config} (not requested)" for config in self.excluded]
        return "\n".join(lines)


def _check_not_in_data(path: Path, data_dir: Optional[PathLike]) -> None:
    """Refuse ``path`` when its real location (links resolved) is the data folder the builder reads or inside it."""
    source = resolve_data_dir(data_dir)
    if source is not None and source.is_dir():
        source_dir, target = source.resolve(), path.resolve()
        if target == source_dir or source_dir in target.parents:
            raise ValueError(
                f"{path} is inside the data folder {source} that the export reads from"
                f"{f' (it leads to {target})' if target != path.absolute() else ''}; "
                "export to another folder"
            )


def _check_target(out_dir: Path, relative: str, data_dir: Optional[PathLike]) -> Path:
    """``out_dir / relative`` after checking that no folder on the way is a link out of ``out_dir``."""
    target = out_dir / relative
    _check_not_in_data(target, data_dir)
    root = out_dir.resolve()
    folder = target.parent.resolve()
    if folder != root and root not in folder.parents or folder != root / Path(relative).parent:
        raise ValueError(
            f"{target.parent} is a link to {folder}; an export writes only inside {out_dir}, remove the link"
        )
    return target


def _check_out_dir(out_dir: Path, overwrite: bool, data_dir: Optional[PathLike]) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"{out_dir} exists and is not a directory")
    _check_not_in_data(out_dir, data_dir)
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        raise FileExistsError(
            f"{out_dir} is not empty; pass overwrite=True (--overwrite) to replace a previous export in it"
        )


def _written_before(out_dir: Path) -> list[Path]:
    """The files a previous export in ``out_dir`` wrote, from its manifest (none without one)."""
    manifest = out_dir / MANIFEST
    if not manifest.is_file():
        return []
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
            raise TypeError
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise ValueError(f"{manifest} is damaged; remove it and the files of the previous export by hand") from None
    root = out_dir.resolve()
    files = []
    for name in listed:
        path = (out_dir / name).resolve()
        if root in path.parents and path.is_file():  # never follow a listing outside the folder
            files.append(out_dir / name)
    return files


def _is_export_card(readme: Path) -> bool:
    """Whether ``readme`` is a dataset card with ``configs:`` for our configs (an earlier export's)."""
    try:
        text = readme.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    header = text.split("\n---", 1)[0] if text.startswith("---") else ""
    return "configs:" in header and any(f"config_name: {name}" in header for name in SOURCES)


def _prepare_out_dir(out_dir: Path) -> None:
    if out_dir.is_dir():
        readme = out_dir / "README.md"
        previous = _written_before(out_dir)
        if readme.exists() and readme not in previous and not _is_export_card(readme):
            raise FileExistsError(f"{readme} is not the card of an earlier export; move it away to export here")
        # Only what an earlier export wrote is removed, so an export can be refreshed
        # inside a clone of the Hub repository without touching .git, .gitattributes or
        # anything of the user's.
        for path in previous:
            path.unlink()
        for config in (*SOURCES, CLUSTERED_CONFIG):
            folder = out_dir / config
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
    out_dir.mkdir(parents=True, exist_ok=True)


def _write_manifest(out_dir: Path, relative_paths: list[str], data_dir: Optional[PathLike]) -> None:
    (out_dir / MANIFEST).parent.mkdir(parents=True, exist_ok=True)
    manifest = _check_target(out_dir, MANIFEST, data_dir)
    text = json.dumps({"written_by": "python -m protoqa_dataset export", "files": relative_paths}, indent=1) + "\n"
    write_output_file(manifest, lambda fh: fh.write(text))


def _verification_notes(builder_kwargs: dict) -> list[str]:
    # The card claims verified sources; an export that relaxed the checks must say so.
    if builder_kwargs.get("verify_sources") is False:
        return ["The source files were not checked against the upstream checksums and train row count."]
    rows = builder_kwargs.get("expected_train_rows", TRAIN_ROWS)
    if rows != TRAIN_ROWS:
        return [f"The train file was accepted with {rows} rows instead of upstream's {TRAIN_ROWS}."]
    return []


def _build(
    config: str, data_dir: Optional[PathLike], cache_dir: str, builder_kwargs: dict
) -> tuple[datasets.DatasetDict, dict[str, str]]:
    builder = ProtoQA(config_name=config, data_dir=data_dir, cache_dir=cache_dir, **builder_kwargs)
    # REUSE_CACHE_IF_EXISTS reuses downloads but always regenerates the splits, so
    # the rows (and skipped_splits) come from the sources as they are now.
    builder.download_and_prepare(download_mode=datasets.DownloadMode.REUSE_CACHE_IF_EXISTS)
    return builder.as_dataset(), dict(builder.skipped_splits)


def _read_clustered(clustered: Mapping[str, PathLike]) -> dict[str, tuple[datasets.Dataset, dict[str, Any]]]:
    """Each split's rows from its clustered targets file (the builder's row parser) and the file's provenance
    block, with the SHA-256 of the file as read under ``file_sha256``. A split CFC does not have, or a file
    without the block (human clusters, raw answers), is refused, naming it."""
    splits: dict[str, tuple[datasets.Dataset, dict[str, Any]]] = {}
    for split, path in clustered.items():
        if split not in _CLUSTERED_SPLITS:
            raise ValueError(f"{CLUSTERED_CONFIG}: unknown split {split!r}; choose from {', '.join(_CLUSTERED_SPLITS)}")
        checksum = ChecksumSpool()
        _, provenance = read_targets_and_block(path, CLUSTERS_PROVENANCE_KEY, spool=checksum)
        if provenance is None:
            raise ValueError(
                f"{path}: not a clustered targets file (no {CLUSTERS_PROVENANCE_KEY} block on its lines); "
                "write one from raw answers with `probeval cluster`"
            )
        rows = read_rows(path, has_answers=True)
        dataset = datasets.Dataset.from_list(rows, features=FEATURES, split=datasets.NamedSplit(split))
        splits[split] = (dataset, {**provenance, "file_sha256": checksum.hexdigest()})
    return splits


def _write_split(
    out_dir: Path,
    config: str,
    split: str,
    dataset: datasets.Dataset,
    num_bytes: int,
    data_dir: Optional[PathLike],
    report: ExportReport,
    download_sizes: dict[str, int],
) -> None:
    """One split's Parquet file, recorded in ``report`` and ``download_sizes``."""
    relative = parquet_path(config, split)
    target = out_dir / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    _check_target(out_dir, relative, data_dir)
    # Through a temporary file that replaces the name: a planted link is never followed.
    replace_file(target, lambda temporary: dataset.to_parquet(str(temporary)))
    report.files.setdefault(config, {})[split] = (relative, dataset.num_rows, num_bytes)
    download_sizes[config] = download_sizes.get(config, 0) + target.stat().st_size


def export_dataset(
    out_dir: PathLike,
    *,
    data_dir: Optional[PathLike] = None,
    configs: Optional[Iterable[str]] = None,
    skip_unavailable: bool = False,
    overwrite: bool = False,
    cache_dir: Optional[PathLike] = None,
    clustered: Optional[Mapping[str, PathLike]] = None,
    **builder_kwargs,
) -> ExportReport:
    """Export configs to ``out_dir`` (empty or absent, unless ``overwrite`` replaces what its :data:`MANIFEST`
    lists) as Parquet plus a dataset card; ``clustered`` (split -> a clustered targets file of CFC) adds
    :data:`CLUSTERED_CONFIG`. ``skip_unavailable`` exports the other splits when a source is missing, saying
    so in the report and the card. Nothing is written unless every requested config builds.

    >>> export_dataset("out", data_dir="../shared/data", configs=["cfc"]).files["cfc"]["test"][1]  # doctest: +SKIP
    46
    """
    out_dir = Path(out_dir)
    wanted = list(SOURCES) if configs is None else list(dict.fromkeys(configs))
    unknown = [c for c in wanted if c not in SOURCES]
    if unknown or not wanted:
        raise ValueError(f"unknown or no config(s) {unknown}; choose from {', '.join(SOURCES)}")
    _check_out_dir(out_dir, overwrite, data_dir)
    extra = [parquet_path(CLUSTERED_CONFIG, split) for split in clustered or {}]
    for relative in ["README.md", MANIFEST, *(parquet_path(c, split) for c in wanted for split in SOURCES[c]), *extra]:
        _check_target(out_dir, relative, data_dir)  # before any work, and before anything is removed
    clustered_splits = _read_clustered(clustered or {})
    report = ExportReport(out_dir=out_dir, excluded=[c for c in SOURCES if c not in wanted])
    kwargs = {"skip_unavailable": skip_unavailable, **builder_kwargs}

    with tempfile.TemporaryDirectory(prefix="protoqa-export-") as tmp:
        built = {config: _build(config, data_dir, str(cache_dir or tmp), kwargs) for config in wanted}
        _prepare_out_dir(out_dir)
        download_sizes: dict[str, int] = {}
        for config, (dataset_dict, skipped) in built.items():
            if skipped:
                report.skipped[config] = skipped
            report.files[config] = {}
            for split in (s for s in SOURCES[config] if s in dataset_dict):
                dataset = dataset_dict[split]
                num_bytes = dataset.info.splits[split].num_bytes
                _write_split(out_dir, config, split, dataset, num_bytes, data_dir, report, download_sizes)
        for split, (dataset, _) in clustered_splits.items():
            _write_split(
                out_dir, CLUSTERED_CONFIG, split, dataset, dataset.data.nbytes, data_dir, report, download_sizes
            )
        provenance = {split: block for split, (_, block) in clustered_splits.items()}
        card = render_card(report.files, download_sizes, _verification_notes(kwargs), provenance)
        write_output_file(_check_target(out_dir, "README.md", data_dir), lambda fh: fh.write(card))
        written = ["README.md", *(path for splits in report.files.values() for path, _, _ in splits.values())]
        _write_manifest(out_dir, [str(p) for p in written], data_dir)
    return report

"""The dataset card: the package's ``README.md`` plus what only an export knows: ``configs:`` (read by stock
``load_dataset``), ``dataset_info:`` (as ``push_to_hub`` writes it) and how a partial copy differs.

>>> text = render_card({"cfc": {"validation": ("cfc/validation-00000-of-00001.parquet", 54, 1000)}})  # doctest: +SKIP
>>> "config_name: cfc" in text  # doctest: +SKIP
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Optional

import datasets
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCard

from .schema import FEATURES
from .sources import SOURCES

__all__ = ["CARD_PATH", "SplitFile", "card_template", "render_card", "parquet_path", "clustered_section"]

CARD_PATH = Path(__file__).resolve().parent / "README.md"

SplitFile = tuple[str, int, int]
"""(path relative to the export folder, number of rows, Arrow size in bytes)."""


def parquet_path(config: str, split: str) -> str:
    """Where an export puts one split, following ``push_to_hub``'s naming.

    >>> parquet_path("protoqa", "train")
    'protoqa/train-00000-of-00001.parquet'
    """
    return f"{config}/{split}-00000-of-00001.parquet"


def card_template() -> str:
    """The card as shipped in the package (no ``configs:`` yet).

    >>> card_template().startswith("---")
    True
    """
    return CARD_PATH.read_text(encoding="utf-8")


def _copy_notes(written: Mapping[str, Mapping[str, SplitFile]], notes: Iterable[str]) -> str:
    lines = []
    for config, splits in SOURCES.items():
        if config not in written:
            lines.append(f"- Config `{config}` is not included.")
            continue
        for split, source in splits.items():
            if split not in written[config]:
                # The card is public: name the upstream file, not the exporting machine's paths.
                lines.append(
                    f"- `{config}` split `{split}` is missing: its source file ({source.url()}) "
                    f"was unavailable when this copy was made."
                )
    lines += [f"- {note}" for note in notes]
    if not lines:
        return ""
    return (
        "\n## About this copy\n\n"
        "The rest of this card describes the full, verified dataset. This copy differs:\n\n" + "\n".join(lines) + "\n"
    )


def clustered_section(provenance: Mapping[str, Mapping[str, Any]]) -> str:
    """The card's section on the ``cfc_clustered`` config: how each split's automatic clusters were made.

    >>> print(clustered_section({"test": {"clustering": "gmeans(seed=0)", "file_sha256": "ab"}}).strip())
    ## Automatic clusters (`cfc_clustered`)
    <BLANKLINE>
    The `cfc_clustered` config holds CFC's questions and raw answers with clusters made by an automatic
    clustering, not by people, as `probeval cluster` wrote them; a score made from them names the file's
    SHA-256 in its signature. Each split's clusters were made as follows:
    <BLANKLINE>
    - `test`: clustering `gmeans(seed=0)`, file SHA-256 `ab`
    """
    if not provenance:
        return ""
    fields = (
        ("clustering", "clustering"), ("embedder", "embedder"), ("embedder_weights_sha256", "encoder weights SHA-256"),
        ("source_sha256", "raw answers SHA-256"), ("version", "version"), ("file_sha256", "file SHA-256"),
    )  # fmt: skip
    lines = [
        f"- `{split}`: " + ", ".join(f"{label} `{block[key]}`" for key, label in fields if block.get(key) is not None)
        for split, block in provenance.items()
    ]
    return (
        "\n## Automatic clusters (`cfc_clustered`)\n\n"
        "The `cfc_clustered` config holds CFC's questions and raw answers with clusters made by an automatic\n"
        "clustering, not by people, as `probeval cluster` wrote them; a score made from them names the file's\n"
        "SHA-256 in its signature. Each split's clusters were made as follows:\n\n" + "\n".join(lines) + "\n"
    )


def render_card(
    written: Mapping[str, Mapping[str, SplitFile]],
    download_sizes: Optional[Mapping[str, int]] = None,
    notes: Iterable[str] = (),
    clustered: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> str:
    """The card for an export holding the ``written`` files (config -> split -> :data:`SplitFile`, in listing
    order); configs and splits absent from them are named in an "About this copy" section, with ``notes``.

    >>> render_card({"cfc": {"test": ("cfc/test-00000-of-00001.parquet", 46, 9)}}).count("config_name: cfc")  # doctest: +SKIP
    2
    """
    card = DatasetCard(card_template())
    infos = DatasetInfosDict()
    configs = []
    for config, splits in written.items():
        entry: dict[str, Any] = {
            "config_name": config,
            "data_files": [{"split": split, "path": path} for split, (path, _, _) in splits.items()],
        }
        if config == "protoqa":
            entry["default"] = True
        configs.append(entry)
        split_dict = datasets.SplitDict(dataset_name=config)
        for split, (_, rows, num_bytes) in splits.items():
            split_dict.add(datasets.SplitInfo(name=split, num_bytes=num_bytes, num_examples=rows))
        infos[config] = datasets.DatasetInfo(
            features=FEATURES,
            splits=split_dict,
            config_name=config,
            download_size=(download_sizes or {}).get(config),
            dataset_size=sum(num_bytes for _, _, num_bytes in splits.values()),
        )
    infos.to_dataset_card_data(card.data)
    card.data["configs"] = configs
    text = str(card)
    note = _copy_notes(written, notes) + clustered_section(clustered or {})
    if note:
        # Right above the split table when it is there; at the end otherwise, so an
        # edited card can never lose the note.
        marker = "\n## Configs and splits\n"
        text = text.replace(marker, note + marker, 1) if marker in text else text.rstrip("\n") + "\n" + note
    return text

"""What the lighteval tasks of :mod:`.tasks` do without lighteval: data, prompts, per-question scores.

The prompts and scores are those of :mod:`protoqa_integrations.harnesses.task_functions`, so the
two harnesses score the same answers the same way. Data (:func:`dataset_source`): lighteval reads
rows with ``datasets.load_dataset``, so the JSONL files are written once as a Parquet copy under
``$PROTOQA_CACHE_DIR/lighteval``, in a folder named by a digest of the rows (changed files give a
new copy, never a stale one), unless ``$PROTOQA_PARQUET`` names an export; docs/evaluate-a-model.md.

>>> doc = {"id": "q1", "question": "name a pet", "clusters": {"id": ["q1.0", "q1.1"],
...        "answers": [["dog"], ["cat"]], "count": [6, 4]}}
>>> TASKS["protoqa"].prompt(doc)
'one pet is'
>>> scores = score_samples(doc, [" Dog.", " cat", " dog"])
>>> scores["em_ans@1"], round(scores["KL"], 4)
(1.0, 0.0355)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from protoqa_core.io.cache_files import cache_dir
from protoqa_core.io.data import data_dir_from_env
from protoqa_integrations.generation.settings import (
    CFC_NUM_SAMPLES,
    PAPER_MAX_NEW_TOKENS,
    PAPER_TEMPERATURE,
    PAPER_TOP_P,
    PROTOQA_NUM_SAMPLES,
    answer_from_text,
)
from protoqa_integrations.harnesses.metric_names import COLLAPSED_NAME
from protoqa_integrations.harnesses.task_functions import (
    cfc_one_shot_prompt,
    parquet_from_env,
    process_results,
    protoqa_prompt,
)

__all__ = [
    "TaskSpec",
    "TASKS",
    "SAMPLING_PARAMETERS",
    "MAX_NEW_TOKENS",
    "dataset_source",
    "write_parquet_copy",
    "clean_samples",
    "score_samples",
]

MAX_NEW_TOKENS = PAPER_MAX_NEW_TOKENS

SAMPLING_PARAMETERS: Mapping[str, float] = {"temperature": PAPER_TEMPERATURE, "top_p": PAPER_TOP_P, "top_k": 0}
"""The protocol's sampling settings. lighteval takes them from the model arguments, not from
the task: ``generation_parameters={temperature:0.69,top_p:0.9,top_k:0}``."""


@dataclass(frozen=True)
class TaskSpec:
    """One task: its ``protoqa_dataset`` config and split, its prompt and samples per question."""

    name: str
    config: str
    split: str
    prompt: Callable[[dict], str]
    num_samples: int


TASKS: Mapping[str, TaskSpec] = {
    "protoqa": TaskSpec("protoqa", "protoqa", "validation", protoqa_prompt, PROTOQA_NUM_SAMPLES),
    "cfc": TaskSpec("cfc", "cfc", "validation", cfc_one_shot_prompt, CFC_NUM_SAMPLES),
}
"""``protoqa``: ProtoQA crowdsourced dev, 300 samples per question; ``cfc``: CFC dev, 100."""


def _parquet_name(split: str) -> str:
    # The file name `datasets` gives a split of a pushed dataset; it infers the split from it.
    return f"{split}-00000-of-00001.parquet"


def write_parquet_copy(root: Path, splits: Mapping[tuple[str, str], Any]) -> Path:
    """Write ``{(config, split): Dataset}`` once under ``root``, in a folder named by their digest.

    A folder of the same digest is reused; a new one is written under a temporary name and renamed
    into place, so a reader never sees half a copy and no existing path is written through.
    """
    rows = {f"{config}/{split}": dataset.to_list() for (config, split), dataset in sorted(splits.items())}
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
    root.mkdir(parents=True, exist_ok=True)
    final = root / digest
    if final.is_symlink() or (final.exists() and not final.is_dir()):
        raise FileExistsError(f"{final} exists and is not a folder this module wrote; remove it")
    if (final / "README.md").is_file():
        return final
    partial = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=root))
    try:
        configs: dict[str, list[str]] = {}
        for (config, split), dataset in sorted(splits.items()):
            (partial / config).mkdir(exist_ok=True)
            dataset.to_parquet(str(partial / config / _parquet_name(split)))
            configs.setdefault(config, []).append(split)
        card = ["---", "configs:"]
        for config, names in configs.items():
            card += [f"- config_name: {config}", "  data_files:"]
            card += [f"  - split: {split}\n    path: {config}/{_parquet_name(split)}" for split in names]
        card += ["---", "", "A Parquet copy of ProtoQA / CFC splits for lighteval, written by protoqa-eval.", ""]
        (partial / "README.md").write_text("\n".join(card), encoding="utf-8")
        os.rename(partial, final)
    except BaseException as exc:
        shutil.rmtree(partial, ignore_errors=True)
        # The rename fails when another process wrote the same digest first: its copy holds the same rows.
        if not (isinstance(exc, OSError) and (final / "README.md").is_file()):
            raise
    return final


def _cache_root() -> Path:
    return cache_dir() / "lighteval"


def dataset_source(
    specs: Sequence[TaskSpec] = tuple(TASKS.values()), data_dir: Optional[str] = None
) -> tuple[str, dict[str, str]]:
    """The ``load_dataset`` path lighteval reads the tasks' rows from, and each task's subset.

    ``$PROTOQA_PARQUET`` as it is, unless a data folder is given or in ``$PROTOQA_DATA_DIR``;
    else the Parquet copy of the JSONL files (module doc).

    >>> dataset_source(data_dir="../shared/data")  # doctest: +SKIP
    ('/root/.cache/protoqa_eval/lighteval/...', {'protoqa': 'protoqa', 'cfc': 'cfc'})
    """
    from protoqa_integrations.harnesses.task_functions import load_split

    subsets = {spec.name: spec.config for spec in specs}
    data_dir = data_dir or data_dir_from_env()
    parquet = parquet_from_env()
    if data_dir is None and parquet is not None:
        return parquet, subsets
    splits = {}
    for spec in specs:
        if (spec.config, spec.split) not in splits:
            splits[spec.config, spec.split] = load_split(spec.config, spec.split, data_dir=data_dir)[spec.split]
    return str(write_parquet_copy(_cache_root(), splits)), subsets


def clean_samples(texts: Sequence[str]) -> list[str]:
    """Every sampled continuation as a cleaned answer (``""`` for none), sample order kept.

    >>> clean_samples(["  Dog.", "\\ncat", " Sun Screen\\nQ:"])
    ['dog', '', 'sun screen']
    """
    return [answer_from_text(text) for text in texts]


def score_samples(row: Mapping[str, Any], texts: Sequence[str]) -> dict[str, float]:
    """One question's scores (by the names of :data:`~protoqa_integrations.harnesses.metric_names.METRIC_NAMES`) from
    its dataset row and sampled continuations.

    >>> row = {"id": "q1", "question": "name a pet", "clusters": {"id": ["q1.0"], "answers": [["dog"]],
    ...        "count": [3]}}
    >>> score_samples(row, ["cat", "cat", "dog"])["wn_ans@1"]
    0.0
    """
    scores = process_results(dict(row), [clean_samples(texts)])
    # The harness keeps the question id beside the flag to name collapsed questions in its
    # warning; lighteval averages plain numbers.
    scores[COLLAPSED_NAME] = float(scores[COLLAPSED_NAME][1])
    return scores

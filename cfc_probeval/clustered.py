"""Automatic clusters as data: a targets file whose clusters an automatic clustering made, with its provenance.

Scoring it gives bit for bit the KLs of scoring the source with the same setting, and its signature names it by
its SHA-256, so two labs sharing the file share the numbers (docs/probeval.md, "Automatic clusters as a file").
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from protoqa_core.cli import write_output_file
from protoqa_core.io.data import sha256_of
from protoqa_core.io.json_values import iter_text_lines, parse_json
from protoqa_core.io.readers import CLUSTERS_PROVENANCE_KEY, ChecksumSpool, read_targets_and_block
from protoqa_core.io.records import Question, preview_ids, question_from_json

from .inputs import QuestionTargets, has_human_clusters, read_targets, targets_from_question

if TYPE_CHECKING:
    from .probeval import ProbEval

__all__ = [
    "write_clustered_targets",
    "clustered_file_label",
    "clusters_provenance",
    "clusters_label",
    "read_targets_and_label",
    "read_questions_and_label",
]

PathLike = Union[str, os.PathLike]


def _weights_sha256(embedder: Any) -> Optional[str]:
    """SHA-256 of the file the embedder's vectors come from (a model's weights, a vector file), None when none."""
    location = getattr(embedder, "location", None)
    if location is not None:
        for name in ("model.safetensors", "pytorch_model.bin"):
            if (Path(location) / name).is_file():
                return sha256_of(Path(location) / name)
        return None
    path = getattr(embedder, "path", None)
    return sha256_of(path) if path is not None and Path(path).is_file() else None


def write_clustered_targets(source: PathLike, output: PathLike, probeval: ProbEval) -> dict[str, Any]:
    """Cluster the raw answers of the targets file ``source`` with ``probeval`` and write them to ``output``.

    ``probeval`` must name an automatic clustering; questions that carry human clusters are refused (they would
    be lost). Every line is written as it was, with its clusters and the provenance block, which is returned.

    >>> from cfc_probeval import ProbEval
    >>> write_clustered_targets("raw.jsonl", "clustered.jsonl", ProbEval("gmeans"))  # doctest: +SKIP
    {'source_sha256': '...', 'clustering': 'gmeans(k_init=8,k_max=20,seed=0,alpha=0.0001)', ...}
    """
    from protoqa_core import __version__

    if probeval.clusterer is None:
        raise ValueError(f"write_clustered_targets needs an automatic clustering, not {probeval.clustering_name}")
    targets = read_targets(source)
    clustered = [qid for qid, t in targets.items() if has_human_clusters(t)]
    if clustered:
        raise ValueError(
            f"{source}: {len(clustered)} question(s) already carry clusters: {preview_ids(clustered)}; "
            "cluster a file of raw answers without clusters"
        )
    embedder = probeval.embedder
    assert embedder is not None  # an automatic clustering embeds
    # One call embeds every string, as evaluate does: the same vectors, the fewest batches.
    embedder.embed(sorted({a for t in targets.values() for a, n in t.answer_counts.items() if n > 0}))
    clusters = {qid: probeval.clusters_for(t) for qid, t in targets.items() if t.total > 0}
    provenance = {
        "source_sha256": sha256_of(source),
        "clustering": probeval.signature(len(clusters)).split("|")[0].removeprefix("clustering:"),
        "embedder": embedder.name,
        "embedder_weights_sha256": _weights_sha256(embedder),
        "version": __version__,
    }
    lines: list[str] = []
    for number, text in iter_text_lines(Path(source)):
        if not text.strip():
            continue
        record = parse_json(text, source, number)
        qid = question_from_json(record, source, number).id  # the id as every reader of targets finds it
        if qid in clusters:
            answers = record.setdefault("answers", {})
            answers["clusters"] = {c.id: {"count": _count(c.count), "answers": list(c.answers)} for c in clusters[qid]}
        record[CLUSTERS_PROVENANCE_KEY] = provenance
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")

    write_output_file(Path(output), lambda fh: fh.writelines(lines))
    return provenance


def _count(value: float) -> Union[int, float]:
    """A cluster's count as the file writes it: an integer when it is one (raw counts are)."""
    return int(value) if float(value).is_integer() else value


def clusters_provenance(path: PathLike) -> Optional[dict[str, Any]]:
    """The provenance block of a clustered targets file (the same on every line), None for any other file.

    >>> import tempfile
    >>> plain = Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = plain.write_text('{"metadata": {"id": "q1"}, "question": {"normalized": "a"}}\\n')
    >>> clusters_provenance(plain) is None
    True
    """
    return read_targets_and_block(path, CLUSTERS_PROVENANCE_KEY)[1]


def clusters_label(provenance: Optional[Mapping[str, Any]], sha256: str) -> Optional[str]:
    """The signature part naming a clustered targets file (its ``provenance`` block) by its SHA-256, None when the
    file has no such block.

    >>> clusters_label({"clustering": "gmeans(k_init=8)"}, "ab12"), clusters_label(None, "ab12")
    ('clusters:gmeans(k_init=8)@sha256=ab12', None)
    """
    if provenance is None:
        return None
    return f"clusters:{provenance.get('clustering', '?')}@sha256={sha256}"


def read_questions_and_label(path: PathLike) -> tuple[dict[str, Question], str, Optional[str]]:
    """The questions of a targets file, the SHA-256 of its bytes (decompressed) and, from its provenance block
    (never from how its cluster ids look), :func:`clusters_label`, all from one read.

    >>> questions, digest, label = read_questions_and_label("clustered.jsonl")  # doctest: +SKIP
    >>> label  # doctest: +SKIP
    'clusters:gmeans(k_init=8,k_max=20,seed=0,alpha=0.0001)@sha256=...'
    """
    checksum = ChecksumSpool()
    questions, provenance = read_targets_and_block(path, CLUSTERS_PROVENANCE_KEY, spool=checksum)
    digest = checksum.hexdigest()
    return questions, digest, clusters_label(provenance, digest)


def read_targets_and_label(path: PathLike) -> tuple[dict[str, QuestionTargets], Optional[str]]:
    """The targets of ``path`` and, from the same read, :func:`clusters_label` (None for a file of other clusters).

    >>> targets, label = read_targets_and_label("clustered.jsonl")  # doctest: +SKIP
    """
    questions, _, label = read_questions_and_label(path)
    return {qid: targets_from_question(q) for qid, q in questions.items()}, label


def clustered_file_label(path: PathLike) -> Optional[str]:
    """The signature part naming a clustered targets file by its SHA-256 (None for a file of other clusters).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> line = {"metadata": {"id": "q1"}, "question": {"normalized": "a"}, CLUSTERS_PROVENANCE_KEY: {"clustering": "gmeans"}}
    >>> _ = (folder / "c.jsonl").write_text(json.dumps(line) + "\\n")
    >>> clustered_file_label(folder / "c.jsonl").startswith("clusters:gmeans@sha256=")
    True
    """
    return read_targets_and_label(path)[1]

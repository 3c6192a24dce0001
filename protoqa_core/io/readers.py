"""Readers of ProtoQA/CFC targets files and of references given in memory.

Targets are ProtoQA's JSONL (``data/protoqa/DATAFORMAT.md``: ``metadata.id``, ``question.normalized``,
``answers.clusters``; the older ``answers-cleaned`` too), read strictly through
:mod:`protoqa_core.io.json_values`; prediction files are :mod:`protoqa_core.io.predictions`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from .files import DataFormatError, PathLike, short_repr
from .json_values import iter_text_lines, parse_json
from .records import Cluster, Question, check_answers, check_count, preview_ids, question_from_json

__all__ = [
    "read_targets",
    "read_targets_and_sha256",
    "read_targets_and_block",
    "ChecksumSpool",
    "CLUSTERS_PROVENANCE_KEY",
    "clusters_from_records",
    "question_ids_for",
    "check_answer_list",
    "REFERENCE_FORMS",
]


CLUSTERS_PROVENANCE_KEY = "clusters_provenance"
"""The key of the block, how the clusters were made, on every line of a ``probeval cluster`` targets file."""


def read_targets(path: PathLike, *, spool: Optional[Any] = None) -> dict[str, Question]:
    """Read a ProtoQA/CFC targets JSONL file into ``{question id: Question}`` (file order).

    ``spool`` (anything with a binary ``write``, such as a :class:`ChecksumSpool`) is handed the bytes read.

    >>> qs = read_targets("../shared/data/protoqa/dev.crowdsourced.jsonl")  # doctest: +SKIP
    >>> qs["r1q1"].clusters[0].count  # doctest: +SKIP
    35
    """
    return _read_questions(path, spool, None)[0]


def read_targets_and_block(
    path: PathLike, key: str, *, spool: Optional[Any] = None
) -> tuple[dict[str, Question], Optional[dict[str, Any]]]:
    """:func:`read_targets`, and the object every line carries under ``key`` (None when none does); a line
    whose block differs from the first line's is an error.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> line = '{"metadata": {"id": "q%d"}, "question": {"normalized": "a"}, "made": {"by": "x"}}\\n'
    >>> _ = path.write_text(line % 1 + line % 2)
    >>> questions, block = read_targets_and_block(path, "made")
    >>> list(questions), block
    (['q1', 'q2'], {'by': 'x'})
    """
    return _read_questions(path, spool, key)


class ChecksumSpool:
    """A ``spool`` for :func:`read_targets`: the SHA-256 of the bytes the reader reads.

    >>> spool = ChecksumSpool(); spool.write(b"abc"); spool.hexdigest()[:16]
    'ba7816bf8f01cfea'
    """

    def __init__(self) -> None:
        self.digest = hashlib.sha256()

    def write(self, data: bytes) -> None:
        """Add ``data`` to the checksum."""
        self.digest.update(data)

    def hexdigest(self) -> str:
        """The SHA-256 of everything written, in hexadecimal."""
        return self.digest.hexdigest()


def _read_questions(
    path: PathLike, spool: Optional[Any], key: Optional[str]
) -> tuple[dict[str, Question], Optional[dict[str, Any]]]:
    path = Path(path)
    questions: dict[str, Question] = {}
    first_line: dict[str, int] = {}
    block: Optional[Any] = None
    for number, text in iter_text_lines(path, spool, "targets"):
        if not text.strip():
            continue
        obj = parse_json(text, path, number)
        q = question_from_json(obj, path, number)
        if q.id in questions:
            raise DataFormatError(f"duplicate question id (first on line {first_line[q.id]})", path, number, q.id)
        if key is not None:
            if not questions:
                block = obj.get(key)
                if block is not None and not isinstance(block, dict):
                    raise DataFormatError(f"{key} must be an object", path, number, q.id)
            elif obj.get(key) != block:
                raise DataFormatError(f"its {key} differs from the first line's", path, number, q.id)
        questions[q.id] = q
        first_line[q.id] = number
    return questions, block


def read_targets_and_sha256(path: PathLike) -> tuple[dict[str, Question], str]:
    """The targets of ``path`` and the sha256 of its decompressed bytes, from one read.

    >>> targets, digest = read_targets_and_sha256("../shared/data/cfc/dev.targets.jsonl")  # doctest: +SKIP
    >>> len(targets), len(digest)  # doctest: +SKIP
    (54, 64)
    """
    spool = ChecksumSpool()
    return read_targets(path, spool=spool), spool.hexdigest()


REFERENCE_FORMS = (
    'the `clusters` field of a dataset row, {"id": [str], "answers": [[str]], "count": [int]} '
    '("id" optional), or a list of {"answers": [str], "count": int} records'
)


def _is_list_like(value: Any) -> bool:
    return not isinstance(value, (str, bytes)) and (isinstance(value, Sequence) or hasattr(value, "tolist"))


def clusters_from_records(reference: Any, question_id: Optional[str] = None) -> tuple[Cluster, ...]:
    """Clusters from the ``clusters`` field of a dataset row, or from a list of records (:data:`REFERENCE_FORMS`).

    >>> clusters_from_records({"answers": [["age", "birthday"]], "count": [35]})[0].count
    35
    >>> clusters_from_records([{"answers": ["age"], "count": 3}])[0].id
    '0'
    >>> clusters_from_records({"id": "r1q1", "clusters": {}}, "r1q1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: question 'r1q1': a reference must be ... (this looks like a whole row: pass its 'clusters' field)
    """
    qid = question_id
    if isinstance(reference, Mapping):
        if "answers" not in reference or "count" not in reference:
            hint = " (this looks like a whole row: pass its 'clusters' field)" if "clusters" in reference else ""
            raise DataFormatError(
                f"a reference must be {REFERENCE_FORMS}; got an object with keys {sorted(map(str, reference))}{hint}",
                question_id=qid,
            )
        answers, counts = reference["answers"], reference["count"]
        ids = reference.get("id")
        ids = [str(i) for i in range(len(answers) if _is_list_like(answers) else 0)] if ids is None else ids
        if not (_is_list_like(answers) and _is_list_like(counts) and _is_list_like(ids)) or not (
            len(answers) == len(counts) == len(ids)
        ):
            raise DataFormatError("'id', 'answers' and 'count' must be lists of the same length", question_id=qid)
        records = [{"id": i, "answers": a, "count": c} for i, a, c in zip(ids, answers, counts, strict=True)]
    elif _is_list_like(reference):
        records = list(reference)
    else:
        raise DataFormatError(f"a reference must be {REFERENCE_FORMS}; got {type(reference).__name__}", question_id=qid)
    clusters = []
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping) or "answers" not in rec or "count" not in rec:
            raise DataFormatError(
                f"cluster {i} needs 'answers' and 'count', got {rec!r}; a reference must be {REFERENCE_FORMS}",
                question_id=qid,
            )
        answers = rec["answers"]
        answers = answers.tolist() if hasattr(answers, "tolist") else answers
        clusters.append(
            Cluster(
                str(rec.get("id", i)),
                check_answers(
                    list(answers) if isinstance(answers, tuple) else answers, f"cluster {i} answers", None, None, qid
                ),
                check_count(rec["count"], f"cluster {i} count", None, None, qid),
            )
        )
    return tuple(clusters)


def check_answer_list(value: Any, question_id: Optional[str] = None) -> list[str]:
    """One question's answers given in memory: a list of strings, checked without recursion.

    >>> check_answer_list(("dog", "cat"), "q1")
    ['dog', 'cat']
    >>> check_answer_list([["dog"]], "q1")
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: question 'q1': answers must contain only strings, found ['dog']
    """
    if not _is_list_like(value):
        raise DataFormatError(f"answers must be a list of strings, got {type(value).__name__}", None, None, question_id)
    items = value.tolist() if hasattr(value, "tolist") else list(value)
    for item in items:
        if not isinstance(item, str):
            raise DataFormatError(
                f"answers must contain only strings, found {short_repr(item)}", None, None, question_id
            )
    return items


def question_ids_for(question_ids: Optional[Sequence[Any]], count: int) -> list[str]:
    """One id per question: ``question_ids`` checked (one each, all distinct), else ``"0"``, ``"1"``, ...

    >>> question_ids_for(None, 2)
    ['0', '1']
    >>> question_ids_for(["q1", "q1"], 2)
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: duplicate question_ids: q1 (each question needs its own id)
    """
    if question_ids is None:
        return [str(i) for i in range(count)]
    if not _is_list_like(question_ids):
        raise DataFormatError(f"question_ids must be a list of strings, got {type(question_ids).__name__}")
    ids = [str(q) for q in (question_ids.tolist() if hasattr(question_ids, "tolist") else question_ids)]
    if len(ids) != count:
        raise DataFormatError(f"{len(ids)} question_ids for {count} questions; give one id per question")
    seen: set[str] = set()
    repeated: dict[str, None] = {}  # in the order of their second appearance
    for q in ids:
        if q in seen:
            repeated[q] = None
        seen.add(q)
    duplicates = list(repeated)
    if duplicates:
        raise DataFormatError(f"duplicate question_ids: {preview_ids(duplicates)} (each question needs its own id)")
    return ids

"""Questions from dataset rows (docs/datasets.md gives a row's columns): the one conversion every integration
uses. Extra columns (a tokenized row's ``input_ids``, ...) are ignored; malformed answer fields are errors
naming the row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.records import Cluster, Question, check_count

from .readers import clusters_from_records

__all__ = [
    "ACCEPTED_QUESTION_FORMS",
    "RAW_ANSWER_FORMS",
    "raw_answer_counts",
    "question_from_row",
    "questions_from_rows",
]

ACCEPTED_QUESTION_FORMS = (
    "a datasets.Dataset of the ProtoQA export (columns id, question, clusters; raw_answers optional), "
    "a list of such rows (dicts), or a list of Question objects (protoqa_core.io.records.Question)"
)
"""What :func:`questions_from_rows` accepts, for error messages."""


RAW_ANSWER_FORMS = (
    'the `raw_answers` field of a dataset row, {"answer": [str], "count": [int]}, '
    'a mapping {answer: count}, or a list of {"answer": str, "count": int} records'
)


def _real_count(value: Any, what: str, question_id: Optional[str]) -> float:
    if hasattr(value, "item") and not isinstance(value, (bool, int, float)):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise DataFormatError(f"{what} must be a non-negative number, got {value!r}", question_id=question_id)
    return value


def _as_list(value: Any) -> Optional[list]:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    return None


def raw_answer_counts(
    value: Any, question_id: Optional[str] = None, *, whole: bool = False
) -> Optional[dict[str, float]]:
    """``{answer: count}`` from one question's raw answers in any of :data:`RAW_ANSWER_FORMS` (None stays None).

    Counts are non-negative numbers; ``whole=True`` asks for whole numbers, as a targets file has.

    >>> raw_answer_counts({"answer": ["night", "evening"], "count": [7, 41]})
    {'night': 7, 'evening': 41}
    >>> raw_answer_counts({"night": 7, "evening": 41})
    {'night': 7, 'evening': 41}
    >>> raw_answer_counts([{"answer": "night", "count": 7}])
    {'night': 7}
    >>> raw_answer_counts(["night"], "q1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: question 'q1': raw answers must be ...; got a list of str
    """
    if value is None:
        return None
    if (
        isinstance(value, Mapping)
        and set(value) == {"answer", "count"}
        and (answers := _as_list(value["answer"])) is not None
    ):
        counts = _as_list(value["count"])
        if counts is None or len(answers) != len(counts):
            raise DataFormatError(
                "raw answers {'answer': [...], 'count': [...]} need two lists of the same length",
                question_id=question_id,
            )
        pairs = list(zip(answers, counts, strict=True))
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    elif (items := _as_list(value)) is not None and all(
        isinstance(r, Mapping) and set(r) == {"answer", "count"} for r in items
    ):
        pairs = [(r["answer"], r["count"]) for r in items]
    else:
        kind = type(value).__name__
        if (items := _as_list(value)) is not None and items:
            kind = f"a list of {type(items[0]).__name__}"
        raise DataFormatError(f"raw answers must be {RAW_ANSWER_FORMS}; got {kind}", question_id=question_id)
    out: dict[str, float] = {}
    for answer, count in pairs:
        if not isinstance(answer, str):
            raise DataFormatError(
                f"raw answers must be strings, found {answer!r}; accepted forms: {RAW_ANSWER_FORMS}",
                question_id=question_id,
            )
        if answer in out:
            raise DataFormatError(f"raw answer {answer!r} is given twice", question_id=question_id)
        what = f"count of raw answer {answer!r}"
        out[answer] = check_count(count, what, qid=question_id) if whole else _real_count(count, what, question_id)
    return out


def question_from_row(row: Mapping[str, Any]) -> Question:
    """A :class:`~protoqa_core.io.records.Question` from one row of the dataset export (``id``, ``question``
    and ``clusters`` needed; ``question_original``, ``source`` and ``raw_answers`` read when present).

    >>> row = {"id": "q1", "question": "name a pet",
    ...        "clusters": {"id": ["q1.0"], "answers": [["dog", "puppy"]], "count": [6]},
    ...        "raw_answers": {"answer": ["dog", "puppy"], "count": [5, 1]}}
    >>> q = question_from_row(row)
    >>> q.clusters[0], q.raw_answers
    (Cluster(id='q1.0', answers=('dog', 'puppy'), count=6), {'dog': 5, 'puppy': 1})
    >>> question_from_row({"id": "q2", "question": "name a fruit"})
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: question 'q2': a row needs a 'clusters' field ({'id', 'answers', 'count'} lists)
    """
    if isinstance(row, Question):
        return row
    if not isinstance(row, Mapping):
        raise TypeError(f"a row must be a mapping (a dataset row), got {type(row).__name__}")
    qid = row.get("id")
    if not isinstance(qid, str) or not qid:
        raise DataFormatError(f"a row needs a non-empty string 'id', got {qid!r}")
    text = row.get("question")
    if not isinstance(text, str):
        raise DataFormatError(f"a row needs a string 'question', got {type(text).__name__}", question_id=qid)
    if "clusters" not in row:
        raise DataFormatError("a row needs a 'clusters' field ({'id', 'answers', 'count'} lists)", question_id=qid)
    clusters: tuple[Cluster, ...] = clusters_from_records(row["clusters"], qid) if row["clusters"] is not None else ()
    original = row.get("question_original") or text
    source = row.get("source") or ""
    if not isinstance(original, str) or not isinstance(source, str):
        raise DataFormatError("'question_original' and 'source' must be strings", question_id=qid)
    return Question(
        qid, text, clusters, original, source, raw_answer_counts(row.get("raw_answers"), qid, whole=True) or {}
    )


_NEEDED_COLUMNS = ("id", "question", "clusters")
_OPTIONAL_COLUMNS = ("question_original", "source", "raw_answers")


def questions_from_rows(rows: Any, what: str = "questions") -> list[Question]:
    """Questions from a ``datasets.Dataset`` of export rows, a list of rows, or a list of questions.

    A ``{id: Question}`` mapping is accepted too; ``what`` names the argument in messages.

    >>> from protoqa_core.io.records import Cluster, Question
    >>> pet = Question("q1", "name a pet", (Cluster("q1.0", ("dog",), 6),))
    >>> [q.id for q in questions_from_rows([pet, {"id": "q2", "question": "name a fruit",
    ...                                            "clusters": [{"answers": ["apple"], "count": 3}]}])]
    ['q1', 'q2']
    >>> questions_from_rows("r1q1")
    Traceback (most recent call last):
    ...
    TypeError: questions must be a datasets.Dataset of the ProtoQA export (columns id, question, clusters; raw_answers optional), a list of such rows (dicts), or a list of Question objects (protoqa_core.io.records.Question); got str
    """
    column_names = getattr(rows, "column_names", None)
    if isinstance(column_names, list) and hasattr(rows, "select_columns"):  # a datasets.Dataset
        missing = [c for c in _NEEDED_COLUMNS if c not in column_names]
        if missing:
            raise TypeError(
                f"{what}: the dataset has no column(s) {', '.join(missing)} (it has "
                f"{', '.join(column_names)}); expected {ACCEPTED_QUESTION_FORMS}"
            )
        # Only the question columns: a tokenized evaluation set also holds token ids.
        keep = [c for c in _NEEDED_COLUMNS + _OPTIONAL_COLUMNS if c in column_names]
        return [question_from_row(row) for row in rows.select_columns(keep)]
    if isinstance(rows, Mapping):
        values = list(rows.values())
        if all(isinstance(v, Question) for v in values):
            return values
        raise TypeError(f"{what} must be {ACCEPTED_QUESTION_FORMS}; got a mapping whose values are not Questions")
    if isinstance(rows, (str, bytes)) or not isinstance(rows, (Sequence, type({}.values()))):
        raise TypeError(f"{what} must be {ACCEPTED_QUESTION_FORMS}; got {type(rows).__name__}")
    out = []
    for i, item in enumerate(rows):
        if isinstance(item, Question):
            out.append(item)
        elif isinstance(item, Mapping):
            out.append(question_from_row(item))
        else:
            raise TypeError(
                f"{what}[{i}] must be a Question or a dataset row (dict), got {type(item).__name__}; "
                f"{what} must be {ACCEPTED_QUESTION_FORMS}"
            )
    return out

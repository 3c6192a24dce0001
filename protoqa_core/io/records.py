"""Questions and clusters, and the checks of their fields that every reader shares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .files import MAX_COUNT, DataFormatError, short_repr

__all__ = ["Cluster", "Question", "check_count", "preview_ids", "check_answers", "question_from_json"]


@dataclass(frozen=True)
class Cluster:
    """One answer cluster: its id, the answer strings in it and how many people gave them."""

    id: str
    answers: tuple[str, ...]
    count: int

    def __post_init__(self) -> None:
        # A bare string would be scored as a list of its characters.
        if isinstance(self.answers, (str, bytes)):
            raise DataFormatError(f"cluster {self.id!r}: answers must be a list of strings, got a string")
        # The same Unicode spelling as the predictions (protoqa_core.text.normalize_prediction).
        if not all(isinstance(a, str) and a.isascii() for a in self.answers):
            from ..text import normalize_unicode  # here: the text module loads NLTK's tokenizer (over 1 s)

            object.__setattr__(
                self, "answers", tuple(normalize_unicode(a) if isinstance(a, str) else a for a in self.answers)
            )


@dataclass(frozen=True)
class Question:
    """A question with its answer clusters (empty for test questions without answers)."""

    id: str
    question: str
    clusters: tuple[Cluster, ...]
    question_original: str = ""
    source: str = ""
    # whole numbers from a targets file; the evaluate module also takes fractional counts
    raw_answers: Mapping[str, float] = field(default_factory=dict)

    @property
    def total_count(self) -> int:
        """Sum of the cluster counts."""
        return sum(c.count for c in self.clusters)


def check_count(value: Any, what: str, path=None, line=None, qid=None) -> int:
    """``value`` if it is a non-negative integer (numpy integers from ``datasets`` included), else an error.

    >>> check_count(3, "count")
    3
    >>> check_count(2.5, "cluster 'c' count", "t.jsonl", 4, "q1")
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: t.jsonl, line 4, question 'q1': cluster 'c' count must be a non-negative integer, got 2.5
    """
    if hasattr(value, "item") and not isinstance(value, (bool, int)):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DataFormatError(f"{what} must be a non-negative integer, got {short_repr(value)}", path, line, qid)
    if value > MAX_COUNT:
        raise DataFormatError(f"{what} is too large ({short_repr(value)}; at most {MAX_COUNT})", path, line, qid)
    return value


def preview_ids(ids: Sequence[str], limit: int = 10) -> str:
    """The first ``limit`` ids, comma-separated, with the total when there are more (for messages).

    >>> preview_ids([f"q{i}" for i in range(12)], limit=2)
    'q0, q1, ... (12 in all)'
    """
    shown = ", ".join(ids[:limit])
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


def check_answers(value: Any, what: str, path, line, qid) -> tuple[str, ...]:
    """``value`` as a tuple of strings, else a :class:`DataFormatError` naming file, line and question.

    >>> check_answers(["dog", "cat"], "answers", "t.jsonl", 1, "q1")
    ('dog', 'cat')
    """
    if not isinstance(value, list):
        raise DataFormatError(f"{what} must be a list of strings, got {type(value).__name__}", path, line, qid)
    for item in value:
        if not isinstance(item, str):
            raise DataFormatError(f"{what} must contain only strings, found {short_repr(item)}", path, line, qid)
    return tuple(value)


def _cluster(cid: str, c: Any, where: str, label: str, path, line, qid: str) -> Cluster:
    """The cluster ``c`` of a targets line, ``where`` naming it when it is not one, ``label`` its fields."""
    if not isinstance(c, dict) or "count" not in c or "answers" not in c:
        raise DataFormatError(f"{where} needs 'count' and 'answers'", path, line, qid)
    answers = check_answers(c["answers"], f"{label} answers", path, line, qid)
    return Cluster(cid, answers, check_count(c["count"], f"{label} count", path, line, qid))


def question_from_json(obj: Any, path=None, line=None) -> Question:
    """A :class:`Question` from one parsed line of a targets file (ProtoQA's or CFC's layout)."""
    if not isinstance(obj, dict):
        raise DataFormatError(f"expected a JSON object, got {type(obj).__name__}", path, line)
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "id" in meta:
        qid = meta["id"]
        source = meta.get("source", "")
    elif "questionid" in obj:
        qid, source = obj["questionid"], obj.get("source", "")
    else:
        raise DataFormatError("missing question id (metadata.id)", path, line)
    if not isinstance(qid, str) or not qid:
        raise DataFormatError(f"question id must be a non-empty string, got {qid!r}", path, line)
    q = obj.get("question")
    if isinstance(q, dict):
        normalized = q.get("normalized", q.get("normalized-question"))
        original = q.get("original", normalized)
    else:
        normalized = obj.get("normalized-question", q)
        original = q if isinstance(q, str) else normalized
    if not isinstance(normalized, str):
        raise DataFormatError("missing question text (question.normalized)", path, line, qid)

    clusters: list[Cluster] = []
    raw: dict[str, int] = {}
    answers = obj.get("answers")
    if isinstance(answers, dict):
        for answer, count in (answers.get("raw") or {}).items():
            raw[answer] = check_count(count, f"raw answer {answer!r} count", path, line, qid)
        cl = answers.get("clusters", {})
        if not isinstance(cl, dict):
            raise DataFormatError("answers.clusters must be an object {cluster id: {...}}", path, line, qid)
        for cid, c in cl.items():
            clusters.append(_cluster(str(cid), c, f"cluster {cid!r}", f"cluster {cid!r}", path, line, qid))
    elif "answers-cleaned" in obj and isinstance(obj["answers-cleaned"], dict):
        # The oldest format: {answer: count}, every answer a cluster of its own.
        for i, (answer, count) in enumerate(obj["answers-cleaned"].items()):
            clusters.append(
                Cluster(
                    f"{qid}.{i}", (answer,), check_count(count, f"answer {short_repr(answer)} count", path, line, qid)
                )
            )
    elif "answers-cleaned" in obj:
        cleaned = obj["answers-cleaned"]
        if not isinstance(cleaned, list):
            raise DataFormatError(
                "answers-cleaned must be a list of {count, answers} or an object {answer: count}", path, line, qid
            )
        for i, c in enumerate(cleaned):
            clusters.append(_cluster(f"{qid}.{i}", c, f"answers-cleaned[{i}]", f"cluster {i}", path, line, qid))
    elif answers is not None:
        raise DataFormatError("answers must be an object with 'raw' and 'clusters'", path, line, qid)
    return Question(qid, normalized, tuple(clusters), original or normalized, source or "", raw)

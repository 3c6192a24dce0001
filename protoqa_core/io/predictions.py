"""Reading prediction files: ranked answer lists keyed by question id.

Predictions come in any of:

* JSONL, one object per line: ``{"r1q1": ["age", "name"]}`` (one or more ids per
  line) or ``{"question_id": "r1q1", "ranked_answers": [...]}``;
* one JSON object ``{"r1q1": [...], ...}``;
* ``{"model_answers": {...}}`` as written by the CFC/ProbEval tools, optionally with
  ``model_ranked_answers`` and ``model_answers_with_count`` (``[[answer, count]]``).

Files are read as :mod:`protoqa_core.io.files` reads them; every error names the file, the
line where there is one, and the question id.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from .files import (
    DataFormatError,
    MalformedJSONError,
    PathLike,
    ProtoQAWarning,
    check_file,
    iter_text_lines,
    parse_json,
)
from .records import check_answers, check_count

__all__ = ["read_predictions", "read_prediction_lists", "read_packed_predictions", "PackedPredictions"]

PREDICTION_FIELDS = ("model_ranked_answers", "model_answers", "model_answers_with_count")


def _rank_by_count(pairs: Any, path, line, qid) -> list[str]:
    if not isinstance(pairs, list):
        raise DataFormatError("model_answers_with_count must be a list of [answer, count]", path, line, qid)
    checked = []
    for item in pairs:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            raise DataFormatError(f"expected [answer, count], found {item!r}", path, line, qid)
        checked.append((item[0], check_count(item[1], f"count of {item[0]!r}", path, line, qid)))
    # Stable: answers with equal counts keep their order in the file.
    return [a for a, _ in sorted(checked, key=lambda ac: -ac[1])]


def read_prediction_lists(path: PathLike, field: Optional[str] = None) -> dict[str, Any]:
    """Read a predictions file into ``{question id: value}`` without interpreting the values.

    For ``{"model_answers": ...}`` files, ``field`` picks which mapping to return
    (default: ``model_ranked_answers`` when present, else ``model_answers``, else
    ``model_answers_with_count``). Values are checked to be lists.

    >>> read_prediction_lists("../shared/data/cfc/dev.predictions.human.json")["r1q4"][:2]  # doctest: +SKIP
    ['dancing time.', 'it is very good']
    """
    return {qid: value for qid, value, _ in _prediction_items(path, field)}


def _prediction_objects(path: Path) -> Iterator[tuple[Optional[int], Any]]:
    """``(line, JSON value)`` of each record: each line of a JSONL file, or one JSON document.

    A file whose first non-blank line is a JSON value on its own is JSONL and is read
    one line at a time; otherwise it is one document over several lines, read whole.
    """
    lines = iter_text_lines(path)
    head: list[str] = []
    number, text = 0, ""
    while not text.strip():
        number, text = next(lines, (0, ""))
        if not number:
            return
        head.append(text)
    try:
        yield number, parse_json(text, path, number)
    except MalformedJSONError:
        whole = "".join(head) + "".join(rest for _, rest in lines)
        # A one-line file is also a JSONL file: keep its line number for errors.
        one_line = 1 if "\n" not in whole.strip() else None
        try:
            value = parse_json(whole, path, one_line)
        except MalformedJSONError:
            # Not one document either: report the first line that is not JSON.
            for at, line_text in enumerate(whole.split("\n"), start=1):
                if line_text.strip():
                    parse_json(line_text, path, at)
            raise
        yield one_line, value
        return
    for number, text in lines:
        if text.strip():
            yield number, parse_json(text, path, number)


def _prediction_items(path: PathLike, field: Optional[str]) -> Iterator[tuple[str, Any, Optional[int]]]:
    """``(question id, value, line)`` of each prediction, in file order, read as a stream.

    Every id is checked to be a string seen once, every value to be a list; only the
    ids and their lines are kept.
    """
    path = Path(path)
    check_file(path, "predictions")
    seen: dict[str, Optional[int]] = {}

    def checked(qid: Any, value: Any, line: Optional[int]) -> tuple[str, Any, Optional[int]]:
        if not isinstance(qid, str):
            raise DataFormatError(f"question id must be a string, got {qid!r}", path, line)
        if qid in seen:
            first = seen[qid]
            raise DataFormatError(
                "duplicate question id" + (f" (first on line {first})" if first else ""), path, line, qid
            )
        if not isinstance(value, list):
            raise DataFormatError(f"answers must be a list, got {type(value).__name__}", path, line, qid)
        seen[qid] = line
        return qid, value, line

    for line, obj in _prediction_objects(path):
        if not isinstance(obj, dict):
            raise DataFormatError(f"expected a JSON object, got {type(obj).__name__}", path, line)
        if "question_id" in obj and "ranked_answers" in obj:
            yield checked(obj["question_id"], obj["ranked_answers"], line)
        elif any(f in obj for f in PREDICTION_FIELDS) and all(isinstance(v, dict) for v in obj.values()):
            chosen = field or next(f for f in PREDICTION_FIELDS if f in obj)
            if chosen not in obj:
                raise DataFormatError(f"no field {chosen!r}; the file has {sorted(obj)}", path, line)
            for qid, value in obj[chosen].items():
                yield checked(qid, value, line)
        else:
            for qid, value in obj.items():
                yield checked(qid, value, line)
    if not seen:
        warnings.warn(
            f"{path}: the predictions file holds no predictions; every question will score as unanswered",
            ProtoQAWarning,
            stacklevel=4,
        )


def _ranked(value: list[Any], path: PathLike, line: Optional[int], qid: str) -> list[str]:
    if value and all(isinstance(v, list) for v in value):
        return _rank_by_count(value, path, line, qid)
    return list(check_answers(value, "answers", path, line, qid))


def read_predictions(path: PathLike, field: Optional[str] = None) -> dict[str, list[str]]:
    """Read ranked answer lists ``{question id: [answer, ...]}`` from any supported file.

    Answers given with counts (``model_answers_with_count``) are ranked by count,
    ties kept in file order. Empty strings and repeated answers are kept.

    >>> preds = read_predictions("../shared/data/protoqa/dev.predictions.gpt2finetuned.json")  # doctest: +SKIP
    >>> preds["r1q1"][:2]  # doctest: +SKIP
    ['age', 'name']
    """
    return {qid: _ranked(value, path, line, qid) for qid, value, line in _prediction_items(path, field)}


class PackedPredictions(Mapping[str, list[str]]):
    """Ranked answer lists held packed: one compact UTF-8 JSON ``bytes`` per question.

    What :func:`read_packed_predictions` returns: a read-only mapping like the one of
    :func:`read_predictions` whose values are decoded when asked for, so that holding
    every prediction costs about the bytes of its answers plus some 150 bytes per question.

    >>> packed = PackedPredictions({"q1": ["dog", "cat"]})
    >>> packed["q1"], list(packed), len(packed)
    (['dog', 'cat'], ['q1'], 1)
    """

    def __init__(self, lists: Optional[Mapping[str, Sequence[str]]] = None):
        self._packed: dict[str, bytes] = {}
        for qid, answers in (lists or {}).items():
            self.add(qid, answers)

    def add(self, qid: str, answers: Sequence[str]) -> None:
        """Hold ``answers`` under ``qid`` (an id already held is an error: nothing is overwritten)."""
        if qid in self._packed:
            raise DataFormatError("duplicate question id", question_id=qid)
        self._packed[qid] = json.dumps(list(answers), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def __getitem__(self, qid: str) -> list[str]:
        return json.loads(self._packed[qid])

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __contains__(self, qid: object) -> bool:
        return qid in self._packed


def read_packed_predictions(path: PathLike, field: Optional[str] = None) -> PackedPredictions:
    """:func:`read_predictions` read as a stream into a :class:`PackedPredictions`.

    The same lists, the same order and the same errors; a JSONL file is never held
    whole, and each list is kept packed.

    >>> preds = read_packed_predictions("../shared/data/protoqa/dev.predictions.gpt2finetuned.json")  # doctest: +SKIP
    >>> preds["r1q1"][:2]  # doctest: +SKIP
    ['age', 'name']
    """
    out = PackedPredictions()
    for qid, value, line in _prediction_items(path, field):
        out.add(qid, _ranked(value, path, line, qid))
    return out

"""Turn a ProtoQA/CFC JSONL file into dataset rows (see :mod:`protoqa_dataset.schema`).

Parsing and its errors are :func:`protoqa_core.io.readers.read_targets`': malformed
JSON, a missing id or question, a cluster count that is not a non-negative integer
and duplicate question ids all raise :class:`~protoqa_core.io.files.DataFormatError`
naming the file and line. On top of that this module checks what a split promises:
answered splits need clusters on every question, the test split must have none.

>>> rows = read_rows("../shared/data/protoqa/dev.crowdsourced.jsonl")  # doctest: +SKIP
>>> rows[0]["id"], rows[0]["clusters"]["count"][0]  # doctest: +SKIP
('r1q1', 35)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional, Union

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.readers import read_targets
from protoqa_core.io.records import Question

from .sources import SOURCES, source_path

__all__ = ["question_to_row", "read_rows", "load_questions", "questions_file", "read_questions"]

PathLike = Union[str, os.PathLike]


def question_to_row(question: Question) -> dict[str, Any]:
    """One dataset row from a parsed question, clusters and raw answers in file order.

    ``num_answers`` is the sum of the cluster counts, the quantity the metric
    normalises by; the file's own ``num`` block is not copied (it can be stale).

    >>> from protoqa_core.io.records import Cluster
    >>> row = question_to_row(Question("q1", "name a pet", (Cluster("q1.0", ("dog", "puppy"), 6),)))
    >>> row["clusters"], row["num_answers"]
    ({'id': ['q1.0'], 'answers': [['dog', 'puppy']], 'count': [6]}, 6)
    """
    return {
        "id": question.id,
        "question": question.question,
        "question_original": question.question_original,
        "source": question.source,
        "raw_answers": {
            "answer": list(question.raw_answers),
            "count": list(question.raw_answers.values()),
        },
        "clusters": {
            "id": [c.id for c in question.clusters],
            "answers": [list(c.answers) for c in question.clusters],
            "count": [c.count for c in question.clusters],
        },
        "num_answers": question.total_count,
    }


def _question_lines(path: Path) -> list[int]:
    # read_targets skips blank lines and keeps file order, one question per
    # remaining line; this recovers each question's line number for messages.
    with open(path, encoding="utf-8") as fh:
        return [number for number, text in enumerate(fh, start=1) if text.strip()]


def read_rows(path: PathLike, has_answers: bool = True) -> list[dict[str, Any]]:
    """Parse and check a whole targets file, returning its rows in file order.

    Args:
        path: a JSONL file in the ProtoQA data format.
        has_answers: True for splits with answer clusters (every question must have
            at least one), False for the test questions (none may have answers).

    >>> read_rows("../shared/data/cfc/test.targets.jsonl")[0]["id"]  # doctest: +SKIP
    'r4q1'
    """
    path = Path(path)
    questions = read_targets(path)
    lines = _question_lines(path)
    rows = []
    for line, question in zip(lines, questions.values(), strict=True):
        if has_answers and not question.clusters:
            raise DataFormatError(
                "no answer clusters (answers.clusters); every question of this split needs them",
                path,
                line,
                question.id,
            )
        if not has_answers and (question.clusters or question.raw_answers):
            raise DataFormatError(
                "has answers, but this file is expected to hold unanswered test questions", path, line, question.id
            )
        rows.append(question_to_row(question))
    return rows


def load_questions(
    dataset: str, split: str, data_dir: Optional[str] = None, verify: bool = True
) -> tuple[list[Question], str]:
    """The questions of a ``protoqa_dataset`` config and split, in file order, and where they came from.

    Found by :func:`protoqa_core.io.data.locate_source`: in ``data_dir``, ``$PROTOQA_DATA_DIR``
    or ``../shared/data`` beside a checkout under any name the dataset builder accepts,
    else downloaded from upstream into the cache; either way checked against the pinned
    checksum unless ``verify=False``. A file that cannot be found, downloaded or verified
    raises :class:`~protoqa_core.io.data.SourceError`.

    >>> questions, origin = load_questions("cfc", "test", "../shared/data")  # doctest: +SKIP
    >>> len(questions), questions[0].id  # doctest: +SKIP
    (46, 'r4q1')
    """
    path, origin = questions_file(dataset, split, data_dir, verify)
    return read_questions(path, dataset, split), origin


def questions_file(dataset: str, split: str, data_dir: Optional[str] = None, verify: bool = True) -> tuple[Path, str]:
    """Where the questions of a config and split are (see :func:`load_questions`) and where they came from.

    ``origin`` is the absolute path of a local file, else the URL it was downloaded from.

    >>> questions_file("cfc", "test", "../shared/data")[1].endswith("test.targets.jsonl")  # doctest: +SKIP
    True
    """
    path, origin = source_path(dataset, split, data_dir, verify=verify)
    # A relative path would point elsewhere when the answers file is scored from another folder.
    return path, (str(Path(origin).resolve()) if origin == str(path) else origin)


def read_questions(path: Path, dataset: str, split: str) -> list[Question]:
    """The questions of a config's split read from ``path``, each row checked as the dataset builder does.

    >>> len(read_questions(Path("../shared/data/cfc/test.targets.jsonl"), "cfc", "test"))  # doctest: +SKIP
    46
    """
    read_rows(path, has_answers=SOURCES[dataset][split].has_answers)
    return list(read_targets(path).values())

"""Turn a ProtoQA/CFC JSONL file into dataset rows (see :mod:`protoqa_dataset.schema`), parsed by
:func:`protoqa_core.io.readers.read_targets` and checked for what a split promises (clusters, or none).

>>> rows = read_rows("../shared/data/protoqa/dev.crowdsourced.jsonl")  # doctest: +SKIP
>>> rows[0]["id"], rows[0]["clusters"]["count"][0]  # doctest: +SKIP
('r1q1', 35)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional, Union

from protoqa_core.io.files import DataFormatError
from protoqa_core.io.json_values import iter_text_lines
from protoqa_core.io.readers import read_targets
from protoqa_core.io.records import Question

from .sources import SOURCES, source_path

__all__ = ["question_to_row", "read_rows", "load_questions", "questions_file", "read_questions"]

PathLike = Union[str, os.PathLike]


def question_to_row(question: Question) -> dict[str, Any]:
    """One dataset row from a parsed question; ``num_answers`` is the clusters' total (the file's ``num`` block can
    be stale).

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
    # read_targets skips blank lines and keeps file order, one question per remaining line; this recovers
    # each question's line number for messages, reading the file as read_targets does (gzip included).
    return [number for number, text in iter_text_lines(path) if text.strip()]


def read_rows(path: PathLike, has_answers: bool = True) -> list[dict[str, Any]]:
    """Parse and check a whole targets file, returning its rows in file order; with ``has_answers`` every question
    needs clusters, without it none may have answers.

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

    Found or downloaded by :func:`protoqa_core.io.data.locate_source` and checked against the pinned checksum
    unless ``verify=False``; :class:`~protoqa_core.io.data.SourceError` otherwise.

    >>> questions, origin = load_questions("cfc", "test", "../shared/data")  # doctest: +SKIP
    >>> len(questions), questions[0].id  # doctest: +SKIP
    (46, 'r4q1')
    """
    path, origin = questions_file(dataset, split, data_dir, verify)
    return read_questions(path, dataset, split), origin


def questions_file(dataset: str, split: str, data_dir: Optional[str] = None, verify: bool = True) -> tuple[Path, str]:
    """Where the questions of a config and split are, and their origin: a local file's absolute path, else a URL.

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

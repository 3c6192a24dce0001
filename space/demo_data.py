"""The Space's data: the questions of ProtoQA crowdsourced dev and CFC dev, and the stored GPT-2 answers.

:class:`DemoData` loads them once, from a local folder or downloaded into the Space's
temporary folder (:func:`protoqa_dataset.sources.source_path`); :data:`DATASETS` says
what each data set is called and where its stored answers live.

>>> sorted(DATASETS)
['cfc', 'protoqa']
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from demo_answers import Answers, answers_from_ranked_list, answers_from_samples
from demo_errors import DemoError
from demo_settings import DATA_DIR_ENV, resolve_data_dir, space_temp_dir

from protoqa_core.io.data import SourceError
from protoqa_core.io.predictions import read_prediction_lists, read_predictions
from protoqa_dataset.sources import source_path
from protoqa_metric import Question, read_targets

__all__ = ["DataSetInfo", "DATASETS", "dataset_info", "DemoData"]


@dataclass(frozen=True)
class DataSetInfo:
    """One data set of the demo and where its stored GPT-2 answers live.

    Attributes:
        key: ``protoqa`` or ``cfc`` (also the config name in ``protoqa_dataset.sources``).
        label: what the page calls it.
        stored_names: paths of the stored answers file relative to a data folder.
        stored_label: which model wrote the stored answers, for the page.
        stored_samples: the file has every sample (with repetition) rather than a ranked list.
    """

    key: str
    label: str
    stored_names: tuple[str, ...]
    stored_label: str
    stored_samples: bool


DATASETS: Mapping[str, DataSetInfo] = {
    "protoqa": DataSetInfo(
        "protoqa",
        "ProtoQA crowdsourced dev",
        ("protoqa/dev.predictions.gpt2finetuned.json", "dev.predictions.gpt2finetuned.json"),
        "fine-tuned GPT-2 of the ProtoQA paper (ranked lists, no sample counts)",
        False,
    ),
    "cfc": DataSetInfo(
        "cfc",
        "CFC dev",
        ("cfc/dev.predictions.gpt2-xl.oneshot.json", "dev.predictions.gpt2-xl.oneshot.json"),
        "GPT-2 XL, one-shot prompt (100 samples per question)",
        True,
    ),
}


def dataset_info(key: str) -> DataSetInfo:
    """The data set ``key`` (:data:`DATASETS`); :class:`DemoError` naming the choices for another key.

    >>> dataset_info("cfc").label
    'CFC dev'
    """
    if key not in DATASETS:
        raise DemoError(f"unknown data set {key!r}; choose one of {', '.join(DATASETS)}")
    return DATASETS[key]


class DemoData:
    """The questions and stored answers of both data sets.

    With a local folder (see :func:`resolve_data_dir`) the targets are read from it under
    any name ``protoqa_dataset.sources`` accepts (``protoqa/dev.crowdsourced.jsonl``,
    ``cfc/dev.targets.jsonl``, the upstream layout, ...), and stored answers are offered
    when the folder has them. Without one, the two targets files are downloaded from
    their public homes into a temporary folder and checked against their checksums.
    Files are read on first use, once.

    >>> data = DemoData("../shared/data")  # doctest: +SKIP
    >>> data.question_choices("cfc")[0]  # doctest: +SKIP
    ('r1q1 · model went for glamour in a royal gown for the premiere. when will ...', 'r1q1')
    """

    def __init__(self, data_dir: Union[None, str, os.PathLike] = None) -> None:
        self.data_dir = resolve_data_dir(data_dir)
        self._questions: dict[str, dict[str, Question]] = {}
        self._stored: dict[str, dict[str, Answers]] = {}
        self._lock = threading.Lock()

    def describe(self) -> str:
        """Where the data comes from, for the page.

        >>> DemoData("/data").describe()
        'data read from the local folder /data'
        """
        if self.data_dir is None:
            return "data downloaded from the public ProtoQA and CFC repositories"
        return f"data read from the local folder {self.data_dir}"

    def _targets_path(self, key: str) -> Path:
        # A local folder is read as it is (the demo scores what is put there); a download
        # is checked against its pinned checksum.
        try:
            return source_path(
                dataset_info(key).key, "validation", self.data_dir, verify_local=False, cache_dir=space_temp_dir("data")
            )[0]
        except SourceError as exc:
            raise DemoError(f"cannot load {DATASETS[key].label}: {exc}") from exc

    def questions(self, key: str) -> dict[str, Question]:
        """Question id -> question with its human clusters, in file order.

        >>> len(DemoData("../shared/data").questions("protoqa"))  # doctest: +SKIP
        52
        """
        dataset_info(key)
        with self._lock:
            if key not in self._questions:
                self._questions[key] = read_targets(self._targets_path(key))
            return self._questions[key]

    def question(self, key: str, question_id: str) -> Question:
        """One question; :class:`DemoError` when the id is unknown.

        >>> DemoData("../shared/data").question("protoqa", "r1q1").clusters[0].count  # doctest: +SKIP
        54
        """
        questions = self.questions(key)
        if question_id not in questions:
            raise DemoError(f"{DATASETS[key].label} has no question {question_id!r}")
        return questions[question_id]

    def question_choices(self, key: str, width: int = 90) -> list[tuple[str, str]]:
        """``(label, id)`` pairs for a searchable dropdown: the id and the start of the question.

        >>> DemoData("../shared/data").question_choices("protoqa")[0]  # doctest: +SKIP
        ('r1q1 · Name something that is hard to guess about a person you are just meeting.', 'r1q1')
        """
        choices = []
        for qid, q in self.questions(key).items():
            text = q.question_original or q.question
            label = f"{qid} · {text if len(text) <= width else text[: width - 3].rstrip() + '...'}"
            choices.append((label, qid))
        return choices

    def stored_path(self, key: str) -> Optional[Path]:
        """The stored answers file of a data set in the local folder, or None.

        >>> DemoData("/nowhere").stored_path("cfc") is None
        True
        """
        if self.data_dir is None:
            return None
        for name in dataset_info(key).stored_names:
            if (self.data_dir / name).is_file():
                return self.data_dir / name
        return None

    def stored_answers(self, key: str, question_id: str) -> Answers:
        """The stored GPT-2 answers to one question (see :data:`DATASETS`).

        >>> DemoData("../shared/data").stored_answers("protoqa", "r1q1").ranked[:2]  # doctest: +SKIP
        ('age', 'name')
        """
        info = dataset_info(key)
        path = self.stored_path(key)
        if path is None:
            where = f"in {self.data_dir}" if self.data_dir else "(no local data folder is set)"
            raise DemoError(
                f"no stored answers for {info.label} {where}: set {DATA_DIR_ENV} to a folder with "
                f"{info.stored_names[0]}"
            )
        with self._lock:
            if key not in self._stored:
                self._stored[key] = self._read_stored(info, path)
        if question_id not in self._stored[key]:
            raise DemoError(f"{path.name} has no answers for question {question_id!r}")
        return self._stored[key][question_id]

    @staticmethod
    def _read_stored(info: DataSetInfo, path: Path) -> dict[str, Answers]:
        origin = f"stored answers of the {info.stored_label}, from {path.name}"
        if info.stored_samples:
            # Raw samples still carry GPT-2's end-of-text padding and trailing sentences:
            # they get the same clean-up as the demo's own samples.
            raw = read_prediction_lists(path, "model_answers")
            return {qid: answers_from_samples(s, origin, "<|endoftext|>") for qid, s in raw.items()}
        return {qid: answers_from_ranked_list(r, origin) for qid, r in read_predictions(path).items()}

"""What the two ``evaluate`` modules (``protoqa`` and ``probeval``) share: their ``_info`` in one shape,
their references checked as the library checks them before ``datasets`` casts them, and one rule for an
input given per question (:func:`per_question_values`).

The two module scripts cannot import each other, and a Hub folder holds a copy of one script
alone, so what they share lives here and reaches the scripts through their packages'
``evaluate_modules``. ``evaluate`` is imported only by :func:`metric_info`; nothing here imports
``datasets``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .io.readers import check_answer_list, clusters_from_records, question_ids_for

__all__ = ["ModuleDescription", "metric_info", "CheckedReferences", "stored_clusters", "per_question_values"]


@dataclass(frozen=True)
class ModuleDescription:
    """The texts and addresses of one ``evaluate`` module; ``homepage`` is also its code base.

    >>> ModuleDescription("ProtoQA ...", "@inproceedings{...}", "Args: ...", "https://x", "https://y").homepage
    'https://x'
    """

    description: str
    citation: str
    inputs_description: str
    homepage: str
    reference_url: str


def metric_info(module: ModuleDescription, features: Sequence[Any]) -> Any:
    """The ``evaluate.MetricInfo`` of a metric module: its description and the input ``features`` it accepts.

    >>> import datasets
    >>> info = metric_info(
    ...     ModuleDescription("d", "c", "i", "https://h", "https://r"),
    ...     [datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")})],
    ... )
    >>> info.module_type, info.codebase_urls, info.reference_urls
    ('metric', ['https://h'], ['https://r'])
    """
    import evaluate  # the module scripts' own dependency; the rest of the core does not need it

    return evaluate.MetricInfo(
        module_type="metric",
        description=module.description,
        citation=module.citation,
        inputs_description=module.inputs_description,
        features=list(features),
        homepage=module.homepage,
        codebase_urls=[module.homepage],
        reference_urls=[module.reference_url],
    )


class CheckedReferences:
    """Mixin for an ``evaluate.Metric``: references and predictions are checked before ``datasets`` casts them.

    ``datasets`` would recurse into a prediction nested too deep, turn a count of 2.9 into 2, pass
    ``"5"`` as an integer and fail with a bare ``KeyError`` on a missing field; a subclass's
    ``check_references(references, question_ids)`` runs the library's checks first instead.

    >>> class Checked(CheckedReferences):
    ...     def check_references(self, references, question_ids):
    ...         return [stored_clusters(r, q) for r, q in zip(references, question_ids)]
    >>> Checked().check_references([[{"answers": ["dog"], "count": 2}]], ["q1"])
    [{'id': ['0'], 'answers': [['dog']], 'count': [2]}]
    """

    def check_references(self, references: Sequence[Any], question_ids: Sequence[str]) -> list[Any]:
        raise NotImplementedError

    def _checked(self, references: Any, question_ids: Any = None) -> Any:
        if references is None or isinstance(references, (str, bytes)) or not hasattr(references, "__len__"):
            return references  # evaluate reports what is missing or malformed
        references = list(references)
        return self.check_references(references, question_ids_for(question_ids, len(references)))

    @staticmethod
    def _checked_predictions(predictions: Any, question_ids: Any = None) -> Any:
        if predictions is None or isinstance(predictions, (str, bytes)) or not hasattr(predictions, "__len__"):
            return predictions  # evaluate reports what is missing or malformed
        predictions = list(predictions)
        ids = [str(q) for q in question_ids] if question_ids is not None else []
        if len(ids) != len(predictions):
            ids = [str(i) for i in range(len(predictions))]
        return [check_answer_list(p, q) for p, q in zip(predictions, ids, strict=True)]

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> Any:
        """The metric's result for ``predictions`` and ``references`` (checked first); see below.

        ``references`` are the targets (``evaluate`` fixes the name); ``targets=`` is taken too.
        """
        references = _references_or_targets(references, kwargs)
        references = self._checked(references, kwargs.get("question_ids"))
        predictions = self._checked_predictions(predictions, kwargs.get("question_ids"))
        return super().compute(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Add a batch of predictions and references (checked first) for a later ``compute()``."""
        references = self._checked(_references_or_targets(references, kwargs))
        predictions = self._checked_predictions(predictions)
        super().add_batch(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Add one prediction and its reference (checked first) for a later ``compute()``."""
        if reference is not None:
            reference = self.check_references([reference], ["0"])[0]
        if prediction is not None:
            prediction = check_answer_list(prediction, "0")
        if kwargs.get("predictions") is not None:  # evaluate takes the plural keyword for one prediction too
            kwargs["predictions"] = check_answer_list(kwargs["predictions"], "0")
        super().add(prediction=prediction, reference=reference, **kwargs)  # type: ignore[misc]


def _references_or_targets(references: Any, kwargs: dict[str, Any]) -> Any:
    """``references``, or the same given as ``targets=`` (removed from ``kwargs``); both is an error."""
    if "targets" not in kwargs:
        return references
    targets = kwargs.pop("targets")
    if references is not None:
        raise ValueError("pass the targets once: as references= or as targets=, not both")
    return targets


def stored_clusters(reference: Any, question_id: str) -> dict[str, list[Any]]:
    """A reference in the stored ``clusters`` form, after the library's checks of every count and string.

    >>> stored_clusters({"answers": [["dog", "puppy"]], "count": [3]}, "q1")
    {'id': ['0'], 'answers': [['dog', 'puppy']], 'count': [3]}
    >>> stored_clusters({"answers": [["dog"]], "count": [2.9]}, "q1")
    Traceback (most recent call last):
    ...
    protoqa_core.io.files.DataFormatError: question 'q1': cluster 0 count must be a non-negative integer, got 2.9
    """
    clusters = clusters_from_records(reference, question_id)
    return {
        "id": [c.id for c in clusters],
        "answers": [list(c.answers) for c in clusters],
        "count": [c.count for c in clusters],
    }


def per_question_values(values: Any, name: str, count: int) -> list:
    """``values`` as one entry per question (None: ``count`` Nones); another length is an error.

    >>> per_question_values(None, "questions", 2)
    [None, None]
    >>> per_question_values(["a"], "questions", 2)
    Traceback (most recent call last):
    ...
    ValueError: questions: expected one entry per reference (2), got 1
    """
    if values is None:
        return [None] * count
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"{name}: expected a list with one entry per reference, got {type(values).__name__}")
    values = list(values)
    if len(values) != count:
        raise ValueError(f"{name}: expected one entry per reference ({count}), got {len(values)}")
    return values

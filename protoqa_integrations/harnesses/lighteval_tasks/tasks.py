"""ProtoQA and CFC as lighteval custom tasks: ``--custom-tasks`` with this file or this module's name.

Each task is scored per question as the lm-evaluation-harness tasks score it (:mod:`.utils`).
The task sets the stop strings, the 10 new tokens and the samples per question; lighteval takes
the other sampling settings from the model arguments (docs/evaluate-a-model.md). Every
question's ``Doc`` carries, in ``specific``, each score's signature and the project's version,
so that lighteval's details files name the settings of every number in them. Importing this
module needs ``lighteval`` (0.13) and reads the data (see :mod:`.utils`).

>>> [config.name for config in TASKS_TABLE]
['protoqa', 'cfc']
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Optional

from lighteval.metrics.metrics_sample import SampleLevelComputation, SamplingMetric
from lighteval.metrics.utils.metric_utils import SampleLevelMetricGrouping
from lighteval.models.model_output import ModelResponse
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc, SamplingMethod

from protoqa_integrations.generation.settings import STOP_STRINGS
from protoqa_integrations.harnesses.lighteval_tasks.utils import (
    MAX_NEW_TOKENS,
    TASKS,
    TaskSpec,
    dataset_source,
    score_samples,
)
from protoqa_integrations.harnesses.metric_names import HIGHER_IS_BETTER, KL_NAME, METRIC_NAMES, SCORE_NAMES
from protoqa_integrations.harnesses.task_functions import (
    mean,
    mean_logging_exact_match_signature,
    mean_logging_probeval_signature,
    mean_logging_wordnet_signature,
    metric_signatures,
)

__all__ = ["ProtoQASampleScores", "make_prompt_function", "protoqa_metric", "task_config", "TASKS_TABLE"]

# lighteval adds these bookkeeping keys to every row it hands a prompt function.
_LIGHTEVAL_KEYS = ("__few_shots", "__index")

logger = logging.getLogger(__name__)


class ProtoQASampleScores(SamplingMetric, SampleLevelComputation):
    """One question's scores from its ``num_samples`` sampled continuations.

    >>> doc = make_prompt_function(TASKS["protoqa"])({"id": "q1", "question": "name a pet",
    ...     "clusters": {"id": ["q1.0"], "answers": [["dog"]], "count": [3]}}, "protoqa")
    >>> ProtoQASampleScores(2).compute(doc, ModelResponse(text=[" dog", " cat"]))["em_ans@1"]
    1.0
    """

    def __init__(self, num_samples: int) -> None:
        super().__init__()
        self.n = int(num_samples)

    def num_samples(self) -> int:
        """How many continuations lighteval samples per question for this metric.

        >>> ProtoQASampleScores(300).num_samples()
        300
        """
        return self.n

    def compute(self, doc: Doc, model_response: ModelResponse, **kwargs: Any) -> dict[str, float]:
        """:func:`~protoqa_integrations.harnesses.lighteval_tasks.utils.score_samples` of the question's row."""
        row, texts = doc.specific["row"], list(model_response.final_text)
        if len(texts) != self.n:
            # A backend that returns fewer samples than asked: scored on what came back, said aloud.
            logger.warning("question %s: scored on %d samples, not the %d asked for", row["id"], len(texts), self.n)
        return score_samples(row, texts)


def _aggregations() -> dict[str, Any]:
    aggregations = dict.fromkeys(METRIC_NAMES, mean)
    # Each signature is logged once per task; the details carry them too (make_prompt_function).
    aggregations[SCORE_NAMES["wordnet_max_answers@1"]] = mean_logging_wordnet_signature
    aggregations[SCORE_NAMES["exact_match_max_answers@1"]] = mean_logging_exact_match_signature
    aggregations[KL_NAME] = mean_logging_probeval_signature
    return aggregations


def protoqa_metric(num_samples: int) -> SampleLevelMetricGrouping:
    """The scores of :data:`~protoqa_integrations.harnesses.metric_names.METRIC_NAMES` over ``num_samples`` samples.

    >>> metric = protoqa_metric(100)
    >>> metric.metric_name[:2], metric.higher_is_better["KL"], metric.sample_level_fn.num_samples()
    (['KL', 'wn_ans@1'], False, 100)
    """
    return SampleLevelMetricGrouping(
        metric_name=list(METRIC_NAMES),
        higher_is_better=dict(HIGHER_IS_BETTER),
        category=SamplingMethod.GENERATIVE,
        sample_level_fn=ProtoQASampleScores(num_samples),
        corpus_level_fn=_aggregations(),
    )


def make_prompt_function(spec: TaskSpec, signatures: Optional[Mapping[str, str]] = None) -> Callable[[dict, str], Doc]:
    """The lighteval prompt function of a task: a dataset row to a :class:`Doc` with the task's prompt.

    >>> prompt = make_prompt_function(TASKS["cfc"], {"KL": "clustering:human|...", "protoqa-eval": "0.1.0"})
    >>> doc = prompt({"id": "c1", "question": "a man reads. where is he?", "__index": 0, "__few_shots": False}, "cfc")
    >>> doc.query.splitlines()[-2:], doc.specific["signatures"]["KL"], doc.specific["protoqa-eval"]
    (['Q: a man reads. where is he?', 'A:'], 'clustering:human|...', '0.1.0')
    """
    signed = dict(signatures or {})
    version = signed.pop("protoqa-eval", None)

    def prompt_function(line: dict, task_name: str) -> Doc:
        row = {key: value for key, value in line.items() if key not in _LIGHTEVAL_KEYS}
        clusters = row.get("clusters") or {}
        answers = [cluster[0] for cluster in clusters.get("answers", []) if cluster]
        specific: dict[str, Any] = {"row": row}
        if signed:
            specific.update(signatures=signed, **{"protoqa-eval": version})
        return Doc(
            task_name=task_name,
            query=spec.prompt(row),
            choices=answers or [""],
            gold_index=list(range(len(answers))) if answers else 0,
            specific=specific,
        )

    prompt_function.__name__ = f"{spec.name}_prompt"
    return prompt_function


def task_config(
    spec: TaskSpec, repo: str, subset: str, signatures: Optional[Mapping[str, str]] = None
) -> LightevalTaskConfig:
    """The lighteval configuration of a task whose rows ``load_dataset(repo, subset)`` reads (``signatures``:
    those its questions carry, :func:`make_prompt_function`).

    >>> config = task_config(TASKS["cfc"], "someone/protoqa-parquet", "cfc")
    >>> config.hf_repo, config.evaluation_splits, config.generation_size, config.stop_sequence
    ('someone/protoqa-parquet', ('validation',), 10, ['\\n', '.'])
    """
    return LightevalTaskConfig(
        name=spec.name,
        prompt_function=make_prompt_function(spec, signatures),
        hf_repo=repo,
        hf_subset=subset,
        hf_avail_splits=[spec.split],
        evaluation_splits=[spec.split],
        few_shots_split=None,
        few_shots_select=None,
        generation_size=MAX_NEW_TOKENS,
        stop_sequence=list(STOP_STRINGS),
        metrics=[protoqa_metric(spec.num_samples)],
        version=1,
    )


def _tasks_table() -> list[LightevalTaskConfig]:
    import datasets

    repo, subsets = dataset_source()
    table = []
    for spec in TASKS.values():
        # The rows are local (the Parquet copy) or lighteval's own download moments later.
        questions = datasets.load_dataset(repo, subsets[spec.name], split=spec.split).num_rows
        table.append(task_config(spec, repo, subsets[spec.name], metric_signatures(questions, spec.num_samples)))
    return table


TASKS_TABLE = _tasks_table()

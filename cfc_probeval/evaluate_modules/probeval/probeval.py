"""ProbEval as an `evaluate` metric module (``evaluate.load("probeval")``), wired to the installed package; the
``# From:`` comments tell ``evaluate`` which pip package provides an import when it is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import datasets
import evaluate

from cfc_probeval.defaults import AUTO, DEFAULTS  # From: protoqa-eval[probeval]
from cfc_probeval.evaluate_modules import (  # From: protoqa-eval[probeval]
    PROBEVAL_CITATION,
    PROBEVAL_CONFIGS,
    CheckedReferences,
    ModuleDescription,
    clustering_inputs,
    config_settings,
    metric_info,
    per_question_values,
    question_ids_for,
)
from cfc_probeval.inputs import (  # From: protoqa-eval[probeval]
    targets_from_raw_answers,
    targets_from_reference,
)
from cfc_probeval.probeval import evaluate_probeval  # From: protoqa-eval[probeval]

_CITATION = PROBEVAL_CITATION

_DESCRIPTION = """\
ProbEval scores a model on open-ended commonsense questions by comparing the
distribution of its sampled answers over answer clusters with the distribution of
human answers: KL(P_G || P_H), natural log, after Laplace smoothing, averaged over
questions. Lower is better; 0 means the model answers like the crowd.

The human answers are grouped into clusters (the data's human clusters, or automatic
ones: hierarchical agglomerative clustering, X-means or G-means over sentence
embeddings); every sample is matched to the clusters (WordNet similarity, cosine
similarity or a Gaussian-process classifier), and samples matching no cluster go to an
extra "wrong" cluster. By default (clustering `auto`) references that carry human
clusters (a dataset's `clusters` column) are scored with those clusters, and raw
answers without clusters (a dataset's `raw_answers` column) are clustered with G-means
(k_init 8, all-MiniLM-L6-v2 embeddings); matching is WordNet. `cfc_probeval.defaults`
documents each default value and where it comes from. The signature says which
clustering ran (`clustering:auto->human`, `clustering:auto->gmeans(...)`).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): for each question, the model's sampled
        answers, with repetition (e.g. 100 samples). Every question is scored at one
        number of samples, the most any question has (or `num_samples`): the samples a
        question lacks count as wrong answers, so that fewer samples never score better.
    references: the targets (`evaluate` fixes the name; `targets=` is taken too): for each
        question, its human answer clusters: the `clusters` field of a
        dataset row, `{"id": [...], "answers": [[...], ...], "count": [...]}` (`id`
        optional), or a list of `{"answers": [...], "count": n}` records; or its raw
        answers without clusters: the `raw_answers` field of a dataset row,
        `{"answer": [...], "count": [...]}`.
    clustering (`str`): `auto`, `human`, `hac`, `xmeans` or `gmeans`. Defaults to the
        configuration name (`auto` for `default`): the references' human clusters when
        they carry them (every question has at least one cluster), G-means when they are
        raw answers; a mix of the two is an error.
    matching (`str`): `wordnet`, `cosine` or `gp`. Defaults to `wordnet`, or the
        configuration name's second part (`hac-cosine`).
    embedder (`str`): `minilm` (default, offline), `st:<sentence-transformers model or folder>`,
        `fasttext:<file.vec or file.bin>`, or `char-ngrams`.
    model_dir (`str`): folder holding local sentence-transformers models.
    threshold (`float`): cosine similarity (default 0.6) or GP probability (default 0.4)
        a match needs.
CLUSTERING_OPTIONS
    seed (`int`): random seed of K-means and the GP classifiers (default 0).
    num_samples (`int`): the number of samples every question is scored at (default: the
        most any question has); a question with more is an error.
    raw_answers (`list`): optional, with cluster references only: per question how many
        people gave each answer: the `raw_answers` field of a dataset row (`{"answer":
        [...], "count": [...]}`), a mapping `{answer: count}` or a list of `{"answer",
        "count"}` records. A forced automatic clustering weighs strings by these counts, as
        the command line does with a targets file; without them a cluster's count is
        shared evenly by its strings, and the signature says `answers:shared`.
    question_ids (`list` of `str`): optional names of the questions (default "0", "1", ...);
        one per question, all distinct.
    all_stopword_match (`bool`): WordNet: two all-stopword strings match (default True).

Returns:
    kl (`float`): mean KL(P_G || P_H) over the questions with target answers (lower is better).
    per_question_kl (`list` of `float` or None): one per question; None for a question
        left out for lack of target answers.
    num_questions (`int`): how many questions the mean is over.
    num_samples (`int`): the number of samples every question was scored at.
    short_questions (`list` of `str`): the questions with fewer, made up with wrong answers.
    signature (`str`): the settings that produced the numbers (`n_samples:N`, `short:K`).
    clusters_per_question (`float` or None): mean number of clusters the questions were
        scored with.
    human_clusters_per_question (`float` or None): the annotators' mean number of clusters
        over the same questions, when the references carry human clusters.
    details (`list` of `dict`): per question, every cluster with its representative
        answer, P_G, P_H and the samples matched to it (only with `details=True`).

Examples:
    >>> probeval = evaluate.load("probeval", "human")  # doctest: +SKIP
    >>> refs = [{"answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}]
    >>> result = probeval.compute(predictions=[["dog"] * 6 + ["cat"] * 4], references=refs)  # doctest: +SKIP
    >>> round(result["kl"], 4)  # doctest: +SKIP
    0.0
""".replace("CLUSTERING_OPTIONS", clustering_inputs())

_STRING_LIST = datasets.List(datasets.Value("string"))
_CLUSTERS_RECORD = {  # the ``clusters`` field of a dataset row; "id" may be left out
    "id": _STRING_LIST,
    "answers": datasets.List(_STRING_LIST),
    "count": datasets.List(datasets.Value("int64")),
}
_CLUSTER_LIST = datasets.List(
    {"id": datasets.Value("string"), "answers": _STRING_LIST, "count": datasets.Value("int64")}
)
_RAW_ANSWERS = {
    "answer": _STRING_LIST,
    "count": datasets.List(datasets.Value("float64")),
}  # a row's ``raw_answers``: counts may be fractional

CONFIG_NAMES = PROBEVAL_CONFIGS
_MODULE = ModuleDescription(
    _DESCRIPTION,
    _CITATION,
    _KWARGS_DESCRIPTION,
    homepage="https://github.com/qxc101/PROBEVAL_CFC",
    reference_url="https://arxiv.org/abs/2406.04145",
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Probeval(CheckedReferences, evaluate.Metric):
    """ProbEval (ACL 2024): KL divergence between human and model answer cluster distributions."""

    def check_references(self, references, question_ids):
        # The library's checks, before datasets casts a count of 2.9 to 2; the forms stay as given.
        for ref, qid in zip(references, question_ids, strict=True):
            _question_targets(ref, qid, None)
        return references

    def _info(self) -> evaluate.MetricInfo:
        config_settings(self.config_name)  # reject unknown configurations when loading
        features = [
            datasets.Features({"predictions": _STRING_LIST, "references": _CLUSTERS_RECORD}),
            datasets.Features({"predictions": _STRING_LIST, "references": _CLUSTER_LIST}),
            datasets.Features({"predictions": _STRING_LIST, "references": _RAW_ANSWERS}),
        ]
        return metric_info(_MODULE, features)

    def _enforce_nested_string_type(self, schema: Any, obj: Any) -> Any:
        # evaluate's input check needs every key of a dict feature; cluster ids are optional.
        record = getattr(schema, "feature", schema)
        if isinstance(record, dict) and "id" in record:
            if isinstance(obj, dict) and "id" not in obj:
                obj = {**obj, "id": None}
            elif isinstance(obj, (list, tuple)) and schema is not record:
                obj = [{**o, "id": None} if isinstance(o, dict) and "id" not in o else o for o in obj]
        try:
            return super()._enforce_nested_string_type(schema, obj)
        except KeyError as exc:  # another reference form: let `evaluate` try the next one
            raise TypeError(f"missing field {exc}") from None

    def _compute(
        self,
        predictions: Sequence[Sequence[str]],
        references: Sequence[Any],
        clustering: Optional[str] = None,
        matching: Optional[str] = None,
        question_ids: Optional[Sequence[str]] = None,
        raw_answers: Optional[Sequence[Any]] = None,
        details: bool = False,
        **settings: Any,
    ) -> dict[str, Any]:
        chosen = config_settings(self.config_name)
        clustering = clustering or chosen.get("clustering", AUTO)
        matching = matching or chosen.get("matching", DEFAULTS.matching)
        ids = question_ids_for(question_ids, len(predictions))
        raw = per_question_values(raw_answers, "raw_answers", len(references))
        targets = {qid: _question_targets(ref, qid, r) for qid, ref, r in zip(ids, references, raw, strict=True)}
        result = evaluate_probeval(
            targets, dict(zip(ids, predictions, strict=True)), clustering=clustering, matching=matching, **settings
        )
        out = {
            "kl": result.kl,
            "per_question_kl": [result.per_question.get(qid) for qid in ids],
            "num_questions": result.num_questions,
            "num_samples": result.num_samples,
            "short_questions": list(result.short),
            "signature": result.signature,
            "clusters_per_question": result.clusters_per_question,
            "human_clusters_per_question": result.human_clusters_per_question,
        }
        if details:
            out["details"] = [result.questions[qid].as_dict() if qid in result.questions else None for qid in ids]
        return out


def _question_targets(reference: Any, question_id: str, raw_answers: Any):
    """A question's targets from its reference: human clusters, or raw answers without clusters."""
    if not (isinstance(reference, dict) and set(reference) == {"answer", "count"}):
        return targets_from_reference(reference, question_id, raw_answers)
    if raw_answers is not None:
        raise ValueError(
            f"question {question_id!r}: the reference is already raw answers; pass raw_answers only "
            "with cluster references"
        )
    return targets_from_raw_answers(reference, question_id)

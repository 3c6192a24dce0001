"""ProtoQA ranked-list metric as a Hugging Face ``evaluate`` module (``evaluate.load("protoqa")``), wired to the
installed package; the ``# From:`` comments tell ``evaluate`` which pip package provides an import when it is missing.
"""

import datasets
import evaluate

from protoqa_metric import ProtoQA  # From: protoqa-eval
from protoqa_metric.evaluate_modules import (  # From: protoqa-eval
    PROTOQA_CITATION,
    PROTOQA_CONFIGS,
    CheckedReferences,
    ModuleDescription,
    Question,
    clusters_from_records,
    metric_info,
    per_question_values,
    question_ids_for,
    raw_answer_counts,
    stored_clusters,
)

_CITATION = PROTOQA_CITATION

_DESCRIPTION = """\
ProtoQA scores a ranked list of answers to an open-ended commonsense question
("Name something people do before they leave the house for work") against
clusters of answers collected from about 100 people. Each cluster can be claimed
once, by the prediction that fits it best (Hungarian assignment), and is worth its
count; the total is divided by the best score possible. Max Answers@k scores the
first k answers; Max Incorrect@k stops at the k-th answer that matches no cluster.
Answers match clusters by exact string match, by WordNet synonymy over token groups
(the suggested default), by string similarities, or by the ProtoQA paper's RoBERTa
similarity (`roberta`: a Gaussian process per cluster over contextual vectors, trained
on the question's crowd answers; it needs the question texts).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): one ranked answer list per question, best first.
    references: the targets (`evaluate` fixes the name; `targets=` is taken too), one per
        question: the `clusters` field of a ProtoQA/CFC dataset row
        (`{"id": [str], "answers": [[str]], "count": [int]}`, `id` optional), or a list of
        `{"answers": [str], "count": int}` records. Counts must be integers from 0 to 2**53
        (2.9, "5" or True is an error naming the question and the cluster, never cast).
    similarity (`str`, optional): `wordnet` (default, or the config name), `exact_match`,
        `wordnet_wup`, `lcs`, `longest_common_substring`, `jaro_winkler` or `roberta`.
    metrics (`str` or `list` of `str`, optional): `standard` (all ten, default), `paper`
        (the seven of the ProtoQA paper) or metric names such as `max_answers@10`.
    all_stopword_match (`bool`, optional): with WordNet similarity, two strings made only of
        stopwords ("the" vs "a") score 1 (default, as in the published numbers); False scores 0.
    question_ids (`list` of `str`, optional): names for the questions in warnings; one per
        question, all distinct (a duplicate is an error).
    questions (`list` of `str`, optional): `roberta` only, and needed there: each question's text
        (the dataset row's `question`), put before every answer.
    raw_answers (`list`, optional): `roberta` only: each question's crowd answers with their
        counts (the row's `raw_answers` field, or `{answer: count}`), which the similarity trains
        on with repetition; without them every cluster string counts once (and the signature
        says `uncounted:N`).
    encoder, device, length_scale: the similarity's own options, as it declares them (`roberta`:
        the encoder, a Hugging Face Hub id or a local folder, default `roberta-base`; where it
        runs, default `cpu`; the RBF length-scale rule, default `median*0.5`); an option the
        similarity does not take is an error naming those that do.
Returns:
    One float in [0, 1] per metric: `max_answers@1`, `max_answers@3`, `max_answers@5`,
    `max_answers@10`, `max_answers@all`, `max_incorrect@1`, `max_incorrect@3`,
    `max_incorrect@5`, `max_incorrect@all`, `set_intersection`; and `signature`, a string
    naming the settings for reproducibility. With `roberta` also `exact_match_only`: True
    (with a warning) when no prediction other than a cluster's own strings went to a cluster,
    so that the similarity scored as exact match does.
Examples:
    >>> import evaluate
    >>> protoqa = evaluate.load("protoqa", "exact_match")  # doctest: +SKIP
    >>> refs = [{"id": ["q.0", "q.1"], "answers": [["dog", "puppy"], ["cat"]], "count": [6, 4]}]
    >>> results = protoqa.compute(predictions=[["cat", "dog"]], references=refs)  # doctest: +SKIP
    >>> results["max_answers@1"], results["max_answers@all"]  # doctest: +SKIP
    (0.6666666666666666, 1.0)
"""

_CLUSTERS_AS_STORED = datasets.Sequence(
    {
        "id": datasets.Value("string"),
        "answers": datasets.Sequence(datasets.Value("string")),
        "count": datasets.Value("int64"),
    }
)
# datasets.List keeps a list of records as records (Sequence turns it into a dict of lists).
_CLUSTERS_AS_RECORDS = datasets.List(
    {"answers": datasets.List(datasets.Value("string")), "count": datasets.Value("int64")}
)
_PREDICTIONS = datasets.Sequence(datasets.Value("string"))
_MODULE = ModuleDescription(
    _DESCRIPTION,
    _CITATION,
    _KWARGS_DESCRIPTION,
    homepage="https://github.com/iesl/protoqa-evaluator",
    reference_url="https://aclanthology.org/2020.emnlp-main.85",
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Protoqa(CheckedReferences, evaluate.Metric):
    """ProtoQA Max Answers@k / Max Incorrect@k under exact-match or WordNet similarity."""

    def check_references(self, references, question_ids):
        # The library's checks, before datasets casts a count of 2.9 to 2; one stored form for every input.
        return [stored_clusters(ref, qid) for ref, qid in zip(references, question_ids, strict=True)]

    def _info(self) -> evaluate.MetricInfo:
        if self.config_name not in PROTOQA_CONFIGS:
            raise ValueError(f"unknown configuration {self.config_name!r}; use one of: {', '.join(PROTOQA_CONFIGS)}")
        features = [
            datasets.Features({"predictions": _PREDICTIONS, "references": _CLUSTERS_AS_STORED}),
            datasets.Features({"predictions": _PREDICTIONS, "references": _CLUSTERS_AS_RECORDS}),
        ]
        return metric_info(_MODULE, features)

    def _compute(
        self,
        predictions,
        references,
        similarity=None,
        metrics="standard",
        all_stopword_match=True,
        question_ids=None,
        questions=None,
        raw_answers=None,
        **options,
    ):
        if similarity is None:
            similarity = "wordnet" if self.config_name == "default" else self.config_name
        question_ids = question_ids_for(question_ids, len(references))
        texts = per_question_values(questions, "questions", len(references))
        raw = per_question_values(raw_answers, "raw_answers", len(references))
        protoqa = ProtoQA(similarity, metrics, all_stopword_match=all_stopword_match, **options)
        if protoqa.needs_question_text and questions is None:
            raise ValueError(
                f"the {similarity} similarity reads each question's text: pass "
                "questions=[question text, ...], one per reference"
            )
        targets = [
            Question(qid, text or "", clusters_from_records(ref, qid), raw_answers=raw_answer_counts(r, qid) or {})
            for qid, ref, text, r in zip(question_ids, references, texts, raw, strict=True)
        ]
        # Predictions are paired with references by position, so every id is known; the
        # library's id gate (protoqa_core.io.ids.reconcile_ids) still checks them.
        return protoqa.evaluate(targets, dict(zip(question_ids, predictions, strict=True))).as_dict()

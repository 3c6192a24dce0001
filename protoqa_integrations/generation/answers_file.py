"""The answers file of a language model: sampled (with a resume journal) and scored.

:func:`generate_answers_file` samples every question through an engine and writes the answers
file that ``protoqa-eval`` and ``probeval`` both read; each question goes to the journal as soon
as it is drawn, so a run that stops resumes, and the run lock keeps a second run off the same
``-o`` so no question is asked twice (:mod:`~protoqa_integrations.generation.answers_journal`).
:func:`score_generated` scores such a file. :mod:`protoqa_integrations.generation.cli` is the
command line.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

from protoqa_core.cli import OutputFileError, check_output_file, open_append, reason_of
from protoqa_core.io.data import SourceError
from protoqa_core.io.records import Question
from protoqa_core.io.sample_claims import check_counted_samples
from protoqa_core.ranking import answer_frequencies, rank_by_frequency
from protoqa_integrations.generation.answers_journal import (
    AnswersFileError,
    journal_hint,
    journal_path,
    output_lock,
    read_journal,
    seal_record,
    write_json_atomically,
)
from protoqa_integrations.generation.engines import Engine, is_collapsed
from protoqa_integrations.generation.engines.base import chat_prompt_function
from protoqa_integrations.generation.provenance import check_provenance, mismatch_mark
from protoqa_integrations.generation.settings import SamplingConfig, prompt_function
from protoqa_integrations.generation.shareable import shareable
from protoqa_metric.metric import evaluate_predictions

__all__ = [
    "DATASETS",
    "SCORE_SIMILARITIES",
    "GeneratedScores",
    "answers_document",
    "check_generate_outputs",
    "generate_answers_file",
    "locate_questions",
    "read_questions_file",
    "score_generated",
]

DATASETS = ("protoqa", "cfc", "protoqa_scraped_dev")
"""The ``protoqa_dataset`` configs whose questions can be answered."""
SCORE_SIMILARITIES = ("wordnet", "exact_match")
"""The similarities :func:`score_generated` scores under by default."""


def locate_questions(dataset: str, split: str, data_dir: Optional[str] = None, verify: bool = True) -> tuple[Path, str]:
    """The local questions file of a ``protoqa_dataset`` config and split, and where it came from.

    >>> locate_questions("protoqa", "validation", "/no/such/folder")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    AnswersFileError: ...
    """
    from protoqa_dataset.parsing import questions_file  # the dataset package imports datasets

    try:
        return questions_file(dataset, split, data_dir, verify=verify)
    except SourceError as exc:
        raise AnswersFileError(str(exc)) from exc


def read_questions_file(path: Path, dataset: str, split: str) -> list[Question]:
    """The questions of a local file of a ``protoqa_dataset`` config and split (:func:`locate_questions`).

    >>> read_questions_file(Path("/no/such/file.jsonl"), "protoqa", "validation")  # doctest: +SKIP
    """
    from protoqa_dataset.parsing import read_questions  # the dataset package imports datasets

    return read_questions(path, dataset, split)


def answers_document(
    questions: Sequence[Question], samples: dict[str, list[str]], skipped: dict[str, str], generation: dict[str, Any]
) -> dict[str, Any]:
    """The answers file: every sample (with ``""`` for no answer), counts, ranked lists and the settings.

    >>> from protoqa_metric import Question
    >>> doc = answers_document([Question("q1", "name a pet", ())], {"q1": ["dog", "", "cat", "dog"]}, {}, {})
    >>> doc["model_ranked_answers"], doc["model_answers_with_count"], doc["generation"]["empty_samples"]
    ({'q1': ['dog', 'cat']}, {'q1': [['dog', 2], ['cat', 1]]}, {'q1': 1})
    """
    ranked = {q.id: rank_by_frequency(samples.get(q.id, [])) for q in questions}
    with_count = {}
    for q in questions:
        counts = answer_frequencies(samples.get(q.id, []))
        with_count[q.id] = [[a, counts[a]] for a in ranked[q.id]]
    empty = {q.id: samples.get(q.id, []).count("") for q in questions if "" in samples.get(q.id, [])}
    no_answer = [q.id for q in questions if q.id not in skipped and not ranked[q.id]]
    return {
        "model_answers": {q.id: list(samples.get(q.id, [])) for q in questions},
        "model_answers_with_count": with_count,
        "model_ranked_answers": ranked,
        "generation": {
            **shareable(generation),
            "num_questions": len(questions),
            "empty_samples": empty,
            "questions_without_answer": no_answer,
            "skipped": dict(skipped),
        },
    }


def generate_answers_file(
    engine: Engine,
    questions: Sequence[Question],
    output: Path,
    *,
    config: SamplingConfig,
    prompt_style: str,
    header: dict[str, Any],
    progress: Optional[bool] = None,
    leaderboard: Optional[Path] = None,
    system_prompt: Optional[str] = None,
) -> dict[str, Any]:
    """Sample every question with ``engine`` (resuming from ``<output>.partial.jsonl``) and write the answers file.

    Question ``i`` is sampled under ``config.seed + i``. ``header`` (the settings that change the
    samples) heads the journal: a journal with another header is refused, not resumed. The run holds
    :func:`output_lock` throughout. Returns the document written to ``output``.

    >>> from protoqa_integrations.generation.engines import make_engine
    >>> engine = make_engine("hf", "gpt2", device="cpu")  # doctest: +SKIP
    >>> doc = generate_answers_file(engine, questions, Path("answers.json"), config=SamplingConfig(),
    ...                             prompt_style="statement", header={})  # doctest: +SKIP
    """
    with output_lock(output):
        chat_prompt = chat_prompt_function(prompt_style)
        to_prompt = (
            (lambda q: chat_prompt(q, system_prompt)) if chat_prompt is not None else prompt_function(prompt_style)
        )
        journal = journal_path(output)
        samples, skipped, usage = _resume_journal(journal, questions, header, config.num_samples)
        todo = [(i, q) for i, q in enumerate(questions) if q.id not in samples]
        prompts = [to_prompt(q.question) for _, q in todo]
        _append_samples(engine, journal, todo, prompts, config, progress, (samples, skipped, usage))
        document = answers_document(questions, samples, skipped, header)
        _add_run_details(document, questions, samples, config, engine, usage)
        try:
            write_json_atomically(output, document)
            if leaderboard is not None:
                write_json_atomically(
                    leaderboard, [{q.id: document["model_ranked_answers"][q.id]} for q in questions], jsonl=True
                )
        except OutputFileError as exc:
            raise AnswersFileError(f"{exc}; {journal_hint(journal, len(samples))}") from None
        journal.unlink()
        return document


def _resume_journal(
    journal: Path, questions: Sequence[Question], header: dict[str, Any], num_samples: int
) -> tuple[dict[str, list[str]], dict[str, str], dict[str, int]]:
    """The samples, skip reasons and token usage an interrupted run left in ``journal``; the journal is started anew with them."""
    samples: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    usage: dict[str, int] = {}
    if os.path.lexists(journal):
        samples, skipped, usage = read_journal(journal, header, num_samples, [q.id for q in questions])
    # The journal is rewritten without a possibly cut-short last line, then appended to.
    try:
        write_json_atomically(
            journal,
            [seal_record({"header": header})]
            + [
                seal_record({"id": q.id, "samples": samples[q.id], "skipped": skipped.get(q.id)})
                for q in questions
                if q.id in samples
            ],
            jsonl=True,
        )
    except OutputFileError as exc:
        raise AnswersFileError(f"{exc}; {journal_hint(journal, len(samples))}" if samples else str(exc)) from None
    return samples, skipped, usage


def _append_samples(
    engine: Engine,
    journal: Path,
    todo: Sequence[tuple[int, Question]],
    prompts: Sequence[Any],
    config: SamplingConfig,
    progress: Optional[bool],
    drawn: tuple[dict[str, list[str]], dict[str, str], dict[str, int]],
) -> None:
    """Sample the ``todo`` questions, appending each to the journal as it completes and to ``drawn`` (samples, skips)."""
    samples, skipped, usage = drawn
    try:
        with open_append(journal) as fh:
            seeds = [config.seed + i for i, _ in todo]
            for done in engine.sample(prompts, config, seeds=seeds, progress=progress):
                question = todo[done.index][1]
                if done.skipped:
                    warnings.warn(f"question {question.id!r} skipped: {done.skipped}", stacklevel=2)
                record: dict[str, Any] = {"id": question.id, "samples": done.answers, "skipped": done.skipped}
                if engine.usage:  # tokens spent so far, this run's and the resumed run's
                    record["usage"] = {k: usage.get(k, 0) + v for k, v in engine.usage.items()}
                fh.write(json.dumps(seal_record(record), ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
                samples[question.id] = done.answers
                if done.skipped:
                    skipped[question.id] = done.skipped
    except OSError as exc:
        # A line cut short by a full disk is dropped and sampled again on resume.
        raise AnswersFileError(
            f"{journal}: cannot write: {reason_of(exc)}; {journal_hint(journal, len(samples))}"
        ) from None


def _add_run_details(
    document: dict[str, Any],
    questions: Sequence[Question],
    samples: dict[str, list[str]],
    config: SamplingConfig,
    engine: Engine,
    usage: dict[str, int],
) -> None:
    """Add to the answers document the collapsed questions (warned about), the engine's details and the tokens spent."""
    collapsed = [q.id for q in questions if is_collapsed(samples.get(q.id, []), config.temperature)]
    if collapsed:
        document["generation"]["collapsed_questions"] = collapsed
        warnings.warn(
            f"{len(collapsed)} question(s) got nearly the same answer in every sample at temperature "
            f"{config.temperature} (a fixed seed in every request?): {', '.join(collapsed[:10])}",
            stacklevel=2,
        )
    # what the engine found at start-up: the model loaded or served, library and server versions
    details = document["generation"]["engine_details"] = engine.describe()
    asked, answered = details.get("model"), details.get("reply_model")
    if answered and asked and answered != asked:
        warnings.warn(
            f"the server answered as model {answered!r} when asked for {asked!r} (a dated snapshot of it, or "
            "another model): recorded as engine_details.reply_model, which the leaderboard names",
            stacklevel=2,
        )
    total_usage = {k: usage.get(k, 0) + engine.usage.get(k, 0) for k in set(usage) | set(engine.usage)}
    if total_usage:
        document["generation"]["usage"] = dict(sorted(total_usage.items()))
    # What the engine reports joins the shared block through the same allowlist as the rest of it.
    document["generation"] = shareable(document["generation"])


def check_generate_outputs(
    output: Path, leaderboard: Optional[Path], inputs: Sequence[Path] = (), overwrite: bool = False
) -> None:
    """Refuse, before any work, outputs that would destroy something: see ``protoqa-eval generate --help``.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> check_generate_outputs(folder / "a.json", folder / "a.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    protoqa_integrations.generation.answers_journal.AnswersFileError: ...a.json: -o and --leaderboard name the same file
    """
    journal = journal_path(output)
    outputs = [output] + ([leaderboard] if leaderboard is not None else [])
    names = [str(p) for p in inputs]
    try:
        for path in outputs:
            check_output_file(str(path), names, overwrite, force_flag="--overwrite")
    except OutputFileError as exc:
        raise AnswersFileError(str(exc)) from None
    if leaderboard is not None:
        for other in (output, journal):
            if leaderboard.resolve() == other.resolve() or (
                leaderboard.exists() and other.exists() and os.path.samefile(leaderboard, other)
            ):
                flag = "-o" if other == output else "the resume journal of -o"
                raise AnswersFileError(f"{leaderboard}: {flag} and --leaderboard name the same file")
    if os.path.lexists(journal) and (os.path.islink(journal) or not journal.is_file()):
        raise AnswersFileError(f"{journal}: the resume journal is not a regular file; move it away")
    for name in names:
        if os.path.lexists(journal) and os.path.samefile(journal, name):
            raise AnswersFileError(f"{journal}: the resume journal is an input file; move it away")


@dataclass
class GeneratedScores:
    """Scores of an answers file.

    Attributes:
        protoqa: similarity -> ``EvaluationResult`` (scores, per question, signature).
        probeval: ``cfc_probeval.ProbEvalResult`` (None when there are no answer clusters to compare with).
        generation: the ``generation`` block of the file (settings), empty when absent.
        num_questions: questions scored.
        accepted: provenance mismatches with the targets accepted by the caller (``field (...)``), marked
            in the output.
    """

    protoqa: dict[str, Any]
    probeval: Any
    generation: dict[str, Any]
    num_questions: int
    accepted: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: scores and signatures."""
        out: dict[str, Any] = {"protoqa": {sim: r.as_dict() for sim, r in self.protoqa.items()}}
        if self.probeval is not None:
            out["probeval"] = {"kl": self.probeval.kl, "signature": self.probeval.signature}
        out["sampling"] = self.generation.get("sampling")
        out["num_questions"] = self.num_questions
        if self.accepted:
            out["accepted_mismatches"] = list(self.accepted)
        return out


def _recorded_questions(path: Path, generation: dict[str, Any], data_dir: Optional[str]) -> list[Question]:
    """The questions an answers file answers: from ``data_dir`` when given, else from the local file the
    ``generation`` block records (``questions_from``), else as :func:`protoqa_dataset.parsing.load_questions` finds them."""
    from protoqa_dataset.sources import SOURCES

    dataset, split = generation.get("dataset"), generation.get("split")
    if not isinstance(dataset, str) or not isinstance(split, str) or split not in SOURCES.get(dataset, {}):
        raise AnswersFileError(f"{path} does not say which questions it answers; pass --targets FILE")
    recorded = generation.get("questions_from")
    if data_dir is None and isinstance(recorded, str) and "://" not in recorded:
        source = Path(recorded)
        if not source.is_file():
            raise AnswersFileError(
                f"{path} answers the questions in {source}, which is gone; pass --data-dir DIR or --targets FILE"
            )
        try:
            from protoqa_core.io.data import SourceError, verify_checksum

            verify_checksum(SOURCES[dataset][split], source, str(source), f"config {dataset!r}, split {split!r}")
        except SourceError as exc:
            raise AnswersFileError(f"{exc}; pass --targets {source} to score against it as it is now") from None
        return read_questions_file(source, dataset, split)
    return read_questions_file(locate_questions(dataset, split, data_dir)[0], dataset, split)


def _check_answered(path: Path, answered: int, total: int, only_predicted: bool) -> None:
    """Refuse a file that answers part of the target questions, unless the score is restricted to them."""
    if answered == total:
        return
    if not only_predicted:
        raise AnswersFileError(
            f"{path} answers {answered} of the {total} target questions: a score over part of a data set is not "
            "the data set's; answer them all, or pass --only-predicted to score the answered ones (the signatures "
            "then say how many)"
        )
    warnings.warn(f"scoring the {answered} of {total} questions that {path.name} answers", stacklevel=3)


def score_generated(
    answers_path: str,
    targets: Optional[Sequence[Question]] = None,
    *,
    similarities: Sequence[str] = SCORE_SIMILARITIES,
    metrics: str = "paper",
    probeval: bool = True,
    data_dir: Optional[str] = None,
    targets_data: Optional[tuple[str, str]] = None,
    targets_label: Optional[str] = None,
    accept: Sequence[str] = (),
    only_predicted: bool = False,
) -> GeneratedScores:
    """ProtoQA metrics and ProbEval KL of an answers file over the target questions.

    A file that answers part of the questions is refused unless ``only_predicted``. Without ``targets``
    the questions come from the file's data set and split; with them, the file's must be
    ``targets_data`` unless ``accept`` names the field. ProbEval uses every sample, empty ones included.

    >>> score_generated("answers.json").protoqa["wordnet"].scores["max_answers@10"]  # doctest: +SKIP
    """
    from protoqa_core.io.json_values import parse_json, read_text
    from protoqa_core.io.predictions import read_prediction_lists, read_predictions

    path = Path(answers_path)
    try:
        whole = parse_json(read_text(path), path)
    except FileNotFoundError as exc:
        raise AnswersFileError(f"answers file not found: {path}") from exc
    generation = whole.get("generation") if isinstance(whole, dict) else None
    generation = generation if isinstance(generation, dict) else {}
    checked = check_provenance({path.name: generation}, targets_data, accept, targets_name="the targets")
    if targets is None:
        targets = _recorded_questions(path, generation, data_dir)
    ranked = read_predictions(path, "model_ranked_answers")
    samples = read_prediction_lists(path, "model_answers")
    check_counted_samples(generation, max(map(len, samples.values()), default=0), path.name)
    by_id = {q.id: q for q in targets}
    unknown = [qid for qid in ranked if qid not in by_id]
    if unknown:
        raise AnswersFileError(
            f"{path}: answers for {len(unknown)} question id(s) not in the targets: {', '.join(unknown[:10])}"
        )
    scored = [by_id[qid] for qid in by_id if qid in ranked]
    if not scored:
        raise AnswersFileError(f"{path} answers none of the target questions")
    if any(not q.clusters for q in scored):
        raise AnswersFileError(
            f"{path}: the questions have no answer clusters (test questions) and cannot be scored; "
            "submit the leaderboard file instead"
        )
    _check_answered(path, len(scored), len(by_id), only_predicted)
    every = list(by_id.values())
    results = {
        sim: evaluate_predictions(every, ranked, sim, metrics, only_predicted=only_predicted) for sim in similarities
    }
    probeval_result = None
    if probeval:
        from cfc_probeval import evaluate_probeval

        probeval_result = evaluate_probeval(
            every,
            {q.id: samples[q.id] for q in scored},
            clustering="human",
            matching="wordnet",
            only_sampled=only_predicted,
        )
    for mark in filter(None, (targets_label, mismatch_mark(checked.accepted))):
        results = {sim: replace(r, signature=f"{r.signature}|{mark}") for sim, r in results.items()}
        if probeval_result is not None:
            probeval_result = replace(probeval_result, signature=f"{probeval_result.signature}|{mark}")
    return GeneratedScores(results, probeval_result, shareable(generation), len(scored), checked.accepted)

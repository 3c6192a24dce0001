"""The answers file of a language model: sampled (with a resume journal) and scored.

:func:`generate_answers_file` samples every question through an engine of
:mod:`protoqa_integrations.engines` and writes ``{"model_answers": ..., "model_answers_with_count":
..., "model_ranked_answers": ..., "generation": ...}``, which ``protoqa-eval`` and ``probeval``
both read. Each question is appended to ``<output>.partial.jsonl`` (the journal) as soon as its
samples are drawn; a run that stops is resumed from there with the same settings. One run
at a time writes an answers file: it holds an exclusive lock (``fcntl.flock``) on
``<output>.partial.lock`` from before it reads the journal until the answers file is written
(:func:`output_lock`), and a second run on the same ``-o`` is refused, naming the first
run's process, so no question is asked twice.
:func:`score_generated` scores such a file: the ProtoQA metrics under each similarity, the
ProbEval KL (human clusters, WordNet matching) and their signatures.

``protoqa-eval generate`` and ``protoqa-eval score-generated`` (:mod:`protoqa_integrations.generate_cli`)
are these functions behind a command line.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from protoqa_core.io.cli import OutputFileError, check_output_file, open_append, reason_of, write_output_file
from protoqa_core.io.data import SourceError
from protoqa_core.io.readers import DataFormatError, Question
from protoqa_core.ranking import answer_frequencies, rank_by_frequency
from protoqa_metric.metric import evaluate_predictions

from .engines import Engine, is_collapsed
from .engines.base import chat_prompt_function
from .generation import GenerationError, SamplingConfig, prompt_function

__all__ = [
    "DATASETS",
    "SCORE_SIMILARITIES",
    "AnswersFileError",
    "GeneratedScores",
    "answers_document",
    "check_generate_outputs",
    "check_journal",
    "generate_answers_file",
    "journal_path",
    "lock_path",
    "locate_questions",
    "output_lock",
    "read_questions_file",
    "score_generated",
]

DATASETS = ("protoqa", "cfc", "protoqa_scraped_dev")
"""The ``protoqa_dataset`` configs whose questions can be answered."""
SCORE_SIMILARITIES = ("wordnet", "exact_match")
"""The similarities :func:`score_generated` scores under by default."""


class AnswersFileError(GenerationError):
    """An answers file, its journal or its questions cannot be read or written; one line saying what to change."""


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
            **generation,
            "num_questions": len(questions),
            "empty_samples": empty,
            "questions_without_answer": no_answer,
            "skipped": dict(skipped),
        },
    }


def journal_path(output: Path) -> Path:
    """The resume journal of an answers file: ``<output>.partial.jsonl``.

    >>> journal_path(Path("runs/a.json")).name
    'a.json.partial.jsonl'
    """
    return output.with_name(output.name + ".partial.jsonl")


def lock_path(output: Path) -> Path:
    """The lock file of an answers file's run: ``<output>.partial.lock``.

    >>> lock_path(Path("runs/a.json")).name
    'a.json.partial.lock'
    """
    return output.with_name(output.name + ".partial.lock")


_held: dict[str, int] = {}  # lock files this process holds -> how many nested holders
_held_guard = threading.Lock()


def _open_lock(path: Path) -> int:
    """The lock file ``path``, opened (created if absent) and locked exclusively; refused while another holds it."""
    for _ in range(10):  # the file may be removed by the run ending just as it is opened: open it again
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise AnswersFileError(f"{path}: the lock file is a symbolic link; move it away") from None
            raise AnswersFileError(f"{path}: cannot create the lock file: {reason_of(exc)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            owner = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                by = f"process {owner}" if owner.isdigit() else "another process"
                raise AnswersFileError(
                    f"{path}: another run ({by}) is writing these answers; wait for it to end or choose another -o"
                ) from None
            raise AnswersFileError(f"{path}: cannot lock: {reason_of(exc)}") from None
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            continue
        if not os.path.isfile(path) or os.fstat(fd).st_size > 32:
            os.close(fd)
            raise AnswersFileError(f"{path}: not a lock file of protoqa-eval; move it away")
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd
    raise AnswersFileError(f"{path}: the lock file keeps being replaced; is another run starting and stopping?")


@contextmanager
def output_lock(output: Path) -> Iterator[Path]:
    """Hold the exclusive lock of the run writing ``output`` (:func:`lock_path`); yields the lock file.

    A second holder in another process (or with another open of the file) is refused with
    :class:`AnswersFileError` naming the lock file and the holder's process id; nested holds in
    this process share the lock. The lock file is removed when the last holder lets go, and the
    kernel frees the lock of a process that dies.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "a.json"
    >>> with output_lock(out) as held, output_lock(out):
    ...     held.read_text().strip() == str(os.getpid())
    True
    >>> lock_path(out).exists()
    False
    """
    path = lock_path(output)
    key = os.path.abspath(path)
    with _held_guard:
        nested = key in _held
        if nested:
            _held[key] += 1
        else:
            fd = _open_lock(path)
            _held[key] = 1
    try:
        yield path
    finally:
        with _held_guard:
            _held[key] -= 1
            if not _held[key]:
                del _held[key]
                try:
                    path.unlink()  # while still locked: a run opening it now locks a file no longer there, and retries
                except OSError:
                    pass
                os.close(fd)


def _journal_error(path: Path, number: int, what: str) -> AnswersFileError:
    return AnswersFileError(f"{path}, line {number}: {what}; delete the file to start over")


def _read_journal(
    path: Path, header: dict[str, Any], num_samples: Optional[int] = None, question_ids: Optional[Sequence[str]] = None
) -> tuple[dict[str, list[str]], dict[str, str], dict[str, int]]:
    """Samples already drawn by an interrupted run with the same settings, every line checked, and the
    token usage its last complete question recorded.

    A record must name a question of this run once, with a list of ``num_samples``
    strings (or a skip reason); anything else is an error naming the journal and line.
    """
    from protoqa_core.io.readers import MalformedJSONError, parse_json, read_text

    if os.path.islink(path) or not path.is_file():
        raise AnswersFileError(f"{path}: the resume journal is not a regular file; move it away")
    try:
        text = read_text(path)
    except (OSError, DataFormatError) as exc:
        raise AnswersFileError(f"{exc}; delete the journal {path} to start over") from None
    lines = text.split("\n")
    known = None if question_ids is None else set(question_ids)
    samples: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    usage: dict[str, int] = {}
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(line, path, number)
        except MalformedJSONError:
            if number >= len(lines) - 1 and number > 1:
                break  # the last line was cut short by the interruption; it is sampled again
            raise _journal_error(path, number, "not JSON") from None
        except DataFormatError as exc:  # JSON, but nested too deeply or with a value JSON does not allow
            raise AnswersFileError(f"{exc}; delete the file to start over") from None
        if number == 1:
            stored = record.get("header") if isinstance(record, dict) else None
            found = stored if isinstance(stored, dict) else {}
            if found != header:
                differ = sorted(k for k in set(found) | set(header) if found.get(k) != header.get(k))
                raise AnswersFileError(
                    f"{path} was written by a run with other settings (differing: "
                    f"{', '.join(differ)}); use the same settings to resume it, or delete it to "
                    "start over"
                )
            continue
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise _journal_error(path, number, "not a question record")
        qid = record["id"]
        if known is not None and qid not in known:
            raise _journal_error(path, number, f"question {qid!r} is not one of the questions of this run")
        if qid in first_line:
            raise _journal_error(path, number, f"question {qid!r} again (first on line {first_line[qid]})")
        drawn, reason = record.get("samples"), record.get("skipped")
        if reason is not None and not isinstance(reason, str):
            raise _journal_error(path, number, f"question {qid!r}: 'skipped' must be a string or null")
        if not isinstance(drawn, list) or not all(isinstance(a, str) for a in drawn):
            raise _journal_error(path, number, f"question {qid!r}: 'samples' must be a list of strings")
        expected = 0 if reason else num_samples
        if expected is not None and len(drawn) != expected:
            raise _journal_error(path, number, f"question {qid!r}: {len(drawn)} samples, expected {expected}")
        first_line[qid] = number
        samples[qid] = list(drawn)
        if reason:
            skipped[qid] = reason
        recorded = record.get("usage")
        if isinstance(recorded, dict):
            usage = {k: v for k, v in recorded.items() if isinstance(k, str) and type(v) is int}
    return samples, skipped, usage


def check_journal(
    output: Path, header: dict[str, Any], num_samples: Optional[int], question_ids: Sequence[str]
) -> None:
    """Refuse, before any sampling, a resume journal beside ``output`` that this run cannot resume.

    The journal must have been written with the same ``header`` and hold, per line, one of
    ``question_ids`` with ``num_samples`` samples; no journal is fine.

    >>> check_journal(Path("/no/such/answers.json"), {}, 3, ["q1"])
    """
    journal = journal_path(output)
    if os.path.lexists(journal):
        _read_journal(journal, header, num_samples, question_ids)


def _journal_hint(journal: Path, count: int) -> str:
    return (
        f"the {count} question(s) sampled so far are kept in {journal}; make room and run the same command "
        "again to resume"
    )


def _write_json_atomically(path: Path, document: Any, jsonl: bool = False) -> None:
    def write(fh: Any) -> None:
        if jsonl:
            for record in document:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            json.dump(document, fh, ensure_ascii=False, indent=1)
            fh.write("\n")

    write_output_file(path, write)


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

    Question ``i`` of ``questions`` is sampled under ``config.seed + i``. A chat prompt style
    (``protoqa-chat``, ``cfc-chat``) builds chat messages, with ``system_prompt`` first.
    ``header`` (the settings that change the samples) heads the journal: a journal with
    another header is refused, not resumed. Questions whose samples collapsed to one text at
    a temperature above 0 are warned about and listed as ``collapsed_questions``; the tokens
    an engine reports are summed as ``usage``. The leaderboard file (one ``{question id:
    [ranked answers]}`` line per question) is written when ``leaderboard`` is given.
    The run holds :func:`output_lock` throughout: a second run on the same ``output`` is refused.
    Returns the document written to ``output``.

    >>> from protoqa_integrations.engines import make_engine
    >>> engine = make_engine("hf", "gpt2", device="cpu")  # doctest: +SKIP
    >>> doc = generate_answers_file(engine, questions, Path("answers.json"), config=SamplingConfig(),
    ...                             prompt_style="statement", header={})  # doctest: +SKIP
    """
    with output_lock(output):
        return _sample_and_write(
            engine,
            questions,
            output,
            config=config,
            prompt_style=prompt_style,
            header=header,
            progress=progress,
            leaderboard=leaderboard,
            system_prompt=system_prompt,
        )


def _sample_and_write(
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
    chat_prompt = chat_prompt_function(prompt_style)
    to_prompt = (lambda q: chat_prompt(q, system_prompt)) if chat_prompt is not None else prompt_function(prompt_style)
    journal = journal_path(output)
    samples: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    usage: dict[str, int] = {}
    if os.path.lexists(journal):
        samples, skipped, usage = _read_journal(journal, header, config.num_samples, [q.id for q in questions])
    todo = [(i, q) for i, q in enumerate(questions) if q.id not in samples]
    # The journal is rewritten without a possibly cut-short last line, then appended to.
    try:
        _write_json_atomically(
            journal,
            [{"header": header}]
            + [
                {"id": q.id, "samples": samples[q.id], "skipped": skipped.get(q.id)}
                for q in questions
                if q.id in samples
            ],
            jsonl=True,
        )
    except OutputFileError as exc:
        raise AnswersFileError(f"{exc}; {_journal_hint(journal, len(samples))}" if samples else str(exc)) from None
    try:
        with open_append(journal) as fh:
            prompts = [to_prompt(q.question) for _, q in todo]
            seeds = [config.seed + i for i, _ in todo]
            for done in engine.sample(prompts, config, seeds=seeds, progress=progress):
                question = todo[done.index][1]
                if done.skipped:
                    print(f"warning: question {question.id!r} skipped: {done.skipped}", file=sys.stderr)
                record: dict[str, Any] = {"id": question.id, "samples": done.answers, "skipped": done.skipped}
                if engine.usage:  # tokens spent so far, this run's and the resumed run's
                    record["usage"] = {k: usage.get(k, 0) + v for k, v in engine.usage.items()}
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
                samples[question.id] = done.answers
                if done.skipped:
                    skipped[question.id] = done.skipped
    except OSError as exc:
        # A line cut short by a full disk is dropped and sampled again on resume.
        raise AnswersFileError(
            f"{journal}: cannot write: {reason_of(exc)}; {_journal_hint(journal, len(samples))}"
        ) from None
    document = answers_document(questions, samples, skipped, header)
    collapsed = [q.id for q in questions if is_collapsed(samples.get(q.id, []), config.temperature)]
    if collapsed:
        document["generation"]["collapsed_questions"] = collapsed
        print(
            f"warning: {len(collapsed)} question(s) got nearly the same answer in every sample at temperature "
            f"{config.temperature} (a fixed seed in every request?): {', '.join(collapsed[:10])}",
            file=sys.stderr,
        )
    # what the engine found at start-up: the model loaded or served, library and server versions
    document["generation"]["engine_details"] = engine.describe()
    total_usage = {k: usage.get(k, 0) + engine.usage.get(k, 0) for k in set(usage) | set(engine.usage)}
    if total_usage:
        document["generation"]["usage"] = dict(sorted(total_usage.items()))
    try:
        _write_json_atomically(output, document)
        if leaderboard is not None:
            _write_json_atomically(
                leaderboard, [{q.id: document["model_ranked_answers"][q.id]} for q in questions], jsonl=True
            )
    except OutputFileError as exc:
        raise AnswersFileError(f"{exc}; {_journal_hint(journal, len(samples))}") from None
    journal.unlink()
    return document


def check_generate_outputs(
    output: Path, leaderboard: Optional[Path], inputs: Sequence[Path] = (), overwrite: bool = False
) -> None:
    """Refuse, before any work, outputs that would destroy something: see ``protoqa-eval generate --help``.

    The answers file and the leaderboard file are refused when they exist (unless
    ``overwrite``), are an input, are the same file, are not regular files, or cannot
    be written; a resume journal beside the answers file must be a regular file.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> check_generate_outputs(folder / "a.json", folder / "a.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    protoqa_integrations.answers_file.AnswersFileError: ...a.json: -o and --leaderboard name the same file
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
    """

    protoqa: dict[str, Any]
    probeval: Any
    generation: dict[str, Any]
    num_questions: int

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: scores and signatures."""
        out: dict[str, Any] = {"protoqa": {sim: r.as_dict() for sim, r in self.protoqa.items()}}
        if self.probeval is not None:
            out["probeval"] = {"kl": self.probeval.kl, "signature": self.probeval.signature}
        out["sampling"] = self.generation.get("sampling")
        out["num_questions"] = self.num_questions
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


def score_generated(
    answers_path: str,
    targets: Optional[Sequence[Question]] = None,
    *,
    similarities: Sequence[str] = SCORE_SIMILARITIES,
    metrics: str = "paper",
    probeval: bool = True,
    data_dir: Optional[str] = None,
) -> GeneratedScores:
    """ProtoQA metrics and ProbEval KL of an answers file, over the questions it answers.

    Without ``targets`` the questions come from the file's ``generation`` block (its
    dataset and split). The ranked lists are ``model_ranked_answers``; ProbEval uses every
    sample (``model_answers``, empty ones included) with the human clusters and WordNet
    matching, as :func:`protoqa_integrations.training.probeval_with_human_clusters` does.

    >>> score_generated("answers.json").protoqa["wordnet"].scores["max_answers@10"]  # doctest: +SKIP
    """
    from protoqa_core.io.readers import parse_json, read_prediction_lists, read_predictions, read_text

    path = Path(answers_path)
    try:
        whole = parse_json(read_text(path), path)
    except FileNotFoundError as exc:
        raise AnswersFileError(f"answers file not found: {path}") from exc
    generation = whole.get("generation") if isinstance(whole, dict) else None
    generation = generation if isinstance(generation, dict) else {}
    if targets is None:
        targets = _recorded_questions(path, generation, data_dir)
    ranked = read_predictions(path, "model_ranked_answers")
    samples = read_prediction_lists(path, "model_answers")
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
    if len(scored) < len(by_id):
        print(f"note: scoring the {len(scored)} of {len(by_id)} questions that {path.name} answers", file=sys.stderr)
    results = {sim: evaluate_predictions(scored, ranked, sim, metrics) for sim in similarities}
    probeval_result = None
    if probeval:
        from cfc_probeval import evaluate_probeval

        probeval_result = evaluate_probeval(
            scored, {q.id: samples[q.id] for q in scored}, clustering="human", matching="wordnet"
        )
    return GeneratedScores(results, probeval_result, generation, len(scored))

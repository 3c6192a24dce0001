"""``protoqa-eval generate`` and ``protoqa-eval score-generated``: from a language model to scores.

    protoqa-eval generate MODEL -o answers.json [--dataset protoqa|cfc] [--split validation|test]
                 [--device cpu|cuda|auto] [--dtype auto|float32|float16|bfloat16] [--batch-size 100]
                 [--seed 42] [--num-samples N] [--limit N] [--prompt statement|finetuned|cfc-one-shot]
                 [--data-dir DIR] [--engine hf|vllm|openai] [--chat] [--system-prompt TEXT] ...
    protoqa-eval score-generated answers.json [--similarity wordnet,exact_match] [--json]

``generate`` samples answers from a language model with the protocols of
:mod:`protoqa_integrations.generation`, through one of the engines of
:mod:`protoqa_integrations.engines` (``--engine``: ``hf``, the default, any causal language
model of ``transformers``; ``vllm``; ``openai``, any OpenAI-compatible server), and writes
``{"model_answers": ..., "model_answers_with_count": ..., "model_ranked_answers": ...,
"generation": ...}``, which ``protoqa-eval`` and ``probeval`` both read. Each question is
appended to ``<output>.partial.jsonl`` as soon as its samples are drawn; a run that
stops is resumed from there by the same command. For the ProtoQA test questions it also
writes the leaderboard file (``--leaderboard``, JSONL: one ``{question id: [ranked
answers]}`` object per line).

``score-generated`` scores such a file: the ProtoQA metrics under each similarity, the
ProbEval KL (human clusters, WordNet matching) and their signatures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from protoqa_core import __version__
from protoqa_core.cli_io import OutputFileError, check_output_file, open_append, reason_of, write_output_file
from protoqa_core.data import CACHE_DIR_ENV, SourceError
from protoqa_core.ranking import answer_frequencies, rank_by_frequency
from protoqa_core.readers import DataFormatError, Question, read_targets
from protoqa_metric.metric import evaluate_predictions
from protoqa_metric.metric_set import ProtoQAWarning, format_table

from . import generation
from .engines import CHAT_MAX_NEW_TOKENS, ENGINES, Engine, is_collapsed, make_engine
from .engines.base import chat_prompt_function, sampling_signature
from .generation import (
    CFC_NUM_SAMPLES,
    PAPER_MAX_NEW_TOKENS,
    PAPER_TEMPERATURE,
    PAPER_TOP_P,
    PROMPT_STYLES,
    PROTOQA_NUM_SAMPLES,
    GenerationError,
    SamplingConfig,
    prompt_function,
    resolve_device,
)

__all__ = [
    "DATASETS",
    "CACHE_DIR_ENV",
    "GeneratedScores",
    "default_protocol",
    "check_generate_outputs",
    "load_model",
    "answers_document",
    "generate_answers_file",
    "score_generated",
    "build_generate_parser",
    "build_score_parser",
    "main",
    "score_main",
]

DATASETS = ("protoqa", "cfc", "protoqa_scraped_dev")
"""The ``protoqa_dataset`` configs whose questions can be answered."""
SCORE_SIMILARITIES = ("wordnet", "exact_match")


class CommandError(Exception):
    """Bad input or set-up, reported as one line with exit status 2."""


def default_protocol(dataset: str) -> tuple[str, int]:
    """``(prompt style, samples per question)`` of a data set's protocol.

    >>> default_protocol("cfc"), default_protocol("protoqa")
    (('cfc-one-shot', 100), ('statement', 300))
    """
    return ("cfc-one-shot", CFC_NUM_SAMPLES) if dataset == "cfc" else ("statement", PROTOQA_NUM_SAMPLES)


def _questions_file(dataset: str, split: str, data_dir: Optional[str] = None, verify: bool = True) -> tuple[Path, str]:
    from protoqa_dataset.parsing import questions_file  # the dataset package imports datasets

    # a data file that cannot be found or verified is bad set-up: one line, exit 2
    try:
        return questions_file(dataset, split, data_dir, verify=verify)
    except SourceError as exc:
        raise CommandError(str(exc)) from exc


def _read_questions(path: Path, dataset: str, split: str) -> list[Question]:
    from protoqa_dataset.parsing import read_questions

    return read_questions(path, dataset, split)


def load_model(name: str, device: str = "auto", dtype: str = "auto") -> tuple[Any, Any]:
    """:func:`protoqa_integrations.generation.load_model`, its errors as one-line command errors.

    >>> load_model("/no/such/folder")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    CommandError: there is no model folder /no/such/folder
    """
    try:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # stderr is for our own progress bar and messages
    except ImportError:
        pass  # generation.load_model says what is missing
    try:
        return generation.load_model(name, device, dtype)
    except GenerationError as exc:
        raise CommandError(str(exc)) from exc


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


def _journal_path(output: Path) -> Path:
    return output.with_name(output.name + ".partial.jsonl")


def _journal_error(path: Path, number: int, what: str) -> CommandError:
    return CommandError(f"{path}, line {number}: {what}; delete the file to start over")


def _read_journal(
    path: Path, header: dict[str, Any], num_samples: Optional[int] = None, question_ids: Optional[Sequence[str]] = None
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Samples already drawn by an interrupted run with the same settings, every line checked.

    A record must name a question of this run once, with a list of ``num_samples``
    strings (or a skip reason); anything else is an error naming the journal and line.
    """
    from protoqa_core.readers import parse_json, read_text

    if os.path.islink(path) or not path.is_file():
        raise CommandError(f"{path}: the resume journal is not a regular file; move it away")
    try:
        text = read_text(path)
    except (OSError, DataFormatError) as exc:
        raise CommandError(f"{exc}; delete the journal {path} to start over") from None
    lines = text.split("\n")
    known = None if question_ids is None else set(question_ids)
    samples: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(line, path, number)
        except DataFormatError:
            if number >= len(lines) - 1 and number > 1:
                break  # the last line was cut short by the interruption; it is sampled again
            raise _journal_error(path, number, "not JSON") from None
        if number == 1:
            stored = record.get("header") if isinstance(record, dict) else None
            found = stored if isinstance(stored, dict) else {}
            if found != header:
                differ = sorted(k for k in set(found) | set(header) if found.get(k) != header.get(k))
                raise CommandError(
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
    return samples, skipped


def _journal_hint(journal: Path, count: int) -> str:
    return (
        f"the {count} question(s) sampled so far are kept in {journal}; make room and run the same command "
        "again to resume"
    )


def _journal_usage(path: Path) -> dict[str, int]:
    """The token usage recorded by the last complete question of an interrupted run."""
    usage: dict[str, int] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # the cut-short last line, dropped by _read_journal too
            found = record.get("usage") if isinstance(record, dict) else None
            if isinstance(found, dict):
                usage = {k: int(v) for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool)}
    return usage


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
    model: Any,
    tokenizer: Any,
    questions: Sequence[Question],
    output: Path,
    *,
    config: SamplingConfig,
    prompt_style: str,
    header: dict[str, Any],
    progress: Optional[bool] = None,
    leaderboard: Optional[Path] = None,
    model_name: str = "the model",
    engine: Optional[Engine] = None,
    system_prompt: Optional[str] = None,
) -> dict[str, Any]:
    """Sample every question (resuming from ``<output>.partial.jsonl``) and write the answers file.

    Question ``i`` of ``questions`` is sampled under ``config.seed + i``, by ``engine``
    (default: the ``hf`` engine on ``model`` and ``tokenizer``). A chat prompt style
    (``protoqa-chat``, ``cfc-chat``) builds chat messages, with ``system_prompt`` first.
    Questions whose samples collapsed to one text at a temperature above 0 are warned
    about and listed as ``collapsed_questions``; the tokens an engine reports are summed
    as ``usage``. Returns the document written to ``output``.

    >>> doc = generate_answers_file(model, tokenizer, questions, Path("answers.json"), config=SamplingConfig(),
    ...                             prompt_style="statement", header={})  # doctest: +SKIP
    """
    if engine is None:
        from .engines.hf import HFEngine

        engine = HFEngine(model, tokenizer, model_name)
    chat_prompt = chat_prompt_function(prompt_style)
    to_prompt = (lambda q: chat_prompt(q, system_prompt)) if chat_prompt is not None else prompt_function(prompt_style)
    journal = _journal_path(output)
    samples: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    usage: dict[str, int] = {}
    if os.path.lexists(journal):
        samples, skipped = _read_journal(journal, header, config.num_samples, [q.id for q in questions])
        usage = _journal_usage(journal)
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
        raise CommandError(f"{exc}; {_journal_hint(journal, len(samples))}" if samples else str(exc)) from None
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
        raise CommandError(
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
    if engine.name != "hf":  # what the engine found at start-up (vLLM version, seeding)
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
        raise CommandError(f"{exc}; {_journal_hint(journal, len(samples))}") from None
    journal.unlink()
    return document


def build_generate_parser() -> argparse.ArgumentParser:
    """The argument parser of ``protoqa-eval generate``.

    >>> build_generate_parser().parse_args(["gpt2", "-o", "a.json"]).batch_size
    100
    """
    p = argparse.ArgumentParser(
        prog="protoqa-eval generate",
        description="Sample answers to ProtoQA or CFC questions from a causal language model (nucleus sampling "
        "with the ProtoQA paper's settings) and write an answers file that protoqa-eval and probeval read.",
    )
    p.add_argument("model", help="a causal language model: Hub id (e.g. gpt2) or local folder")
    p.add_argument("-o", "--output", required=True, help="answers file to write (JSON)")
    p.add_argument(
        "--dataset",
        default="protoqa",
        choices=DATASETS,
        help="protoqa (default), cfc or protoqa_scraped_dev (protoqa_dataset config names)",
    )
    p.add_argument(
        "--split", default="validation", help="validation (default: ProtoQA crowdsourced dev, CFC dev) or test"
    )
    p.add_argument("--data-dir", help="local data folder (default $PROTOQA_DATA_DIR; else the files are downloaded)")
    p.add_argument("--no-verify", action="store_true", help="accept data files whose checksum differs from upstream's")
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:1, mps, ... (default: cuda if available)")
    p.add_argument("--dtype", default="auto", choices=("auto", "float32", "float16", "bfloat16"))
    p.add_argument("--batch-size", type=int, default=100, help="sequences per forward pass (default 100)")
    p.add_argument("--seed", type=int, default=42, help="question i is sampled under seed + i (default 42)")
    p.add_argument("--num-samples", type=int, help="samples per question (default 300 for ProtoQA, 100 for CFC)")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument(
        "--prompt",
        choices=tuple(PROMPT_STYLES),
        help="prompt style (default: statement for ProtoQA, cfc-one-shot for CFC; "
        "finetuned for a model fine-tuned on the ProtoQA training format)",
    )
    p.add_argument(
        "--max-new-tokens", type=int, help=f"default {PAPER_MAX_NEW_TOKENS} ({CHAT_MAX_NEW_TOKENS} with --chat)"
    )
    p.add_argument("--top-p", type=float, default=PAPER_TOP_P)
    p.add_argument("--temperature", type=float, default=PAPER_TEMPERATURE)
    p.add_argument(
        "--engine",
        default="hf",
        choices=ENGINES,
        help="hf (default: transformers in this process), vllm (vLLM's offline engine) or openai "
        "(an OpenAI-compatible server at --base-url; key from $OPENAI_API_KEY)",
    )
    p.add_argument("--revision", help="model revision (hf, vllm) recorded in the answers file")
    p.add_argument(
        "--chat",
        action="store_true",
        help="chat prompts and chat replies (vllm, openai): "
        "ProtoQA/CFC chat prompt, answer taken from the reply; "
        f"--max-new-tokens default {CHAT_MAX_NEW_TOKENS}",
    )
    p.add_argument("--system-prompt", help="a system turn before the chat prompt (with --chat)")
    p.add_argument(
        "--base-url",
        default="https://api.openai.com/v1",
        help="openai: the server's API root, e.g. http://127.0.0.1:8000/v1",
    )
    p.add_argument("--concurrency", type=int, default=4, help="openai: most requests in flight (default 4)")
    p.add_argument("--max-n", type=int, default=128, help="openai: most choices asked per request (default 128)")
    p.add_argument("--request-timeout", type=float, default=60.0, help="openai: seconds per request (default 60)")
    p.add_argument(
        "--max-retries", type=int, default=6, help="openai: retries of a request on 429, 5xx and timeouts (default 6)"
    )
    p.add_argument(
        "--no-request-seeds",
        action="store_true",
        help="openai: send no seed (for servers that fail on seeded requests); samples are then not repeatable",
    )
    p.add_argument("--tensor-parallel-size", type=int, default=1, help="vllm: GPUs per model replica")
    p.add_argument("--pipeline-parallel-size", type=int, default=1, help="vllm: pipeline stages (nodes)")
    p.add_argument("--data-parallel-size", type=int, default=1, help="vllm: model replicas")
    p.add_argument(
        "--gpu-memory-utilization",
        type=float,
        default=0.9,
        help="vllm: share of GPU memory (RAM on vLLM's CPU build) to reserve (default 0.9)",
    )
    p.add_argument("--max-model-len", type=int, help="vllm: context length (default: the model's)")
    p.add_argument(
        "--enforce-eager",
        action="store_true",
        help="vllm: no graph compilation or capture (starts sooner, samples slower)",
    )
    p.add_argument(
        "--leaderboard",
        help="ProtoQA test questions: where to write the leaderboard's ranked-list "
        "file (default: OUTPUT with .leaderboard.jsonl)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing answers file and leaderboard file "
        "(never an input file; the outputs are checked before any work)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--version", action="version", version=f"protoqa-eval {__version__}")
    return p


def _leaderboard_path(args: argparse.Namespace, output: Path) -> Optional[Path]:
    if args.dataset == "protoqa" and args.split == "test":
        return Path(args.leaderboard) if args.leaderboard else output.with_suffix(".leaderboard.jsonl")
    return None


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
    protoqa_integrations.generate_cli.CommandError: ...a.json: -o and --leaderboard name the same file
    """
    journal = _journal_path(output)
    outputs = [output] + ([leaderboard] if leaderboard is not None else [])
    names = [str(p) for p in inputs]
    try:
        for path in outputs:
            check_output_file(str(path), names, overwrite, force_flag="--overwrite")
    except OutputFileError as exc:
        raise CommandError(str(exc)) from None
    if leaderboard is not None:
        for other in (output, journal):
            if leaderboard.resolve() == other.resolve() or (
                leaderboard.exists() and other.exists() and os.path.samefile(leaderboard, other)
            ):
                flag = "-o" if other == output else "the resume journal of -o"
                raise CommandError(f"{leaderboard}: {flag} and --leaderboard name the same file")
    if os.path.lexists(journal) and (os.path.islink(journal) or not journal.is_file()):
        raise CommandError(f"{journal}: the resume journal is not a regular file; move it away")
    for name in names:
        if os.path.lexists(journal) and os.path.samefile(journal, name):
            raise CommandError(f"{journal}: the resume journal is an input file; move it away")


def _run_generate(args: argparse.Namespace) -> int:
    output = Path(args.output)
    if args.limit is not None and args.limit < 1:
        raise CommandError(f"--limit must be >= 1, got {args.limit}")
    leaderboard = _leaderboard_path(args, output)
    check_generate_outputs(output, leaderboard, (), args.overwrite)  # before the questions are looked for
    style, num_samples = default_protocol(args.dataset)
    style = args.prompt or style
    if args.chat:
        if args.engine == "hf":
            raise CommandError("--chat needs --engine vllm or openai (the hf engine samples completions)")
        if args.prompt:
            raise CommandError("--prompt chooses a completion prompt; --chat uses the chat prompt of the dataset")
        style = "cfc-chat" if args.dataset == "cfc" else "protoqa-chat"
    elif args.system_prompt:
        raise CommandError("--system-prompt needs --chat")
    if args.num_samples is not None:
        num_samples = args.num_samples
    max_new_tokens = args.max_new_tokens
    if max_new_tokens is None:
        max_new_tokens = CHAT_MAX_NEW_TOKENS if args.chat else PAPER_MAX_NEW_TOKENS
    config = SamplingConfig(
        num_samples=num_samples,
        max_new_tokens=max_new_tokens,
        top_p=args.top_p,
        temperature=args.temperature,
        top_k=0,
        batch_size=args.batch_size,
        seed=args.seed,
    )
    questions_path, origin = _questions_file(args.dataset, args.split, args.data_dir, verify=not args.no_verify)
    check_generate_outputs(output, leaderboard, [questions_path], args.overwrite)
    questions = _read_questions(questions_path, args.dataset, args.split)
    questions = questions[: args.limit] if args.limit else questions
    if args.engine == "hf":
        try:
            device = resolve_device(args.device)
        except ImportError as exc:
            raise CommandError(
                f"generating needs torch and transformers ({exc}); pip install 'protoqa-eval[train]'"
            ) from exc
        header = {
            "model": args.model,
            "dataset": args.dataset,
            "split": args.split,
            "limit": args.limit,
            "prompt": style,
            "sampling": config.signature(),
            "dtype": args.dtype,
            "device": device,
            "version": __version__,
            "questions_from": origin,
        }
    else:
        device = args.device
        engine_settings = _engine_settings(args)
        header = {
            "model": args.model,
            "dataset": args.dataset,
            "split": args.split,
            "limit": args.limit,
            "prompt": style,
            "system_prompt": args.system_prompt,
            "engine": engine_settings,
            "sampling": sampling_signature(config, engine_settings),
            "dtype": args.dtype,
            "version": __version__,
            "questions_from": origin,
        }
    journal = _journal_path(output)
    if os.path.lexists(journal):  # settings and records checked before the model is loaded
        _read_journal(journal, header, config.num_samples, [q.id for q in questions])
    if args.engine == "hf":
        model, tokenizer = load_model(args.model, device, args.dtype)
        engine: Optional[Engine] = None
    else:
        model = tokenizer = None
        # vLLM logs every start-up step and its workers' tracebacks; our own message says what failed.
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        engine = make_engine(args.engine, args.model, **_engine_options(args))
    document = generate_answers_file(
        model,
        tokenizer,
        questions,
        output,
        config=config,
        prompt_style=style,
        header=header,
        progress=None if not args.no_progress else False,
        leaderboard=leaderboard,
        model_name=args.model,
        engine=engine,
        system_prompt=args.system_prompt,
    )
    if engine is not None:
        engine.close()
    info = document["generation"]
    total = sum(len(s) for s in document["model_answers"].values())
    empty = sum(info["empty_samples"].values())
    print(
        f"{output}: {len(questions)} questions, {total} samples ({empty} without an answer), "
        f"{len(info['skipped'])} skipped",
        file=sys.stderr,
    )
    if info["questions_without_answer"]:
        print(
            f"warning: {len(info['questions_without_answer'])} question(s) got no answer in any sample: "
            f"{', '.join(info['questions_without_answer'][:10])}",
            file=sys.stderr,
        )
    if leaderboard is not None:
        print(f"{leaderboard}: ranked lists for the ProtoQA leaderboard", file=sys.stderr)
    if info.get("usage"):
        print(f"tokens: {', '.join(f'{k} {v}' for k, v in info['usage'].items())}", file=sys.stderr)
    print(f"sampling: {header['sampling']}|prompt:{style}|model:{args.model}")
    return 0


def _engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of the chosen engine, from the command line."""
    if args.engine == "vllm":
        return {
            "revision": args.revision,
            "chat": args.chat,
            "tensor_parallel_size": args.tensor_parallel_size,
            "pipeline_parallel_size": args.pipeline_parallel_size,
            "data_parallel_size": args.data_parallel_size,
            "gpu_memory_utilization": args.gpu_memory_utilization,
            "max_model_len": args.max_model_len,
            "dtype": args.dtype,
            "seed": args.seed,
            "enforce_eager": args.enforce_eager,
        }
    return {
        "revision": args.revision,
        "chat": args.chat,
        "base_url": args.base_url,
        "concurrency": args.concurrency,
        "max_n": args.max_n,
        "timeout": args.request_timeout,
        "max_retries": args.max_retries,
        "request_seeds": not args.no_request_seeds,
    }


def _engine_settings(args: argparse.Namespace) -> dict[str, Any]:
    """What the answers file records of the engine: the settings that change the samples, not the
    ones that only change speed or robustness (so a run resumes under another --concurrency)."""
    settings: dict[str, Any] = {
        "engine": args.engine,
        "model": args.model,
        "revision": args.revision,
        "chat": args.chat,
    }
    if args.engine == "vllm":
        settings.update(
            tensor_parallel_size=args.tensor_parallel_size,
            pipeline_parallel_size=args.pipeline_parallel_size,
            max_model_len=args.max_model_len,
        )
    else:
        settings.update(max_n=args.max_n, request_seeds=not args.no_request_seeds)
    return settings


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
        raise CommandError(f"{path} does not say which questions it answers; pass --targets FILE")
    recorded = generation.get("questions_from")
    if data_dir is None and isinstance(recorded, str) and "://" not in recorded:
        source = Path(recorded)
        if not source.is_file():
            raise CommandError(
                f"{path} answers the questions in {source}, which is gone; pass --data-dir DIR or --targets FILE"
            )
        try:
            from protoqa_core.data import SourceError, verify_checksum

            verify_checksum(SOURCES[dataset][split], source, str(source), f"config {dataset!r}, split {split!r}")
        except SourceError as exc:
            raise CommandError(f"{exc}; pass --targets {source} to score against it as it is now") from None
        return _read_questions(source, dataset, split)
    return _read_questions(_questions_file(dataset, split, data_dir)[0], dataset, split)


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
    from protoqa_core.readers import parse_json, read_prediction_lists, read_predictions, read_text

    path = Path(answers_path)
    try:
        whole = parse_json(read_text(path), path)
    except FileNotFoundError as exc:
        raise CommandError(f"answers file not found: {path}") from exc
    generation = whole.get("generation") if isinstance(whole, dict) else None
    generation = generation if isinstance(generation, dict) else {}
    if targets is None:
        targets = _recorded_questions(path, generation, data_dir)
    ranked = read_predictions(path, "model_ranked_answers")
    samples = read_prediction_lists(path, "model_answers")
    by_id = {q.id: q for q in targets}
    unknown = [qid for qid in ranked if qid not in by_id]
    if unknown:
        raise CommandError(
            f"{path}: answers for {len(unknown)} question id(s) not in the targets: {', '.join(unknown[:10])}"
        )
    scored = [by_id[qid] for qid in by_id if qid in ranked]
    if not scored:
        raise CommandError(f"{path} answers none of the target questions")
    if any(not q.clusters for q in scored):
        raise CommandError(
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


def build_score_parser() -> argparse.ArgumentParser:
    """The argument parser of ``protoqa-eval score-generated``.

    >>> build_score_parser().parse_args(["a.json"]).similarity
    'wordnet,exact_match'
    """
    p = argparse.ArgumentParser(
        prog="protoqa-eval score-generated",
        description="Score an answers file written by protoqa-eval generate: ProtoQA metrics (Max Answers@k, "
        "Max Incorrect@k) under each similarity, ProbEval KL (human clusters, WordNet matching), signatures.",
    )
    p.add_argument("answers", help="answers file written by protoqa-eval generate")
    p.add_argument(
        "--targets",
        help="targets JSONL (default: the questions file the answers file records, else its dataset and split)",
    )
    p.add_argument("--data-dir", help="local data folder for the targets (default $PROTOQA_DATA_DIR, else download)")
    p.add_argument("--similarity", default=",".join(SCORE_SIMILARITIES), help="comma-separated similarities")
    p.add_argument("--metrics", default="paper", help="'paper' (default), 'standard' or metric names")
    p.add_argument("--no-probeval", action="store_true", help="skip the ProbEval KL")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _run_score(args: argparse.Namespace) -> int:
    from protoqa_core.similarity import SIMILARITIES
    from protoqa_metric.metric_set import metric_specs

    similarities = [s.strip() for s in args.similarity.split(",") if s.strip()]
    for sim in similarities:
        if sim not in SIMILARITIES:
            raise CommandError(f"unknown similarity {sim!r}; choose from {', '.join(SIMILARITIES)}")
    metric_specs(args.metrics)
    targets = list(read_targets(args.targets).values()) if args.targets else None
    result = score_generated(
        args.answers,
        targets,
        similarities=similarities,
        metrics=args.metrics,
        probeval=not args.no_probeval,
        data_dir=args.data_dir,
    )
    if args.json:
        print(json.dumps(result.as_dict()))
        return 0
    print(format_table(result.protoqa))
    if result.probeval is not None:
        print(f"\nprobeval_kl  {result.probeval.kl:.4f}  (lower is better)\nprobeval: {result.probeval.signature}")
    if result.generation.get("sampling"):
        print(
            f"sampling: {result.generation['sampling']}|prompt:{result.generation.get('prompt')}"
            f"|model:{result.generation.get('model')}"
        )
    return 0


def _guarded(run: Any, args: argparse.Namespace, prog: str) -> int:
    def show_warning(message, category, filename, lineno, file=None, line=None):
        print(f"warning: {message}", file=sys.stderr)

    warnings.showwarning = show_warning
    warnings.simplefilter("always", ProtoQAWarning)
    try:
        return run(args)
    except (CommandError, GenerationError, DataFormatError, OSError, ValueError) as exc:
        print(f"{prog}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # torch errors (out of memory, device) while sampling
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(
            f"{prog}: error: {first_line}; the questions already sampled are kept, run the same command "
            "again to resume",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``protoqa-eval generate ...``; returns the exit status (0 ok, 2 bad input or set-up)."""
    args = build_generate_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    return _guarded(_run_generate, args, "protoqa-eval generate")


def score_main(argv: Optional[Sequence[str]] = None) -> int:
    """``protoqa-eval score-generated ...``; returns the exit status (0 ok, 2 bad input)."""
    args = build_score_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    return _guarded(_run_score, args, "protoqa-eval score-generated")

"""``protoqa-eval generate`` and ``protoqa-eval score-generated``: from a language model to scores.

    protoqa-eval generate MODEL -o answers.json [--dataset protoqa|cfc] [--split validation|test]
                 [--device cpu|cuda|auto] [--dtype auto|float32|float16|bfloat16] [--batch-size 100]
                 [--seed 42] [--num-samples N] [--limit N] [--prompt statement|finetuned|cfc-one-shot]
                 [--data-dir DIR]
    protoqa-eval score-generated answers.json [--similarity wordnet,exact_match] [--json]

``generate`` samples answers from any causal language model of ``transformers`` (a Hub
id or a local folder) with the protocols of :mod:`protoqa_integrations.generation` and writes
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from protoqa_core import __version__
from protoqa_core.data import CACHE_DIR_ENV, SourceError
from . import generation
from .generation import (
    CFC_NUM_SAMPLES,
    PAPER_MAX_NEW_TOKENS,
    PAPER_TEMPERATURE,
    PAPER_TOP_P,
    PROMPT_STYLES,
    PROTOQA_NUM_SAMPLES,
    GenerationError,
    SamplingConfig,
    iter_prompt_samples,
    prompt_function,
    resolve_device,
)
from protoqa_metric.metric import evaluate_predictions
from protoqa_metric.metrics import ProtoQAWarning, format_table
from protoqa_core.ranking import answer_frequencies, rank_by_frequency
from protoqa_core.readers import DataFormatError, Question, read_targets

__all__ = [
    "DATASETS",
    "CACHE_DIR_ENV",
    "GeneratedScores",
    "default_protocol",
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


def _questions(dataset: str, split: str, data_dir: Optional[str] = None, verify: bool = True
               ) -> tuple[list[Question], str]:
    from protoqa_dataset.parsing import load_questions  # the dataset package imports datasets

    # a data file that cannot be found or verified is bad set-up: one line, exit 2
    try:
        return load_questions(dataset, split, data_dir, verify=verify)
    except SourceError as exc:
        raise CommandError(str(exc)) from exc


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


def answers_document(questions: Sequence[Question], samples: dict[str, list[str]], skipped: dict[str, str],
                     generation: dict[str, Any]) -> dict[str, Any]:
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
        "generation": {**generation, "num_questions": len(questions), "empty_samples": empty,
                       "questions_without_answer": no_answer, "skipped": dict(skipped)},
    }


def _journal_path(output: Path) -> Path:
    return output.with_name(output.name + ".partial.jsonl")


def _read_journal(path: Path, header: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Samples already drawn by an interrupted run with the same settings."""
    samples: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number >= len(lines) - 1:
                break  # the last line was cut short by the interruption; it is sampled again
            raise CommandError(f"{path}, line {number}: not JSON; delete the file to start over")
        if number == 1:
            found = record.get("header") if isinstance(record.get("header"), dict) else {}
            if found != header:
                differ = sorted(k for k in set(found) | set(header) if found.get(k) != header.get(k))
                raise CommandError(f"{path} was written by a run with other settings (differing: "
                                   f"{', '.join(differ)}); use the same settings to resume it, or delete it to "
                                   "start over")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise CommandError(f"{path}, line {number}: not a question record; delete the file to start over")
        samples[record["id"]] = list(record.get("samples") or [])
        if record.get("skipped"):
            skipped[record["id"]] = str(record["skipped"])
    return samples, skipped


def _write_json_atomically(path: Path, document: Any, jsonl: bool = False) -> None:
    partial = path.with_name(path.name + ".writing")
    with open(partial, "w", encoding="utf-8") as fh:
        if jsonl:
            for record in document:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            json.dump(document, fh, ensure_ascii=False, indent=1)
            fh.write("\n")
    os.replace(partial, path)


def generate_answers_file(model: Any, tokenizer: Any, questions: Sequence[Question], output: Path, *,
                          config: SamplingConfig, prompt_style: str, header: dict[str, Any],
                          progress: Optional[bool] = None, leaderboard: Optional[Path] = None,
                          model_name: str = "the model") -> dict[str, Any]:
    """Sample every question (resuming from ``<output>.partial.jsonl``) and write the answers file.

    Question ``i`` of ``questions`` is sampled under ``config.seed + i``. Returns the
    document written to ``output``.

    >>> doc = generate_answers_file(model, tokenizer, questions, Path("answers.json"), config=SamplingConfig(),
    ...                             prompt_style="statement", header={})  # doctest: +SKIP
    """
    to_prompt = prompt_function(prompt_style)
    journal = _journal_path(output)
    samples: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    if journal.is_file():
        samples, skipped = _read_journal(journal, header)
    todo = [(i, q) for i, q in enumerate(questions) if q.id not in samples]
    # The journal is rewritten without a possibly cut-short last line, then appended to.
    _write_json_atomically(journal, [{"header": header}] + [
        {"id": q.id, "samples": samples[q.id], "skipped": skipped.get(q.id)} for q in questions if q.id in samples
    ], jsonl=True)
    with open(journal, "a", encoding="utf-8") as fh:
        prompts = [to_prompt(q.question) for _, q in todo]
        seeds = [config.seed + i for i, _ in todo]
        for done in iter_prompt_samples(model, tokenizer, prompts, config, seeds=seeds, progress=progress,
                                        model_name=model_name):
            question = todo[done.index][1]
            samples[question.id] = done.answers
            if done.skipped:
                skipped[question.id] = done.skipped
                print(f"warning: question {question.id!r} skipped: {done.skipped}", file=sys.stderr)
            fh.write(json.dumps({"id": question.id, "samples": done.answers, "skipped": done.skipped},
                                ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    document = answers_document(questions, samples, skipped, header)
    _write_json_atomically(output, document)
    if leaderboard is not None:
        _write_json_atomically(leaderboard, [{q.id: document["model_ranked_answers"][q.id]} for q in questions],
                               jsonl=True)
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
    p.add_argument("--dataset", default="protoqa", choices=DATASETS,
                   help="protoqa (default), cfc or protoqa_scraped_dev (protoqa_dataset config names)")
    p.add_argument("--split", default="validation",
                   help="validation (default: ProtoQA crowdsourced dev, CFC dev) or test")
    p.add_argument("--data-dir", help="local data folder (default $PROTOQA_DATA_DIR; else the files are downloaded)")
    p.add_argument("--no-verify", action="store_true", help="accept data files whose checksum differs from upstream's")
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:1, mps, ... (default: cuda if available)")
    p.add_argument("--dtype", default="auto", choices=("auto", "float32", "float16", "bfloat16"))
    p.add_argument("--batch-size", type=int, default=100, help="sequences per forward pass (default 100)")
    p.add_argument("--seed", type=int, default=42, help="question i is sampled under seed + i (default 42)")
    p.add_argument("--num-samples", type=int, help="samples per question (default 300 for ProtoQA, 100 for CFC)")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--prompt", choices=tuple(PROMPT_STYLES),
                   help="prompt style (default: statement for ProtoQA, cfc-one-shot for CFC; "
                   "finetuned for a model fine-tuned on the ProtoQA training format)")
    p.add_argument("--max-new-tokens", type=int, default=PAPER_MAX_NEW_TOKENS)
    p.add_argument("--top-p", type=float, default=PAPER_TOP_P)
    p.add_argument("--temperature", type=float, default=PAPER_TEMPERATURE)
    p.add_argument("--leaderboard", help="ProtoQA test questions: where to write the leaderboard's ranked-list "
                   "file (default: OUTPUT with .leaderboard.jsonl)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing answers file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--version", action="version", version=f"protoqa-eval {__version__}")
    return p


def _run_generate(args: argparse.Namespace) -> int:
    output = Path(args.output)
    if output.exists() and not args.overwrite:
        raise CommandError(f"{output} exists; pass --overwrite to replace it")
    if args.limit is not None and args.limit < 1:
        raise CommandError(f"--limit must be >= 1, got {args.limit}")
    style, num_samples = default_protocol(args.dataset)
    style = args.prompt or style
    if args.num_samples is not None:
        num_samples = args.num_samples
    config = SamplingConfig(num_samples=num_samples, max_new_tokens=args.max_new_tokens,
                            top_p=args.top_p, temperature=args.temperature, top_k=0, batch_size=args.batch_size,
                            seed=args.seed)
    questions, origin = _questions(args.dataset, args.split, args.data_dir, verify=not args.no_verify)
    questions = questions[: args.limit] if args.limit else questions
    try:
        device = resolve_device(args.device)
    except ImportError as exc:
        raise CommandError(f"generating needs torch and transformers ({exc}); pip install 'protoqa-eval[train]'")
    header = {"model": args.model, "dataset": args.dataset, "split": args.split, "limit": args.limit,
              "prompt": style, "sampling": config.signature(), "dtype": args.dtype, "device": device,
              "version": __version__, "questions_from": origin}
    journal = _journal_path(output)
    if journal.is_file():
        _read_journal(journal, header)  # settings checked before the model is loaded
    model, tokenizer = load_model(args.model, device, args.dtype)
    leaderboard = None
    if args.dataset == "protoqa" and args.split == "test":
        leaderboard = Path(args.leaderboard) if args.leaderboard else output.with_suffix(".leaderboard.jsonl")
    document = generate_answers_file(model, tokenizer, questions, output, config=config, prompt_style=style,
                                     header=header, progress=None if not
                                     args.no_progress else False, leaderboard=leaderboard, model_name=args.model)
    info = document["generation"]
    total = sum(len(s) for s in document["model_answers"].values())
    empty = sum(info["empty_samples"].values())
    print(f"{output}: {len(questions)} questions, {total} samples ({empty} without an answer), "
          f"{len(info['skipped'])} skipped", file=sys.stderr)
    if info["questions_without_answer"]:
        print(f"warning: {len(info['questions_without_answer'])} question(s) got no answer in any sample: "
              f"{', '.join(info['questions_without_answer'][:10])}", file=sys.stderr)
    if leaderboard is not None:
        print(f"{leaderboard}: ranked lists for the ProtoQA leaderboard", file=sys.stderr)
    print(f"sampling: {config.signature()}|prompt:{style}|model:{args.model}")
    return 0


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


def score_generated(answers_path: str, targets: Optional[Sequence[Question]] = None, *,
                    similarities: Sequence[str] = SCORE_SIMILARITIES, metrics: str = "paper",
                    probeval: bool = True, data_dir: Optional[str] = None) -> GeneratedScores:
    """ProtoQA metrics and ProbEval KL of an answers file, over the questions it answers.

    Without ``targets`` the questions come from the file's ``generation`` block (its
    dataset and split). The ranked lists are ``model_ranked_answers``; ProbEval uses every
    sample (``model_answers``, empty ones included) with the human clusters and WordNet
    matching, as :func:`protoqa_integrations.training.probeval_with_human_clusters` does.

    >>> score_generated("answers.json").protoqa["wordnet"].scores["max_answers@10"]  # doctest: +SKIP
    """
    from protoqa_core.readers import read_prediction_lists, read_predictions

    path = Path(answers_path)
    try:
        whole = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CommandError(f"answers file not found: {path}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CommandError(f"{path}: not a JSON answers file ({exc})") from exc
    generation = whole.get("generation") if isinstance(whole, dict) else None
    generation = generation if isinstance(generation, dict) else {}
    if targets is None:
        if not generation.get("dataset") or not generation.get("split"):
            raise CommandError(f"{path} does not say which questions it answers; pass --targets FILE")
        targets, _ = _questions(generation["dataset"], generation["split"], data_dir)
    ranked = read_predictions(path, "model_ranked_answers")
    samples = read_prediction_lists(path, "model_answers")
    by_id = {q.id: q for q in targets}
    unknown = [qid for qid in ranked if qid not in by_id]
    if unknown:
        raise CommandError(f"{path}: answers for {len(unknown)} question id(s) not in the targets: "
                           f"{', '.join(unknown[:10])}")
    scored = [by_id[qid] for qid in by_id if qid in ranked]
    if not scored:
        raise CommandError(f"{path} answers none of the target questions")
    if any(not q.clusters for q in scored):
        raise CommandError(f"{path}: the questions have no answer clusters (test questions) and cannot be scored; "
                           "submit the leaderboard file instead")
    if len(scored) < len(by_id):
        print(f"note: scoring the {len(scored)} of {len(by_id)} questions that {path.name} answers", file=sys.stderr)
    results = {sim: evaluate_predictions(scored, ranked, sim, metrics) for sim in similarities}
    probeval_result = None
    if probeval:
        from cfc_probeval import evaluate_probeval

        probeval_result = evaluate_probeval(scored, {q.id: samples[q.id] for q in scored},
                                            clustering="human", matching="wordnet")
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
    p.add_argument("--targets", help="targets JSONL (default: the dataset and split named in the answers file)")
    p.add_argument("--data-dir", help="local data folder for the targets (default $PROTOQA_DATA_DIR, else download)")
    p.add_argument("--similarity", default=",".join(SCORE_SIMILARITIES), help="comma-separated similarities")
    p.add_argument("--metrics", default="paper", help="'paper' (default), 'standard' or metric names")
    p.add_argument("--no-probeval", action="store_true", help="skip the ProbEval KL")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _run_score(args: argparse.Namespace) -> int:
    from protoqa_metric.metrics import metric_specs
    from protoqa_core.similarity import SIMILARITIES

    similarities = [s.strip() for s in args.similarity.split(",") if s.strip()]
    for sim in similarities:
        if sim not in SIMILARITIES:
            raise CommandError(f"unknown similarity {sim!r}; choose from {', '.join(SIMILARITIES)}")
    metric_specs(args.metrics)
    targets = list(read_targets(args.targets).values()) if args.targets else None
    result = score_generated(args.answers, targets, similarities=similarities, metrics=args.metrics,
                             probeval=not args.no_probeval, data_dir=args.data_dir)
    if args.json:
        print(json.dumps(result.as_dict()))
        return 0
    print(format_table(result.protoqa))
    if result.probeval is not None:
        print(f"\nprobeval_kl  {result.probeval.kl:.4f}  (lower is better)\nprobeval: {result.probeval.signature}")
    if result.generation.get("sampling"):
        print(f"sampling: {result.generation['sampling']}|prompt:{result.generation.get('prompt')}"
              f"|model:{result.generation.get('model')}")
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
        print(f"{prog}: error: {first_line}; the questions already sampled are kept, run the same command "
              "again to resume", file=sys.stderr)
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

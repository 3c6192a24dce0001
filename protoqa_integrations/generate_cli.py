"""``protoqa-eval generate`` and ``protoqa-eval score-generated``: the command lines of
:mod:`protoqa_integrations.answers_file`.

    protoqa-eval generate MODEL -o answers.json [--dataset protoqa|cfc] [--split validation|test]
                 [--device cpu|cuda|auto] [--dtype auto|float32|float16|bfloat16] [--batch-size 100]
                 [--seed 42] [--num-samples N] [--limit N] [--prompt statement|finetuned|cfc-one-shot]
                 [--data-dir DIR] [--engine hf|vllm|openai] [--chat] [--system-prompt TEXT] ...
    protoqa-eval score-generated answers.json [--similarity wordnet,exact_match] [--json]

``generate`` samples answers from a language model through one of the engines of
:mod:`protoqa_integrations.engines` and writes the answers file
(:func:`~protoqa_integrations.answers_file.generate_answers_file`); for the ProtoQA test
questions it also writes the leaderboard file (``--leaderboard``). ``score-generated`` prints
:func:`~protoqa_integrations.answers_file.score_generated`. This module parses and prints only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from protoqa_core import __version__
from protoqa_core.readers import DataFormatError, read_targets
from protoqa_metric.metric_set import ProtoQAWarning, format_table

from .answers_file import (
    DATASETS,
    SCORE_SIMILARITIES,
    check_generate_outputs,
    check_journal,
    generate_answers_file,
    locate_questions,
    read_questions_file,
    score_generated,
)
from .engines import CHAT_MAX_NEW_TOKENS, ENGINES, make_engine
from .engines.base import sampling_signature
from .generation import (
    PAPER_MAX_NEW_TOKENS,
    PAPER_TEMPERATURE,
    PAPER_TOP_P,
    PROMPT_STYLES,
    GenerationError,
    SamplingConfig,
    default_protocol,
    resolve_device,
)

__all__ = ["build_generate_parser", "build_score_parser", "main", "score_main"]


class CommandError(Exception):
    """Bad input or set-up, reported as one line with exit status 2."""


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


def _quiet_transformers() -> None:
    """stderr is for our own progress bar and messages, not transformers' download bars."""
    try:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    except ImportError:
        pass  # loading the model says what is missing


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
    questions_path, origin = locate_questions(args.dataset, args.split, args.data_dir, verify=not args.no_verify)
    check_generate_outputs(output, leaderboard, [questions_path], args.overwrite)
    questions = read_questions_file(questions_path, args.dataset, args.split)
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
    # settings and records of a resume journal are checked before the model is loaded
    check_journal(output, header, config.num_samples, [q.id for q in questions])
    if args.engine == "hf":
        _quiet_transformers()
        options: dict[str, Any] = {"device": device, "dtype": args.dtype, "revision": args.revision}
    else:
        # vLLM logs every start-up step and its workers' tracebacks; our own message says what failed.
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        options = _engine_options(args)
    engine = make_engine(args.engine, args.model, **options)
    try:
        document = generate_answers_file(
            engine,
            questions,
            output,
            config=config,
            prompt_style=style,
            header=header,
            progress=None if not args.no_progress else False,
            leaderboard=leaderboard,
            system_prompt=args.system_prompt,
        )
    finally:
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

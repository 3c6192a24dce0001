"""``protoqa-eval generate`` and ``protoqa-eval score-generated``: the command lines of
:mod:`protoqa_integrations.generation.answers_file`; this module parses and prints only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from protoqa_core import __version__
from protoqa_core.cli import Subcommand, add_overwrite_option, finite_json
from protoqa_core.cli_options import add_quiet_option
from protoqa_core.io.data import sha256_of
from protoqa_core.io.files import DataFormatError
from protoqa_core.redaction import redact_text
from protoqa_core.signature import settings_signature
from protoqa_integrations.generation.provenance import data_of_checksum, parse_accepted

if TYPE_CHECKING:
    from protoqa_integrations.generation.engines import Engine
    from protoqa_integrations.generation.settings import SamplingConfig

# Each sub-command imports the engines, the generation and the scoring modules when it is built
# or run, so that the parser of another sub-command (and ``protoqa-eval --help``) imports none.

__all__ = ["COMMANDS", "add_generate_arguments", "add_score_arguments"]


class CommandError(Exception):
    """Bad input or set-up, reported as one line with exit status 2."""


def _takers(setting: str) -> str:
    """The registered engines that take a shared ``generate`` setting, for ``--help``."""
    from protoqa_integrations.generation.engines import ENGINES

    return ", ".join(name for name, engine in ENGINES.items() if setting in engine.common)


def add_generate_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``protoqa-eval generate``: the run's, then each engine's (from the registry).

    >>> from protoqa_core.cli import OneLineParser
    >>> p = OneLineParser()
    >>> add_generate_arguments(p)
    >>> p.parse_args(["gpt2", "-o", "a.json"]).batch_size
    100
    """
    from protoqa_integrations.generation import settings
    from protoqa_integrations.generation.answers_file import DATASETS
    from protoqa_integrations.generation.engines.base import add_engine_options
    from protoqa_integrations.generation.prompts import PROMPT_STYLES

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
    p.add_argument(
        "--device",
        default="auto",
        help=f"cpu, cuda, cuda:1, mps, ... (default: cuda if available; engines: {_takers('device')})",
    )
    p.add_argument(
        "--dtype",
        default="auto",
        choices=("auto", "float32", "float16", "bfloat16"),
        help=f"weights' type (engines: {_takers('dtype')})",
    )
    p.add_argument("--batch-size", type=int, default=100, help="sequences per forward pass (default 100)")
    p.add_argument("--seed", type=int, default=42, help="question i is sampled under seed + i (default 42)")
    p.add_argument("--num-samples", type=int, help="samples per question (default 300 for ProtoQA, 100 for CFC)")
    p.add_argument("--limit", type=int, help="only the first N questions (default: every question)")
    p.add_argument(
        "--prompt",
        choices=tuple(PROMPT_STYLES),
        help="prompt style (default: statement for ProtoQA, cfc-one-shot for CFC; "
        "finetuned for a model fine-tuned on the ProtoQA training format)",
    )
    p.add_argument(
        "--max-new-tokens",
        type=int,
        help=f"default {settings.PAPER_MAX_NEW_TOKENS} ({settings.CHAT_MAX_NEW_TOKENS} with --chat)",
    )
    p.add_argument(
        "--top-p",
        type=float,
        default=settings.PAPER_TOP_P,
        help=f"nucleus sampling: the smallest set of tokens whose probability reaches this (default {settings.PAPER_TOP_P})",
    )
    p.add_argument(
        "--temperature",
        type=float,
        default=settings.PAPER_TEMPERATURE,
        help=f"softmax temperature of the sampling (default {settings.PAPER_TEMPERATURE}, the ProtoQA paper's)",
    )
    _add_engine_arguments(p)
    p.add_argument(
        "--leaderboard",
        help="ProtoQA test questions: where to write the leaderboard's ranked-list "
        "file (default: OUTPUT with .leaderboard.jsonl)",
    )
    add_overwrite_option(
        p,
        "replace an existing answers file and leaderboard file "
        "(never an input file; the outputs are checked before any work)",
    )
    add_quiet_option(p)
    p.add_argument("--version", action="version", version=f"protoqa-eval {__version__}")
    add_engine_options(p)


def _add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--engine`` and the shared settings some engines take (``--revision``, ``--chat``, ``--system-prompt``)."""
    from protoqa_integrations.generation.engines import ENGINES
    from protoqa_integrations.generation.settings import CHAT_MAX_NEW_TOKENS

    p.add_argument(
        "--engine",
        default="hf",
        choices=ENGINES.names(),
        help="how the samples are drawn: "
        + "; ".join(f"{name}{' (default)' if name == 'hf' else ''}: {c.summary}" for name, c in ENGINES.items()),
    )
    p.add_argument(
        "--revision",
        help=f"model revision, recorded in the answers file (default: the latest; engines: {_takers('revision')})",
    )
    p.add_argument(
        "--chat",
        action="store_true",
        help="chat prompts and chat replies (engines: "
        f"{', '.join(n for n, c in ENGINES.items() if 'chat' in c.common)}): "
        "ProtoQA/CFC chat prompt, answer taken from the reply; "
        f"--max-new-tokens default {CHAT_MAX_NEW_TOKENS}",
    )
    p.add_argument("--system-prompt", help="a system turn before the chat prompt (with --chat; default: none)")


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
    from protoqa_integrations.generation.answers_file import (
        check_generate_outputs,
        generate_answers_file,
        locate_questions,
        read_questions_file,
    )
    from protoqa_integrations.generation.answers_journal import check_journal, output_lock
    from protoqa_integrations.generation.engines import engine_class, make_engine
    from protoqa_integrations.generation.engines.base import engine_options

    output = Path(args.output)
    if args.limit is not None and args.limit < 1:
        raise CommandError(f"--limit must be >= 1, got {args.limit}")
    engine_type = engine_class(args.engine)
    options = engine_options(args, args.engine)  # an option of another engine fails here, before any work
    leaderboard = _leaderboard_path(args, output)
    check_generate_outputs(output, leaderboard, (), args.overwrite)  # before the questions are looked for
    style, config = _prompt_and_config(args, engine_type)
    questions_path, origin = locate_questions(args.dataset, args.split, args.data_dir, verify=not args.no_verify)
    # One run per output, from before its journal is read until the answers file is written: a second
    # run is refused (and one that starts after the first ended finds the answers file and stops).
    with output_lock(output):
        check_generate_outputs(output, leaderboard, [questions_path], args.overwrite)
        questions = read_questions_file(questions_path, args.dataset, args.split)
        questions = questions[: args.limit] if args.limit else questions
        settings = engine_type.recorded_settings(args.model, options)
        header = {
            "model": args.model,
            "dataset": args.dataset,
            "split": args.split,
            "limit": args.limit,
            "prompt": style,
            "system_prompt": args.system_prompt,
            "engine": settings,
            "sampling": engine_type.signature(config, settings),
            "dtype": args.dtype,
            "version": __version__,
            "questions_from": origin,
            # the questions as they are, compared between answers files (a name says nothing of the content)
            "questions_sha256": sha256_of(questions_path),
        }
        # settings and records of a resume journal are checked before the model is loaded
        check_journal(output, header, config.num_samples, [q.id for q in questions])
        _quiet_transformers()
        # vLLM logs every start-up step and its workers' tracebacks; our own message says what failed.
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        engine = make_engine(args.engine, args.model, **options)
        try:
            document = generate_answers_file(
                engine,
                questions,
                output,
                config=config,
                prompt_style=style,
                header=header,
                progress=not args.quiet,
                leaderboard=leaderboard,
                system_prompt=args.system_prompt,
            )
        finally:
            engine.close()
    _report_run(output, leaderboard, len(questions), document["generation"], document["model_answers"])
    print(f"sampling: {header['sampling']}|prompt:{style}|model:{args.model}")
    return 0


def _prompt_and_config(args: argparse.Namespace, engine_type: type[Engine]) -> tuple[str, SamplingConfig]:
    """The prompt style and sampling settings the options ask for, checked against the engine."""
    from protoqa_integrations.generation.engines import ENGINES
    from protoqa_integrations.generation.settings import (
        CHAT_MAX_NEW_TOKENS,
        PAPER_MAX_NEW_TOKENS,
        SamplingConfig,
        default_protocol,
    )

    style, num_samples = default_protocol(args.dataset)
    style = args.prompt or style
    if args.chat:
        if "chat" not in engine_type.common:
            chat_engines = " or ".join(n for n, c in ENGINES.items() if "chat" in c.common)
            raise CommandError(f"--chat needs --engine {chat_engines} (the {args.engine} engine samples completions)")
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
    return style, config


def _report_run(
    output: Path, leaderboard: Optional[Path], count: int, info: dict[str, Any], answers: dict[str, list[str]]
) -> None:
    """What the run wrote, on stderr: questions, samples, skips, questions without any answer, tokens."""
    total = sum(len(s) for s in answers.values())
    empty = sum(info["empty_samples"].values())
    print(
        f"{output}: {count} questions, {total} samples ({empty} without an answer), {len(info['skipped'])} skipped",
        file=sys.stderr,
    )
    if info["questions_without_answer"]:
        warnings.warn(
            f"{len(info['questions_without_answer'])} question(s) got no answer in any sample: "
            f"{', '.join(info['questions_without_answer'][:10])}",
            stacklevel=1,
        )
    if leaderboard is not None:
        print(f"{leaderboard}: ranked lists for the ProtoQA leaderboard", file=sys.stderr)
    if info.get("usage"):
        print(f"tokens: {', '.join(f'{k} {v}' for k, v in info['usage'].items())}", file=sys.stderr)


def add_score_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``protoqa-eval score-generated``.

    >>> from protoqa_core.cli import OneLineParser
    >>> p = OneLineParser()
    >>> add_score_arguments(p)
    >>> p.parse_args(["a.json"]).similarity
    'wordnet,exact_match'
    """
    from protoqa_integrations.generation.answers_file import SCORE_SIMILARITIES

    p.add_argument("answers", help="answers file written by protoqa-eval generate")
    p.add_argument(
        "--targets",
        help="targets JSONL (default: the questions file the answers file records, else its dataset and split)",
    )
    p.add_argument("--data-dir", help="local data folder for the targets (default $PROTOQA_DATA_DIR, else download)")
    p.add_argument(
        "--similarity",
        default=",".join(SCORE_SIMILARITIES),
        help="comma-separated similarities (default: wordnet,exact_match)",
    )
    p.add_argument(
        "--metrics",
        default="paper",
        help="'paper' (default: the seven metrics the ProtoQA paper reports, as leaderboard ranks models; "
        "protoqa-eval evaluate shows the reference evaluator's ten, 'standard'), 'standard' or metric names",
    )
    p.add_argument("--no-probeval", action="store_true", help="skip the ProbEval KL")
    p.add_argument(
        "--only-predicted",
        action="store_true",
        help="score only the questions the file answers, as after generate --limit (default: a file that answers "
        "part of the questions is refused)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--accept-mismatch",
        metavar="FIELD[,FIELD]",
        type=parse_accepted,
        default=[],
        help="score against --targets of another data set or split than the answers file records "
        "(dataset, split or all); the output then says so (default: such a run stops with status 2)",
    )


def _run_score(args: argparse.Namespace) -> int:
    from cfc_probeval.clustered import read_questions_and_label
    from protoqa_core.similarity import SIMILARITIES
    from protoqa_integrations.generation.answers_file import score_generated
    from protoqa_metric.metric_set import format_table, metric_specs

    similarities = [s.strip() for s in args.similarity.split(",") if s.strip()]
    for sim in similarities:
        if sim not in SIMILARITIES:
            raise CommandError(f"unknown similarity {sim!r}; choose from {', '.join(SIMILARITIES)}")
    metric_specs(args.metrics)
    # One read of the targets gives their questions, the data set they are and, for a clustered file, its label.
    questions, digest, clustered = read_questions_and_label(args.targets) if args.targets else ({}, "", None)
    result = score_generated(
        args.answers,
        list(questions.values()) if args.targets else None,
        similarities=similarities,
        metrics=args.metrics,
        probeval=not args.no_probeval,
        data_dir=args.data_dir,
        targets_data=data_of_checksum(digest) if args.targets else None,
        targets_label=clustered,
        accept=args.accept_mismatch,
        only_predicted=args.only_predicted,
    )
    if args.json:
        print(json.dumps(finite_json(result.as_dict()), allow_nan=False))
        return 0
    for accepted in result.accepted:
        print(f"NOT COMPARABLE AS RECORDED: scored despite differing {accepted} (--accept-mismatch)")
    print(format_table(result.protoqa))
    if result.probeval is not None:
        print(f"\nprobeval_kl  {result.probeval.kl:.4f}  (lower is better)\nprobeval: {result.probeval.signature}")
    line = _sampling_line(result.generation)
    if line:
        print(f"sampling: {line}")
    return 0


def _sampling_line(generation: dict[str, Any]) -> str:
    """How the answers were drawn, as a signature: the sampling settings (a harness's as recorded), prompt, model.

    >>> _sampling_line({"sampling": {"temperature": 0.7, "top_k": None, "until": ["\\n", "."]}, "model": "gpt2"})
    'temperature:0.7|stop:newline,period|model:gpt2'
    >>> _sampling_line({"sampling": "samples:300|top_p:0.9", "prompt": "statement", "model": "gpt2"})
    'samples:300|top_p:0.9|prompt:statement|model:gpt2'
    """
    from protoqa_integrations.generation.settings import sampling_words

    sampling = generation.get("sampling")
    if not sampling:
        return ""
    # a harness's own words (max_gen_toks, stop_seqs), as files converted before they were reworded record them
    parts = [sampling if isinstance(sampling, str) else settings_signature(sampling_words(sampling))]
    parts += [f"{key}:{generation[key]}" for key in ("prompt", "model") if generation.get(key) is not None]
    return "|".join(p for p in parts if p)


def _guarded(run: Callable[[argparse.Namespace], int], prog: str) -> Callable[[argparse.Namespace], int]:
    """``run`` with its errors as one line and status 2, and an interruption that says how to resume."""

    def guarded(args: argparse.Namespace) -> int:
        from protoqa_integrations.generation.settings import GenerationError

        try:
            return run(args)
        except (CommandError, GenerationError, DataFormatError, OSError, ValueError) as exc:
            print(f"{prog}: error: {redact_text(' '.join(str(exc).split()))}", file=sys.stderr)
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

    return guarded


COMMANDS: dict[str, Subcommand] = {
    c.name: c
    for c in (
        Subcommand(
            "generate",
            "sample answers from a language model into an answers file",
            "Sample answers to ProtoQA or CFC questions from a causal language model (nucleus sampling "
            "with the ProtoQA paper's settings) and write an answers file that protoqa-eval and probeval read.",
            add_generate_arguments,
            _guarded(_run_generate, "protoqa-eval generate"),
            examples=(
                "protoqa-eval generate ./tiny-gpt2 --limit 3 --num-samples 20 -o tiny.answers.json",
                "protoqa-eval generate gpt2 --dataset cfc -o gpt2.cfc-dev.json",
            ),
        ),
        Subcommand(
            "score-generated",
            "score an answers file: ProtoQA metrics and ProbEval KL",
            "Score an answers file written by protoqa-eval generate: ProtoQA metrics (Max Answers@k, "
            "Max Incorrect@k) under each similarity, ProbEval KL (human clusters, WordNet matching), signatures.",
            add_score_arguments,
            _guarded(_run_score, "protoqa-eval score-generated"),
            examples=(
                "protoqa-eval score-generated tiny.answers.json",
                "protoqa-eval score-generated tiny.answers.json --similarity exact_match --json",
            ),
        ),
    )
}
"""The sub-commands of a language model's answers, for :func:`protoqa_integrations.cli.main`."""

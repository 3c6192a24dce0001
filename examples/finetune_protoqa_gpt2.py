#!/usr/bin/env python3
"""Fine-tune a causal language model on ProtoQA and score it on the crowdsourced dev set while training.

The model learns the ProtoQA paper's format: every answer cluster of every training
question becomes one line ``<prompt><TAB><answer>.`` followed by the eos token, where
the prompt rewrites the question as a statement ("Name something people bring to a
picnic" -> "one thing people bring to a picnic is"). At each evaluation,
``ProtoQAEvalCallback`` samples answers for the dev questions (top_p 0.9, temperature
0.69), ranks them by frequency and logs the ProtoQA scores next to ``eval_loss``.

Options are this script's own (``--model``, ``--dataset``, ``--num-samples``, ...) and
every ``transformers.TrainingArguments`` option (``--output-dir``, ``--max-steps``,
``--eval-steps``, ``--learning-rate``, ``--report-to``, ...); ``--help`` lists them all.
Example (a GPU helps; on CPU use a small ``--max-steps``)::

    python examples/finetune_protoqa_gpt2.py --model gpt2 --output-dir runs/gpt2-protoqa \\
        --num-samples 300 --eval-steps 1000 --report-to tensorboard

Data: the rows of the ``protoqa`` config of the project's dataset, read

* with ``protoqa_dataset`` (default): from ``--data-dir`` or ``$PROTOQA_DATA_DIR`` when
  set, else downloaded from upstream; every file is checked against its pinned checksum;
* or with stock ``datasets.load_dataset(--dataset, --dataset-config)``: a folder written
  by ``python -m protoqa_dataset export`` or its copy on the Hub.

Writes to ``--output-dir``: the fine-tuned model and tokenizer, ``eval_results.json``
(final metrics), ``dev_predictions.jsonl`` (the final ranked answers, readable by
``protoqa-eval``) and ``trainer_state.json`` (every logged value).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from protoqa_core.io.rows import questions_from_rows
from protoqa_integrations.generation.prompts import training_line


@dataclass
class ExampleArguments:
    """This script's own options (the Trainer's come from ``TrainingArguments``)."""

    model: str = field(default="gpt2", metadata={"help": "model name on the Hugging Face Hub or local folder"})
    dataset: Optional[str] = field(
        default=None,
        metadata={
            "help": "read the rows with stock datasets.load_dataset from this export folder or Hub id "
            "(default: build them with protoqa_dataset, verifying checksums)"
        },
    )
    dataset_config: str = field(default="protoqa", metadata={"help": "config of the dataset to use"})
    data_dir: Optional[str] = field(
        default=None,
        metadata={
            "help": "local folder with the ProtoQA files, for protoqa_dataset (default: $PROTOQA_DATA_DIR, else download)"
        },
    )
    train_config: Optional[str] = field(
        default=None, metadata={"help": "config of the training questions (default: --dataset-config)"}
    )
    train_split: str = field(default="train", metadata={"help": "split of the training questions"})
    eval_split: str = field(default="validation", metadata={"help": "split of the dev questions (with clusters)"})
    num_samples: int = field(default=300, metadata={"help": "answers sampled per dev question"})
    eval_questions: Optional[int] = field(
        default=None, metadata={"help": "use the first N dev questions (default: all)"}
    )
    similarity: str = field(
        default="wordnet", metadata={"help": "comma-separated similarities to score with: wordnet, exact_match, ..."}
    )
    probeval: bool = field(
        default=False, metadata={"help": "also log ProbEval's KL divergence (human clusters, WordNet matching)"}
    )
    sample_batch_size: int = field(default=100, metadata={"help": "samples per generate() call"})
    max_length: int = field(default=64, metadata={"help": "longest training line, in tokens"})

    def __post_init__(self) -> None:
        if self.eval_questions is not None and self.eval_questions < 1:
            raise ValueError("--eval-questions must be >= 1")
        if self.num_samples < 1 or self.sample_batch_size < 1:
            raise ValueError("--num-samples and --sample-batch-size must be >= 1")
        if self.max_length < 2:
            raise ValueError("--max-length must be >= 2")
        if self.dataset is not None and self.data_dir is not None:
            raise ValueError("--data-dir is for protoqa_dataset; with --dataset the rows come from that export")


def parse_args(argv: Optional[Sequence[str]] = None) -> tuple[ExampleArguments, Any]:
    """``(ExampleArguments, TrainingArguments)`` from the command line.

    The Trainer's defaults that this script changes unless given: evaluate every
    ``--eval-steps`` (1000) steps, save no checkpoints, log every 50 steps.
    """
    from transformers import HfArgumentParser, TrainingArguments

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = HfArgumentParser((ExampleArguments, TrainingArguments), description=__doc__.split("\n\n")[0])
    given = {a.split("=", 1)[0].lstrip("-").replace("-", "_") for a in argv if a.startswith("--")}
    defaults = {
        "eval_strategy": "steps",
        "eval_steps": "1000",
        "save_strategy": "no",
        "logging_steps": "50",
        "per_device_train_batch_size": "8",
        "per_device_eval_batch_size": "8",
    }
    for name, value in defaults.items():
        if name not in given:
            argv += [f"--{name}", value]
    if "output_dir" not in given:
        argv += ["--output_dir", "protoqa-gpt2"]
    try:
        example, training = parser.parse_args_into_dataclasses(args=argv)
    except ValueError as exc:  # a dataclass refused a value: argparse style, exit 2
        parser.error(str(exc))
    return example, training


def load_rows(example: ExampleArguments, config: str, split: str):
    """One split of the dataset as a ``datasets.Dataset`` of export rows."""
    if example.dataset is not None:
        from datasets import load_dataset

        return load_dataset(example.dataset, config, split=split)
    from protoqa_dataset import load_protoqa

    # skip_unavailable: a local folder without the train file still gives its dev split.
    return load_protoqa(config, data_dir=example.data_dir, split=split, skip_unavailable=True)


def training_lines(questions) -> list[str]:
    """One ``prompt<TAB>answer.`` line per answer cluster (its first answer string), as in the paper."""
    return [training_line(q.question, c.answers[0]) for q in questions for c in q.clusters if c.answers]


def tokenize_lines(tokenizer, lines: Sequence[str], max_length: int) -> list[dict[str, list[int]]]:
    """Token ids of each line followed by eos, so the model learns where an answer stops."""
    rows = []
    for line in lines:
        ids = tokenizer(line)["input_ids"][: max_length - 1] + [tokenizer.eos_token_id]
        rows.append({"input_ids": ids})
    return rows


class PadToLongest:
    """Right-pads a batch; labels are the ids, with padding masked out of the loss.

    Padding is found from the lengths, not the pad id: GPT-2 pads with its eos token,
    and the eos ending each line must stay in the loss.
    """

    def __init__(self, pad_token_id: int):
        self.pad_token_id = pad_token_id

    def __call__(self, rows):
        import torch

        longest = max(len(r["input_ids"]) for r in rows)
        ids = torch.full((len(rows), longest), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), longest), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row["input_ids"])] = torch.tensor(row["input_ids"])
            mask[i, : len(row["input_ids"])] = 1
        return {"input_ids": ids, "attention_mask": mask, "labels": ids.masked_fill(mask == 0, -100)}


def main(argv: Optional[Sequence[str]] = None) -> dict[str, float]:
    """Fine-tune, evaluate with the ProtoQA callback, save; returns the final metrics."""
    example, training_args = parse_args(argv)
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, set_seed

    from protoqa_integrations.training.hooks import ProtoQAEvalCallback

    set_seed(training_args.seed)
    train_rows = load_rows(example, example.train_config or example.dataset_config, example.train_split)
    dev_rows = load_rows(example, example.dataset_config, example.eval_split)
    dev_rows = dev_rows.filter(lambda row: len(row["clusters"]["count"]) > 0)
    if example.eval_questions is not None:
        dev_rows = dev_rows.select(range(min(example.eval_questions, dev_rows.num_rows)))
    if dev_rows.num_rows == 0:
        raise SystemExit(f"no {example.eval_split} questions with answer clusters to evaluate on")
    train_questions = questions_from_rows(train_rows, "training rows")
    dev_questions = questions_from_rows(dev_rows, "dev rows")

    tokenizer = AutoTokenizer.from_pretrained(example.model)
    if tokenizer.eos_token_id is None:
        raise SystemExit(f"{example.model}: the tokenizer has no eos token to end answers with")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(example.model)

    train_lines = tokenize_lines(tokenizer, training_lines(train_questions), example.max_length)
    dev_lines = tokenize_lines(tokenizer, training_lines(dev_questions), example.max_length)
    print(
        f"{len(train_lines)} training lines from {len(train_questions)} questions; "
        f"evaluating on {len(dev_questions)} dev questions",
        file=sys.stderr,
    )

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_lines,
        eval_dataset=dev_lines,
        data_collator=PadToLongest(tokenizer.pad_token_id),
        processing_class=tokenizer,
    )
    callback = ProtoQAEvalCallback(
        dev_rows,  # the dataset's rows, as they are
        num_samples=example.num_samples,
        batch_size=example.sample_batch_size,
        similarity=[s.strip() for s in example.similarity.split(",") if s.strip()],
        seed=training_args.seed,
        probeval=example.probeval,
    )
    trainer.add_callback(callback.bind(trainer))
    trainer.train()
    final = trainer.evaluate()

    output_dir = Path(training_args.output_dir)
    trainer.save_model(str(output_dir))
    trainer.save_state()
    if not trainer.is_world_process_zero():
        return final  # under accelerate launch / torchrun, rank 0 writes the files
    with open(output_dir / "eval_results.json", "w", encoding="utf-8") as fh:
        json.dump(final, fh, indent=2)
    with open(output_dir / "dev_predictions.jsonl", "w", encoding="utf-8") as fh:
        for qid, answers in callback.ranked_predictions().items():
            fh.write(json.dumps({qid: answers}) + "\n")
    for name, value in sorted(final.items()):
        if "protoqa" in name or "probeval" in name or name == "eval_loss":
            print(f"{name}\t{value:.4f}")
    return final


if __name__ == "__main__":
    main()

"""What the Trainer-hook tests share: padding a batch of token rows, and a generating
Seq2SeqTrainer."""

from __future__ import annotations

from pathlib import Path


def pad_to_longest(rows: list[dict]) -> dict:
    """Right-pad token rows to the longest with 0, masked, and labelled -100 where padded, as a Trainer's
    collator does for a causal LM (torch imported here)."""
    import torch

    longest = max(len(r["input_ids"]) for r in rows)
    input_ids = torch.tensor([r["input_ids"] + [0] * (longest - len(r["input_ids"])) for r in rows])
    mask = torch.tensor([[1] * len(r["input_ids"]) + [0] * (longest - len(r["input_ids"])) for r in rows])
    return {"input_ids": input_ids, "attention_mask": mask, "labels": input_ids.masked_fill(mask == 0, -100)}


def generating_trainer(
    model, tokenizer, eval_dataset, data_collator, compute_metrics, output_dir: Path, batch_size: int = 1
):
    """A ``Seq2SeqTrainer`` on CPU that generates for evaluation and hands ``compute_metrics`` the inputs too,
    the set-up that :func:`~protoqa_integrations.training.hooks.make_compute_metrics` asks for."""
    import transformers

    args = transformers.Seq2SeqTrainingArguments(
        str(output_dir),
        predict_with_generate=True,
        include_for_metrics=["inputs"],
        per_device_eval_batch_size=batch_size,
        report_to="none",
        use_cpu=True,
    )
    return transformers.Seq2SeqTrainer(
        model=model,
        args=args,
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        data_collator=data_collator,
        compute_metrics=compute_metrics,
    )

"""What the Trainer-hook tests share: the paper's metric names and padding a batch of token rows."""

from __future__ import annotations

PAPER_KEYS = (
    "max_answers@1",
    "max_answers@3",
    "max_answers@5",
    "max_answers@10",
    "max_incorrect@1",
    "max_incorrect@3",
    "max_incorrect@5",
)


def pad_to_longest(rows: list[dict]) -> dict:
    """Right-pad token rows to the longest with 0, masked, and labelled -100 where padded, as a Trainer's
    collator does for a causal LM (torch imported here)."""
    import torch

    longest = max(len(r["input_ids"]) for r in rows)
    input_ids = torch.tensor([r["input_ids"] + [0] * (longest - len(r["input_ids"])) for r in rows])
    mask = torch.tensor([[1] * len(r["input_ids"]) + [0] * (longest - len(r["input_ids"])) for r in rows])
    return {"input_ids": input_ids, "attention_mask": mask, "labels": input_ids.masked_fill(mask == 0, -100)}

"""A tiny random RoBERTa for tests, built offline: the encoder of the ``roberta`` similarity's tests, the
libraries it needs, and the question they score."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from protoqa_core.io.records import Cluster, Question
from tests.support.lazy import require


def require_roberta() -> None:
    """Skip the calling test module unless torch, transformers and tokenizers are installed (none is imported)."""
    for name in ("torch", "transformers", "tokenizers"):
        require(name)


def pet_question(raw: Optional[dict[str, int]] = None) -> Question:
    """ "name a pet": dog or puppy (6), cat or kitten (4), with ``raw`` answer counts (by default 5, 1, 3 and 1).

    >>> [c.answers for c in pet_question().clusters]
    [('dog', 'puppy'), ('cat', 'kitten')]
    """
    clusters = (Cluster("q.0", ("dog", "puppy"), 6), Cluster("q.1", ("cat", "kitten"), 4))
    return Question(
        "q",
        "name a pet",
        clusters,
        raw_answers=raw if raw is not None else {"dog": 5, "puppy": 1, "cat": 3, "kitten": 1},
    )


def _byte_alphabet() -> list[str]:
    """GPT-2's byte-level alphabet (printable bytes as themselves, the others moved past 255)."""
    printable = set(range(33, 127)) | set(range(161, 173)) | set(range(174, 256))
    out, shifted = [], 0
    for b in range(256):
        if b in printable:
            out.append(chr(b))
        else:
            out.append(chr(256 + shifted))
            shifted += 1
    return out


def build_tiny_roberta(folder: Path) -> Path:
    """A random RoBERTa (16 dimensions, one layer) with a byte-level tokenizer without merges."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    vocab = {t: i for i, t in enumerate(specials)}
    for ch in _byte_alphabet():
        vocab.setdefault(ch, len(vocab))
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=True)
    tokenizer = RobertaTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = RobertaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=300,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
    )
    RobertaModel(config).save_pretrained(folder)
    return folder

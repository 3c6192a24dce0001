"""Tiny random GPT-2 models for tests, built offline: every test that runs a GPT-2 builds it here.

:func:`tiny_gpt2` makes the GPT-2 for any tokenizer; :func:`word_tokenizer` is a
word-level tokenizer over the words of some texts, and :func:`build_word_gpt2` saves both.
:func:`build_tiny_gpt2` trains a byte-level BPE, makes the model (optionally fitted to some
lines) and saves both; :func:`build_fitted_gpt2` fits one to the ProtoQA dev answers.
:func:`build_word_list_gpt2` is the Space's model: a few words, so its answers hit clusters.
The random RoBERTa is in :mod:`tests.support.tiny_roberta`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

EOS = "<|endoftext|>"


def word_tokenizer(texts: Iterable[str]) -> Any:
    """A word-level tokenizer knowing the words of ``texts``, with [PAD]=0, [UNK]=1, [EOS]=2."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    splitter = pre_tokenizers.Whitespace()
    words = sorted({word for text in texts for word, _ in splitter.pre_tokenize_str(text)})
    vocab = {"[PAD]": 0, "[UNK]": 1, "[EOS]": 2, **{w: i + 3 for i, w in enumerate(words)}}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = splitter
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]")


def tiny_gpt2(tokenizer: Any, *, seed: int = 0, n_positions: int = 64, n_layer: int = 2, n_embd: int = 32) -> Any:
    """A randomly initialized GPT-2 (under ``seed``) over ``tokenizer``'s vocabulary; its eos starts and ends text."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=n_positions,
        n_layer=n_layer,
        n_head=2,
        n_embd=n_embd,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config)


def build_word_gpt2(folder: Path, texts: Iterable[str], *, seed: int = 0, n_positions: int = 64) -> Path:
    """:func:`tiny_gpt2` over a :func:`word_tokenizer` of ``texts``, both saved to ``folder``."""
    tokenizer = word_tokenizer(texts)
    tiny_gpt2(tokenizer, seed=seed, n_positions=n_positions).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return Path(folder)


def build_tiny_gpt2(
    folder: Path,
    texts: Iterable[str],
    *,
    vocab_size: int = 300,
    n_layer: int = 2,
    n_embd: int = 32,
    n_positions: int = 128,
    seed: int = 0,
    fit_lines: Sequence[str] = (),
    fit_steps: int = 60,
) -> Path:
    """Train a byte-level BPE on ``texts``, make a random GPT-2 over it and save both to ``folder``.

    With ``fit_lines`` the model is first fitted to them for ``fit_steps`` Adam steps (on one torch
    thread), so that it answers with words of the data rather than random bytes.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(list(texts), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token=EOS, bos_token=EOS, unk_token=EOS)
    eos_id = tokenizer.convert_tokens_to_ids(EOS)
    model = tiny_gpt2(tokenizer, seed=seed, n_positions=n_positions, n_layer=n_layer, n_embd=n_embd)
    if fit_lines:
        rows = [tokenizer(line)["input_ids"] + [eos_id] for line in fit_lines]
        width = max(len(r) for r in rows)
        ids = torch.tensor([r + [eos_id] * (width - len(r)) for r in rows])
        mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        model.train()
        # One thread: the same weights whatever the machine's cores, and seconds where two threads
        # on two cores shared with another test worker take a minute.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            for _ in range(fit_steps):
                optimizer.zero_grad()
                model(input_ids=ids, attention_mask=mask, labels=ids.masked_fill(mask == 0, -100)).loss.backward()
                optimizer.step()
        finally:
            torch.set_num_threads(threads)
        model.eval()
    folder = Path(folder)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_fitted_gpt2(folder: Path, data: Path) -> Path:
    """A tiny GPT-2 fitted for a moment to the ProtoQA dev answers under ``data`` (the shared data folder),
    with the CFC prompts in its vocabulary; like GPT-2, its generation config is greedy."""

    from protoqa_dataset.parsing import load_questions
    from protoqa_integrations.generation.prompts import cfc_prompt, question_to_prompt

    protoqa = load_questions("protoqa", "validation", str(data))[0]
    cfc = load_questions("cfc", "validation", str(data))[0]
    lines = [f"{question_to_prompt(q.question)} {q.clusters[0].answers[0]}." for q in protoqa]
    texts = lines + [cfc_prompt(q.question) for q in cfc]
    # 512 positions: the CFC one-shot prompts are about 170 tokens of this small vocabulary.
    return build_tiny_gpt2(folder, texts, vocab_size=400, n_positions=512, fit_lines=lines, fit_steps=40)


def build_word_list_gpt2(folder: Path, words: Iterable[str], seed: int = 0) -> Path:
    """A randomly initialized 2-layer GPT-2 with a word-level tokenizer over ``words``, saved to ``folder``.

    With so few tokens, a random model ends a good share of its samples after one word,
    so its answers often hit clusters made of those words.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "<|endoftext|>": 1, ".": 2}
    for word in words:
        vocab.setdefault(word, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    folder.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(folder)
    tiny_gpt2(fast, seed=seed, n_positions=256).save_pretrained(folder)
    return folder

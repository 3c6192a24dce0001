"""Throughput of ``protoqa-eval generate``'s sampler against a plain one-sample-at-a-time loop.

Both run in this one process on the same GPT-2-small-sized model (the gpt2 config: 12
layers, 768 wide, 50,257-token vocabulary; random weights, built here, so no download),
the same ProtoQA dev prompts and the same settings (nucleus sampling, top_p 0.9,
temperature 0.69, top_k 0, at most 10 new tokens), alternating so that load on a shared
machine hits both alike:

* baseline: ``model.generate(prompt, do_sample=True, ...)`` once per sample;
* batched: :func:`protoqa_integrations.generation.iter_prompt_samples` (``num_return_sequences``,
  KV cache, ``--batch-size`` sequences per forward pass, stop at newline or period).

It prints samples per second of each, their ratio, and the wall time of the full ProtoQA
dev protocol (52 questions x 300 samples) extrapolated from the batched rate.

    python benchmarks/bench_generate.py [--questions 1] [--batched-samples 100] [--baseline-samples 10] [--threads 1]

A random model rarely emits a newline or a period, so nearly every sample runs the full
10 tokens on both sides: the worst case for the batched sampler's early stop.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DEV = REPO.parent / "shared" / "data" / "protoqa" / "dev.crowdsourced.jsonl"
DEV_QUESTIONS, PROTOQA_SAMPLES = 52, 300


def build_model_and_tokenizer(seed: int = 0):
    """GPT-2 small's architecture with random weights, and a byte-level BPE trained on the dev prompts."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from protoqa_metric import read_targets
    from protoqa_integrations.prompts import question_to_prompt

    texts = [question_to_prompt(q.question) for q in read_targets(DEV).values()]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.train_from_iterator(texts, trainer=trainers.BpeTrainer(
        vocab_size=2000, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>")
    torch.manual_seed(seed)
    eos = tokenizer.eos_token_id
    model = GPT2LMHeadModel(GPT2Config(bos_token_id=eos, eos_token_id=eos))  # the gpt2 (small) config
    model.eval()
    return model, tokenizer, texts


def baseline(model, tokenizer, prompts, samples_per_prompt: int) -> tuple[int, float]:
    """The plain loop: one ``model.generate`` call per sample."""
    import torch

    done, start = 0, time.perf_counter()
    for prompt in prompts:
        ids = tokenizer(prompt, return_tensors="pt")["input_ids"]
        for _ in range(samples_per_prompt):
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=True, top_p=0.9,
                           temperature=0.69, top_k=0, max_new_tokens=10, pad_token_id=tokenizer.eos_token_id)
            done += 1
    return done, time.perf_counter() - start


def batched(model, tokenizer, prompts, samples_per_prompt: int, batch_size: int) -> tuple[int, float]:
    """The project's sampler."""
    from protoqa_integrations.generation import SamplingConfig, iter_prompt_samples

    config = SamplingConfig(num_samples=samples_per_prompt, batch_size=batch_size, seed=42)
    start = time.perf_counter()
    done = sum(len(s.texts) for s in iter_prompt_samples(model, tokenizer, prompts, config))
    return done, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=1, help="dev questions measured (default 1)")
    parser.add_argument("--batched-samples", type=int, default=100, help="batched samples per question (default 100)")
    parser.add_argument("--baseline-samples", type=int, default=10, help="plain-loop samples per question (default 10)")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: steadier when shared)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of both (default 2)")
    args = parser.parse_args()
    if not DEV.is_file():
        print(f"no ProtoQA dev file at {DEV}", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(args.threads)
    model, tokenizer, prompts = build_model_and_tokenizer()
    prompts = prompts[: args.questions]
    print(f"model: gpt2-small config, random weights, {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M "
          f"parameters; {len(prompts)} dev prompts; {args.threads} torch threads; batch size {args.batch_size}")
    batched(model, tokenizer, prompts[:1], 4, args.batch_size)  # warm-up (stop table, allocator)
    baseline(model, tokenizer, prompts[:1], 1)
    totals = {"baseline": [0, 0.0], "batched": [0, 0.0]}
    for round_ in range(args.rounds):
        for name in ("baseline", "batched") if round_ % 2 == 0 else ("batched", "baseline"):
            if name == "baseline":
                n, seconds = baseline(model, tokenizer, prompts, args.baseline_samples)
            else:
                n, seconds = batched(model, tokenizer, prompts, args.batched_samples, args.batch_size)
            totals[name][0] += n
            totals[name][1] += seconds
            print(f"round {round_ + 1} {name:8s}: {n:5d} samples in {seconds:7.2f} s = {n / seconds:7.2f} samples/s")
    rates = {name: n / seconds for name, (n, seconds) in totals.items()}
    print(f"\nplain model.generate loop : {rates['baseline']:8.2f} samples/s")
    print(f"batched sampler           : {rates['batched']:8.2f} samples/s")
    print(f"ratio                     : {rates['batched'] / rates['baseline']:8.2f}x")
    total = DEV_QUESTIONS * PROTOQA_SAMPLES
    print(f"ProtoQA dev protocol ({DEV_QUESTIONS} x {PROTOQA_SAMPLES} = {total} samples), extrapolated: "
          f"{total / rates['batched'] / 60:.1f} min batched, {total / rates['baseline'] / 60:.1f} min plain loop")
    if torch.cuda.is_available():
        print("a GPU is visible; rerun with the model moved to it for the GPU figure")
    return 0


if __name__ == "__main__":
    sys.exit(main())

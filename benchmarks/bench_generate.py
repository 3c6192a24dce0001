"""Throughput of ``protoqa-eval generate``'s sampler against a plain one-sample-at-a-time loop.

Both run in this one process on the same GPT-2-small-sized model (the gpt2 config: 12
layers, 768 wide, 50,257-token vocabulary; random weights, built here, so no download),
the same ProtoQA dev prompts and the same settings (nucleus sampling, top_p 0.9,
temperature 0.69, top_k 0, at most 10 new tokens), alternating so that load on a shared
machine hits both alike:

* baseline: ``model.generate(prompt, do_sample=True, ...)`` once per sample;
* batched: :func:`protoqa_integrations.generation.sampling.iter_prompt_samples` (``num_return_sequences``,
  KV cache, ``--batch-size`` sequences per forward pass, stop at newline or period).

It prints samples per second of each, their ratio, and the wall time of the full ProtoQA
dev protocol (52 questions x 300 samples) extrapolated from the batched rate.

    python benchmarks/bench_generate.py [--questions 1] [--batched-samples 100] [--baseline-samples 10] [--threads 1]

A random model rarely emits a newline or a period, so nearly every sample runs the full
10 tokens on both sides: the worst case for the batched sampler's early stop.

``--engines`` measures every engine of ``protoqa-eval generate`` in one run on one tiny model
(GPT-2, 2 layers, 128 wide, 4 heads: head dimension 32, as vLLM's CPU attention needs;
random weights, saved to a temporary folder), against the same plain loop:

* ``hf``: the batched sampler in this process;
* ``vllm``: vLLM's offline engine (``enforce_eager``: no compilation, which takes minutes
  on a shared CPU), in the interpreter ``--vllm-python`` (default
  ``.venv-vllm``), timed there after a warm-up call;
* ``openai``: the openai engine in this process against vLLM's OpenAI-compatible server,
  started from that interpreter on 127.0.0.1 (``--enforce-eager`` too).

    python benchmarks/bench_generate.py --engines [--questions 4] [--batched-samples 300]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DEV = REPO.parent / "shared" / "data" / "protoqa" / "dev.crowdsourced.jsonl"
DEV_QUESTIONS, PROTOQA_SAMPLES = 52, 300


def build_model_and_tokenizer(seed: int = 0):
    """GPT-2 small's architecture with random weights, and a byte-level BPE trained on the dev prompts."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from protoqa_integrations.generation.prompts import question_to_prompt
    from protoqa_metric import read_targets

    texts = [question_to_prompt(q.question) for q in read_targets(DEV).values()]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.train_from_iterator(
        texts,
        trainer=trainers.BpeTrainer(
            vocab_size=2000,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
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
            model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                do_sample=True,
                top_p=0.9,
                temperature=0.69,
                top_k=0,
                max_new_tokens=10,
                pad_token_id=tokenizer.eos_token_id,
            )
            done += 1
    return done, time.perf_counter() - start


def batched(model, tokenizer, prompts, samples_per_prompt: int, batch_size: int) -> tuple[int, float]:
    """The project's sampler."""
    from protoqa_integrations.generation.sampling import iter_prompt_samples
    from protoqa_integrations.generation.settings import SamplingConfig

    config = SamplingConfig(num_samples=samples_per_prompt, batch_size=batch_size, seed=42)
    start = time.perf_counter()
    done = sum(len(s.texts) for s in iter_prompt_samples(model, tokenizer, prompts, config))
    return done, time.perf_counter() - start


VLLM_WORKER = r"""
import json, sys, time
from protoqa_integrations.generation.engines.vllm import VLLMEngine
from protoqa_integrations.generation.settings import SamplingConfig
if __name__ == "__main__":
    folder, count = sys.argv[1], int(sys.argv[2])
    prompts = json.loads(sys.argv[3])
    engine = VLLMEngine(folder, gpu_memory_utilization=0.15, enforce_eager=True)
    list(engine.sample(prompts[:1], SamplingConfig(num_samples=4)))  # warm-up
    start = time.perf_counter()
    done = sum(len(s.texts) for s in engine.sample(prompts, SamplingConfig(num_samples=count)))
    print(json.dumps({"samples": done, "seconds": time.perf_counter() - start}))
"""


def save_tiny(folder: Path, tokenizer) -> tuple[Any, Path]:
    """The engines' model: GPT-2 with 2 layers, 128 wide, 4 heads (head dimension 32), random weights."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    eos = tokenizer.eos_token_id
    model = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(tokenizer),
            n_layer=2,
            n_embd=128,
            n_head=4,
            n_positions=256,
            bos_token_id=eos,
            eos_token_id=eos,
        )
    )
    model.eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model, folder


def vllm_rate(python: str, folder: Path, prompts: list[str], count: int) -> tuple[int, float]:
    env = dict(os.environ, PYTHONPATH=str(REPO), VLLM_LOGGING_LEVEL="ERROR", HF_HUB_OFFLINE="1")
    result = subprocess.run(
        [python, "-c", VLLM_WORKER, str(folder), str(count), json.dumps(prompts)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if result.returncode != 0:
        raise SystemExit(f"vllm worker failed: {result.stderr.strip().splitlines()[-1:]}")
    found = json.loads(result.stdout.strip().splitlines()[-1])
    return found["samples"], found["seconds"]


def start_server(python: str, folder: Path) -> tuple[Any, str]:
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, VLLM_LOGGING_LEVEL="ERROR", HF_HUB_OFFLINE="1")
    process = subprocess.Popen(
        [
            python,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(folder),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--gpu-memory-utilization",
            "0.15",
            "--served-model-name",
            "tiny",
            "--enforce-eager",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 1200
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(2)
    process.kill()
    raise SystemExit("vLLM's server did not start")


def openai_rate(url: str, prompts: list[str], count: int) -> tuple[int, float]:
    from protoqa_integrations.generation.engines.openai import OpenAIEngine
    from protoqa_integrations.generation.settings import SamplingConfig

    # The CPU build of vLLM fails on seeded requests whose prompt is computed in chunks.
    engine = OpenAIEngine("tiny", base_url=url, request_seeds=False, concurrency=4, max_n=128)
    list(engine.sample(prompts[:1], SamplingConfig(num_samples=4)))  # warm-up
    start = time.perf_counter()
    done = sum(len(s.texts) for s in engine.sample(prompts, SamplingConfig(num_samples=count)))
    engine.close()
    return done, time.perf_counter() - start


def engines_main(args: argparse.Namespace) -> int:
    """Every engine on one tiny model, in one run."""
    import tempfile

    import torch

    _, tokenizer, prompts = build_model_and_tokenizer()
    prompts = prompts[: args.questions]
    python = args.vllm_python or str(REPO / ".venv-vllm" / "bin" / "python")
    with tempfile.TemporaryDirectory() as tmp:
        model, folder = save_tiny(Path(tmp) / "tiny", tokenizer)
        print(
            f"model: GPT-2, 2 layers, 128 wide, 4 heads, random weights; {len(prompts)} dev prompts; "
            f"{torch.get_num_threads()} torch threads; {args.batched_samples} samples per prompt "
            f"({args.baseline_samples} for the plain loop)"
        )
        batched(model, tokenizer, prompts[:1], 4, args.batch_size)
        rates = {}
        n, seconds = baseline(model, tokenizer, prompts, args.baseline_samples)
        rates["plain model.generate loop"] = (n, seconds)
        rates["hf (batched sampler)"] = batched(model, tokenizer, prompts, args.batched_samples, args.batch_size)
        rates["vllm (offline, CPU build)"] = vllm_rate(python, folder, prompts, args.batched_samples)
        server, url = start_server(python, folder)
        try:
            rates["openai (vllm serve, CPU build)"] = openai_rate(url, prompts, args.batched_samples)
        finally:
            server.terminate()
            server.wait(timeout=60)
    plain = rates["plain model.generate loop"][0] / rates["plain model.generate loop"][1]
    print()
    for name, (n, seconds) in rates.items():
        rate = n / seconds
        print(
            f"{name:32s}: {n:6d} samples in {seconds:7.2f} s = {rate:8.2f} samples/s, "
            f"{rate / plain:6.2f}x the plain loop"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=1, help="dev questions measured (default 1)")
    parser.add_argument("--batched-samples", type=int, default=100, help="batched samples per question (default 100)")
    parser.add_argument("--baseline-samples", type=int, default=10, help="plain-loop samples per question (default 10)")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: steadier when shared)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of both (default 2)")
    parser.add_argument("--engines", action="store_true", help="every engine on one tiny model (see above)")
    parser.add_argument("--vllm-python", help="interpreter with vLLM (default .venv-vllm/bin/python)")
    args = parser.parse_args()
    if not DEV.is_file():
        print(f"no ProtoQA dev file at {DEV}", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(args.threads)
    if args.engines:
        return engines_main(args)
    model, tokenizer, prompts = build_model_and_tokenizer()
    prompts = prompts[: args.questions]
    print(
        f"model: gpt2-small config, random weights, {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M "
        f"parameters; {len(prompts)} dev prompts; {args.threads} torch threads; batch size {args.batch_size}"
    )
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
    print(
        f"ProtoQA dev protocol ({DEV_QUESTIONS} x {PROTOQA_SAMPLES} = {total} samples), extrapolated: "
        f"{total / rates['batched'] / 60:.1f} min batched, {total / rates['baseline'] / 60:.1f} min plain loop"
    )
    if torch.cuda.is_available():
        print("a GPU is visible; rerun with the model moved to it for the GPU figure")
    return 0


if __name__ == "__main__":
    sys.exit(main())

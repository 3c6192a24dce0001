"""The least CPU an exact float32 run of a transformer encoder can take, measured in the running process.

Shared by the benchmarks that put an encoder's cost beside a baseline (``bench_roberta.py``,
``bench_embedding_runtime.py``): the work a run did (tokens through the network, the
multiply-adds of its matrix products, from
:meth:`~protoqa_core.similarity.numpy_encoder.NumpyTransformer.multiply_adds`) over the
single-thread float32 matrix-product rate measured now on the model's own weight shapes.
No exact float32 run does fewer products, and none does them faster than the BLAS does
alone, so this is a floor: products only, nothing else.
"""

from __future__ import annotations

import time
from typing import Any


def counted_work(network: Any) -> dict[str, int]:
    """What ``network`` (a :class:`~protoqa_core.similarity.numpy_encoder.NumpyTransformer`) encoded so far.

    >>> class Network:
    ...     tokens_encoded, tokens_finished = 10, 8
    ...     def multiply_adds(self):
    ...         return 1000
    >>> counted_work(Network())
    {'tokens': 10, 'tokens_finished': 8, 'multiply_adds': 1000}
    """
    return {
        "tokens": network.tokens_encoded,
        "tokens_finished": network.tokens_finished,
        "multiply_adds": network.multiply_adds(),
    }


def encoder_floor(network: Any, counted: dict[str, int], rows: int = 1024, repeats: int = 5) -> dict[str, float]:
    """The least CPU the ``counted`` work's products can take: their FLOPs at the sgemm rate measured now.

    The rate is that of ``x @ w`` for each weight of the network's first layer (one BLAS
    thread, ``rows`` rows, float32, the best of ``repeats`` timings), the FLOPs of all
    four over their time.
    """
    import numpy as np

    from protoqa_core.similarity.numpy_encoder import blas_threads

    layer = network._layers[0]
    rng = np.random.default_rng(0)
    flops = seconds = 0.0
    with blas_threads(1):
        for name in ("qkv", "out", "up", "down"):
            weight = layer[name]
            x = rng.standard_normal((rows, weight.shape[0])).astype(np.float32)
            x @ weight  # the weight's pages are read once before timing
            best = min(_product_seconds(x, weight) for _ in range(repeats))
            flops, seconds = flops + 2.0 * rows * weight.shape[0] * weight.shape[1], seconds + best
    return floor_of(counted, flops / seconds)


def floor_of(counted: dict[str, int], rate: float) -> dict[str, float]:
    """The floor of the ``counted`` work at ``rate`` FLOP/s, with what it is made of.

    >>> floor_of({"tokens": 100, "tokens_finished": 90, "multiply_adds": 5 * 10**9}, 1e11)["floor_cpu_s"]
    0.1
    """
    total = 2.0 * counted["multiply_adds"]
    return {
        "tokens": counted["tokens"],
        "tokens_finished": counted["tokens_finished"],
        "mflop_per_token": total / max(counted["tokens"], 1) / 1e6,
        "gflop": total / 1e9,
        "sgemm_gflops": rate / 1e9,
        "floor_cpu_s": total / rate,
    }


def describe(floor: dict[str, float]) -> str:
    """One line for a benchmark's output.

    >>> describe(floor_of({"tokens": 2000, "tokens_finished": 1900, "multiply_adds": 5 * 10**10}, 1e11))
    '2,000 tokens encoded (1,900 finished in the last layer), 50.0 MFLOP a token, 100 GFLOP in all; sgemm 100 GFLOPS on one thread now: at least 1.00 s of CPU for any exact float32 run'
    """
    return (
        f"{floor['tokens']:,} tokens encoded ({floor['tokens_finished']:,} finished in the last layer), "
        f"{floor['mflop_per_token']:.1f} MFLOP a token, {floor['gflop']:.0f} GFLOP in all; sgemm "
        f"{floor['sgemm_gflops']:.0f} GFLOPS on one thread now: at least {floor['floor_cpu_s']:.2f} s of CPU "
        "for any exact float32 run"
    )


def _product_seconds(x: Any, weight: Any) -> float:
    start = time.process_time()
    x @ weight
    return time.process_time() - start

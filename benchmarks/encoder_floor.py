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
from functools import partial
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
    """The least CPU the ``counted`` work's products can take: their FLOPs at the sgemm rate measured now, and
    at the rate of the exact products this project runs (:func:`~protoqa_core.similarity.exact_products.exact_product`
    on integer-valued float64 operands, 256 terms a BLAS call), measured the same way.

    The rates are those of ``x @ w`` for each weight of the network's first layer (one BLAS
    thread, ``rows`` rows, the best of ``repeats`` timings), the FLOPs of all four over their time.
    """
    import numpy as np

    from protoqa_core.similarity.exact_products import exact_product, fixed_point
    from protoqa_core.similarity.numpy_encoder import blas_threads

    layer = network._layers[0]
    rng = np.random.default_rng(0)
    flops = seconds = exact_seconds = 0.0
    with blas_threads(1):
        for name in ("qkv", "out", "up", "down"):
            weight = np.asarray(layer[name], dtype=np.float32)
            x = rng.standard_normal((rows, weight.shape[0])).astype(np.float32)
            x @ weight  # the weight's pages are read once before timing
            best = min(_product_seconds(x, weight) for _ in range(repeats))
            integers, wide = fixed_point(x, axis=-1)[0], weight.astype(np.float64)
            exact = min(_timed(partial(exact_product, integers, wide)) for _ in range(repeats))
            flops, seconds = flops + 2.0 * rows * weight.shape[0] * weight.shape[1], seconds + best
            exact_seconds += exact
    floor = floor_of(counted, flops / seconds)
    total = 2.0 * counted["multiply_adds"]
    return {**floor, "exact_gflops": flops / exact_seconds / 1e9, "exact_floor_cpu_s": total * exact_seconds / flops}


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
    exact = (
        f"; exact products {floor['exact_gflops']:.0f} GFLOPS: at least {floor['exact_floor_cpu_s']:.2f} s"
        if "exact_floor_cpu_s" in floor
        else ""
    )
    return (
        f"{floor['tokens']:,} tokens encoded ({floor['tokens_finished']:,} finished in the last layer), "
        f"{floor['mflop_per_token']:.1f} MFLOP a token, {floor['gflop']:.0f} GFLOP in all; sgemm "
        f"{floor['sgemm_gflops']:.0f} GFLOPS on one thread now: at least {floor['floor_cpu_s']:.2f} s of CPU "
        f"for any exact float32 run{exact}"
    )


def _product_seconds(x: Any, weight: Any) -> float:
    return _timed(lambda: x @ weight)


def _timed(run: Any) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start

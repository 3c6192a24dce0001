"""Exact matrix products: operands cut to integers under a power of two, summed where float64 is exact.

A BLAS kernel sums a product's terms in an order that changes with the CPU, the kernel and the
batch's shape, so float32 vectors would change in their last bits with their batch. Why a string's
vector (:mod:`protoqa_core.similarity.numpy_encoder`) cannot:

1. :func:`fixed_point` cuts each row by its own largest magnitude (a maximum, which no order
   changes), with exact divisions by powers of two and ``rint``.
2. Products of such integers are at most ``2**44`` and :func:`exact_product` hands the kernel 256
   terms at a time, so every partial sum, in any order, blocked or fused, is an integer below
   ``2**52``, which float64 holds; the blocks are then added first to last.
3. Everything else (scaling, biases, LayerNorm, GELU, softmax, pooling) works on one element or
   one string's row at a time; only numpy's float32 ``exp`` is not fixed by IEEE 754.

``tests/protoqa_core/similarity/test_numpy_encoder.py`` checks this with a kernel that reorders its
sums by the batch's shape, and that the same kernel moves the vectors when products are not cut.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["EXACT_BITS", "exact_product", "fixed_point"]


EXACT_BITS = 22
"""Bits of the integers a matrix product's operands are cut to (:func:`fixed_point`): a row's
entries keep their absolute precision to 2**-23 of the power of two above its largest one,
and :data:`_EXACT_TERMS` products of two such integers sum below 2**53, where float64 is exact."""
_EXACT_TERMS = 1 << (53 - 1 - 2 * EXACT_BITS)
"""Terms one BLAS call sums: 256, whose sum of products of ``EXACT_BITS``-bit integers stays below 2**52."""


def fixed_point(values: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as float64 integers of at most :data:`EXACT_BITS` bits times a power of two shared along ``axis``.

    The power of two is the one above the largest magnitude along ``axis`` (1 for an all-zero line)
    over ``2**EXACT_BITS``; integers are rounded half to even.

    >>> integers, scale = fixed_point(np.array([[3.0, -0.5], [0.0, 0.0]]), axis=1)
    >>> integers.tolist(), (scale * 2**EXACT_BITS).ravel().tolist()
    ([[3145728.0, -524288.0], [0.0, 0.0]], [4.0, 1.0])
    """
    values = np.asarray(values)
    if values.dtype != np.float32:
        values = values.astype(np.float64)
    largest = np.max(np.abs(values), axis=axis, keepdims=True, initial=0.0)
    _, exponent = np.frexp(largest)  # largest < 2**exponent
    scale = np.ldexp(1.0, exponent - EXACT_BITS)
    factor = 1.0 / scale  # a power of two: multiplying by it is exact
    if values.dtype == np.float32 and int(exponent.min(initial=0)) > -100:
        # Float32 holds these values times a power of two, and integers below 2**23, exactly: the
        # same integers as in float64, for half the memory traffic (a row far below 1 is cut in
        # float64, where its factor cannot overflow).
        scaled = values * factor.astype(np.float32)
    else:
        scaled = values.astype(np.float64) * factor
    return np.rint(scaled, out=scaled).astype(np.float64, copy=False), scale


def exact_product(
    a: np.ndarray, b: np.ndarray, kernel: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.matmul
) -> np.ndarray:
    """``a @ b`` of integer-valued float64 arrays of at most :data:`EXACT_BITS` bits, computed without rounding.

    ``kernel`` sums :data:`_EXACT_TERMS` products at a time, exact in any order; blocks add in a fixed order.

    >>> a = np.array([[2.0**21, 1.0, -3.0]]); b = np.array([[2.0**21], [1.0], [5.0]])
    >>> exact_product(a, b).tolist()
    [[4398046511090.0]]
    """
    terms = a.shape[-1]
    if terms <= _EXACT_TERMS:
        return kernel(a, b)
    out = kernel(a[..., :_EXACT_TERMS], b[..., :_EXACT_TERMS, :])
    for first in range(_EXACT_TERMS, terms, _EXACT_TERMS):
        out += kernel(a[..., first : first + _EXACT_TERMS], b[..., first : first + _EXACT_TERMS, :])
    return out

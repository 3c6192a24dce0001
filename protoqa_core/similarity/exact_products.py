"""Exact matrix products: operands cut to integers under a power of two, summed where float64 is exact.

A BLAS kernel may sum a product's terms in any order, block or fuse them, and the order changes
with the CPU, the kernel chosen and the shape of the batch; float32 sums then differ in their
last bits, and so would a string's vector with its batch. Cut to :data:`EXACT_BITS`-bit
integers, the products and their sums are exact in float64 whatever the order, so the result
depends on the operands alone.

Why a string's vector (:mod:`protoqa_core.similarity.numpy_encoder`) cannot depend on its batch
or on the BLAS kernel, whatever the machine:

1. *The cut is the row's own.* :func:`fixed_point` divides a row by the power of two above its
   largest magnitude (a maximum, which no order changes) and rounds to an integer: division by a
   power of two and ``rint`` are exact, so the integers and the scale are the same bits for the
   same row, whichever rows are beside it.
2. *The product is exact.* Each integer is at most ``2**EXACT_BITS`` in magnitude, a product at
   most ``2**44``, and :func:`exact_product` hands the kernel :data:`_EXACT_TERMS` (256) terms at a
   time, so every partial sum any kernel can form, in any order, blocked or fused, is an integer
   of magnitude at most ``2**52``, which float64 holds: no operation rounds, and the result is the
   one integer the mathematics gives. The blocks' sums are then added first to last by numpy's
   elementwise addition: the same float64 additions of the same integers whatever the batch or
   the kernel (exact while a total stays below ``2**53``, and the same bits beyond).
3. *Everything else is one row or one element at a time.* Scaling back (by powers of two), the
   cast to float32, biases, residuals, LayerNorm and GELU are IEEE 754 operations, each correctly
   rounded, on one element; the reductions (a row's mean, a softmax's sum, a pooling's sum) run
   along one row of one string in an order set by the row's length alone (numpy's contiguous
   reduction), and attention runs within each string. The one operation IEEE 754 does not fix,
   numpy's float32 ``exp``, is applied element by element through one code path per process.

So a string's vector is a function of its tokens and the weights: a batch of any shape, and any
kernel that computes a sum of integer products without rounding (every BLAS does: it performs only
additions and multiplications), give the same bits. Across processors only that ``exp`` (and a
numpy built differently) could differ; the products, which were the kernel- and batch-dependent
part, cannot. ``tests/protoqa_core/similarity/test_numpy_encoder.py`` checks this with numpy's
own kernel and with a kernel that reorders its sums by the batch's shape (the same test on every
machine), and checks that that kernel does move the vectors when the products are not cut.
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

    The power of two is the one above the largest magnitude along ``axis`` (an all-zero
    line takes 1), over ``2**EXACT_BITS``; integers are rounded half to even. ``integers *
    scale`` is ``values`` to within half a unit of the last bit, and the same ``values``
    give the same bits on every machine (division by a power of two and rounding are exact).

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

    ``kernel`` (numpy's matmul, which calls BLAS) sums :data:`_EXACT_TERMS` products at a
    time, each an integer below 2**44, so every partial sum is an integer below 2**53 and
    exact whatever order, blocking or fused multiply-adds the kernel uses; the blocks' sums
    are then added in a fixed order. The result therefore depends on ``a`` and ``b`` alone.

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

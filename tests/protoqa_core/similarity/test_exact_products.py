"""Exact matrix products: the cut to fixed point keeps every value within half a unit, float32 and float64 rows
give the same integers, and the product of the integers is the exact sum."""

from __future__ import annotations

import math

import numpy as np

from protoqa_core.similarity.exact_products import EXACT_BITS, exact_product, fixed_point


def test_an_exact_product_is_the_product():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 1000)), rng.standard_normal((1000, 3))
    (ai, sa), (bi, sb) = fixed_point(a, axis=-1), fixed_point(b, axis=-2)
    product = exact_product(ai, bi) * sa * sb
    # Exact on the cut operands, whose integers keep 22 bits: close to the float product.
    assert np.array_equal(
        exact_product(ai, bi),
        np.array([[math.fsum(x * y for x, y in zip(r, c, strict=True)) for c in bi.T] for r in ai]),
    )
    assert np.allclose(product, a @ b, rtol=0, atol=1e-4)


def test_float32_rows_are_cut_to_the_integers_float64_gives():
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((40, 300)).astype(np.float32) * (10.0 ** rng.integers(-30, 30, (40, 1))).astype(
        np.float32
    )
    rows[0] = 0.0
    rows[1, :3] = np.array([1e-39, -3e-40, 1e-45], dtype=np.float32)  # subnormal among normal numbers
    rows[2] = np.float32(1e-40) * rng.standard_normal(300).astype(np.float32)  # a subnormal row: cut in float64
    for axis in (0, -1):
        integers, scale = fixed_point(rows, axis=axis)
        wide, wide_scale = fixed_point(rows.astype(np.float64), axis=axis)
        assert integers.dtype == np.float64 and np.array_equal(integers, wide) and np.array_equal(scale, wide_scale)
        assert np.abs(integers).max() <= 2**EXACT_BITS and np.all(integers == np.rint(integers))

"""Bootstrap intervals and the paired bootstrap test."""

from __future__ import annotations

import numpy as np
import pytest

from protoqa_core.significance import bootstrap_ci, paired_bootstrap


def test_interval_contains_mean_and_is_deterministic():
    rng = np.random.default_rng(0)
    values = rng.random(80)
    first, second = bootstrap_ci(values), bootstrap_ci(values)
    assert first == second
    assert first.low <= first.mean <= first.high
    assert first.mean == pytest.approx(values.mean())


def test_interval_shrinks_with_more_questions():
    rng = np.random.default_rng(1)
    small = bootstrap_ci(rng.random(20))
    large = bootstrap_ci(rng.random(2000))
    assert (large.high - large.low) < (small.high - small.low) / 5


def test_paired_test_detects_a_real_difference_and_not_noise():
    rng = np.random.default_rng(2)
    base = rng.random(100)
    better = np.clip(base + 0.1, 0, 1)
    assert paired_bootstrap(better, base).p_value < 0.01
    noise = base + rng.normal(0, 0.01, 100)
    assert paired_bootstrap(noise, base).p_value > 0.01


def test_paired_test_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match="equally long"):
        paired_bootstrap([1.0, 0.0], [1.0])
    with pytest.raises(ValueError, match="no values"):
        bootstrap_ci([])

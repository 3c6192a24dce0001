"""Bootstrap intervals and the paired bootstrap test."""

from __future__ import annotations

import numpy as np
import pytest

from protoqa_core.significance import bootstrap_ci, compare_paired, paired_bootstrap


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


def test_compare_paired_uses_the_shared_questions_in_the_first_systems_order():
    a = {"q1": 1.0, "q2": 0.5, "q3": 0.0, "only_a": 1.0}
    b = {"q3": 0.5, "q2": 0.5, "q1": 0.0, "only_b": 0.0}
    assert compare_paired(a, b, resamples=200, seed=7) == paired_bootstrap(
        [1.0, 0.5, 0.0], [0.0, 0.5, 0.5], resamples=200, seed=7
    )


def test_compare_paired_without_shared_questions_is_an_error():
    with pytest.raises(ValueError, match="share no question"):
        compare_paired({"q1": 1.0}, {"q2": 1.0})

"""Bootstrap intervals and the paired bootstrap test."""

from __future__ import annotations

import numpy as np
import pytest

from protoqa_core.significance import bootstrap_ci, compare_paired, compare_paired_draws, paired_bootstrap


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


def test_draws_that_agree_give_the_one_draw_result_and_draws_that_differ_widen_the_interval():
    rng = np.random.default_rng(4)
    a, b = rng.normal(1.0, 1.0, 40), rng.normal(0.8, 1.0, 40)
    single = paired_bootstrap(a, b, resamples=500, seed=9)
    same = paired_bootstrap([a, a, a], [b, b, b], resamples=500, seed=9)
    assert (same.difference.low, same.difference.high, same.p_value) == (
        single.difference.low,
        single.difference.high,
        single.p_value,
    )
    assert same.difference.mean == pytest.approx(single.difference.mean) and same.num_questions == 40
    # A draw that moves a's scores by +-0.3 on every question: the difference's interval spans that too.
    drawn = paired_bootstrap([a - 0.3, a + 0.3], [b, b], resamples=500, seed=9)
    assert drawn.difference.mean == pytest.approx(single.difference.mean)
    assert drawn.difference.high - drawn.difference.low > single.difference.high - single.difference.low + 0.4
    with pytest.raises(ValueError, match="equally long"):
        paired_bootstrap([a, a], [b], resamples=10)


def test_compare_paired_draws_pairs_the_draws_and_keeps_the_questions_every_draw_has():
    a = [{"q1": 1.0, "q2": 2.0, "q3": 0.0}, {"q1": 1.5, "q2": 2.5}]
    b = [{"q2": 1.0, "q1": 0.0}, {"q1": 0.5, "q2": 1.5}]
    r = compare_paired_draws(a, b, resamples=200)
    assert r.num_questions == 2 and r.difference.mean == pytest.approx(1.0)
    assert r.difference.low == pytest.approx(1.0) and r.difference.high == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same, positive number of draws"):
        compare_paired_draws(a, b[:1])

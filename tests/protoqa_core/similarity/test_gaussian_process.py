"""The RBF length-scale rules of the Gaussian-process regression (no encoder needed)."""

from __future__ import annotations

import numpy as np
import pytest

from protoqa_core.similarity.gaussian_process import fit_one_vs_all, length_scale_rule, median_distance


def _clusters(scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    centers = rng.normal(size=(3, 8)) * 4.0
    vectors = np.concatenate([c + rng.normal(size=(5, 8)) for c in centers]) * scale
    members = np.repeat(np.eye(3, dtype=bool), 5, axis=0)
    probes = (centers + rng.normal(size=(3, 8)) * 0.5) * scale
    return vectors, members, probes


def test_the_median_rule_follows_the_scale_of_the_vectors():
    small, members, probes = _clusters(1.0)
    large, _, large_probes = _clusters(100.0)
    rule = "median*0.375"
    a = fit_one_vs_all(small, members, length_scale=rule).scores(probes)
    b = fit_one_vs_all(large, members, length_scale=rule).scores(large_probes)
    assert np.allclose(a, b, atol=1e-8)  # the same problem on another scale: the same scores
    assert (a.argmax(axis=1) == np.arange(3)).all() and (a.max(axis=1) > 0.1).all()
    # A fixed length scale of 1 (the papers' code) sees nothing once the vectors are far apart.
    fixed = fit_one_vs_all(large, members, length_scale=1.0).scores(large_probes)
    assert np.abs(fixed).max() < 1e-12


def test_the_median_rule_is_the_factor_times_the_median_distance():
    vectors, members, probes = _clusters(3.0)
    median = median_distance(vectors)
    assert median is not None and median > 0
    by_rule = fit_one_vs_all(vectors, members, length_scale="median*0.5").scores(probes)
    by_number = fit_one_vs_all(vectors, members, length_scale=0.5 * median).scores(probes)
    assert np.allclose(by_rule, by_number, atol=1e-12)
    # One distinct vector: no distance to take the median of, the factor times 1.
    single = fit_one_vs_all(np.ones((2, 2)), np.array([[True], [True]]), length_scale="median*2")
    assert np.allclose(
        single.scores(np.ones((1, 2))),
        fit_one_vs_all(np.ones((2, 2)), np.array([[True], [True]]), length_scale=2.0).scores(np.ones((1, 2))),
    )


@pytest.mark.parametrize("bad", ["auto", "median*", "median*0", "median*-2", "median*inf", "", -1.0, 0, None, True])
def test_bad_rules_are_refused(bad):
    with pytest.raises(ValueError, match="the length scale must be"):
        length_scale_rule(bad)
    with pytest.raises(ValueError, match="the length scale must be"):
        fit_one_vs_all(np.eye(2), np.eye(2, dtype=bool), length_scale=bad)

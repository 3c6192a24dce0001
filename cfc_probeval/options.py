"""The options of ProbEval as a whole that its plug-ins also read, each with a flag of its own: the seed and the
matching threshold (a clustering's or a matching's own options are declared on its class).

>>> SEED.flag, THRESHOLD.accepts
('--seed', 'a number in [0, 1]')
"""

from __future__ import annotations

from protoqa_core.options import Option

from .defaults import DEFAULTS

__all__ = ["SEED", "THRESHOLD"]

SEED = Option(
    "seed",
    int,
    DEFAULTS.seed,
    "seed of K-means and the GP classifiers",
    low=0,
    high=2**32 - 1,
    accepts="an integer in [0, 2**32 - 1]",
    shared=True,
)
"""The random seed of ProbEval: K-means (X-means, G-means) and the Gaussian-process matcher read it."""

THRESHOLD = Option(
    "threshold", float, None, "cosine similarity or GP probability a match needs", low=0.0, high=1.0, shared=True
)
"""The matching threshold; each matching that reads it has its own default."""

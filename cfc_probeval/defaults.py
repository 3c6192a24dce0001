"""Default settings of ProbEval, in one place so the library, CLI, ``evaluate`` module and card agree.

Which clustering runs by default (``clustering="auto"``, :data:`AUTO`):

- targets that carry human clusters (see :func:`cfc_probeval.inputs.has_human_clusters`)
  are scored with those clusters (``human``): they are what the automatic settings try
  to reproduce, and scoring with them ranks systems the way the annotators would;
- raw answers without clusters are clustered automatically with :data:`DEFAULTS`:
  G-means (``k_init=8``) over all-MiniLM-L6-v2 embeddings, matched with WordNet.

Where the values come from: the validation study (``studies/reports/validation.md``;
regenerate with ``python -m studies.validation``) and the choice of the automatic clustering
(``studies/reports/clusters.md``; ``python -m studies.validation clusters``).

- The automatic default (``clustering``, ``gmeans_k_init``, ``embedder``, ``matching``):
  ``clusters.md``, under protocol version 2 (``studies/validation/protocol.toml``, committed
  before any of its CFC test figures). Every candidate and every control (one cluster, one
  cluster per string, normalized strings, WordNet components) is measured on CFC dev and
  ProtoQA dev by cluster-level BLANC, the CFC paper's answer-set criterion (its Table 2), the
  system-like dev pools (described in ``validation.md``, section "System level", paragraph
  "Automatic default") and a dev panel of systems whose order is known by construction; a
  candidate replaces the default only when it is non-inferior on all of them and better on
  one, and a control as good as the default would ship instead. No candidate or control
  passes, so G-means from 8 centers stays; it does not beat every control (the controls tie or
  win on the answer-set criterion), but none is as good on every criterion. G-means from 4
  centers, the earlier default, falls short of it on dev, yet ranks the eight CFC test systems
  better: that is reported in ``clusters.md`` beside every control, with CFC test read only
  after the choice.
  No CFC test file is read to choose it.
- The matching thresholds (``cosine_threshold`` 0.6, ``gp_threshold`` 0.4): section
  "Matching validity": the threshold with the best count-weighted matching F1 against
  the annotators' assignments of ProtoQA dev GPT-2 samples, chosen with cross-validation
  over questions (WordNet matching, which needs no threshold, scores F1 0.739 there).
- The other clustering parameters (HAC ``complete`` linkage cut at 0.3, X-means
  ``k_init=16``, ``k_max=20``, G-means ``alpha=0.0001``) are kept from the earlier
  release, so that an explicitly chosen ``hac`` or ``xmeans`` gives the numbers it gave
  before; section "Parameters and how they were chosen" lists what the study would pick.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AUTO",
    "Defaults",
    "DEFAULTS",
    "OPTION_RANGES",
    "HAC_METHODS",
    "GMEANS_CRITICAL_VALUES",
    "check_option",
    "check_k_range",
    "check_settings",
]


#: The default ``clustering`` option: the targets' human clusters when they carry
#: them, else the automatic clustering :data:`DEFAULTS` names.
AUTO = "auto"


@dataclass(frozen=True)
class Defaults:
    """Default ProbEval settings; ``clustering`` is the automatic one, used for raw answers without clusters.

    >>> DEFAULTS.clustering, DEFAULTS.gmeans_k_init, DEFAULTS.matching, DEFAULTS.embedder
    ('gmeans', 8, 'wordnet', 'minilm')
    >>> DEFAULTS.cosine_threshold, DEFAULTS.gp_threshold
    (0.6, 0.4)
    """

    clustering: str = "gmeans"
    matching: str = "wordnet"
    embedder: str = "minilm"
    hac_linkage: str = "complete"
    hac_threshold: float = 0.3
    xmeans_k_init: int = 16
    gmeans_k_init: int = 8
    k_max: int = 20
    gmeans_alpha: float = 0.0001
    cosine_threshold: float = 0.6
    gp_threshold: float = 0.4
    seed: int = 0


DEFAULTS = Defaults()


#: The linkage methods of scipy's hierarchical clustering that HAC accepts.
HAC_METHODS = ("single", "complete", "average", "weighted", "centroid", "median", "ward")

# Critical values of the Anderson-Darling statistic for normality with estimated mean
# and variance (Stephens 1974, case 3), plus the alpha = 0.0001 value used by G-means;
# their keys are the significance levels G-means accepts.
GMEANS_CRITICAL_VALUES: dict[float, float] = {
    0.15: 0.576,
    0.10: 0.656,
    0.05: 0.787,
    0.025: 0.918,
    0.01: 1.092,
    0.0001: 1.8692,
}


# Which clusterings/matchings read each option, and the values it accepts. Every
# constructor checks its options here, so that ProbEval, the command line and the
# ``evaluate`` module refuse the same values with the same message.
OPTION_RANGES: dict[str, tuple[str, str]] = {
    "threshold": ("cosine and gp matching", "a number in [0, 1]"),
    "distance_threshold": ("hac clustering", "a number in [0, 2] (cosine distance)"),
    "linkage": ("hac clustering", "one of single, complete, average, weighted, centroid, median, ward"),
    "k_init": ("xmeans and gmeans clustering", "an integer >= 1 and <= k_max"),
    "k_max": ("xmeans and gmeans clustering", "an integer >= 1"),
    "alpha": ("gmeans clustering", "one of 0.0001, 0.01, 0.025, 0.05, 0.1, 0.15 (a level in (0, 1))"),
    "seed": ("xmeans, gmeans and gp", "an integer in [0, 2**32 - 1]"),
}


def check_option(name: str, value: Any) -> Any:
    """``value`` if it is in the accepted range of option ``name``, else ValueError naming both.

    Numbers are returned as ``float`` or ``int`` as the option needs.

    >>> check_option("k_max", 20)
    20
    >>> check_option("threshold", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: threshold must be a number in [0, 1], got nan
    """
    if name not in OPTION_RANGES:
        raise KeyError(f"no range is defined for option {name!r}")
    accepted = OPTION_RANGES[name][1]
    problem = ValueError(f"{name} must be {accepted}, got {value!r}")
    if name in ("threshold", "distance_threshold"):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise problem
        number = float(value)
        high = 1.0 if name == "threshold" else 2.0
        if not 0.0 <= number <= high:  # False for NaN
            raise problem
        return number
    if name in ("k_init", "k_max", "seed"):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise problem
        number = int(value)
        if number < (0 if name == "seed" else 1) or (name == "seed" and number > 2**32 - 1):
            raise problem
        return number
    if name == "alpha":
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or float(value) not in GMEANS_CRITICAL_VALUES:
            raise problem
        return float(value)
    if not isinstance(value, str) or value not in HAC_METHODS:
        raise problem
    return value


def check_k_range(k_init: int, k_max: int) -> tuple[int, int]:
    """Both limits checked, and ``k_init <= k_max``.

    >>> check_k_range(2, 20)
    (2, 20)
    >>> check_k_range(5, 3)
    Traceback (most recent call last):
    ...
    ValueError: k_init must be an integer >= 1 and <= k_max, got k_init=5 with k_max=3
    """
    k_init, k_max = check_option("k_init", k_init), check_option("k_max", k_max)
    if k_init > k_max:
        raise ValueError(f"k_init must be {OPTION_RANGES['k_init'][1]}, got k_init={k_init} with k_max={k_max}")
    return k_init, k_max


def check_settings(clustering: str, matching: str, options: dict[str, Any]) -> None:
    """ValueError for an option given (not None) out of its range, or not read by the clustering and matching.

    >>> check_settings("hac", "wordnet", {"distance_threshold": 0.3, "k_max": None})
    >>> check_settings("hac", "wordnet", {"threshold": -5})
    Traceback (most recent call last):
    ...
    ValueError: threshold must be a number in [0, 1], got -5
    >>> check_settings("human", "wordnet", {"k_max": 10})
    Traceback (most recent call last):
    ...
    ValueError: k_max applies to xmeans and gmeans clustering only (got k_max=10 with clustering human, matching wordnet)
    >>> check_settings("auto", "wordnet", {"k_init": 4})
    Traceback (most recent call last):
    ...
    ValueError: k_init applies to xmeans and gmeans clustering only (got k_init=4 with clustering auto, matching wordnet); with clustering auto the targets decide the clustering, so name one (e.g. gmeans) to set its options
    """
    readers = {
        "threshold": {"cosine", "gp"},
        "distance_threshold": {"hac"},
        "linkage": {"hac"},
        "k_init": {"xmeans", "gmeans"},
        "k_max": {"xmeans", "gmeans"},
        "alpha": {"gmeans"},
    }
    for name, value in options.items():
        if value is not None:
            check_option(name, value)
    for name, value in options.items():
        if value is not None and not readers[name] & {clustering, matching}:
            hint = (
                f"; with clustering {AUTO} the targets decide the clustering, so name one (e.g. "
                f"{DEFAULTS.clustering}) to set its options"
                if clustering == AUTO
                else ""
            )
            raise ValueError(
                f"{name} applies to {OPTION_RANGES[name][0]} only "
                f"(got {name}={value!r} with clustering {clustering}, matching {matching}){hint}"
            )

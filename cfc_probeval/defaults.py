"""Default settings of ProbEval, in one place so the library, CLI, ``evaluate`` module and card agree.

With ``clustering="auto"`` (:data:`AUTO`) targets that carry human clusters are scored with them, and raw
answers without clusters are clustered with :data:`DEFAULTS`. The values come from the validation study
(``studies/reports/validation.md``, section "System level", paragraph "Automatic default", and "Matching
validity" for the thresholds) and the choice of the automatic clustering under its committed protocol
(``studies/reports/clusters.md``, ``studies/validation/protocol.toml``); no CFC test file is read to choose
them. docs/probeval.md, "Where each default comes from", gives each figure. Each clustering's other options
keep the earlier release's defaults, declared on its class in :mod:`cfc_probeval.clustering`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AUTO", "Defaults", "DEFAULTS"]


#: The default ``clustering`` option: the targets' human clusters when they carry
#: them, else the automatic clustering :data:`DEFAULTS` names.
AUTO = "auto"


@dataclass(frozen=True)
class Defaults:
    """Default ProbEval settings; ``clustering`` is the automatic one, used for raw answers without clusters.

    >>> DEFAULTS.clustering, DEFAULTS.matching, DEFAULTS.embedder
    ('gmeans', 'wordnet', 'minilm')
    >>> DEFAULTS.cosine_threshold, DEFAULTS.gp_threshold
    (0.6, 0.4)
    """

    clustering: str = "gmeans"
    matching: str = "wordnet"
    embedder: str = "minilm"
    cosine_threshold: float = 0.6
    gp_threshold: float = 0.4
    seed: int = 0


DEFAULTS = Defaults()

"""The ``probeval`` ``evaluate`` module folder (``probeval/probeval.py``), shipped in the package.

>>> PROBEVAL_CONFIGS[:4]
('default', 'auto', 'human', 'hac')
>>> config_settings("hac-cosine")
{'clustering': 'hac', 'matching': 'cosine'}
>>> config_settings("auto-cosine")
{'clustering': 'auto', 'matching': 'cosine'}
"""

from __future__ import annotations

from protoqa_core.citations import PROBEVAL_CITATION

# The module script imports the core through this package, so that evaluate's missing-dependency
# message names one package to install.
from protoqa_core.evaluate_modules import CheckedReferences, ModuleDescription, metric_info, per_question_values
from protoqa_core.io.readers import question_ids_for

from ..clustering import clustering_options, describe_option
from ..registry import MATCHINGS, clustering_choices

__all__ = [
    "PROBEVAL_CONFIGS",
    "CheckedReferences",
    "ModuleDescription",
    "metric_info",
    "PROBEVAL_CITATION",
    "config_settings",
    "clustering_inputs",
    "question_ids_for",
    "per_question_values",
]

_CHOICES = clustering_choices()

#: Configuration names of the ``probeval`` module: ``default`` (the same as ``auto``: the
#: references' human clusters when they carry them, else G-means), a clustering, or
#: ``<clustering>-<matching>``.
PROBEVAL_CONFIGS: tuple[str, ...] = ("default", *_CHOICES, *(f"{c}-{m}" for c in _CHOICES for m in MATCHINGS.names()))


def config_settings(config_name: str) -> dict[str, str]:
    """``clustering`` and ``matching`` named by a configuration such as ``gmeans`` or ``hac-cosine`` (none by ``default``).

    >>> config_settings("default")
    {}
    """
    if config_name not in PROBEVAL_CONFIGS:
        raise ValueError(
            f"unknown configuration {config_name!r}; use default, a clustering "
            f"({', '.join(_CHOICES)}) or clustering-matching, e.g. hac-cosine"
        )
    if config_name == "default":
        return {}
    clustering, _, matching = config_name.partition("-")
    return {"clustering": clustering, **({"matching": matching} if matching else {})}


def clustering_inputs(indent: str = "    ") -> str:
    """The module's inputs that are clustering options, one line each, read from the clusterings' declarations.

    >>> print(clustering_inputs(""))  # doctest: +ELLIPSIS
    linkage (`str`): HAC linkage method (default complete).
    distance_threshold (`float`): HAC cut, in cosine distance (default 0.3).
    ...
    alpha (`float`): G-means significance level (default 0.0001).
    init (`str`): G-means start of each K-means: ... (default kmeans++).
    """
    return "\n".join(
        f"{indent}{name} (`{owners[0][1].kind.__name__}`): {describe_option(name)}."
        for name, owners in clustering_options().items()
        if not owners[0][1].shared
    )

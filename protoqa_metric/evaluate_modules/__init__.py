"""The ``evaluate`` module folders shipped in the installed packages.

Each is a folder ``<name>/<name>.py``, as ``evaluate.load`` expects. A script is never named as a package: in a
Space it sits beside ``app.py``, first on ``sys.path``, and would be imported in place of the package it wraps.

>>> sorted(PROTOQA_CONFIGS)[:2]
['default', 'exact_match']
"""

from __future__ import annotations

from protoqa_core.citations import PROTOQA_CITATION

# The module script imports the core through this package, so that evaluate's missing-dependency
# message names one package to install.
from protoqa_core.evaluate_modules import (
    CheckedReferences,
    ModuleDescription,
    metric_info,
    per_question_values,
    stored_clusters,
)
from protoqa_core.io.readers import clusters_from_records, question_ids_for
from protoqa_core.io.records import Question
from protoqa_core.io.rows import raw_answer_counts
from protoqa_core.similarity import SIMILARITIES

__all__ = [
    "PROTOQA_CONFIGS",
    "CheckedReferences",
    "ModuleDescription",
    "metric_info",
    "stored_clusters",
    "PROTOQA_CITATION",
    "Question",
    "clusters_from_records",
    "question_ids_for",
    "raw_answer_counts",
    "per_question_values",
]

#: Configuration names of the ``protoqa`` module: ``default`` (WordNet) or a similarity.
PROTOQA_CONFIGS: tuple[str, ...] = ("default", *SIMILARITIES)

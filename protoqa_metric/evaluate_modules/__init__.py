"""The ``evaluate`` module folders shipped in the installed packages.

Each module is a folder ``<name>/<name>.py`` (the layout ``evaluate.load`` and the Hub
expect): ``protoqa`` here, ``probeval`` in ``cfc_probeval.evaluate_modules``. A module
script's name is never the name of a top-level package: in a Space the script sits
beside ``app.py``, whose folder comes first on ``sys.path``, so a script named
``protoqa_metric.py`` would be imported in place of the package it wraps.

>>> sorted(PROTOQA_CONFIGS)[:2]
['default', 'exact_match']
"""

from __future__ import annotations

# The module script imports the core through this package, so that evaluate's missing-dependency
# message names one package to install.
from protoqa_core.citations import PROTOQA_CITATION
from protoqa_core.readers import Question, clusters_from_records, question_ids_for
from protoqa_core.similarity import SIMILARITIES

__all__ = ["PROTOQA_CONFIGS", "PROTOQA_CITATION", "Question", "clusters_from_records", "question_ids_for"]

#: Configuration names of the ``protoqa`` module: ``default`` (WordNet) or a similarity.
PROTOQA_CONFIGS: tuple[str, ...] = ("default", *SIMILARITIES)

"""Deprecated: the ``cfc_probeval`` name of the ``probeval`` evaluate module, kept for one release.

``evaluate.load("cfc_probeval")`` from a checkout's root and
``evaluate_module_path("cfc_probeval")`` still load it, with a DeprecationWarning;
the numbers are the ``probeval`` module's. Use ``evaluate.load("probeval")`` or
``evaluate.load(cfc_probeval.evaluate_module_path())``.
"""

import warnings

import evaluate

from cfc_probeval.evaluate_modules.probeval import probeval as _current  # From: protoqa-eval[probeval]

_DEPRECATION = ('the evaluate module name "cfc_probeval" is deprecated and will be removed in the next release; '
                'use evaluate.load("probeval") or evaluate.load(cfc_probeval.evaluate_module_path())')


# A module, not the class: evaluate takes the first metric class it finds in this namespace.
class CfcProbeval(_current.Probeval):
    """The ``probeval`` module under its old name (deprecated)."""

    def _info(self) -> evaluate.MetricInfo:
        warnings.warn(_DEPRECATION, DeprecationWarning, stacklevel=2)
        return super()._info()

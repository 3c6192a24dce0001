"""Deprecated: the ``cfc_probeval`` name of the ``probeval`` evaluate module, kept for one release.

``evaluate.load("cfc_probeval")`` from a checkout's root and
``evaluate_module_path("cfc_probeval")`` still load it, with a DeprecationWarning;
the numbers are the ``probeval`` module's. Use ``evaluate.load("probeval")`` or
``evaluate.load(cfc_probeval.evaluate_module_path())``.
"""

from cfc_probeval.evaluate_modules.probeval import probeval as _current  # From: protoqa-eval[probeval]
from cfc_probeval.evaluate_modules import deprecated_metric_class  # From: protoqa-eval[probeval]

# evaluate takes the metric class defined in the module it loads: this one, under its old name.
CfcProbeval = deprecated_metric_class(
    _current.Probeval, "CfcProbeval", __name__,
    'the evaluate module name "cfc_probeval" is deprecated and will be removed in the next release; '
    'use evaluate.load("probeval") or evaluate.load(cfc_probeval.evaluate_module_path())')

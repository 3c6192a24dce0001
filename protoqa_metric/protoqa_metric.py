"""Deprecated: the ``protoqa_metric`` name of the ``protoqa`` evaluate module, kept for one release.

``evaluate.load("protoqa_metric")`` from a checkout's root and
``evaluate_module_path("protoqa_metric")`` still load it, with a DeprecationWarning;
the numbers are the ``protoqa`` module's. Use ``evaluate.load("protoqa")`` or
``evaluate.load(protoqa_metric.evaluate_module_path("protoqa"))``.
"""

import warnings

import evaluate

from protoqa_metric.evaluate_modules.protoqa import protoqa as _current  # From: protoqa-eval

_DEPRECATION = ('the evaluate module name "protoqa_metric" is deprecated and will be removed in the next release; '
                'use evaluate.load("protoqa") or evaluate.load(protoqa_metric.evaluate_module_path("protoqa"))')


# A module, not the class: evaluate takes the first metric class it finds in this namespace.
class ProtoqaMetric(_current.Protoqa):
    """The ``protoqa`` module under its old name (deprecated)."""

    def _info(self) -> evaluate.MetricInfo:
        warnings.warn(_DEPRECATION, DeprecationWarning, stacklevel=2)
        return super()._info()

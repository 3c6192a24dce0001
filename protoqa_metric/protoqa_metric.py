"""Deprecated: the ``protoqa_metric`` name of the ``protoqa`` evaluate module, kept for one release.

``evaluate.load("protoqa_metric")`` from a checkout's root and
``evaluate_module_path("protoqa_metric")`` still load it, with a DeprecationWarning;
the numbers are the ``protoqa`` module's. Use ``evaluate.load("protoqa")`` or
``evaluate.load(protoqa_metric.evaluate_module_path("protoqa"))``.
"""

from protoqa_metric.evaluate_modules.protoqa import protoqa as _current  # From: protoqa-eval
from protoqa_metric.evaluate_modules import deprecated_metric_class  # From: protoqa-eval

# evaluate takes the metric class defined in the module it loads: this one, under its old name.
ProtoqaMetric = deprecated_metric_class(
    _current.Protoqa, "ProtoqaMetric", __name__,
    'the evaluate module name "protoqa_metric" is deprecated and will be removed in the next release; '
    'use evaluate.load("protoqa") or evaluate.load(protoqa_metric.evaluate_module_path("protoqa"))')

"""The ``evaluate.MetricInfo`` of the distribution's ``evaluate`` modules, built one way for both.

>>> info = metric_info("d", "c", "i", features=[], code_url="https://example.org/code",
...                    paper_url="https://example.org/paper")  # doctest: +SKIP
>>> info.homepage  # doctest: +SKIP
'https://example.org/code'
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["metric_info"]


def metric_info(description: str, citation: str, inputs_description: str, *, features: Sequence[Any],
                code_url: str, paper_url: str) -> Any:
    """An ``evaluate.MetricInfo`` for a metric module: texts, accepted input features and links."""
    import evaluate  # the evaluate extra: only the module scripts call this

    return evaluate.MetricInfo(module_type="metric", description=description, citation=citation,
                               inputs_description=inputs_description, features=list(features),
                               homepage=code_url, codebase_urls=[code_url], reference_urls=[paper_url])

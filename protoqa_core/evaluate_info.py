"""What both ``evaluate`` modules declare about themselves, in one shape.

The two module scripts (``protoqa`` and ``probeval``) cannot import each other, and a Hub
folder holds a copy of one script alone, so what their ``_info`` blocks share lives here and
reaches the scripts through their packages' ``evaluate_modules``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ModuleDescription", "metric_info"]


@dataclass(frozen=True)
class ModuleDescription:
    """The texts and addresses of one ``evaluate`` module; ``homepage`` is also its code base.

    >>> ModuleDescription("ProtoQA ...", "@inproceedings{...}", "Args: ...", "https://x", "https://y").homepage
    'https://x'
    """

    description: str
    citation: str
    inputs_description: str
    homepage: str
    reference_url: str


def metric_info(module: ModuleDescription, features: Sequence[Any]) -> Any:
    """The ``evaluate.MetricInfo`` of a metric module: its description and the input ``features`` it accepts.

    >>> import datasets
    >>> info = metric_info(
    ...     ModuleDescription("d", "c", "i", "https://h", "https://r"),
    ...     [datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")})],
    ... )
    >>> info.module_type, info.codebase_urls, info.reference_urls
    ('metric', ['https://h'], ['https://r'])
    """
    import evaluate  # the module scripts' own dependency; the rest of the core does not need it

    return evaluate.MetricInfo(
        module_type="metric",
        description=module.description,
        citation=module.citation,
        inputs_description=module.inputs_description,
        features=list(features),
        homepage=module.homepage,
        codebase_urls=[module.homepage],
        reference_urls=[module.reference_url],
    )

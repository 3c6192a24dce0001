"""The packages the distribution installs, named once for the checks that walk or compare them."""

from __future__ import annotations

INSTALLED = (
    "protoqa_core",
    "protoqa_metric",
    "cfc_probeval",
    "protoqa_dataset",
    "protoqa_integrations",
    "protoqa_eval",
)
"""The installed top-level packages, layer by layer (``protoqa_eval`` carries the Inspect AI entry point)."""

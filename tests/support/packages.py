"""The packages the distribution installs, named once for the checks that walk or compare them, and how those
checks read an import."""

from __future__ import annotations

import ast

INSTALLED = (
    "protoqa_core",
    "protoqa_metric",
    "cfc_probeval",
    "protoqa_dataset",
    "protoqa_integrations",
    "protoqa_eval",
)
"""The installed top-level packages, layer by layer (``protoqa_eval`` carries the Inspect AI entry point)."""


def imported_from(node: ast.ImportFrom, package: str) -> str:
    """The dotted module ``from ... import`` names in ``node``, a relative one resolved against ``package`` (the
    package holding the importing module).

    >>> imported_from(ast.parse("from ..io import files").body[0], "protoqa_core.similarity")
    'protoqa_core.io'
    >>> imported_from(ast.parse("from . import text").body[0], "protoqa_core")
    'protoqa_core'
    """
    dotted = node.module or ""
    if node.level:
        parts = package.split(".")
        anchor = ".".join(parts[: len(parts) - node.level + 1])
        dotted = f"{anchor}.{dotted}" if dotted else anchor
    return dotted

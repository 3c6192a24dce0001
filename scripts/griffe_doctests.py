"""A griffe extension for the documentation site: docstrings as the code writes them, read as Markdown.

The docstrings hold doctest examples (``>>>`` lines and their output) in their prose, and name
objects with Sphinx roles (``:func:`name```). Markdown would read an example's ``x["a"][0]`` as a
link and print the roles as text, so before mkdocstrings renders a docstring this fences every
example as a ``pycon`` block and turns each role into plain code. mkdocs.yml loads it
(``extensions: [scripts/griffe_doctests.py]``); the code's docstrings stay as they are.

>>> markdown_docstring("Sum, see :func:`~m.add`.\\n\\n" + ">" * 3 + " add(1, 2)\\n3").split("\\n")
['Sum, see `add`.', '', '```pycon', '>>> add(1, 2)', '3', '```']
"""

from __future__ import annotations

import re
from typing import Any

import griffe

__all__ = ["DoctestBlocks", "markdown_docstring"]

# :func:`~pkg.mod.name` -> `name`, :data:`pkg.X` -> `pkg.X` (the tilde keeps the last part, as Sphinx does).
_ROLE = re.compile(r":(?:py:)?(?:func|data|class|mod|meth|attr|exc|obj|const):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    name = match.group(2)
    return f"`{name.rsplit('.', 1)[-1] if match.group(1) else name}`"


def markdown_docstring(text: str) -> str:
    """``text`` with each doctest example fenced as ``pycon`` and each Sphinx role made plain code.

    An example runs from a ``>>>`` line to the next blank line (its output included), as doctest
    reads it; examples already inside a fence are left alone.

    >>> markdown_docstring("no example here")
    'no example here'
    """
    out: list[str] = []
    in_fence = in_example = False
    indent = ""
    for line in text.split("\n"):
        stripped = line.strip()
        if in_example and not stripped:
            out.append(f"{indent}```")
            in_example = False
        if stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and not in_example and stripped.startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            in_example = True
        out.append(line if in_fence or in_example else _ROLE.sub(_role, line))
    if in_example:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Rewrites every docstring griffe loads with :func:`markdown_docstring`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called by griffe for each object it loads (module, class, function, attribute)."""
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)

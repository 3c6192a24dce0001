"""The Space's one kind of error: a problem to show in the page, not a crash.

>>> issubclass(ModelUnavailableError, DemoError)
True
"""

from __future__ import annotations

__all__ = ["DemoError", "ModelUnavailableError"]


class DemoError(Exception):
    """A problem to show in the page: bad input, missing data, no model."""


class ModelUnavailableError(DemoError):
    """No language model could be loaded."""

"""The documented path of :mod:`protoqa_core.io.ids`, where this module now lives."""

from protoqa_core.io.ids import *  # noqa: F403
from protoqa_core.io.ids import __all__  # noqa: F401

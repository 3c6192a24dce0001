"""The documented path of :mod:`protoqa_core.similarity.strings`, where this module now lives."""

from protoqa_core.similarity.strings import *  # noqa: F403
from protoqa_core.similarity.strings import __all__  # noqa: F401

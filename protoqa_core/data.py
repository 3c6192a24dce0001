"""The documented path of :mod:`protoqa_core.io.data`, where this module now lives."""

from protoqa_core.io.data import *  # noqa: F403
from protoqa_core.io.data import __all__  # noqa: F401

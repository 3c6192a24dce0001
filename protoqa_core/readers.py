"""The documented path of :mod:`protoqa_core.io.readers`, where this module now lives."""

from protoqa_core.io.readers import *  # noqa: F403
from protoqa_core.io.readers import __all__  # noqa: F401

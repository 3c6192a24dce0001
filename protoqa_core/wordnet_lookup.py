"""The documented path of :mod:`protoqa_core.wordnet.lookup`, where this module now lives."""

from protoqa_core.wordnet.lookup import *  # noqa: F403
from protoqa_core.wordnet.lookup import __all__  # noqa: F401

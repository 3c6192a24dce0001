"""The documented path of :mod:`protoqa_core.similarity.embedding`, where this module now lives."""

from protoqa_core.similarity.embedding import *  # noqa: F403
from protoqa_core.similarity.embedding import __all__  # noqa: F401

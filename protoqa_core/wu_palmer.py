"""The documented path of :mod:`protoqa_core.wordnet.wu_palmer` and of
:func:`~protoqa_core.wordnet.walk_file.prepare_wordnet`, where they now live."""

from protoqa_core.wordnet.walk_file import prepare_wordnet
from protoqa_core.wordnet.wu_palmer import *  # noqa: F403
from protoqa_core.wordnet.wu_palmer import __all__ as _wu_palmer_all

__all__ = [*_wu_palmer_all, "prepare_wordnet"]

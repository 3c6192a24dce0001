"""On/off switches read from the environment by one rule, the one ``huggingface_hub`` reads its own by: a
variable is on when set to ``1``, ``true``, ``yes`` or ``on`` in any case, and off otherwise (unset, empty,
``0``, ``false``, ``2``, ...). ``$PROTOQA_NO_CACHE``, ``$PROTOQA_EVAL_TRACEBACK`` and the Hub's offline mode
are all read so.

>>> is_true("Yes"), is_true("0"), is_true(None)
(True, False, False)
"""

from __future__ import annotations

import os
from typing import Optional

__all__ = ["TRUE_VALUES", "is_true", "env_flag"]

TRUE_VALUES = frozenset({"1", "TRUE", "YES", "ON"})
"""The values, upper-cased, that turn a switch on (``huggingface_hub.constants.ENV_VARS_TRUE_VALUES``)."""


def is_true(value: Optional[str]) -> bool:
    """Whether ``value`` (a variable's text, None when unset) turns a switch on.

    >>> [is_true(v) for v in ("1", "on", "TRUE", " 1", "false", "")]
    [True, True, True, False, False, False]
    """
    return value is not None and value.upper() in TRUE_VALUES


def env_flag(name: str) -> bool:
    """Whether environment variable ``name`` is on (:func:`is_true` of its value).

    >>> env_flag("PROTOQA_NO_SUCH_SWITCH")
    False
    """
    return is_true(os.environ.get(name))

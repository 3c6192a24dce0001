"""The package's settings read from the environment, each kind by one rule.

An on/off switch reads as ``huggingface_hub`` reads its own: on when set to ``1``, ``true``, ``yes`` or
``on`` in any case, off otherwise (unset, empty, ``0``, ``false``, ``2``, ...); ``$PROTOQA_NO_CACHE``,
``$PROTOQA_EVAL_TRACEBACK`` and the Hub's offline mode are all read so. A folder's name
(:func:`env_setting`) drops surrounding blanks, and a blank one counts as unset.

>>> is_true("Yes"), is_true("0"), is_true(None)
(True, False, False)
"""

from __future__ import annotations

import os
from typing import Optional

__all__ = ["TRUE_VALUES", "is_true", "env_flag", "env_setting"]

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


def env_setting(name: str) -> Optional[str]:
    """The text of environment variable ``name`` without surrounding blanks; None when it is unset or blank.

    >>> import os
    >>> os.environ["PROTOQA_EXAMPLE_DIR"] = "  /data  "
    >>> env_setting("PROTOQA_EXAMPLE_DIR"), env_setting("PROTOQA_NO_SUCH_SETTING")
    ('/data', None)
    >>> del os.environ["PROTOQA_EXAMPLE_DIR"]
    """
    return os.environ.get(name, "").strip() or None

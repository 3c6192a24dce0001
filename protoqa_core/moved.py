"""Old module names kept for one release after a module moved to another package.

An alias module calls :func:`alias_module`, which makes the old name refer to the moved
module itself (same objects, so ``isinstance`` checks and monkeypatching keep working)
and warns once with a DeprecationWarning naming the new place.

>>> import sys, types
>>> sys.modules["old_place"] = types.ModuleType("old_place")
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     alias_module("old_place", "protoqa_core.text")
>>> sys.modules["old_place"] is sys.modules["protoqa_core.text"], caught[0].category.__name__
(True, 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import sys
import warnings

__all__ = ["alias_module"]


def alias_module(old: str, new: str) -> None:
    """Make module name ``old`` refer to module ``new``, with a DeprecationWarning."""
    module = importlib.import_module(new)
    warnings.warn(f"{old} has moved to {new}; the old name will be removed in the next release",
                  DeprecationWarning, stacklevel=3)
    sys.modules[old] = module

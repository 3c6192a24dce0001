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
from typing import Any

__all__ = ["alias_module", "deprecated_metric_class"]


def alias_module(old: str, new: str) -> None:
    """Make module name ``old`` refer to module ``new``, with a DeprecationWarning."""
    module = importlib.import_module(new)
    warnings.warn(f"{old} has moved to {new}; the old name will be removed in the next release",
                  DeprecationWarning, stacklevel=3)
    sys.modules[old] = module


def deprecated_metric_class(current: type, name: str, module: str, message: str) -> type:
    """A subclass of an ``evaluate`` metric class that warns ``message`` when loaded, for an old module name.

    ``module`` is the old module's ``__name__``: ``evaluate`` takes the metric class defined
    in the module it loads.

    >>> class Base:
    ...     def _info(self):
    ...         return "info"
    >>> Old = deprecated_metric_class(Base, "Old", "old_module", "old_module is deprecated")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     Old()._info(), Old.__module__, str(caught[0].message)
    ('info', 'old_module', 'old_module is deprecated')
    """

    def _info(self: Any) -> Any:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return current._info(self)

    return type(name, (current,), {"_info": _info, "__module__": module,
                                   "__doc__": f"The {current.__name__} module under its old name (deprecated)."})

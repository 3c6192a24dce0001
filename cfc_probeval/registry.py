"""ProbEval's plug-ins by name: :data:`CLUSTERINGS`, :data:`MATCHINGS` and :data:`EMBEDDERS`.

Built-in plug-ins are named here by their place (``name: "module:attribute"``), imported when first asked
for, so listing the names imports none; others join with ``@CLUSTERINGS.register(name)``. The checks read
what a plug-in declares without importing the base classes, so that this module stays light.

>>> CLUSTERINGS.names(), MATCHINGS.names(), EMBEDDERS.names()
(('human', 'hac', 'xmeans', 'gmeans'), ('wordnet', 'cosine', 'gp'), ('st', 'fasttext', 'char-ngrams'))
>>> CLUSTERINGS.place("gmeans")
'cfc_probeval.clustering:GMeansClusterer'
>>> clustering_choices()
('auto', 'human', 'hac', 'xmeans', 'gmeans')
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from protoqa_core.options import Option
from protoqa_core.registry import Registry

from .defaults import AUTO

__all__ = ["CLUSTERINGS", "MATCHINGS", "EMBEDDERS", "HUMAN", "clustering_choices"]

HUMAN = None
"""The ``human`` clustering: the targets' own clusters, so no clusterer."""


def _defines(plugin: type, method: str) -> bool:
    """Whether ``plugin`` defines ``method`` below the base class that first declares it."""
    owners = [c for c in getattr(plugin, "__mro__", ()) if method in vars(c)]
    return len(owners) >= 2


def _check_clustering(name: str, clustering: Any) -> None:
    """A clustering is :data:`HUMAN` or a concrete class whose declared options are :class:`Option` objects."""
    if clustering is None:
        return
    if not isinstance(clustering, type) or inspect.isabstract(clustering):
        missing = ", ".join(sorted(getattr(clustering, "__abstractmethods__", ()))) or "a class"
        raise TypeError(
            f"clustering {name!r}: {getattr(clustering, '__qualname__', clustering)} is abstract ({missing})"
        )
    for option in getattr(clustering, "options", ()):
        if not isinstance(option, Option):
            raise TypeError(
                f"clustering {name!r}: {clustering.__qualname__} declares an option that is not an Option: {option!r}"
            )


def _check_builder(kind: str, method: str, name: str, plugin: Any) -> None:
    """A plug-in of ``kind`` builds itself with its class method ``method`` (:data:`MATCHINGS`, :data:`EMBEDDERS`)."""
    if not _defines(plugin, method):
        raise TypeError(f"{kind} {name!r}: {plugin.__qualname__} defines no {method}")


CLUSTERINGS: Registry[Any] = Registry(
    "clustering",
    plugins={
        "human": f"{__name__}:HUMAN",
        "hac": "cfc_probeval.clustering:HACClusterer",
        "xmeans": "cfc_probeval.clustering:XMeansClusterer",
        "gmeans": "cfc_probeval.clustering:GMeansClusterer",
    },
    check=_check_clustering,
)
"""Ground-truth clusterings by name: ``human`` (the data's human clusters, no clusterer) and the
automatic ones, each a :class:`~cfc_probeval.clustering.Clusterer` class with its declared options."""


def clustering_choices() -> tuple[str, ...]:
    """Every ``clustering`` setting: ``auto`` (the default), ``human`` and each automatic clustering
    registered so far (a registry grows when code registers its own)."""
    return (AUTO, *CLUSTERINGS.names())


MATCHINGS: Registry[Any] = Registry(
    "matching",
    plugins={
        "wordnet": "cfc_probeval.matching:WordNetMatcher",
        "cosine": "cfc_probeval.matching:CosineMatcher",
        "gp": "cfc_probeval.matching:GPMatcher",
    },
    check=functools.partial(_check_builder, "matching", "from_options"),
)
"""Matchings by name, each a :class:`~cfc_probeval.matching.Matcher` class."""

EMBEDDERS: Registry[Any] = Registry(
    "embedder",
    plugins={
        "st": "cfc_probeval.embedders:SentenceTransformerEmbedder",
        "fasttext": "cfc_probeval.embedders:FastTextEmbedder",
        "char-ngrams": "cfc_probeval.embedders:CharNgramEmbedder",
    },
    check=functools.partial(_check_builder, "embedder", "from_spec"),
)
"""Embedder families by spec prefix, each an :class:`~cfc_probeval.embedders.Embedder` class built by
its ``from_spec``."""

"""ProbEval's automatic clusters of a question, kept in the user's cache once computed.

They depend on nothing a system gives, so every later system or run reads them back, bit for bit (JSON
numbers read back exactly). The key holds all that can change them; a clustering or embedder defined
outside this package is never cached, its options may not say all that changes it (docs/probeval.md,
"Automatic clusters are kept").

>>> from cfc_probeval.clustering import HACClusterer
>>> from cfc_probeval.embedders import CharNgramEmbedder
>>> key = cluster_cache_key("q1", [("dog", 2.0)], HACClusterer(), CharNgramEmbedder())
>>> '"question": "q1"' in key
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

from protoqa_core.io.cache_files import CacheFolder

from .results import AnswerCluster

if TYPE_CHECKING:
    from .clustering import Clusterer
    from .embedders import Embedder

__all__ = ["CLUSTER_CACHE", "cluster_cache_key", "load_clusters", "store_clusters"]

CLUSTER_CACHE = CacheFolder("probeval_clusters")
"""The folder of the kept clusters."""
_FORMAT = 1
_BUILT_IN_CLUSTERINGS = "cfc_probeval.clustering"


def cluster_cache_key(
    question_id: str, answers: Sequence[tuple[str, float]], clusterer: Clusterer, embedder: Embedder
) -> Optional[str]:
    """The key of a question's automatic clusters (``answers`` with their counts, in clustering order), or None
    when they are not to be cached."""
    identity = embedder.cache_identity()
    if identity is None or type(clusterer).__module__ != _BUILT_IN_CLUSTERINGS:
        return None
    from protoqa_core import __version__

    return json.dumps(
        {
            "kind": "probeval-clusters",
            "format": _FORMAT,
            "version": __version__,
            "clustering": clusterer.name,
            "params": clusterer.params(),
            "embedder": identity,
            "question": question_id,
            "answers": [[a, float(n)] for a, n in answers],
        },
        ensure_ascii=False,
        sort_keys=True,
    )


def load_clusters(key: str) -> Optional[tuple[AnswerCluster, ...]]:
    """The clusters kept for ``key``, or None (not kept, caching off, or an entry that does not read back).

    >>> load_clusters('{"kind": "nothing kept"}') is None
    True
    """
    body = CLUSTER_CACHE.read(key)
    if body is None:
        return None
    try:
        rows = json.loads(body.decode("utf-8"))
        return tuple(AnswerCluster(str(i), tuple(map(str, a)), float(n), str(r)) for i, a, n, r in rows)
    except (ValueError, TypeError, UnicodeDecodeError):
        # Its checksum held, so it was written so: by another format of this file. Rebuilt.
        return None


def store_clusters(key: str, clusters: Sequence[AnswerCluster]) -> None:
    """Keep ``clusters`` for ``key``."""
    rows = [[c.id, list(c.answers), c.count, c.representative] for c in clusters]
    CLUSTER_CACHE.write(key, json.dumps(rows, ensure_ascii=False).encode("utf-8"))

"""The one check of ProbEval's options, shared by :class:`~cfc_probeval.ProbEval`, ``probeval`` and the
``evaluate`` module, so that each refuses a value with the same one-line error naming the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Union

from protoqa_core.options import Option

from .clustering import clustering_options
from .defaults import AUTO, DEFAULTS
from .options import SEED, THRESHOLD
from .registry import CLUSTERINGS, MATCHINGS, clustering_choices

if TYPE_CHECKING:
    from .clustering import Clusterer
    from .matching import Matcher

__all__ = ["check_settings"]


def check_settings(
    clustering: Union[str, Clusterer], matching: Union[str, Matcher], options: Mapping[str, Any]
) -> None:
    """Refuse the ProbEval ``options`` (None: unset) that the clustering and matching cannot take.

    ValueError for an unknown clustering, a value out of its declared range or rules, or an option the chosen
    clustering and matching do not read; TypeError for a name nothing declares.

    >>> check_settings("hac", "wordnet", {"distance_threshold": 0.3, "k_max": None})
    >>> check_settings("hac", "wordnet", {"threshold": -5})
    Traceback (most recent call last):
    ...
    ValueError: threshold must be a number in [0, 1], got -5
    >>> check_settings("human", "wordnet", {"k_max": 10})
    Traceback (most recent call last):
    ...
    ValueError: k_max applies to xmeans and gmeans clustering only (got k_max=10 with clustering human, matching wordnet)
    >>> check_settings("auto", "wordnet", {"k_init": 4})
    Traceback (most recent call last):
    ...
    ValueError: k_init applies to xmeans and gmeans clustering only (got k_init=4 with clustering auto, matching wordnet); with clustering auto the targets decide the clustering, so name one (e.g. gmeans) to set its options
    """
    if isinstance(clustering, str) and clustering != AUTO and clustering not in CLUSTERINGS:
        # the registry now, with any added since
        raise ValueError(f"unknown clustering {clustering!r}; choose one of {', '.join(clustering_choices())}")
    declared = clustering_options()
    known: dict[str, Option] = {
        THRESHOLD.name: THRESHOLD,
        SEED.name: SEED,
        **{name: owners[0][1] for name, owners in declared.items()},
    }
    for name, value in options.items():
        if name not in known:
            raise TypeError(f"unknown option {name!r}; the options are {', '.join(known)}")
        if value is not None:
            known[name].check(value)
    clustering_class = (
        type(clustering)
        if not isinstance(clustering, str)
        else (None if clustering == AUTO else CLUSTERINGS.get(clustering))
    )
    matching_class = MATCHINGS.get(matching) if isinstance(matching, str) else type(matching)
    read = {o.name for group in (getattr(clustering_class, "options", ()), matching_class.options) for o in group}
    for name, value in options.items():
        if value is not None and not known[name].shared and name not in read:
            raise ValueError(_not_read(name, value, clustering, matching, declared))
    if isinstance(clustering, str) and clustering_class is not None:
        clustering_class.option_values(options)


def _not_read(
    name: str, value: Any, clustering: Any, matching: Any, declared: Mapping[str, tuple[tuple[str, Option], ...]]
) -> str:
    """The error for option ``name`` given to a clustering and matching that do not read it."""
    readers = []
    if name in declared:
        readers.append(f"{' and '.join(c for c, _ in declared[name])} clustering")
    matchings = [m for m in MATCHINGS if any(o.name == name for o in MATCHINGS[m].options)]
    if matchings:
        readers.append(f"{' and '.join(matchings)} matching")
    clustering_name = clustering if isinstance(clustering, str) else clustering.name
    matching_name = matching if isinstance(matching, str) else matching.name
    hint = (
        f"; with clustering {AUTO} the targets decide the clustering, so name one (e.g. "
        f"{DEFAULTS.clustering}) to set its options"
        if clustering == AUTO
        else ""
    )
    return (
        f"{name} applies to {' and '.join(readers)} only "
        f"(got {name}={value!r} with clustering {clustering_name}, matching {matching_name}){hint}"
    )

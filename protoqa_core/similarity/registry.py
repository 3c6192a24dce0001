"""The similarities by name: :data:`SIMILARITIES`.

A new similarity is a :class:`Similarity` in its own module and one line in the table, whose
module is imported only when the similarity is first asked for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Optional

from ..options import Option
from ..registry import Registry

__all__ = [
    "ABOVE_HALF",
    "Similarity",
    "SIMILARITIES",
    "get_similarity",
    "DECLARING_OPTIONS",
    "similarity_options",
    "check_similarity_options",
]

ABOVE_HALF = math.nextafter(0.5, 1.0)
"""The least float above 1/2. A rounded similarity counts 1 exactly when its value reaches it
(half-to-even rounding sends 0.5 to 0), so the metric asks :meth:`Similarity.reaches` this level."""


@dataclass(frozen=True)
class Similarity:
    """A named similarity function and what the metric may do with it, every property by name.

    ``best_of`` must equal the maximum of ``function`` over the answers and ``reaches_of``
    ``best(...) >= level``: they let a similarity skip work. ``per_question(**options)`` makes a
    scorer that scores per question from all its clusters (``function`` is then never called);
    ``options`` are the keywords it takes (:func:`check_similarity_options`).
    """

    name: str
    function: Callable[..., float]
    _: KW_ONLY
    description: str
    rounded: bool = False
    uses_wordnet: bool = False
    best_of: Optional[Callable[..., float]] = None
    reaches_of: Optional[Callable[..., bool]] = None
    per_question: Optional[Callable[..., Any]] = None
    needs_question_text: bool = False
    options: tuple[Option, ...] = ()

    def best(self, prediction: str, answers: Sequence[str], **options: bool) -> float:
        """The best similarity of ``prediction`` to any of ``answers`` (0 for none).

        >>> get_similarity("exact_match").best("cat", ["dog", "cat"])
        1.0
        """
        if self.best_of is not None:
            return self.best_of(prediction, answers, **options)
        best = 0.0
        for answer in answers:
            value = self.function(prediction, answer, **options)
            if value > best:
                best = value
                if best >= 1.0:
                    break
        return best

    def reaches(self, prediction: str, answers: Sequence[str], level: float, **options: bool) -> bool:
        """Whether the best similarity of ``prediction`` to ``answers`` is at least ``level``.

        >>> get_similarity("wordnet_wup").reaches("dog", ["cat", "red car"], ABOVE_HALF)
        True
        """
        if self.reaches_of is not None:
            return self.reaches_of(prediction, answers, level, **options)
        return self.best(prediction, answers, **options) >= level


def _named_as_registered(name: str, plugin: Similarity) -> None:
    if plugin.name != name:
        raise ValueError(f"the similarity {plugin.name!r} is registered under another name, {name!r}")


SIMILARITIES: Registry[Similarity] = Registry(
    "similarity",
    plugins={
        "exact_match": "protoqa_core.similarity.exact:EXACT_MATCH",
        "wordnet": "protoqa_core.similarity.wordnet:WORDNET",
        "wordnet_wup": "protoqa_core.similarity.wordnet_wup:WORDNET_WUP",
        "lcs": "protoqa_core.similarity.strings:LCS",
        "longest_common_substring": "protoqa_core.similarity.strings:LONGEST_COMMON_SUBSTRING",
        "jaro_winkler": "protoqa_core.similarity.strings:JARO_WINKLER",
        "roberta": "protoqa_core.similarity.roberta_plugin:ROBERTA",
    },
    check=_named_as_registered,
)
"""The similarities by name, in the order every choice list shows them."""


def get_similarity(name: str) -> Similarity:
    """Look up a similarity by name (``exact_match``, ``wordnet``, ``wordnet_wup``, ``lcs``,
    ``longest_common_substring``, ``jaro_winkler``, ``roberta``).

    >>> get_similarity("wordnet").rounded
    True
    >>> get_similarity("wordnet_wu")
    Traceback (most recent call last):
    ...
    ValueError: unknown similarity 'wordnet_wu'; choose one of: exact_match, wordnet, wordnet_wup, lcs, longest_common_substring, jaro_winkler, roberta
    """
    return SIMILARITIES.get(name)


DECLARING_OPTIONS: tuple[str, ...] = ("roberta",)
"""The built-in similarities that declare options, each in a module that loads no scorer. Every
command line reads their declarations for its flags; the other built-ins declare none, so that
listing the flags loads none of their modules (an exact-match run loads no WordNet)."""


def similarity_options() -> dict[str, tuple[Option, tuple[str, ...]]]:
    """Every option a similarity declares, by name: its declaration and the similarities declaring it.

    Reads :data:`DECLARING_OPTIONS` and the similarities already loaded, so it loads no other built-in one.

    >>> {name: owners for name, (_, owners) in similarity_options().items()}
    {'encoder': ('roberta',), 'device': ('roberta',), 'length_scale': ('roberta',)}
    """
    found: dict[str, tuple[Option, tuple[str, ...]]] = {}
    for name in SIMILARITIES:
        if name not in DECLARING_OPTIONS and not SIMILARITIES.is_loaded(name):
            continue
        for option in SIMILARITIES[name].options:
            first, owners = found.get(option.name, (option, ()))
            found[option.name] = (first, (*owners, name))
    return found


def check_similarity_options(similarity: Similarity, given: Mapping[str, Any]) -> dict[str, Any]:
    """The options ``given`` (None: not given) that ``similarity`` declares, checked against their declarations.

    A shared option (``device``) is passed on where declared and never refused.

    >>> check_similarity_options(get_similarity("exact_match"), {"device": "cuda", "encoder": None})
    {}
    >>> check_similarity_options(get_similarity("wordnet"), {"length_scale": 2.0})
    Traceback (most recent call last):
    ...
    ValueError: a length scale is used by the roberta similarity only, not by 'wordnet'
    """
    declared = {option.name: option for option in similarity.options}
    for name, value in given.items():
        if value is None or name in declared:
            continue
        known = similarity_options()
        if name not in known:
            raise ValueError(f"no similarity takes an option {name!r}; the options are: {', '.join(known)}")
        option, owners = known[name]
        if not option.shared:
            what = name.replace("_", " ")
            article = "an" if what[0] in "aeiou" else "a"
            raise ValueError(
                f"{article} {what} is used by the {' or '.join(owners)} similarity only, not by {similarity.name!r}"
            )
    return {name: option.check(given[name]) for name, option in declared.items() if given.get(name) is not None}

"""Reproducibility signatures, in the spirit of sacrebleu's.

A signature is a short ``key:value|key:value`` string printed with every result, so
that two reported numbers can be checked to come from the same settings.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["make_signature"]


def make_signature(
    similarity: str,
    metrics: str,
    missing: str,
    num_questions: int,
    all_stopword_match: Optional[bool] = None,
    approximated: int = 0,
    uncounted: int = 0,
) -> str:
    """Build the signature of a ProtoQA evaluation.

    The WordNet version is included only for WordNet similarities (loading it is
    what they need anyway). ``approx:N`` appears only when ``N > 0`` similarity
    entries were lower bounds under the long-string rule (see
    :mod:`protoqa_core.similarity`), so that such a result is never mistaken for
    an exact one. ``uncounted:N`` appears only when ``N > 0`` questions had no crowd
    counts for the ``roberta`` similarity to train on with repetition (each string
    then counts once).

    >>> make_signature("exact_match", "standard", "zero", 52)  # doctest: +ELLIPSIS
    'sim:exact_match|metrics:standard|missing:zero|n:52|version:...'
    """
    from . import __version__

    parts = [f"sim:{similarity}"]
    if all_stopword_match is not None:
        parts.append(f"stop:{'match' if all_stopword_match else 'zero'}")
    parts += [f"metrics:{metrics}", f"missing:{missing}", f"n:{num_questions}"]
    if all_stopword_match is not None:
        from .wordnet.lookup import wordnet_version

        parts.append(f"wordnet:{wordnet_version()}")
    if approximated:
        parts.append(f"approx:{approximated}")
    if uncounted:
        parts.append(f"uncounted:{uncounted}")
    parts.append(f"version:{__version__}")
    return "|".join(parts)

"""A model's answers to one question: samples counted and ranked by frequency, or a stored ranked list.

>>> answers_from_samples(["dog", "Dog.", "cat"], "test").ranked
('dog', 'cat')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Optional

from protoqa_core.ranking import answer_frequencies, rank_by_frequency
from protoqa_integrations.generation.prompts import clean_answer

__all__ = ["Answers", "answers_from_samples", "answers_from_ranked_list"]


@dataclass(frozen=True)
class Answers:
    """A model's answers to one question.

    Attributes:
        samples: answer -> how often it was sampled (``""``: a sample with no answer); sampled
            answers are normalized and counted by :func:`protoqa_core.ranking.answer_frequencies`.
        ranked: the ranked answer list that ProtoQA scores.
        origin: where the answers come from, for the page.
        counted: whether ``samples`` are real sample frequencies (False for stored ranked
            lists, where each answer counts once).
    """

    samples: Mapping[str, int]
    ranked: tuple[str, ...]
    origin: str
    counted: bool = True

    @property
    def num_samples(self) -> int:
        """How many samples there are in all.

        >>> answers_from_samples(["a", "a", "b"], "test").num_samples
        3
        """
        return sum(self.samples.values())


def answers_from_samples(samples: Iterable[str], origin: str, eos_token: Optional[str] = None) -> Answers:
    """Answers from sampled texts: each cut at its first end of sentence, counted and ranked by frequency.

    Counting and ranking are :func:`protoqa_core.ranking.answer_frequencies` and
    :func:`~protoqa_core.ranking.rank_by_frequency`, as everywhere in the project.

    >>> a = answers_from_samples(["Dog. Big", "cat", "dog<|endoftext|>", ""], "test", "<|endoftext|>")
    >>> a.ranked, dict(a.samples)
    (('dog', 'cat'), {'dog': 2, 'cat': 1, '': 1})
    """
    counts = answer_frequencies([clean_answer(s, eos_token=eos_token) for s in samples])
    return Answers(counts, tuple(rank_by_frequency(counts)), origin, True)


def answers_from_ranked_list(ranked: Sequence[str], origin: str) -> Answers:
    """Answers from a stored ranked list: scored as given, each distinct answer one sample for ProbEval.

    >>> answers_from_ranked_list(["age", "name", "age"], "stored").samples
    {'age': 1, 'name': 1}
    """
    return Answers(dict.fromkeys(ranked, 1), tuple(ranked), origin, False)

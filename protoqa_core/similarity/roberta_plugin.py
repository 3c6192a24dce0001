"""The ``roberta`` similarity as the registry lists it: what it is and the options it takes.

This module is light, so that every ``--help`` and every option check reads the declarations
without loading the scorer (:class:`~protoqa_core.similarity.roberta.RobertaSimilarity`, numpy
and the encoder's runtime), which is imported when a scorer is first built.

>>> ROBERTA.per_question is not None, [option.flag for option in ROBERTA.options]
(True, ['--encoder', '--device', '--length-scale'])
"""

from __future__ import annotations

from typing import Any

from ..options import Option
from .registry import Similarity

__all__ = ["ENCODER", "DEVICE", "LENGTH_SCALE", "ROBERTA"]

ENCODER = Option(
    "encoder",
    str,
    None,
    "the encoder, a Hugging Face Hub id or a local folder (default roberta-base)",
    accepts="a Hugging Face Hub id or a local folder",
    metavar="HUB_ID|FOLDER",
)
"""The encoder (default :data:`~protoqa_core.similarity.roberta.DEFAULT_ENCODER`); a missing one is an error."""

DEVICE = Option(
    "device", str, "cpu", "where the encoder runs (default cpu)", accepts="a device name such as cpu", shared=True
)
"""Where the encoder runs; a similarity without an encoder ignores it."""

LENGTH_SCALE = Option(
    "length_scale",
    object,
    None,
    "the RBF length-scale rule: median*0.5 (default), median*<factor>, a positive number (1: the papers' code) or fit",
    metavar="RULE",
)
"""The RBF length-scale rule, checked by the scorer
(:func:`~protoqa_core.similarity.gaussian_process.length_scale_rule`)."""


def _scored_per_question(prediction: str, answer: str) -> float:
    raise ValueError(
        "this similarity is scored per question, from the question and all its clusters, not per string pair"
    )


def _build(**options: Any) -> Any:
    from .roberta import RobertaSimilarity

    return RobertaSimilarity(**options)


ROBERTA = Similarity(
    "roberta",
    _scored_per_question,
    description="the ProtoQA paper's RoBERTa similarity: contextual vectors, a Gaussian process per cluster",
    per_question=_build,
    needs_question_text=True,
    options=(ENCODER, DEVICE, LENGTH_SCALE),
)
"""The ``roberta`` similarity of :data:`~protoqa_core.similarity.SIMILARITIES`."""

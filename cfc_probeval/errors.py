"""The warning category of ProbEval, and the input error shared by the whole project (``protoqa_core``)."""

from __future__ import annotations

from protoqa_core.io.files import ProtoQAWarning

__all__ = ["ProbEvalWarning", "ScoreMeaningWarning"]


class ProbEvalWarning(ProtoQAWarning):
    """Input that ProbEval handled in a way the user should know about (empty samples, skipped questions)."""


class ScoreMeaningWarning(ProbEvalWarning):
    """Input that changes what a score means (questions made up with wrong answers): never silenced by ``--quiet``."""

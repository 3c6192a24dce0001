"""Trainer hooks (:mod:`.hooks`): what both hooks share, sampling and scoring answers (:mod:`.samples`),
and the evaluation callback's work (:mod:`.callback`)."""

"""Validation of ProbEval against human judgment, and a leaderboard with confidence intervals.

* :mod:`~studies.validation.sampling`: answer sets drawn around a model's answers
  (centered sampling) and three error types, with their gold matching;
* :mod:`~studies.validation.study`: the agreement study (Spearman correlation of
  automatic ProbEval settings and the ProtoQA score with the gold KL), run in steps;
  :mod:`~studies.validation.design` (seeds, grid, dev sets, settings),
  :mod:`~studies.validation.questions` (one question's sets, gold KLs and scores) and
  :mod:`~studies.validation.tuning` (the choice of the automatic settings' parameters) serve it;
* :mod:`~studies.validation.matching_study`: every matcher against the annotators'
  assignments of ProtoQA dev GPT-2 samples (precision, recall, F1, thresholds by F1);
* :mod:`~studies.validation.systems`: agreement with the human clusters at the system
  level (nine CFC test systems): the shipped automatic default and levers explored on dev pools;
* :mod:`~studies.validation.cluster_agreement`: the choice of the automatic clustering under
  ``protocol.toml``, with :mod:`~studies.validation.criteria` (the dev criteria, paired
  differences and the non-inferiority rule) and :mod:`~studies.validation.panel` (a dev panel
  of systems whose order is known by construction);
* :mod:`~studies.validation.stats`: folds, bootstrap intervals over questions;
* :mod:`~studies.validation.leaderboard`: every prediction file of the shared data
  under ProbEval and the ProtoQA metric, with bootstrap intervals, and
  :func:`compare_probeval` for two systems;
* :mod:`~studies.validation.report`: ``studies/reports/validation.{json,md}`` and plots
  (:mod:`~studies.validation.system_report` its system-level section);
  :mod:`~studies.validation.leaderboard_report`: ``studies/reports/leaderboard.{json,md}``.

Command line: ``python -m studies.validation {study,leaderboard,clusters,all}``.

>>> from studies.validation import run_study, write_study  # doctest: +SKIP
>>> write_study(run_study("../shared/data"), Path("studies/reports"))  # doctest: +SKIP
"""

from __future__ import annotations

from .leaderboard import BOARDS, Board, Entry, compare_probeval, rank_by_frequency, run_leaderboard
from .leaderboard_report import leaderboard_markdown, write_leaderboard
from .matching_study import MATCHERS, run_matching_study
from .report import best_automatic, study_markdown, validation_table, write_study
from .sampling import (
    SAMPLINGS,
    AnswerSet,
    QuestionPool,
    build_pools,
    centered_distribution,
    draw_answer_sets,
    missing_answers_distribution,
    read_annotations,
    wrong_ranking_distribution,
    wrong_score_distribution,
)
from .study import (
    BASELINE,
    DEV_SETS,
    PAPER_FIGURES,
    Correlation,
    Grid,
    Setting,
    StudyResult,
    gold_kl,
    mean_spearman,
    run_study,
)
from .system_study import run_system_study
from .systems import Candidate

__all__ = [
    "SAMPLINGS",
    "AnswerSet",
    "QuestionPool",
    "read_annotations",
    "build_pools",
    "centered_distribution",
    "missing_answers_distribution",
    "wrong_ranking_distribution",
    "wrong_score_distribution",
    "draw_answer_sets",
    "BASELINE",
    "DEV_SETS",
    "PAPER_FIGURES",
    "Correlation",
    "Grid",
    "Setting",
    "StudyResult",
    "gold_kl",
    "mean_spearman",
    "run_study",
    "BOARDS",
    "Board",
    "Entry",
    "compare_probeval",
    "rank_by_frequency",
    "run_leaderboard",
    "write_study",
    "write_leaderboard",
    "study_markdown",
    "leaderboard_markdown",
    "best_automatic",
    "validation_table",
    "MATCHERS",
    "run_matching_study",
    "Candidate",
    "run_system_study",
]

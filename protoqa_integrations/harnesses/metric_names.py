"""The names every harness gives the scores: one short name per score, whole in an 80-column summary.

The lm-evaluation-harness tasks, the lighteval tasks and the Inspect tasks all report a question's
scores (:func:`~protoqa_integrations.harnesses.task_functions.process_results`) under these names:
``KL`` (ProbEval's KL divergence, lower is better) first, then ``wn_`` (WordNet similarity) and ``em_``
(exact match) with ``ans@k`` (Max Answers@k) and ``inc@k`` (Max Incorrect@k), and ``collapsed`` (the
share of questions whose samples collapsed to one answer). ``KL`` is upper case because lm-eval's
printed table sorts a task's metrics by name: an upper-case name sorts before every lower-case one,
so ProbEval's KL heads the table there as it does in the other harnesses' summaries.

>>> METRIC_NAMES[:3], SCORE_NAMES["exact_match_max_incorrect@5"]
(('KL', 'wn_ans@1', 'wn_ans@3'), 'em_inc@5')
>>> sorted(METRIC_NAMES)[0], max(len(name) for name in METRIC_NAMES)
('KL', 9)
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["SCORE_NAMES", "METRIC_NAMES", "HIGHER_IS_BETTER", "KL_NAME", "COLLAPSED_NAME"]

KL_NAME = "KL"
COLLAPSED_NAME = "collapsed"

SCORE_NAMES: Mapping[str, str] = {
    "probeval_kl": KL_NAME,
    **{
        f"{similarity}_max_{kind}@{k}": f"{short}_{kind[:3]}@{k}"
        for similarity, short in (("wordnet", "wn"), ("exact_match", "em"))
        for kind, cutoffs in (("answers", (1, 3, 5, 10)), ("incorrect", (1, 3, 5)))
        for k in cutoffs
    },
    COLLAPSED_NAME: COLLAPSED_NAME,
}
"""Each score's long name (the similarity and ``protoqa-eval``'s metric id, ``probeval_kl`` for the KL) -> the
short name the harnesses report it under, in the order they report them."""

METRIC_NAMES: tuple[str, ...] = tuple(SCORE_NAMES.values())
"""The short names, in report order: ``KL``, the WordNet scores, the exact-match scores, ``collapsed``."""

HIGHER_IS_BETTER: Mapping[str, bool] = {name: name not in (KL_NAME, COLLAPSED_NAME) for name in METRIC_NAMES}
"""Whether a higher value of a score is better: all but ``KL`` and ``collapsed``."""

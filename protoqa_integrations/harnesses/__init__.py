"""Evaluation harnesses: lm-evaluation-harness tasks (:mod:`.lm_eval_tasks`), lighteval custom tasks
(:mod:`.lighteval_tasks`), the data, prompts and per-question scores both share (:mod:`.task_functions`),
the short names every harness reports the scores under (:mod:`.metric_names`),
and the readers of their outputs (:mod:`.outputs`)."""

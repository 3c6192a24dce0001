"""Evaluation harnesses: lm-evaluation-harness tasks (:mod:`.lm_eval_tasks`), lighteval custom tasks
(:mod:`.lighteval_tasks`), the data, prompts and per-question scores both share (:mod:`.task_functions`),
and the readers of their outputs (:mod:`.outputs`)."""

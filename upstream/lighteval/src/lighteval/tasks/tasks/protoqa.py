"""
name:
ProtoQA and CFC

dataset:
iesl/protoqa-data (ProtoQA), qxc101/PROBEVAL_CFC (CFC), read by the protoqa-eval package

abstract:
ProtoQA asks open commonsense questions with many right answers, some more common than
others; 100 people's answers are grouped into clusters with their counts. A model is sampled
300 times per question, its answers ranked by frequency and scored by Max Answers@k and Max
Incorrect@k under WordNet and exact-match similarity. CFC (commonsense frame completion)
compares the distribution of 100 sampled answers per question with the human one by
ProbEval's KL divergence (lower is better).

languages:
english

tags:
commonsense, generation, qa

paper:
https://arxiv.org/abs/2005.00771
https://arxiv.org/abs/2406.04145
"""

import importlib.util


# The tasks (their prompts, the sampled answers' cleaning, the scores and the data checked against
# pinned checksums) are the protoqa-eval package's: pip install "protoqa-eval[lighteval] @ git+URL".
# Without it this module declares no task, so that the registry loads as before.
if importlib.util.find_spec("protoqa_integrations") is not None:
    from protoqa_integrations.harnesses.lighteval_tasks.tasks import TASKS_TABLE as PROTOQA_TASKS
else:
    PROTOQA_TASKS = []

TASKS_TABLE = list(PROTOQA_TASKS)

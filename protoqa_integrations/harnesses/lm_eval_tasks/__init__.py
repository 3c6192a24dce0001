"""ProtoQA and CFC as lm-evaluation-harness tasks, shipped with this package.

The folder of this module holds the task YAML files; ``lm_eval`` finds them with
``--include_path`` (the harness has no plugin mechanism for tasks or models):

    lm_eval --model hf --model_args pretrained=gpt2 --tasks protoqa,cfc \\
            --include_path "$(python -m protoqa_integrations.harnesses.lm_eval_tasks)"

Tasks: ``protoqa`` (ProtoQA crowdsourced dev, 300 samples per question), ``protoqa_test``
(ProtoQA test questions: writes the leaderboard's ranked-list file), ``cfc`` (CFC dev) and
``cfc_test`` (CFC test), 100 samples per question each, their chat versions ``protoqa_chat``
and ``cfc_chat`` (run with ``--apply_chat_template``, and ``--fewshot_as_multiturn`` for
CFC's worked example; the answer is taken from the reply), and the group ``protoqa_cfc``
(``protoqa`` and ``cfc``). Scores: Max Answers@1/3/5/10 and Max Incorrect@1/3/5 under
WordNet and exact-match similarity, and ProbEval's KL (human clusters, WordNet matching),
per question by :mod:`.harness`, averaged with lm-eval's ``mean`` (so with ``mean_stderr``); each score's signature
is in ``results_*.json``, under ``configs.<task>.metadata.signatures``.

``python -m protoqa_integrations.harnesses.lm_eval_tasks run ...`` runs ``lm_eval run ...`` with this folder
included and the ``protoqa-hf`` backend registered (:mod:`.backend`): the ``hf`` backend
whose sampling is :mod:`protoqa_integrations.generation.sampling`'s, so its answers are those of
``protoqa-eval generate`` for the same seed.

>>> Path(tasks_path()).joinpath("protoqa.yaml").is_file()
True
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["tasks_path", "TASKS", "GROUP"]

TASKS = ("protoqa", "protoqa_test", "cfc", "cfc_test", "protoqa_chat", "cfc_chat")
GROUP = "protoqa_cfc"


def tasks_path() -> str:
    """The folder with the task YAML files, for ``lm_eval --include_path``.

    >>> tasks_path().endswith("lm_eval_tasks")
    True
    """
    return str(Path(__file__).resolve().parent)

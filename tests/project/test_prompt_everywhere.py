"""One prompt function: the Space, ``protoqa-eval generate``, the lm-eval tasks and the Trainer hooks agree.

Run in a new process from outside the checkout, over every question of the ProtoQA dev set,
each given as the data's normalized text and as originally written (capitals included).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.processes import python_json

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[2])  # the Space's folder, as the Space runs its modules
import demo_model
from protoqa_core.io.readers import read_targets
from protoqa_integrations.generation.settings import prompt_function
from protoqa_integrations.harnesses.task_functions import cfc_one_shot_prompt, protoqa_prompt
from protoqa_integrations.training.samples import finetuned_prompt

rows = []
for path, key in ((sys.argv[1] + "/protoqa/dev.crowdsourced.jsonl", "protoqa"),
                  (sys.argv[1] + "/cfc/dev.targets.jsonl", "cfc")):
    for q in read_targets(path).values():
        for text in {q.question, q.question_original or q.question}:
            if key == "protoqa":
                rows.append([demo_model.prompt_for(key, text, "statement"), prompt_function("statement")(text),
                             protoqa_prompt({"question": text}), prompt_function("statement")(q.question)])
                rows.append([demo_model.prompt_for(key, text, "finetuned"), prompt_function("finetuned")(text),
                             finetuned_prompt(text), finetuned_prompt(q.question)])
            else:
                rows.append([demo_model.prompt_for(key, text), prompt_function("cfc-one-shot")(text),
                             cfc_one_shot_prompt({"question": text}), cfc_one_shot_prompt({"question": q.question})])
print(json.dumps(rows))
"""


def test_every_surface_builds_the_same_prompt(tmp_path, shared_data):
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    rows = python_json(["-c", SCRIPT, str(shared_data), str(REPO / "space")], tmp_path, env, timeout=300)
    assert len(rows) > 100
    for row in rows:
        assert len(set(row)) == 1, row
    # The data's questions are written with capitals; the prompt is the lower-case one.
    assert any(row[0].startswith("one ") for row in rows)
    assert not any(row[0][:1].isupper() for row in rows if not row[0].startswith("Q:"))

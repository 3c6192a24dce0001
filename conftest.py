"""Collection settings for the whole checkout (the tests' fixtures are in tests/conftest.py).

pytest collects the docstring examples of every module of the packages (``--doctest-modules``
in pyproject.toml). A module that imports an optional dependency at import time cannot be
collected without it: such modules are left out when it is missing, and the report header
names each one and what it needs, so none is left out silently.
"""

from __future__ import annotations

import importlib.util

# module file or package folder -> the optional distributions it imports when imported
_NEEDS = {
    "protoqa_dataset": ("datasets", "huggingface_hub"),
    "protoqa_metric/evaluate_modules/protoqa/protoqa.py": ("datasets", "evaluate"),
    "cfc_probeval/evaluate_modules/probeval/probeval.py": ("datasets", "evaluate"),
    "protoqa_integrations/lm_eval_tasks/backend.py": ("lm_eval",),
    "protoqa_integrations/lighteval_tasks/tasks.py": ("lighteval",),
}

_MISSING = {path: [name for name in names if importlib.util.find_spec(name) is None] for path, names in _NEEDS.items()}
_MISSING = {path: names for path, names in _MISSING.items() if names}

collect_ignore = sorted(_MISSING)


def pytest_report_header() -> list[str]:
    return [
        f"docstring examples not collected: {path} (needs {', '.join(names)})"
        for path, names in sorted(_MISSING.items())
    ]

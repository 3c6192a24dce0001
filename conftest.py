"""Collection settings for the whole checkout (the tests' fixtures are in tests/conftest.py).

pytest collects the docstring examples of every module of the packages (``--doctest-modules``
in pyproject.toml). A module that imports an optional dependency at import time cannot be
collected without it: such modules are left out when it is missing, and the report header
names each one and what it needs, so none is left out silently. Docstrings whose every
example is ``+SKIP`` (shown to readers, never run) are not collected; the report says how many.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
from pathlib import Path
from typing import Optional

import pytest
from _pytest.doctest import DoctestItem, DoctestModule
from _pytest.mark.expression import Expression

# module file or package folder -> the optional distributions it imports when imported
_NEEDS = {
    "protoqa_dataset": ("datasets", "huggingface_hub"),
    "protoqa_metric/evaluate_modules/protoqa/protoqa.py": ("datasets", "evaluate"),
    "cfc_probeval/evaluate_modules/probeval/probeval.py": ("datasets", "evaluate"),
    "protoqa_integrations/harnesses/lm_eval_tasks/backend.py": ("lm_eval",),
    "protoqa_integrations/harnesses/lighteval_tasks/tasks.py": ("lighteval",),
    "protoqa_integrations/harnesses/inspect_tasks/tasks.py": ("inspect_ai",),
    "protoqa_eval": ("inspect_ai",),
}

_MISSING = {path: [name for name in names if importlib.util.find_spec(name) is None] for path, names in _NEEDS.items()}
_MISSING = {path: names for path, names in _MISSING.items() if names}

collect_ignore = sorted(_MISSING)

# Importing hypothesis loads the plug-ins other distributions register with it, reading the metadata
# of every installed distribution (two thirds of its import time); the only one installed (trio's)
# serves no test here.
os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")

# module file -> the libraries that importing it loads: seconds of CPU before any of its docstring
# examples runs, so those examples are marked slow, and a run that leaves slow tests out (the
# fast subset, -m "not slow ...") does not import the module at all.
_SLOW_TO_IMPORT = {
    "protoqa_metric/evaluate_modules/protoqa/protoqa.py": "evaluate, datasets, torch",
    "cfc_probeval/evaluate_modules/probeval/probeval.py": "evaluate, datasets, torch",
    "protoqa_integrations/harnesses/lm_eval_tasks/backend.py": "lm_eval, transformers",
    "protoqa_integrations/harnesses/lighteval_tasks/tasks.py": "lighteval",
    "protoqa_integrations/harnesses/inspect_tasks/tasks.py": "inspect_ai",
    "protoqa_eval/tasks.py": "inspect_ai",
    "protoqa_integrations/harnesses/lm_eval_tasks/api_backends.py": "lm_eval, aiohttp",
    "protoqa_dataset/builder.py": "datasets",
    "protoqa_dataset/card.py": "datasets",
    "protoqa_dataset/export.py": "datasets",
    "protoqa_dataset/schema.py": "datasets",
    "protoqa_dataset/upload.py": "huggingface_hub",
}
_ROOT = Path(__file__).resolve().parent


def _slow_left_out(config: pytest.Config) -> bool:
    """Whether the run's -m expression leaves out tests marked slow."""
    expression = config.getoption("markexpr", "")
    return bool(expression) and not Expression.compile(expression).evaluate(lambda mark: mark == "slow")


def _slow_to_import(path: Path) -> bool:
    return path.is_relative_to(_ROOT) and path.relative_to(_ROOT).as_posix() in _SLOW_TO_IMPORT


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> Optional[bool]:
    if _slow_to_import(collection_path) and _slow_left_out(config):
        return True
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if isinstance(item, DoctestItem) and _slow_to_import(item.path):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    # A file whose text holds no ">>>" has no docstring example: looking for some would only cost
    # its import and a walk over all its objects (every test module is such a file).
    collectors = yield
    if file_path.suffix == ".py" and b">>>" not in file_path.read_bytes():
        collectors = [c for c in collectors if not isinstance(c, DoctestModule)]
    return collectors


_SHOWN_ONLY = pytest.StashKey[int]()


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [
        f"docstring examples not collected: {path} (needs {', '.join(names)})"
        for path, names in sorted(_MISSING.items())
    ]
    if _slow_left_out(config):
        lines += [
            f"docstring examples left out with the slow tests: {path} (imports {libraries})"
            for path, libraries in _SLOW_TO_IMPORT.items()
            if path not in _MISSING
        ]
    return lines


def _nothing_to_run(item: pytest.Item) -> bool:
    """Whether ``item`` is a docstring whose every example is marked ``+SKIP`` (shown, never run).

    pytest would report each such docstring as a skipped test; it has nothing to check, so
    it is left out. A docstring with one runnable example is kept whole.
    """
    if not isinstance(item, DoctestItem) or item.dtest is None:
        return False
    return all(example.options.get(doctest.SKIP, False) for example in item.dtest.examples)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    # Filtered where a module's docstrings are collected, so that they are not counted either.
    outcome = yield
    report = outcome.get_result()
    if isinstance(collector, DoctestModule) and report.result:
        kept = [item for item in report.result if not _nothing_to_run(item)]
        stash = collector.config.stash
        stash[_SHOWN_ONLY] = stash.get(_SHOWN_ONLY, 0) + len(report.result) - len(kept)
        report.result[:] = kept


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    count = config.stash.get(_SHOWN_ONLY, 0)
    return [f"{count} docstrings not collected: every example in them is +SKIP (shown, never run)"] if count else []

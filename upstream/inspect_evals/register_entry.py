"""Write the inspect_evals register entries of this project's Inspect tasks: ``register/protoqa/eval.yaml`` and
``register/cfc/eval.yaml``, one task each, pointing at the repository and commit the tasks are published at.

inspect_evals takes a new evaluation as such an entry: metadata that names the author's repository, whose
package declares its tasks through the ``inspect_ai`` entry point (``protoqa_eval/tasks.py`` here).

usage: python upstream/inspect_evals/register_entry.py REPOSITORY_URL [--commit SHA] [--maintainer NAME] [-o DIR]

The commit defaults to this checkout's ``HEAD``; ``DIR`` (default ``.``) is where ``register/`` goes, such as a
checkout of inspect_evals.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

TASK_PATH = "protoqa_eval/tasks.py"
CONTRIBUTOR = "protoqa-eval"

ENTRIES: dict[str, dict[str, Any]] = {
    "protoqa": {
        "full_title": "ProtoQA: A Question Answering Dataset for Prototypical Common-Sense Reasoning",
        "common_title": "ProtoQA",
        "paper_title": "ProtoQA: A Question Answering Dataset for Prototypical Common-Sense Reasoning",
        "description": (
            "Open commonsense questions with many right answers: 300 sampled answers per question, ranked by "
            "frequency and scored by Max Answers@k and Max Incorrect@k against 100 people's answer clusters, "
            "with ProbEval's KL divergence beside them."
        ),
        "arxiv": "https://arxiv.org/abs/2005.00771",
        "tags": ["commonsense", "generation", "question-answering"],
        "tasks": [{"name": "protoqa", "task_path": TASK_PATH, "dataset_samples": 52}],
    },
    "cfc": {
        "full_title": "Every Answer Matters: Evaluating Commonsense with Probabilistic Measures",
        "common_title": "CFC",
        "paper_title": "Every Answer Matters: Evaluating Commonsense with Probabilistic Measures",
        "description": (
            "Commonsense frame completion: 100 sampled answers per question, their distribution compared with "
            "the human one by ProbEval's KL divergence (human clusters, WordNet matching), with the ProtoQA metrics."
        ),
        "arxiv": "https://arxiv.org/abs/2406.04145",
        "tags": ["commonsense", "generation", "question-answering"],
        "tasks": [{"name": "cfc", "task_path": TASK_PATH, "dataset_samples": 54}],
    },
}
"""Each entry's metadata but its source; the sample counts are those of the dev splits the tasks run by default."""


def entry(name: str, repository_url: str, commit: str, maintainers: list[str]) -> dict[str, Any]:
    """The ``eval.yaml`` of one register entry.

    >>> entry("cfc", "https://github.com/someone/protoqa-eval", "0" * 40, ["someone"])["source"]["maintainers"]
    ['someone']
    """
    source: dict[str, Any] = {"repository_url": repository_url, "repository_commit": commit}
    if maintainers:
        source["maintainers"] = maintainers
    return {**ENTRIES[name], "contributors": [CONTRIBUTOR], "source": source}


def write_entries(out_dir: Path, repository_url: str, commit: str, maintainers: list[str]) -> list[Path]:
    """Write ``register/<name>/eval.yaml`` for each task under ``out_dir``; returns their paths."""
    written = []
    for name in ENTRIES:
        path = out_dir / "register" / name / "eval.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump(entry(name, repository_url, commit, maintainers), sort_keys=False, width=1000)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="register_entry.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("repository_url", help="https://github.com/OWNER/REPO where the tasks are published")
    parser.add_argument("--commit", help="the commit the entry pins (default: this checkout's HEAD)")
    parser.add_argument("--maintainer", action="append", default=[], help="a GitHub user who maintains the entry")
    parser.add_argument("-o", "--out-dir", default=".", help="where register/ is written (default: .)")
    args = parser.parse_args(argv)
    if not args.repository_url.startswith("https://github.com/"):
        print(f"register_entry.py: error: {args.repository_url} is not a GitHub repository URL", file=sys.stderr)
        return 2
    commit = args.commit
    if commit is None:
        here = Path(__file__).resolve().parent
        done = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True)
        if done.returncode != 0:
            print("register_entry.py: error: not in a git checkout; give --commit", file=sys.stderr)
            return 2
        commit = done.stdout.strip()
    for path in write_entries(Path(args.out_dir), args.repository_url, commit, args.maintainer):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Every command and snippet the documentation shows runs as written, or its page says why it cannot here.

The blocks are the fenced ``bash`` and ``python`` blocks of README.md and docs/*.md. Each one is

- run here (:data:`RUN_HERE`): in a new process, from a folder that is not the checkout, offline,
  with the files it names lying there under the names it uses (links to ../shared/data, an export
  made by the documented export command, a tiny model in the model folder it names), and
  ``../shared/data`` beside that folder as beside a checkout; or
- followed in its page by a note in italics that starts ``Not run by the tests:`` and says why
  (a GPU, the Hub, an install, hours of work, a placeholder for the reader's own data), or
  ``Run by `PATH` `` naming the test or job that runs it (for the blocks of which this file
  runs a part, :data:`PARTLY`, the note says which part).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.offline import offline_env
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
DATA = SHARED / "data"
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
NOTE = re.compile(r"^\*(Not run by the tests( as written)?: .{10,}|Run by `[\w./-]+`.*)\*$")
needs_data = pytest.mark.skipif(not (DATA / "protoqa" / "dev.crowdsourced.jsonl").is_file(), reason="no shared data")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str
    after: tuple[str, ...]  # the page's next lines, where a note says why a block is not run here
    key: str = ""  # the page and the block's first line (60 characters), with " #2" ... where a page repeats it


def blocks() -> list[Block]:
    found: list[Block] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        lines = text.splitlines()
        for match in re.finditer(r"^( *)```(bash|python)\n(.*?)^\1```", text, re.MULTILINE | re.DOTALL):
            end = text[: match.end()].count("\n") + 1
            after = tuple(line.strip() for line in lines[end : end + 6] if line.strip())[:3]
            body = "\n".join(line[len(match.group(1)) :] for line in match.group(3).splitlines())
            name = str(page.relative_to(REPO))
            key = f"{name}: {body.strip().splitlines()[0].strip()[:60].rstrip()}"
            repeats = sum(1 for b in found if b.key.split(" #")[0] == key)
            key += f" #{repeats + 1}" if repeats else ""
            found.append(Block(name, text[: match.start()].count("\n") + 1, match.group(2), body, after, key))
    return found


BLOCKS = blocks()

# What each block run here needs in its folder: "data" (the ProtoQA and CFC files it names), "export"
# (protoqa-hub/ and path/to/export/, made by the documented export command), "tiny-gpt2" (a model folder).
RUN_HERE: dict[str, tuple[str, ...]] = {
    "README.md: from protoqa_metric import ProtoQA, read_predictions, read_t": (),
    "README.md: D=../shared/data/protoqa": (),
    "README.md: import evaluate, protoqa_metric": (),
    "README.md: from protoqa_dataset import load_protoqa": (),
    "README.md: probeval ../shared/data/cfc/dev.targets.jsonl ../shared/data": (),
    "docs/evaluate-a-model.md: from protoqa_metric import read_targets": (),
    "docs/evaluate-a-model.md: from tokenizers import Tokenizer, decoders, models, pre_toke": (),
    "docs/evaluate-a-model.md: D=../shared/data/cfc": ("docs",),
    "docs/probeval.md: from cfc_probeval import evaluate_probeval, read_targets, re": ("data",),
    "docs/protoqa-metric.md: from protoqa_metric import ProtoQA, read_predictions, read_t": (),
    "docs/protoqa-metric.md: protoqa-eval prepare                 # prints: WordNet cache": (),
    "docs/training.md: from protoqa_integrations.generation.prompts import (": (),
    "docs/training.md: from datasets import load_dataset": ("export",),
}
# Blocks that continue the block before them on the same page: run after it, in one script.
CONTINUES = {"docs/protoqa-metric.md: from protoqa_metric import QuestionIndex": ()}
# Blocks of which the tests run some commands (here or elsewhere); the page's note says which.
PARTLY = {
    'docs/evaluate-a-model.md: TASKS="$(python -m protoqa_integrations.harnesses.lm_eval_ta': ("tiny-gpt2",),
    "docs/datasets.md: python -m protoqa_dataset export protoqa-hub/": (),
    "README.md: bash scripts/setup.sh && .venv/bin/python -m studies.paper_e": (),
    "docs/install.md: bash scripts/setup.sh && .venv/bin/python -m studies.paper_e": (),
}


def test_the_blocks_are_found():
    assert len(BLOCKS) > 40
    assert {b.language for b in BLOCKS} == {"bash", "python"}


def test_every_block_is_run_or_its_page_says_why_not():
    wrong = []
    for block in BLOCKS:
        if block.key in RUN_HERE or block.key in CONTINUES:
            continue
        notes = [line for line in block.after if NOTE.match(line)]
        if not notes:
            wrong.append(
                f"{block.key} (line {block.line}): run it in {Path(__file__).name}, or say in the page why not"
            )
        for note in notes:
            named = re.search(r"`([\w./-]+)`", note)
            if note.startswith("*Run by") and not (named and (REPO / named.group(1)).is_file()):
                wrong.append(f"{block.key} (line {block.line}): {note} names no file of the checkout")
    assert not wrong, "\n".join(wrong)


def test_every_registered_block_is_on_its_page():
    keys = {b.key for b in BLOCKS}
    for key in [*RUN_HERE, *CONTINUES, *PARTLY]:
        assert key in keys, f"{key}: no such block any more"


# ---------------------------------------------------------------- running them


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A working folder outside the checkout with ../shared beside it, as beside a checkout."""
    root = tmp_path_factory.mktemp("docs")
    (root / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
    work = root / "work"
    work.mkdir()
    return work


def _env(tmp: Path) -> dict[str, str]:
    env = offline_env(HF_HOME=str(tmp / "hf"), PROTOQA_CACHE_DIR=str(tmp / "cache"), MPLBACKEND="Agg")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _prepare(folder: Path, needs: tuple[str, ...], dev3_gpt2_factory) -> None:
    links = {
        "dev.crowdsourced.jsonl": DATA / "protoqa" / "dev.crowdsourced.jsonl",
        "targets.jsonl": DATA / "protoqa" / "dev.crowdsourced.jsonl",
        "predictions.jsonl": DATA / "protoqa" / "dev.predictions.gpt2finetuned.json",
        "a.jsonl": DATA / "protoqa" / "dev.predictions.gpt2finetuned.json",
        "b.jsonl": DATA / "protoqa" / "dev.predictions.human.jsonl",
        "dev.targets.jsonl": DATA / "cfc" / "dev.targets.jsonl",
        "dev.predictions.gpt2-xl.oneshot.json": DATA / "cfc" / "dev.predictions.gpt2-xl.oneshot.json",
    }
    if "data" in needs:
        for name, target in links.items():
            if not (folder / name).exists():
                (folder / name).symlink_to(target)
    if "docs" in needs:
        (folder / "docs").mkdir(exist_ok=True)
    if "export" in needs and not (folder / "protoqa-hub").exists():
        # the second export command of docs/datasets.md, and the same export where docs/training.md names it
        command = _block("docs/datasets.md: python -m protoqa_dataset export protoqa-hub/").text.splitlines()[1]
        assert command.startswith("python -m protoqa_dataset export protoqa-hub/ --data-dir ../shared/data")
        done = _run(command, "bash", folder)
        assert done.returncode == 0, done.stderr[-2000:]
        (folder / "path" / "to").mkdir(parents=True)
        shutil.copytree(folder / "protoqa-hub", folder / "path" / "to" / "export")
    if "tiny-gpt2" in needs and not (folder / "tiny-gpt2").exists():
        shutil.copytree(dev3_gpt2_factory(), folder / "tiny-gpt2")


def _run(block_text: str, language: str, folder: Path) -> subprocess.CompletedProcess:
    if language == "bash":
        args = ["bash", "-e", "-o", "pipefail", "-c", block_text]
    else:
        script = folder / "block.py"
        script.write_text(block_text, encoding="utf-8")
        args = [sys.executable, str(script)]
    return subprocess.run(args, cwd=folder, env=_env(folder.parent), capture_output=True, text=True, timeout=1200)


def _block(key: str) -> Block:
    return next(b for b in BLOCKS if b.key == key)


@pytest.fixture(scope="module")
def tiny_model_factory(request):
    return lambda: request.getfixturevalue("dev3_gpt2")


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("key", [*RUN_HERE, *CONTINUES])
def test_the_block_runs_as_written(key, folder, tiny_model_factory):
    block = _block(key)
    needs = RUN_HERE[key] if key in RUN_HERE else CONTINUES[key]
    _prepare(folder, needs, tiny_model_factory)
    text = block.text
    if key in CONTINUES:
        previous = max((b for b in BLOCKS if b.page == block.page and b.line < block.line), key=lambda b: b.line)
        text = previous.text + "\n" + block.text
    done = _run(text, block.language, folder)
    assert done.returncode == 0 and "Traceback" not in done.stderr, f"{key}\n{done.stderr[-3000:]}"


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("page", ["README.md", "docs/install.md"])
def test_the_main_job_prints_the_readmes_table(page, tmp_path):
    block = _block(f"{page}: bash scripts/setup.sh && .venv/bin/python -m studies.paper_e")
    setup, main_job = block.text.strip().split(" && ")
    assert setup == "bash scripts/setup.sh" and main_job == ".venv/bin/python -m studies.paper_example"
    # studies/ runs from the checkout; its .venv is this interpreter's
    done = run_python(["-m", "studies.paper_example"], REPO, _env(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"Its output:\n\n```\n(.*?)```", readme, re.DOTALL)
    assert shown and done.stdout.strip() == shown.group(1).strip()


@pytest.mark.slow
@needs_data
def test_the_lm_eval_quick_look_runs_as_written(folder, tiny_model_factory):
    pytest.importorskip("lm_eval")
    block = _block(next(iter(PARTLY)))
    commands = block.text.replace("\\\n", "").splitlines()
    assert "--batch_size" in commands[-1] and "--limit 3" in commands[-1] and "pretrained=./tiny-gpt2" in commands[-1]
    # The first and last commands; the second loads GPT-2 from the Hub (the page says so).
    _prepare(folder, PARTLY[block.key], tiny_model_factory)
    done = _run("\n".join([commands[0], commands[-1]]), "bash", folder)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "wn_ans@10" in done.stdout, done.stdout[-2000:]

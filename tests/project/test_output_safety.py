"""Nothing is destroyed or overwritten without being asked: each class run as a new process from outside the checkout.

Covered: ``protoqa-eval generate`` (answers file, leaderboard file, resume journal,
temporary files, a full disk), ``--per-question`` of both commands, the dataset export
and the Hub-folder builder. Every command runs with ``sys.executable`` in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.offline import offline_env

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
DEV = DATA / "protoqa" / "dev.crowdsourced.jsonl"
needs_data = pytest.mark.skipif(not DEV.is_file(), reason=f"shared ProtoQA data not found under {DATA}")

# Runs a command body with one function replaced by one that fails with "No space left on
# device" on its N-th call: a full disk, without needing a full disk.
FULL_DISK = """
import errno, importlib, sys
target, nth = sys.argv[1], int(sys.argv[2])
module_name, name = target.rsplit(".", 1)
module = importlib.import_module(module_name)
real, calls = getattr(module, name), [0]
def failing(*args, **kwargs):
    calls[0] += 1
    if calls[0] == nth:
        raise OSError(errno.ENOSPC, "No space left on device")
    return real(*args, **kwargs)
setattr(module, name, failing)
from protoqa_integrations.cli import main
raise SystemExit(main(["generate", *sys.argv[3:]]))
"""


# Writes each journal of cases.json in turn and resumes generate on it; prints [[status, stderr], ...].
RESUME_EACH = """
import contextlib, io, json, sys
from pathlib import Path
from protoqa_integrations.cli import main
journal, argv = Path(sys.argv[1]), ["generate", *sys.argv[2:]]
outcomes = []
for lines in json.loads(Path("cases.json").read_text(encoding="utf-8")):
    journal.write_text("\\n".join(lines) + "\\n", encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(argv)
    outcomes.append([status, err.getvalue()])
print(json.dumps(outcomes))
"""


def run(args, cwd: Path, timeout: int = 600, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=offline_env(), capture_output=True, text=True, timeout=timeout, **kwargs
    )


def generate(cwd: Path, model: str, *extra) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "protoqa_integrations", "generate", model, *extra], cwd)


def one_error_line(result: subprocess.CompletedProcess, status: int = 2) -> str:
    """The command's one error line (with ``status``, and no traceback)."""
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ") or ": error: " in line]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture()
def data_copy(tmp_path: Path) -> Path:
    """A writable copy of the ProtoQA data folder (what a user's own data folder is)."""
    if not DEV.is_file():
        pytest.skip(f"shared ProtoQA data not found under {DATA}")
    folder = tmp_path / "data"
    shutil.copytree(DATA / "protoqa", folder / "protoqa")
    for path in (folder / "protoqa").iterdir():
        path.chmod(0o644)
    return folder


def test_generate_checks_every_output_before_any_work_and_never_writes_over_an_input(tmp_path, data_copy):
    # The model does not exist: a refusal that names the output shows that nothing was loaded first.
    questions = data_copy / "protoqa" / "test.questions.jsonl"
    dev = data_copy / "protoqa" / "dev.crowdsourced.jsonl"
    before = {p: p.read_bytes() for p in (questions, dev)}
    (tmp_path / "old.jsonl").write_text("keep\n", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    data = ["--data-dir", data_copy]
    cases = [
        (["-o", "a.json", "--split", "test", "--leaderboard", questions, *data], "file exists; pass --overwrite"),
        (["-o", "a.json", "--split", "test", "--leaderboard", questions, "--overwrite", *data], "over an input"),
        (["-o", "a.json", "--split", "test", "--leaderboard", "old.jsonl", *data], "pass --overwrite"),
        (["-o", "x.json", "--split", "test", "--leaderboard", "x.json", "--overwrite", *data], "the same file"),
        (["-o", dev, "--overwrite", *data], "refusing to write over an input file"),
        (["-o", "folder", "--overwrite", *data], "is a directory"),
        (["-o", "fifo", "--overwrite", *data], "not a regular file"),
        (["-o", "old.jsonl", *data], "file exists; pass --overwrite"),
    ]
    for args, expected in cases:
        line = one_error_line(generate(tmp_path, str(tmp_path / "no-such-model"), *args))
        assert expected in line, (args, line)
        assert "model" not in line, line
    assert {p: p.read_bytes() for p in (questions, dev)} == before
    assert (tmp_path / "old.jsonl").read_text(encoding="utf-8") == "keep\n"
    # A journal that is a link is refused too, before the model.
    (tmp_path / "victim.txt").write_text("victim\n", encoding="utf-8")
    (tmp_path / "b.json.partial.jsonl").symlink_to(tmp_path / "victim.txt")
    line = one_error_line(generate(tmp_path, str(tmp_path / "no-such-model"), "-o", "b.json", *data))
    assert "b.json.partial.jsonl: the resume journal is not a regular file" in line
    assert (tmp_path / "victim.txt").read_text(encoding="utf-8") == "victim\n"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_lm import build_tiny_gpt2

    folder = tmp_path_factory.mktemp("tiny") / "model"
    build_tiny_gpt2(folder, ["name something people do at night", "sleep", "eat dinner", "watch tv"] * 10)
    return folder


@pytest.mark.slow
def test_generate_full_disk_names_the_file_keeps_the_journal_and_never_follows_planted_links(
    tmp_path, data_copy, tiny_model
):
    victim = tmp_path / "victim.txt"
    victim.write_text("victim\n", encoding="utf-8")
    # Links at the temporary names older versions used: they must not be written through.
    for name in ("out.json.writing", "out.json.partial.jsonl.writing"):
        (tmp_path / name).symlink_to(victim)
    script = tmp_path / "full_disk.py"
    script.write_text(FULL_DISK, encoding="utf-8")
    args = [
        tiny_model,
        "-o",
        "out.json",
        "--data-dir",
        data_copy,
        "--limit",
        "3",
        "--num-samples",
        "4",
        "--device",
        "cpu",
        "--no-progress",
    ]
    journal = tmp_path / "out.json.partial.jsonl"

    # The disk fills up after the first question is in the journal.
    line = one_error_line(run([sys.executable, script, "os.fsync", "2", *args], tmp_path))
    assert f"{journal.name}: cannot write: no space left on device" in line
    assert "sampled so far are kept in" in line and "run the same command again to resume" in line
    assert journal.is_file() and not (tmp_path / "out.json").exists()

    # The disk fills up while the answers file is written: no temporary file is left behind.
    line = one_error_line(run([sys.executable, script, "json.dump", "1", *args], tmp_path))
    assert "out.json: cannot write: no space left on device" in line and "resume" in line
    assert journal.is_file() and not (tmp_path / "out.json").exists()
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith((".tmp", ".writing")) and not p.is_symlink()]
    assert leftovers == []

    # Resumed with the same command: finished, the journal removed, the links' target untouched.
    result = generate(tmp_path, str(tiny_model), *args[1:])
    assert result.returncode == 0, result.stderr
    assert not journal.exists()
    assert victim.read_text(encoding="utf-8") == "victim\n"
    document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert all(len(samples) == 4 for samples in document["model_answers"].values())

    # score-generated finds the questions where generate read them (--data-dir), from another folder.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    scored = run(
        [
            sys.executable,
            "-m",
            "protoqa_integrations",
            "score-generated",
            tmp_path / "out.json",
            "--similarity",
            "exact_match",
            "--no-probeval",
            "--only-predicted",  # generate --limit 3
            "--json",
        ],
        elsewhere,
    )
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["num_questions"] == 3


def test_a_full_disk_while_the_lock_file_is_made_is_one_line_and_leaves_no_lock(tmp_path, data_copy):
    script = tmp_path / "full_disk.py"
    script.write_text(FULL_DISK, encoding="utf-8")
    # Emptying the lock file for the process id is the run's first os.ftruncate, before the model
    # (here a folder that holds none) is loaded.
    args = [tmp_path, "-o", "out.json", "--data-dir", data_copy, "--limit", "1", "--no-progress"]
    line = one_error_line(run([sys.executable, script, "os.ftruncate", "1", *args], tmp_path))
    assert "out.json.partial.lock: cannot write the lock file: no space left on device; make room" in line
    assert "Errno" not in line and not (tmp_path / "out.json.partial.lock").exists()


@pytest.mark.slow
def test_generate_checks_every_line_of_the_resume_journal(tmp_path, data_copy, tiny_model):
    script = tmp_path / "full_disk.py"
    script.write_text(FULL_DISK, encoding="utf-8")
    args = [
        tiny_model,
        "-o",
        "out.json",
        "--data-dir",
        data_copy,
        "--limit",
        "3",
        "--num-samples",
        "4",
        "--device",
        "cpu",
        "--no-progress",
    ]
    journal = tmp_path / "out.json.partial.jsonl"
    one_error_line(run([sys.executable, script, "os.fsync", "3", *args], tmp_path))  # two questions journaled
    header, first, second = journal.read_text(encoding="utf-8").splitlines()[:3]
    record = json.loads(first)

    def variant(**changes) -> str:
        return json.dumps({**record, **changes})

    deep = '{"id": "r1q1", "samples": ' + "[" * 100_000 + "]" * 100_000 + "}"

    cases = [
        ([header, variant(samples="dog")], "line 2: question 'r1q1': 'samples' must be a list of strings"),
        ([header, variant(samples=["dog"])], "line 2: question 'r1q1': 1 samples, expected 4"),
        ([header, variant(samples=["a", "b", "c", 4])], "line 2: question 'r1q1': 'samples' must be a list"),
        ([header, first, first], "line 3: question 'r1q1' again (first on line 2)"),
        ([header, variant(id="nope")], "line 2: question 'nope' is not one of the questions of this run"),
        # an answer edited by hand, and a record written without its checksum
        ([header, variant(samples=["FORGED ANSWER"] * 4)], "line 2: the record was changed after it was written"),
        (
            [header, json.dumps({k: v for k, v in record.items() if k != "sha256"})],
            "line 2: the record has no checksum",
        ),
        ([header, "[1, 2]", second], "line 2: not a question record"),
        ([header, "{oops", second], "line 2: not JSON"),
        # nested 100,000 deep: refused with file and line, in the middle and as the last line
        ([header, deep, second], "line 2: JSON nested too deeply"),
        ([header, first, deep], "line 3: JSON nested too deeply"),
    ]
    # One new process tries every damaged journal (the command body, as the command line runs it).
    (tmp_path / "cases.json").write_text(json.dumps([lines for lines, _ in cases]), encoding="utf-8")
    (tmp_path / "resume.py").write_text(RESUME_EACH, encoding="utf-8")
    result = run([sys.executable, "resume.py", journal, *args], tmp_path)
    assert result.returncode == 0, result.stderr
    outcomes = json.loads(result.stdout)
    for (_, expected), (status, stderr) in zip(cases, outcomes, strict=True):
        assert status == 2 and "Traceback" not in stderr, stderr
        assert f"{journal.name}, {expected}" in stderr, stderr
        assert "delete the file to start over" in stderr


def test_per_question_force_refuses_anything_but_a_regular_file(tmp_path, shared_data):
    targets = shared_data / "cfc" / "dev.targets.jsonl"
    predictions = shared_data / "cfc" / "dev.predictions.human.json"
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    # A link to /dev/null: were it followed, a superuser's run would replace the device.
    (tmp_path / "null").symlink_to(os.devnull)
    commands = {
        "protoqa-eval": [sys.executable, "-m", "protoqa_metric", targets, predictions, "--similarity", "exact_match"],
        "probeval": [
            sys.executable,
            "-m",
            "cfc_probeval",
            targets,
            predictions,
            "--clustering",
            "human",
            "--ignore-unknown",
            "--quiet",
        ],
    }
    for name, command in commands.items():
        for target, expected in (
            ("fifo", "it is a pipe, not a regular file"),
            ("folder", "is a directory"),
            ("null", "it is a device, not a regular file"),
            ("/proc/self/fd/1", "not a regular file"),
        ):
            if target.startswith("/proc") and not Path("/proc/self/fd/1").exists():
                continue
            line = one_error_line(run([*command, "--per-question", target, "--force"], tmp_path))
            assert expected in line, (name, target, line)
        assert (tmp_path / "null").is_symlink() and (tmp_path / "fifo").is_fifo()


@pytest.mark.slow
def test_dataset_export_refuses_links_into_the_data_folder_and_replaces_planted_files(tmp_path):
    pytest.importorskip("datasets")
    if not (DATA / "cfc" / "test.targets.jsonl").is_file():
        pytest.skip(f"shared CFC data not found under {DATA}")
    data = tmp_path / "data"
    shutil.copytree(DATA / "cfc", data / "cfc")
    before = sorted(p.name for p in (data / "cfc").iterdir())
    export = [sys.executable, "-m", "protoqa_dataset", "export"]

    out = tmp_path / "out"
    out.mkdir()
    (out / "cfc").symlink_to(data / "cfc")
    line = one_error_line(run([*export, out, "--data-dir", data, "--config", "cfc", "--overwrite"], tmp_path))
    assert "is inside the data folder" in line
    assert sorted(p.name for p in (data / "cfc").iterdir()) == before

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "cfc").unlink()
    (out / "cfc").symlink_to(elsewhere)
    line = one_error_line(run([*export, out, "--data-dir", data, "--config", "cfc", "--overwrite"], tmp_path))
    assert "is a link to" in line and list(elsewhere.iterdir()) == []

    (out / "cfc").unlink()
    first = run([*export, out, "--data-dir", data, "--config", "cfc"], tmp_path)
    assert first.returncode == 0, first.stderr
    parquet = sorted((out / "cfc").glob("*.parquet"))[0]
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"victim")
    parquet.unlink()
    parquet.symlink_to(victim)
    again = run([*export, out, "--data-dir", data, "--config", "cfc", "--overwrite"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert victim.read_bytes() == b"victim"
    assert not parquet.is_symlink() and parquet.read_bytes()[:4] == b"PAR1"


def test_hub_folder_force_replaces_planted_links_and_refuses_the_placeholder_requirement(tmp_path):
    hub = [sys.executable, "-m", "protoqa_integrations.hub.folders"]
    first = run([*hub, "protoqa"], tmp_path)
    assert first.returncode == 0, first.stderr
    victim = tmp_path / "victim.py"
    victim.write_text("victim\n", encoding="utf-8")
    for name in ("app.py", "requirements.txt"):
        (tmp_path / "protoqa" / name).unlink()
        (tmp_path / "protoqa" / name).symlink_to(victim)
    again = run([*hub, "protoqa", "--force"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert victim.read_text(encoding="utf-8") == "victim\n"
    assert not (tmp_path / "protoqa" / "app.py").is_symlink()
    assert "demo.launch(" in (tmp_path / "protoqa" / "app.py").read_text(encoding="utf-8")

    requirements = (tmp_path / "protoqa" / "requirements.txt").read_bytes()
    line = one_error_line(
        run(
            [
                *hub,
                "protoqa",
                "--force",
                "--requirement",
                "protoqa-eval[evaluate] @ git+https://github.com/<you>/<this-repo>",
            ],
            tmp_path,
        )
    )
    assert "--requirement still holds the placeholder '<you>'" in line
    assert (tmp_path / "protoqa" / "requirements.txt").read_bytes() == requirements

"""The WordNet cache as users meet it: ``protoqa-eval prepare`` builds it, scoring uses it in a new
process outside the checkout, and a damaged, missing or unwritable cache is named, rebuilt or
worked around without changing a score."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from protoqa_core.wordnet import files as wordnet_files
from tests.support.processes import run_python

SYSTEM_DIRS = [Path(d) for d in wordnet_files.SYSTEM_WORDNET_DIRS if (Path(d) / "index.noun").is_file()]

# --- run as users run it: a new process, outside the checkout ---------------------------

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
# Every process the run starts (there should be none) is named on stderr.
_SCORE = """
import sys
def _hook(event, args):
    if event in {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system"}:
        print(f"started a process: {event} {args!r}", file=sys.stderr)
sys.addaudithook(_hook)
from protoqa_metric import ProtoQA, read_targets, read_predictions
q = read_targets(sys.argv[1])
p = read_predictions(sys.argv[2])
print(repr(ProtoQA("wordnet_wup").evaluate(q, p).scores["max_answers@1"]))
print("nltk" in sys.modules)
"""


def _score(tmp_path: Path, shared: Path, env: dict) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in {"PROTOQA_CACHE_DIR", "XDG_CACHE_HOME", "NLTK_DATA"}}
    base["PYTHONPATH"] = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return run_python(
        [
            "-c",
            _SCORE,
            str(shared / "protoqa" / "dev.crowdsourced.jsonl"),
            str(shared / "protoqa" / "dev.predictions.gpt2finetuned.json"),
        ],
        tmp_path,
        {**base, **env},
        timeout=600,
    )


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory):
    """A cache folder with the lemma tables and the walk file, built once for this module by
    ``protoqa-eval prepare``."""
    if not SYSTEM_DIRS or not SHARED_DATA.is_dir():
        pytest.skip("no system WordNet database or no shared data")
    cache = tmp_path_factory.mktemp("built") / "cache"
    done = _prepare({**os.environ, "PROTOQA_CACHE_DIR": str(cache)})
    assert done.returncode == 0, done.stderr
    (walk_file,) = (cache / "wordnet_tables").glob("wup-walks-*.bin")
    assert done.stdout == f"WordNet cache files ready in {walk_file.parent}\n"
    intact = _score(tmp_path_factory.mktemp("intact"), SHARED_DATA, {"PROTOQA_CACHE_DIR": str(cache)})
    assert intact.returncode == 0, intact.stderr
    assert intact.stderr == ""  # with the walk file: no notice, nothing started
    return cache, walk_file, intact.stdout


def _prepare(env: dict, *args: str) -> subprocess.CompletedProcess:
    env = {**env, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "protoqa_metric", "prepare", *args], capture_output=True, text=True, env=env, timeout=600
    )


def _corrupt_same_size(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 64]) + data[middle + 64 :]


def _corrupt_names(data: bytes) -> bytes:
    return data[:-200] + b"\xff" * 100 + data[-100:]  # invalid UTF-8 in the synset names


@pytest.mark.parametrize(
    "damage",
    [_corrupt_same_size, _corrupt_names, lambda d: d[: len(d) // 3], lambda d: b""],
    ids=["same size", "bad names", "truncated", "empty"],
)
def test_a_damaged_walk_file_is_named_and_scores_do_not_change(tmp_path, shared_data, built_cache, damage):
    # The run computes its walks itself, says which file is damaged and how to rebuild it,
    # and leaves the file to `protoqa-eval prepare`.
    cache, walk_file, intact = built_cache
    mine = tmp_path / "cache"
    shutil.copytree(cache, mine)
    path = mine / walk_file.relative_to(cache)
    damaged = damage(path.read_bytes())
    path.write_bytes(damaged)
    done = _score(tmp_path, shared_data, {"PROTOQA_CACHE_DIR": str(mine)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == intact
    (notice,) = done.stderr.splitlines()  # one line, and no process started
    assert str(path) in notice and "cannot be read" in notice and "protoqa-eval prepare" in notice
    assert path.read_bytes() == damaged


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, built_cache):
    """A cache folder after one run scored in it from nothing (no ``prepare``), and that run; shared by the test
    of what the run says and the test of ``prepare`` over a used cache."""
    folder = tmp_path_factory.mktemp("first-run")
    mine = folder / "cache"
    return mine, _score(folder, SHARED_DATA, {"PROTOQA_CACHE_DIR": str(mine)})


def test_a_first_run_starts_nothing_and_says_how_to_build_the_cache(first_run, built_cache):
    cache, walk_file, intact = built_cache
    mine, done = first_run
    assert done.returncode == 0, done.stderr
    assert done.stdout == intact
    (notice,) = done.stderr.splitlines()  # one line, and no process started
    built = mine / walk_file.relative_to(cache)
    assert notice == (
        f"no Wu-Palmer walk file at {built}: this run computes the walks it needs "
        "(build the file once with `protoqa-eval prepare`)"
    )
    assert sorted(p.name for p in (mine / "wordnet_tables").iterdir()) == [
        p.name for p in (cache / "wordnet_tables").glob("lemma-tables-*.txt")
    ]


@pytest.mark.slow
def test_prepare_writes_set_ups_files_over_a_used_or_damaged_cache(tmp_path, shared_data, built_cache, first_run):
    # After a first run (lemma tables only) and over a damaged walk file, `protoqa-eval prepare`
    # leaves the files set-up writes, byte for byte; runs then read them without a notice.
    cache, walk_file, intact = built_cache
    mine = tmp_path / "cache"
    shutil.copytree(first_run[0], mine)
    env = {**os.environ, "PROTOQA_CACHE_DIR": str(mine)}
    assert first_run[1].returncode == 0
    built = mine / walk_file.relative_to(cache)
    for damage in (None, _corrupt_same_size):
        if damage is not None:
            built.write_bytes(damage(built.read_bytes()))
        done = _prepare(env)
        assert done.returncode == 0, done.stderr
        assert built.read_bytes() == walk_file.read_bytes()
        if damage is not None:
            assert str(built) in done.stderr and "rebuilt" in done.stderr  # named, not silent
    (tables,) = (cache / "wordnet_tables").glob("lemma-tables-*.txt")
    assert (mine / tables.relative_to(cache)).read_bytes() == tables.read_bytes()
    warm = _score(tmp_path, shared_data, {"PROTOQA_CACHE_DIR": str(mine)})
    assert warm.returncode == 0 and warm.stderr == ""
    assert warm.stdout == intact


def test_prepare_names_a_cache_folder_it_cannot_write(tmp_path):
    blocked = tmp_path / "a file"
    blocked.write_text("no folder can be made in a file")
    done = _prepare({**os.environ, "PROTOQA_CACHE_DIR": str(blocked)})
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("protoqa-eval prepare: error: ") and str(blocked) in done.stderr
    assert "Traceback" not in done.stderr


def test_a_damaged_lemma_table_is_rebuilt(tmp_path, shared_data, built_cache):
    cache, _, intact_scores = built_cache
    mine = tmp_path / "cache"
    shutil.copytree(cache, mine)
    (table,) = (mine / "wordnet_tables").glob("lemma-tables-*.txt")
    intact = table.read_bytes()
    table.write_bytes(intact[:1000] + b"x" + intact[1001:])
    done = _score(tmp_path, shared_data, {"PROTOQA_CACHE_DIR": str(mine)})
    assert done.returncode == 0, done.stderr
    assert str(table) in done.stderr
    assert done.stdout == intact_scores
    assert table.read_bytes() == intact


@pytest.mark.skipif(not SYSTEM_DIRS, reason="no system WordNet database")
def test_wordnet_works_with_a_home_and_cache_that_cannot_be_written(tmp_path, shared_data, built_cache):
    # The system copy is read in place; the tables are computed in the process.
    home = tmp_path / "home"
    home.write_text("a file, so no folder can be made in it")  # read-only even for root
    done = _score(tmp_path, shared_data, {"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == built_cache[2]
    assert done.stdout.split()[1] == "False"  # and no NLTK
    assert not list(tmp_path.glob("**/*.bin"))


def test_prepare_refuses_a_wordnet_dir_without_wordnet(tmp_path):
    # The cache files of another WordNet are not built in place of the one asked for.
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _prepare({**os.environ, "PROTOQA_CACHE_DIR": str(tmp_path / "cache")}, "--wordnet-dir", str(empty))
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith(f"protoqa-eval prepare: error: {empty}: not a WordNet database")
    assert "Traceback" not in done.stderr and not (tmp_path / "cache").exists()

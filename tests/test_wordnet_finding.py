"""Finding WordNet: NLTK data, then a system database, then a download; one clear failure."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from protoqa_core import wordnet_files, wordnet_lookup, wordnet_nltk
from protoqa_core.wordnet_files import WordNetUnavailableError

SYSTEM_DIRS = [Path(d) for d in wordnet_files.SYSTEM_WORDNET_DIRS if (Path(d) / "index.noun").is_file()]


def _run(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )


@pytest.mark.skipif(
    not SYSTEM_DIRS, reason="no system WordNet database (apt-get install wordnet-base wordnet-sense-index)"
)
def test_installs_system_wordnet_into_a_fresh_cache(tmp_path):
    env = {"PROTOQA_CACHE_DIR": str(tmp_path / "cache"), "NLTK_DATA": str(tmp_path / "no_nltk_data")}
    done = _run(
        """
        from protoqa_core.wordnet_nltk import get_wordnet
        from protoqa_core.wordnet_lookup import wordnet_version, synset_keys
        wn = get_wordnet(download=False)
        print(wordnet_version(), wn.synsets("dogs")[0].name(), len(synset_keys("chewing gum")))
    """,
        env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3.0", "dog.n.01", "1"]
    folder = tmp_path / "cache" / "nltk_data" / "corpora" / "wordnet"
    lexnames = (folder / "lexnames").read_text().splitlines()
    assert len(lexnames) == 45 and lexnames[0] == "00\tadj.all\t3" and lexnames[44] == "44\tadj.ppl\t3"
    assert not (folder / "index.noun").is_symlink()
    # Second run: found as NLTK data already present, nothing copied again.
    stamp = (folder / "index.noun").stat().st_mtime_ns
    again = _run("from protoqa_core.wordnet_nltk import get_wordnet; get_wordnet(download=False)", env)
    assert again.returncode == 0 and (folder / "index.noun").stat().st_mtime_ns == stamp


@pytest.mark.skipif(not SYSTEM_DIRS, reason="no system WordNet database")
def test_explicit_directory_via_environment(tmp_path):
    env = {
        "PROTOQA_CACHE_DIR": str(tmp_path / "cache"),
        "NLTK_DATA": str(tmp_path / "none"),
        "PROTOQA_WORDNET_DIR": str(SYSTEM_DIRS[0]),
    }
    done = _run(
        "from protoqa_core.wordnet_nltk import get_wordnet; print(get_wordnet(download=False).get_version())", env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3.0"


def test_clear_error_when_nothing_works(tmp_path, monkeypatch):
    monkeypatch.setattr(wordnet_files, "SYSTEM_WORDNET_DIRS", (str(tmp_path / "nowhere"),))
    monkeypatch.setattr(wordnet_files, "nltk_data_dirs", lambda: [tmp_path / "empty_nltk_data"])
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PROTOQA_WORDNET_DIR", raising=False)
    with pytest.raises(WordNetUnavailableError) as info:
        wordnet_files.find_wordnet(download=False)
    message = str(info.value)
    assert "apt-get install wordnet-base wordnet-sense-index" in message
    assert "python -m nltk.downloader wordnet" in message
    assert "PROTOQA_WORDNET_DIR" in message
    assert "PROTOQA_CACHE_DIR" in message
    assert "nowhere" in message


def test_nltks_reader_searches_as_the_similarities_do_and_says_what_it_tried(tmp_path):
    # In a new process (the reader is made once per process), with NLTK finding no data.
    env = {
        "PROTOQA_CACHE_DIR": str(tmp_path / "cache"),
        "NLTK_DATA": str(tmp_path / "no_nltk_data"),
        "PROTOQA_WORDNET_DIR": str(tmp_path / "not_a_wordnet"),
    }
    done = _run(
        f"""
        import nltk
        from protoqa_core import wordnet_files
        from protoqa_core.wordnet_files import WordNetUnavailableError
        from protoqa_core.wordnet_nltk import get_wordnet
        nltk.data.path[:] = [{str(tmp_path / "no_nltk_data")!r}]
        wordnet_files.nltk_data_dirs = lambda: []
        wordnet_files.SYSTEM_WORDNET_DIRS = ({str(tmp_path / "nowhere")!r},)
        try:
            get_wordnet(download=False)
        except WordNetUnavailableError as exc:
            print(exc)
    """,
        env,
    )
    assert done.returncode == 0, done.stderr
    assert "$PROTOQA_WORDNET_DIR: " + str(tmp_path / "not_a_wordnet") in done.stdout
    assert "system WordNet folder " + str(tmp_path / "nowhere") in done.stdout
    assert "apt-get install wordnet-base wordnet-sense-index" in done.stdout
    assert not (tmp_path / "cache" / "nltk_data" / "corpora").exists()  # nothing half installed


def test_rejects_a_database_that_is_not_wordnet_3_0(tmp_path):
    fake = tmp_path / "wn"
    fake.mkdir()
    for name in wordnet_files.REQUIRED_FILES:
        (fake / name).write_text("  1 This software and database is being provided ... WordNet 2.1 Copyright\n")
    with pytest.raises(WordNetUnavailableError, match="not WordNet 3.0"):
        wordnet_nltk._install_system_wordnet(fake, tmp_path / "nltk_data")
    with pytest.raises(WordNetUnavailableError, match="not WordNet 3.0"):
        wordnet_files.find_wordnet(fake, download=False)


def test_synset_keys_match_nltk_synsets():
    wn = wordnet_nltk.get_wordnet()
    for phrase in ["dogs", "chewing gum", "ran", "better", "hot_dog", "new york", "qzxv"]:
        expected = {(s.pos().replace("s", "a"), s.offset()) for s in wn.synsets(phrase.replace(" ", "_"))}
        assert wordnet_lookup.synset_keys(phrase) == expected


# --- run as users run it: a new process, outside the checkout ---------------------------

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
_SCORE = """
import sys
from protoqa_metric import ProtoQA, read_targets, read_predictions
q = read_targets(sys.argv[1])
p = read_predictions(sys.argv[2])
print(repr(ProtoQA("wordnet_wup").evaluate(q, p).scores["max_answers@1"]))
print("nltk" in sys.modules)
"""


def _score(tmp_path: Path, shared: Path, env: dict) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in {"PROTOQA_CACHE_DIR", "XDG_CACHE_HOME", "NLTK_DATA"}}
    base["PYTHONPATH"] = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return subprocess.run(
        [
            sys.executable,
            "-c",
            _SCORE,
            str(shared / "protoqa" / "dev.crowdsourced.jsonl"),
            str(shared / "protoqa" / "dev.predictions.gpt2finetuned.json"),
        ],
        capture_output=True,
        text=True,
        env={**base, **env},
        cwd=tmp_path,
        timeout=600,
    )


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory):
    """A cache folder with the lemma tables and the walk file, built once for this module."""
    if not SYSTEM_DIRS or not SHARED_DATA.is_dir():
        pytest.skip("no system WordNet database or no shared data")
    cache = tmp_path_factory.mktemp("built") / "cache"
    env = {
        **os.environ,
        "PROTOQA_CACHE_DIR": str(cache),
        "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    done = subprocess.run(
        [sys.executable, "-c", "from protoqa_core.wu_palmer import prepare_wordnet as p; print(p())"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    intact = _score(tmp_path_factory.mktemp("intact"), SHARED_DATA, {"PROTOQA_CACHE_DIR": str(cache)})
    assert intact.returncode == 0, intact.stderr
    return cache, Path(done.stdout.strip()), intact.stdout


def _corrupt_same_size(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 64]) + data[middle + 64 :]


def _corrupt_names(data: bytes) -> bytes:
    return data[:-200] + b"\xff" * 100 + data[-100:]  # invalid UTF-8 in the synset names


# Each case rebuilds the whole walk file (about 12 s of CPU): one runs in the fast subset.
@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(_corrupt_same_size, marks=pytest.mark.slow),
        pytest.param(_corrupt_names, marks=pytest.mark.slow),
        lambda d: d[: len(d) // 3],
        pytest.param(lambda d: b"", marks=pytest.mark.slow),
    ],
    ids=["same size", "bad names", "truncated", "empty"],
)
def test_a_damaged_walk_file_is_rebuilt_and_scores_do_not_change(tmp_path, shared_data, built_cache, damage):
    cache, walk_file, intact = built_cache
    mine = tmp_path / "cache"
    import shutil

    shutil.copytree(cache, mine)
    path = mine / walk_file.relative_to(cache)
    path.write_bytes(damage(path.read_bytes()))
    done = _score(tmp_path, shared_data, {"PROTOQA_CACHE_DIR": str(mine), "PROTOQA_WALK_FILE": "wait"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == intact
    assert str(path) in done.stderr and "rebuilt" in done.stderr  # named, not silent
    from protoqa_core.walk_table import WalkTable

    assert len(WalkTable(path)) == 117_659  # rebuilt whole


@pytest.mark.slow
def test_a_first_run_leaves_the_cache_files_that_set_up_writes(tmp_path, shared_data, built_cache):
    # The first run on a fresh cache folder scores as a warm one; the walk file it has built
    # by a child after it exits, and its lemma tables, are byte for byte set-up's.
    cache, walk_file, intact = built_cache
    mine = tmp_path / "cache"
    done = _score(tmp_path, shared_data, {"PROTOQA_CACHE_DIR": str(mine)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == intact
    built = mine / walk_file.relative_to(cache)
    marker = built.with_name(built.name + ".building")
    deadline = time.monotonic() + 600
    while (marker.exists() or not built.exists()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert built.read_bytes() == walk_file.read_bytes()
    (tables,) = (cache / "wordnet_tables").glob("lemma-tables-*.txt")
    assert (mine / tables.relative_to(cache)).read_bytes() == tables.read_bytes()
    warm = _score(tmp_path, shared_data, {"PROTOQA_CACHE_DIR": str(mine)})
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout == intact


def test_a_damaged_lemma_table_is_rebuilt(tmp_path, shared_data, built_cache):
    cache, _, intact_scores = built_cache
    mine = tmp_path / "cache"
    import shutil

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

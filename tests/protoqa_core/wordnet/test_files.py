"""Finding WordNet: NLTK data, then a system database, then a download; one clear failure."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from protoqa_core.wordnet import files as wordnet_files
from protoqa_core.wordnet import lookup as wordnet_lookup
from protoqa_core.wordnet import nltk_reader as wordnet_nltk
from protoqa_core.wordnet.files import WordNetUnavailableError

SYSTEM_DIRS = [Path(d) for d in wordnet_files.SYSTEM_WORDNET_DIRS if (Path(d) / "index.noun").is_file()]


def _run(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )


@pytest.mark.slow
@pytest.mark.skipif(
    not SYSTEM_DIRS, reason="no system WordNet database (apt-get install wordnet-base wordnet-sense-index)"
)
def test_installs_system_wordnet_into_a_fresh_cache(tmp_path):
    env = {"PROTOQA_CACHE_DIR": str(tmp_path / "cache"), "NLTK_DATA": str(tmp_path / "no_nltk_data")}
    done = _run(
        """
        from protoqa_core.wordnet.nltk_reader import get_wordnet
        from protoqa_core.wordnet.lookup import wordnet_version, synset_keys
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
    again = _run("from protoqa_core.wordnet.nltk_reader import get_wordnet; get_wordnet(download=False)", env)
    assert again.returncode == 0 and (folder / "index.noun").stat().st_mtime_ns == stamp


@pytest.mark.slow
@pytest.mark.skipif(not SYSTEM_DIRS, reason="no system WordNet database")
def test_explicit_directory_via_environment(tmp_path):
    env = {
        "PROTOQA_CACHE_DIR": str(tmp_path / "cache"),
        "NLTK_DATA": str(tmp_path / "none"),
        "PROTOQA_WORDNET_DIR": str(SYSTEM_DIRS[0]),
    }
    done = _run(
        "from protoqa_core.wordnet.nltk_reader import get_wordnet; print(get_wordnet(download=False).get_version())",
        env,
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
        from protoqa_core.wordnet import files as wordnet_files
        from protoqa_core.wordnet.files import WordNetUnavailableError
        from protoqa_core.wordnet.nltk_reader import get_wordnet
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


def test_the_environment_s_folder_drops_surrounding_blanks_as_every_folder_setting(tmp_path, monkeypatch):
    found = wordnet_files.find_wordnet(download=False)
    copy = tmp_path / "wn"
    copy.mkdir()
    for name in os.listdir(found):
        (copy / name).symlink_to(found / name)
    monkeypatch.setenv("PROTOQA_WORDNET_DIR", f"  {copy}  ")
    assert wordnet_files.find_wordnet(download=False) == copy

"""The Wu-Palmer tables belong to one WuPalmer object: made once per process, dropped whole."""

from __future__ import annotations

import subprocess
import threading

import pytest

from protoqa_core.wordnet import wu_palmer
from protoqa_core.wordnet.lookup import open_wordnet, synset_keys
from protoqa_core.wordnet.wu_palmer import WuPalmer, best_wup, best_wup_reaches, wup_from_keys

WORDS = ["dog", "cat", "person", "run", "good", "quickly", "bank", "ice cream"]


def _all_pairs(score) -> dict[tuple[str, str], float]:
    return {(x, y): score(synset_keys(x), synset_keys(y)) for x in WORDS for y in WORDS}


def test_the_process_object_is_made_once_even_when_threads_race(monkeypatch):
    expected = _all_pairs(best_wup)
    monkeypatch.setattr(wu_palmer, "_shared", None)  # dropped: every table goes with it
    seen: list[object] = []
    results: list[dict] = []
    start = threading.Barrier(6)

    def work() -> None:
        start.wait()
        results.append(_all_pairs(best_wup))
        seen.append(wu_palmer._shared)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 6 and all(s is seen[0] for s in seen) and isinstance(seen[0], WuPalmer)
    assert all(r == expected for r in results)


def test_objects_keep_their_own_tables_and_agree():
    shared = _all_pairs(best_wup)
    own = WuPalmer(open_wordnet(), walk_table=None)
    assert own._wup_cache == {} and own._senses_cache == {}
    assert _all_pairs(own.best_wup) == shared
    assert own._senses_cache and own._key_walks  # built its own walks, without the walk file
    keys = sorted(synset_keys("dog"))[:3] + sorted(synset_keys("run"))[:3]
    assert {(a, b): own.wup_from_keys(a, b) for a in keys for b in keys} == {
        (a, b): wup_from_keys(a, b) for a in keys for b in keys
    }
    for level in (0.3, 0.5, 0.9):
        assert _all_pairs(lambda x, y, level=level: own.best_wup_reaches(x, y, level)) == _all_pairs(
            lambda x, y, level=level: best_wup_reaches(x, y, level)
        )


def test_the_object_starts_nothing_without_a_walk_file(monkeypatch, tmp_path, caplog):
    # The process's reader and Wu-Palmer object first, from the usual cache: made under the empty
    # cache, the reader would copy WordNet there and every later test in this process would read
    # that copy, with no walk file.
    reader = open_wordnet()
    expected = best_wup(synset_keys("dog"), synset_keys("cat"))
    monkeypatch.setenv("PROTOQA_CACHE_DIR", str(tmp_path / "empty"))
    own = WuPalmer(reader)
    started: list[str] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append("Popen"))
    with caplog.at_level("WARNING", logger=wu_palmer.__name__):
        assert own.walk_table() is None
        assert own.best_wup(synset_keys("dog"), synset_keys("cat")) == expected
    assert started == [] and not list((tmp_path / "empty").glob("**/wup-walks-*"))
    (record,) = [r for r in caplog.records if r.name == wu_palmer.__name__]
    assert "protoqa-eval prepare" in record.getMessage()


@pytest.mark.parametrize("stride", [pytest.param(1, marks=pytest.mark.slow), 29])
def test_walks_by_key_code_are_the_named_walks(stride):
    # A run without the walk file knows synsets by key codes and names only those NLTK's
    # order needs; mapped to names, its walks are those of the named tables (and the file).
    reader = open_wordnet()
    named = WuPalmer(reader, walk_table=None)
    coded = WuPalmer(reader, walk_table=None)
    checked = 0
    for code, pos in enumerate("nvar"):
        for i, (offset, _) in enumerate(reader.data_lines(pos)):
            if i % stride:
                continue
            steps, root_path = coded._coded_walk(code << 32 | offset)
            mapped = tuple((coded._coded_name(c), depth, length, to_root) for c, depth, length, to_root in steps)
            assert (mapped, root_path) == named._walk(named._register((pos, offset))), (pos, offset)
            checked += 1
    assert checked >= 117_659 // stride


def test_a_walk_file_found_damaged_while_read_is_named_once_and_the_walks_are_computed(caplog):
    class Damaged:
        path = "walks.bin"

        def walk(self, key):
            raise ValueError(f"{self.path}: damaged (a walk names synset 9 of 4, although its checksum matches)")

    reader = open_wordnet()
    expected = WuPalmer(reader, walk_table=None).best_wup(synset_keys("dog"), synset_keys("cat"))
    own = WuPalmer(reader, walk_table=Damaged())
    with caplog.at_level("WARNING", logger=wu_palmer.__name__):
        assert own.best_wup(synset_keys("dog"), synset_keys("cat")) == expected
        assert own.best_wup(synset_keys("car"), synset_keys("bus")) > 0
    (record,) = [r for r in caplog.records if r.name == wu_palmer.__name__]
    assert record.getMessage().startswith("walks.bin: damaged") and "protoqa-eval prepare" in record.getMessage()

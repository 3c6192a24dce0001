"""The Wu-Palmer tables belong to one WuPalmer object: made once per process, dropped whole."""

from __future__ import annotations

import threading
import time

import pytest

from protoqa_core import wu_palmer
from protoqa_core.wordnet_lookup import open_wordnet, synset_keys
from protoqa_core.wu_palmer import WuPalmer, best_wup, best_wup_reaches, wup_from_keys

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


def test_a_missing_walk_file_is_built_after_the_run_once(monkeypatch, tmp_path):
    # Not while the run scores: when it exits, or after a delay if it runs on; never twice.
    started: list[tuple[object, object]] = []
    hooks: list = []
    monkeypatch.setattr(wu_palmer, "_start_walk_file_build", lambda path, folder: started.append((path, folder)))
    monkeypatch.setattr(wu_palmer.atexit, "register", hooks.append)

    monkeypatch.setattr(wu_palmer, "_BUILD_DELAY_SECONDS", 600.0)
    wu_palmer._start_walk_file_build_later(tmp_path / "a.bin", tmp_path)
    assert started == [] and len(hooks) == 1
    hooks[0]()  # the process exits
    hooks[0]()
    assert started == [(tmp_path / "a.bin", tmp_path)]

    monkeypatch.setattr(wu_palmer, "_BUILD_DELAY_SECONDS", 0.5)
    wu_palmer._start_walk_file_build_later(tmp_path / "b.bin", tmp_path)
    deadline = time.monotonic() + 60
    while len(started) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    hooks[1]()  # the process exits after the delay
    assert started == [(tmp_path / "a.bin", tmp_path), (tmp_path / "b.bin", tmp_path)]


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

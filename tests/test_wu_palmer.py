"""The Wu-Palmer tables belong to one WuPalmer object: made once per process, dropped whole."""

from __future__ import annotations

import threading

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
    assert own._senses_cache and own._walk_cache  # built its own walks, without the walk file
    keys = sorted(synset_keys("dog"))[:3] + sorted(synset_keys("run"))[:3]
    assert {(a, b): own.wup_from_keys(a, b) for a in keys for b in keys} == {
        (a, b): wup_from_keys(a, b) for a in keys for b in keys
    }
    for level in (0.3, 0.5, 0.9):
        assert _all_pairs(lambda x, y, level=level: own.best_wup_reaches(x, y, level)) == _all_pairs(
            lambda x, y, level=level: best_wup_reaches(x, y, level)
        )

"""ProbEval's plug-in tables: names listed without importing a plug-in, each plug-in imported when
first asked for, and what a plug-in must declare to join."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cfc_probeval.registry import CLUSTERINGS, EMBEDDERS, HUMAN, MATCHINGS, clustering_choices


def test_listing_the_names_imports_no_plug_in_module():
    # A new process: other tests have imported the plug-in modules already.
    code = (
        "import sys\n"
        "from cfc_probeval.registry import CLUSTERINGS, EMBEDDERS, MATCHINGS, clustering_choices\n"
        "names = (CLUSTERINGS.names(), MATCHINGS.names(), EMBEDDERS.names(), clustering_choices())\n"
        "modules = ('cfc_probeval.clustering', 'cfc_probeval.matching', 'cfc_probeval.embedders', 'numpy')\n"
        "print(sum(len(n) for n in names), [m for m in modules if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(4 + 3 + 3 + 5), "[]"]


def test_each_name_gives_its_plug_in_from_the_place_it_names():
    for table in (CLUSTERINGS, MATCHINGS, EMBEDDERS):
        for name in table.names():
            module, _, attribute = table.place(name).partition(":")
            assert table[name] is getattr(sys.modules[module], attribute), (table, name)
    assert CLUSTERINGS["human"] is HUMAN is None
    assert clustering_choices()[0] == "auto" and clustering_choices()[1:] == CLUSTERINGS.names()


def test_a_plug_in_that_declares_too_little_is_refused_naming_it():
    with pytest.raises(TypeError, match="clustering 'odd': Odd declares an option that is not an Option: 'k'"):
        CLUSTERINGS.add("odd", type("Odd", (), {"options": ("k",)}))
    with pytest.raises(TypeError, match="matching 'odd': Odd defines no from_options"):
        MATCHINGS.add("odd", type("Odd", (), {}))
    with pytest.raises(TypeError, match="embedder 'odd': Odd defines no from_spec"):
        EMBEDDERS.add("odd", type("Odd", (), {}))
    assert "odd" not in CLUSTERINGS and "odd" not in MATCHINGS and "odd" not in EMBEDDERS

"""A new clustering, matching or embedder family is its class and the line registering it; a new
clustering option is one declaration in its class.

Each case runs in a new process, since registering changes the process's registries for good:
the class is defined there, registered with one decorator, and then reached by name through
the public entry points (``evaluate_probeval``, ``make_clusterer``, ``make_matcher``,
``get_embedder``, the ``probeval`` command), as a user's own module would.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from cfc_probeval import (
    CLUSTERINGS,
    EMBEDDERS,
    MATCHINGS,
    Clusterer,
    Matcher,
    MatchingOptions,
    make_clusterer,
)
from cfc_probeval.clustering import GMeansClusterer, HACClusterer, XMeansClusterer
from cfc_probeval.embedders import (
    CharNgramEmbedder,
    Embedder,
    FastTextEmbedder,
    SentenceTransformerEmbedder,
    get_embedder,
)
from cfc_probeval.matching import CosineMatcher, GPMatcher, WordNetMatcher
from tests.support.processes import run_python

REPO = Path(__file__).resolve().parents[2]


def printed_lines(code: str) -> list[str]:
    done = run_python(["-c", textwrap.dedent(code)], REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_registries_hold_the_shipped_plugins_in_their_order():
    assert CLUSTERINGS.names() == ("human", "hac", "xmeans", "gmeans")
    assert [CLUSTERINGS[n] for n in CLUSTERINGS] == [None, HACClusterer, XMeansClusterer, GMeansClusterer]
    assert dict(MATCHINGS) == {"wordnet": WordNetMatcher, "cosine": CosineMatcher, "gp": GPMatcher}
    assert dict(EMBEDDERS) == {
        "st": SentenceTransformerEmbedder,
        "fasttext": FastTextEmbedder,
        "char-ngrams": CharNgramEmbedder,
    }


def test_each_clustering_builds_itself_with_the_package_defaults():
    assert XMeansClusterer.from_options({"k_max": 5}).params() == {"k_init": 5, "k_max": 5, "seed": 0}
    assert GMeansClusterer.from_options({"seed": 3}).params() == {
        "k_init": 8,
        "k_max": 20,
        "seed": 3,
        "alpha": 0.0001,
    }
    assert make_clusterer("hac", k_init=4).params() == {"linkage": "complete", "threshold": 0.3, "metric": "cosine"}
    with pytest.raises(ValueError, match="unknown clustering 'kmeans'; choose one of: human, hac, xmeans, gmeans"):
        make_clusterer("kmeans")
    with pytest.raises(ValueError, match="gp matching needs an embedder"):
        GPMatcher.from_options(MatchingOptions(threshold=0.5))


def test_a_class_that_cannot_build_itself_is_refused_and_the_registry_unchanged():
    class Plain(Embedder):  # no from_spec
        def _encode(self, texts):
            return np.zeros((len(texts), 2))

    with pytest.raises(TypeError, match="embedder 'plain': .*Plain defines no from_spec"):
        EMBEDDERS.register("plain")(Plain)
    with pytest.raises(TypeError, match="clustering 'plain': Clusterer is abstract \\(_labels\\)"):
        CLUSTERINGS.add("plain", Clusterer)
    with pytest.raises(TypeError, match="matching 'plain': .*Matcher defines no from_options"):
        MATCHINGS.add("plain", Matcher)
    assert "plain" not in EMBEDDERS and "plain" not in CLUSTERINGS and "plain" not in MATCHINGS
    assert Plain().embed(["a"]).shape == (1, 2)  # usable unregistered, as an instance


def test_embedder_specs_are_read_through_the_families():
    assert get_embedder("char-ngrams").name == get_embedder("NGRAMS").name == "char-ngrams:3x256"
    with pytest.raises(ValueError, match="the char-ngrams embedder takes no argument, got char-ngrams:4x128"):
        get_embedder("char-ngrams:4x128")
    with pytest.raises(FileNotFoundError, match="FastText vectors not found"):
        get_embedder("fasttext:/no/such/vectors.vec")
    with pytest.raises(FileNotFoundError, match="FastText vectors not found"):
        get_embedder("/no/such/vectors.bin")


def test_a_new_clustering_and_matching_are_their_class_and_one_line():
    out = printed_lines(
        """
        import numpy as np
        from cfc_probeval import CLUSTERINGS, MATCHINGS, Clusterer, Matcher, ProbEval, evaluate_probeval
        from cfc_probeval import make_matcher, CharNgramEmbedder, QuestionTargets
        from protoqa_core.io.records import Cluster

        @CLUSTERINGS.register("one")
        class OneCluster(Clusterer):
            name = "one"

            def _labels(self, vectors):
                return np.zeros(len(vectors), dtype=int)

        @MATCHINGS.register("exact")
        class ExactMatcher(Matcher):
            name = "exact"

            @classmethod
            def from_options(cls, options):
                return cls()

            def params(self):
                return {}

            def match(self, samples, clusters):
                return [tuple(j for j, c in enumerate(clusters) if s in c) for s in samples]

        raw = QuestionTargets("q1", (), {"dog": 6.0, "cat": 4.0})
        r = evaluate_probeval([raw], {"q1": ["dog", "cat", "cow"]}, clustering="one", embedder=CharNgramEmbedder())
        print(r.signature.split("|")[0], [c.id for c in r.questions["q1"].clusters])
        human = QuestionTargets("q1", (Cluster("q1.0", ("dog",), 6), Cluster("q1.1", ("cat",), 4)))
        r = evaluate_probeval([human], {"q1": ["dog"] * 6 + ["cat"] * 4}, clustering="human", matching="exact")
        print(r.signature.split("|")[2], r.kl, make_matcher("exact").name)
        try:
            ProbEval("two")
        except ValueError as exc:
            print(exc)
        """
    )
    assert out == [
        "clustering:one ['q1.auto0', 'wrong']",
        "matching:exact 0.0 exact",
        "unknown clustering 'two'; choose one of auto, human, hac, xmeans, gmeans, one",
    ]


def test_a_new_embedder_family_is_its_class_and_one_line():
    out = printed_lines(
        """
        from cfc_probeval import EMBEDDERS, CharNgramEmbedder, get_embedder

        @EMBEDDERS.register("hashed")
        class Hashed(CharNgramEmbedder):
            shorthands = ("tiny-hash",)

            @classmethod
            def from_spec(cls, argument, *, model_dir=None):
                return cls(dimension=int(argument or 8))

        print(get_embedder("hashed:16").name, get_embedder("Tiny-Hash").name, get_embedder("char-ngrams").name)
        """
    )
    assert out == ["char-ngrams:3x16 char-ngrams:3x8 char-ngrams:3x256"]


def test_the_registries_import_a_plugin_only_when_it_is_asked_for():
    out = printed_lines(
        """
        import sys
        from cfc_probeval import CLUSTERINGS, EMBEDDERS, MATCHINGS

        print(CLUSTERINGS.names(), MATCHINGS.names(), EMBEDDERS.names())
        print([m for m in ("cfc_probeval.clustering", "cfc_probeval.matching", "cfc_probeval.embedders",
                           "cfc_probeval.kmeans") if m in sys.modules])
        MATCHINGS.get("wordnet")
        print([m for m in ("cfc_probeval.clustering", "cfc_probeval.embedders", "sklearn") if m in sys.modules])
        CLUSTERINGS.get("gmeans")
        print("cfc_probeval.kmeans" in sys.modules)
        """
    )
    assert out == [
        "('human', 'hac', 'xmeans', 'gmeans') ('wordnet', 'cosine', 'gp') ('st', 'fasttext', 'char-ngrams')",
        "[]",
        "[]",
        "False",
    ]


# A clustering with an option of its own, defined and registered in the test's process only.
SIZED = """
import numpy as np
from cfc_probeval import CLUSTERINGS, Clusterer
from protoqa_core.options import Option


@CLUSTERINGS.register("sized")
class Sized(Clusterer):
    name = "sized"
    title = "Sized"
    options = (Option("group_size", int, 2, "answers per cluster", low=1, high=50),)

    def __init__(self, group_size=2):
        self.group_size = self.option("group_size").check(group_size)

    def _labels(self, vectors):
        return np.arange(len(vectors)) // self.group_size
"""


def test_a_new_clustering_option_is_one_declaration_and_every_surface_takes_it(tmp_path):
    targets = tmp_path / "t.jsonl"
    targets.write_text(
        '{"metadata": {"id": "q1"}, "question": {"normalized": "name a pet"}, '
        '"answers": {"raw": {"dog": 3, "cat": 2, "fish": 1, "bird": 1}}}\n'
    )
    samples = tmp_path / "s.json"
    samples.write_text('{"q1": ["dog", "dog", "cat", "fish"]}')
    out = printed_lines(
        SIZED
        + f"""
import contextlib, io, json
from cfc_probeval import ProbEval, check_settings, evaluate_probeval, make_clusterer, read_targets
from cfc_probeval.cli import main
from cfc_probeval.evaluate_modules import clustering_inputs

help_text = io.StringIO()
with contextlib.redirect_stdout(help_text), contextlib.suppress(SystemExit):
    main(["evaluate", "--help"])
print([line.strip() for line in help_text.getvalue().splitlines() if line.strip().startswith("--group-size")
       or "per cluster" in line])
print([line.strip() for line in clustering_inputs().splitlines() if "group_size" in line])
print(make_clusterer("sized").params(), make_clusterer("sized", group_size=3).params())
for bad in ({{"group_size": 0}}, {{"group_size": 2.5}}):
    try:
        ProbEval("sized", embedder="char-ngrams", **bad)
    except ValueError as exc:
        print(exc)
try:
    ProbEval("hac", embedder="char-ngrams", group_size=3)
except ValueError as exc:
    print(exc)
result = evaluate_probeval(read_targets({str(targets)!r}), {{"q1": ["dog", "dog", "cat", "fish"]}},
                           clustering="sized", embedder="char-ngrams", group_size=3)
print(result.signature.split("|")[0])
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    status = main([{str(targets)!r}, {str(samples)!r}, "--clustering", "sized", "--group-size", "3",
                   "--embedder", "char-ngrams", "--json", "--quiet"])
print(status, json.loads(printed.getvalue())["signature"].split("|")[0])
errors = io.StringIO()
with contextlib.redirect_stderr(errors):
    status = main([{str(targets)!r}, {str(samples)!r}, "--clustering", "hac", "--group-size", "3", "--quiet"])
print(status, errors.getvalue().strip())
with contextlib.redirect_stderr(errors), contextlib.suppress(SystemExit):
    main([{str(targets)!r}, {str(samples)!r}, "--clustering", "sized", "--group-size", "0"])
print(errors.getvalue().strip().splitlines()[-1])
"""
    )
    assert out == [
        "['--group-size GROUP_SIZE', 'Sized answers per cluster (default 2)']",
        "['group_size (`int`): Sized answers per cluster (default 2).']",
        "{'group_size': 2} {'group_size': 3}",
        "group_size must be an integer in [1, 50], got 0",
        "group_size must be an integer in [1, 50], got 2.5",
        "group_size applies to sized clustering only (got group_size=3 with clustering hac, matching wordnet)",
        "clustering:sized(group_size=3)",
        "0 clustering:sized(group_size=3)",
        "2 probeval: error: group_size applies to sized clustering only (got group_size=3 with clustering hac, "
        "matching wordnet)",
        "probeval evaluate: error: argument --group-size: must be an integer in [1, 50], got '0' "
        "(see probeval evaluate --help)",
    ]

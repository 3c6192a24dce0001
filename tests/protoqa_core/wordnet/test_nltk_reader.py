"""NLTK's private attributes: reached only through protoqa_core/wordnet/nltk_reader.py, and still there.

A new NLTK that renames one fails here, with the attribute's name, instead of deep in a
comparison with the reference or, for an overridden method, not at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.lazy import lazy_import

nltk = lazy_import("nltk")

from protoqa_core.wordnet import nltk_reader as wordnet_nltk  # noqa: E402
from protoqa_core.wordnet.nltk_reader import (  # noqa: E402
    NLTK_OVERRIDDEN_METHODS,
    NLTK_PRIVATE_ATTRIBUTES,
    get_wordnet,
    missing_nltk_attributes,
    nltk_exception_map,
    nltk_hypernym_pointers,
    nltk_lemma_offsets,
    nltk_morphy,
    nltk_shortest_hypernym_paths,
)

REPO = Path(__file__).resolve().parents[3]
ADAPTER = Path(wordnet_nltk.__file__).resolve()


def test_the_installed_nltk_has_every_private_attribute_the_adapter_relies_on():
    missing = missing_nltk_attributes(get_wordnet())
    assert not missing, (
        f"NLTK {nltk.__version__} no longer has {', '.join(missing)}, which protoqa_core/wordnet/nltk_reader.py "
        "relies on: adapt that module to this NLTK"
    )


def test_each_adapter_function_gives_what_nltk_gives():
    wn = get_wordnet()
    dog = wn.synset("dog.n.01")
    assert nltk_lemma_offsets(wn)["dog"]["n"] == [s.offset() for s in wn.synsets("dog", "n")]
    assert nltk_morphy(wn, "dogs", "n") == ["dog"]
    assert nltk_exception_map(wn)["v"]["ran"] == ["run"]
    assert nltk_hypernym_pointers(dog) == dog.hypernyms() + dog.instance_hypernyms()
    paths = nltk_shortest_hypernym_paths(dog, False)
    assert paths[dog] == 0 and set(paths) == set(dog.closure(lambda s: s.hypernyms())) | {dog}
    assert max(nltk_shortest_hypernym_paths(dog, True).values()) == max(paths.values()) + 1  # the simulated root


@pytest.mark.parametrize(
    "owner, name",
    [("reader", "_exception_map"), ("reader class", "map_wn"), ("synset class", "_shortest_hypernym_paths")],
)
def test_a_missing_attribute_is_named(monkeypatch, owner, name):
    from nltk.corpus.reader.wordnet import Synset, WordNetCorpusReader

    wn = get_wordnet()
    target = {"reader": wn, "reader class": WordNetCorpusReader, "synset class": Synset}[owner]
    monkeypatch.delattr(target, name)
    expected = f"{'Synset' if owner == 'synset class' else 'WordNetCorpusReader'}.{name}"
    assert missing_nltk_attributes(wn) == [expected]


def _python_files() -> list[Path]:
    # Hidden folders (.git, the .venv* environments setup.sh builds inside the checkout) and build
    # outputs hold no code of the project.
    skip = {"build", "dist", "node_modules", "site"}
    return sorted(
        path
        for path in REPO.rglob("*.py")
        if not any(part.startswith(".") or part in skip for part in path.relative_to(REPO).parts[:-1])
        and not path.is_symlink()
        and path.resolve() != ADAPTER
    )


@pytest.mark.slow
def test_nltk_private_attributes_are_reached_only_through_the_adapter():
    private = {name for names in NLTK_PRIVATE_ATTRIBUTES.values() for name in names}
    assert not private & set(NLTK_OVERRIDDEN_METHODS)
    files = _python_files()
    assert (
        REPO / "protoqa_core" / "similarity" / "wordnet.py" in files
        and REPO / "tests" / "protoqa_core" / "wordnet" / "test_reader.py" in files
    )
    found = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found += [
            f"{path.relative_to(REPO)}:{node.lineno}: .{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in private
        ]
    assert not found, "NLTK's private attributes outside protoqa_core/wordnet/nltk_reader.py:\n" + "\n".join(found)

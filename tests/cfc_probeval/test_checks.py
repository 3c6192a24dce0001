"""ProbEval's option check: one home, the same one-line error from the library, the command line and
the ``evaluate`` module, and the command line checks before reading a file."""

from __future__ import annotations

import pytest

from cfc_probeval import ProbEval, check_settings
from cfc_probeval.cli import main
from tests.support.lazy import lazy_import

evaluate = lazy_import("evaluate")

K_RULE = "k_init must be an integer in [1, 10000] and <= k_max, got k_init=9 with k_max=5"


def test_k_init_above_k_max_is_the_same_error_everywhere(tmp_path, capsys):
    with pytest.raises(ValueError) as library:
        ProbEval("xmeans", embedder="char-ngrams", k_init=9, k_max=5)
    assert str(library.value) == K_RULE
    # The files do not exist: the options are refused before anything is read.
    status = main(
        [str(tmp_path / "t.jsonl"), str(tmp_path / "p.json"), "--clustering", "xmeans", "--k-init", "9", "--k-max", "5"]
    )
    assert status == 2 and capsys.readouterr().err == f"probeval: error: {K_RULE}\n"


@pytest.mark.usefixtures("hub_offline")
def test_the_evaluate_module_gives_the_librarys_error():
    import cfc_probeval

    module = evaluate.load(cfc_probeval.evaluate_module_path(), "xmeans")
    references = [{"answer": ["dog", "cat"], "count": [3.0, 2.0]}]
    with pytest.raises(ValueError) as error:
        module.compute(predictions=[["dog"]], references=references, embedder="char-ngrams", k_init=9, k_max=5)
    assert str(error.value) == K_RULE


def test_an_option_nothing_declares_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="^unknown option 'k_min'; the options are threshold, seed, linkage, "):
        check_settings("xmeans", "wordnet", {"k_min": 2})


def test_an_unknown_clustering_lists_the_registered_ones():
    with pytest.raises(
        ValueError, match="^unknown clustering 'kmeans'; choose one of auto, human, hac, xmeans, gmeans"
    ):
        check_settings("kmeans", "wordnet", {})

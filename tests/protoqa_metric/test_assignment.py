"""The small-block assignment solver against scipy's: the same pairs and the same sums, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from protoqa_core.io.predictions import read_predictions
from protoqa_core.io.readers import read_targets
from protoqa_metric import assignment
from protoqa_metric.assignment import max_weight_assignment
from protoqa_metric.scoring import ScoringTable, similarity_matrix

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def solve_here(monkeypatch):
    """Every small block is solved here, however many the process has solved before."""
    monkeypatch.setattr(assignment, "PYTHON_BLOCKS", 10**9)


def assert_same_as_scipy(block: np.ndarray, reference=None) -> None:
    """Our assignment equals scipy's; ``reference`` is scipy's function as it was before a test replaced it."""
    if reference is None:
        from scipy.optimize import linear_sum_assignment as reference

    rows, cols = reference(block, maximize=True)
    ours_rows, ours_cols = max_weight_assignment(block)
    assert (ours_rows, ours_cols) == (rows.tolist(), cols.tolist()), block
    assert float(block[ours_rows, ours_cols].sum()).hex() == float(block[rows, cols].sum()).hex(), block


def random_blocks(seed: int, count: int):
    """Shapes either side of square, with many ties: 0/1 matches times cluster counts, quarters, ratios, floats."""
    rng = np.random.default_rng(seed)
    for t in range(count):
        shape = (int(rng.integers(1, 14)), int(rng.integers(1, 14)))
        counts = rng.integers(0, 40, shape[1])[None, :].astype(float)
        kind = t % 7
        if kind == 0:
            yield rng.random(shape)
        elif kind == 1:
            yield (rng.random(shape) < 0.25) * counts
        elif kind == 2:
            yield rng.integers(0, 3, shape).astype(float)
        elif kind == 3:
            yield np.round(rng.random(shape) * 4) / 4 * counts
        elif kind == 4:
            yield (rng.random(shape) < 0.15) * 1.0
        elif kind == 5:
            yield np.full(shape, float(rng.integers(0, 3)))
        else:
            # Ratios of small integers times counts: sums that tie up to the last bit or two.
            yield np.minimum(rng.integers(0, 9, shape) / rng.integers(1, 9, shape), 1.0) * counts


@pytest.mark.parametrize("seed", range(4))
def test_random_blocks_match_scipy(seed):
    for block in random_blocks(seed, 1500):
        assert_same_as_scipy(block)


@pytest.fixture
def scipy_calls(monkeypatch):
    """The shapes of the blocks given to scipy's solver while the test runs, and that solver."""
    calls = []
    from scipy.optimize import linear_sum_assignment as real

    def counting(block, maximize=False):
        calls.append(block.shape)
        return real(block, maximize=maximize)

    monkeypatch.setattr("scipy.optimize.linear_sum_assignment", counting)
    return calls, real


def test_blocks_too_large_or_not_finite_go_to_scipy(scipy_calls):
    calls, real = scipy_calls
    big = np.random.default_rng(0).random((assignment.SMALL_BLOCK_CELLS // 8 + 1, 8))
    assert big.size > assignment.SMALL_BLOCK_CELLS
    assert_same_as_scipy(big, real)
    for bad in (np.array([[1.0, np.nan]]), np.array([[1.0, np.inf], [0.0, 1.0]])):
        with pytest.raises(ValueError, match="invalid numeric entries"):
            max_weight_assignment(bad)
    assert [shape for shape in calls if shape != big.shape] == [(1, 2), (2, 2)]
    assert big.shape in calls


def test_after_enough_blocks_scipy_takes_over(monkeypatch, scipy_calls):
    calls, real = scipy_calls
    monkeypatch.setattr(assignment, "PYTHON_BLOCKS", 3)
    monkeypatch.setattr(assignment, "_solved_here", 0)
    blocks = list(random_blocks(5, 6))
    for block in blocks:
        assert_same_as_scipy(block, real)  # the reference, taken before the replacement: not counted
    assert len(calls) == len(blocks) - 3


@pytest.mark.parametrize("sim", ["exact_match", "wordnet"])
def test_every_dev_block_matches_scipy(shared_data, sim):
    """Every block the standard metrics score on dev (fine-tuned GPT-2 answers), under every limit."""
    targets = read_targets(shared_data / "protoqa" / "dev.crowdsourced.jsonl")
    predictions = read_predictions(shared_data / "protoqa" / "dev.predictions.gpt2finetuned.json")
    checked = 0
    for qid, question in targets.items():
        answers = predictions.get(qid, [])
        matrix = similarity_matrix(answers, question.clusters, sim)
        table = ScoringTable(matrix, question.clusters, rounded=sim == "wordnet", predictions=answers)
        for weighted in (True, False):
            weights, _, _ = table._weights(weighted)
            for rows in range(1, weights.shape[0] + 1):
                block = weights[:rows]
                if block.size and (block > 0).any():
                    assert_same_as_scipy(block)
                    checked += 1
    assert checked > 500

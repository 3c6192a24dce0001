"""The maximum-weight assignment of predictions to clusters, without importing scipy for small matrices.

Importing ``scipy.optimize`` costs more than scoring a data set's small blocks (ARCHITECTURE.md), so they are
solved here with scipy's shortest augmenting path algorithm (D. F. Crouse, IEEE Trans. Aerospace and
Electronic Systems 52(4), 2016), the same operations and ties, bit for bit. It is 10 to 50 times slower
per block, so large blocks, those after the first ``PYTHON_BLOCKS`` and non-finite ones go to scipy.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["max_weight_assignment", "SMALL_BLOCK_CELLS", "PYTHON_BLOCKS"]

#: Blocks up to this many cells are solved here; the pure-Python solver is cubic, scipy's is compiled.
SMALL_BLOCK_CELLS = 400
#: Blocks a process solves here before it imports scipy: a dev set under a few similarities, 0.02-0.1 s at most.
PYTHON_BLOCKS = 2000

_solved_here = 0


def max_weight_assignment(block: np.ndarray) -> tuple[list[int], list[int]]:
    """``linear_sum_assignment(block, maximize=True)``'s rows (ascending) and columns, as lists.

    >>> import numpy as np
    >>> max_weight_assignment(np.array([[1.0, 3.0], [2.0, 4.0], [0.0, 5.0]]))
    ([1, 2], [0, 1])
    """
    global _solved_here
    rows, cols = block.shape
    if rows * cols > SMALL_BLOCK_CELLS or _solved_here >= PYTHON_BLOCKS or not np.isfinite(block).all():
        # scipy.optimize costs 0.2-0.4 s to import: a dev set's blocks are solved here sooner.
        from scipy.optimize import linear_sum_assignment

        chosen_rows, chosen_cols = linear_sum_assignment(block, maximize=True)
        return chosen_rows.tolist(), chosen_cols.tolist()
    if rows == 0 or cols == 0:
        return [], []
    _solved_here += 1  # a race between threads only moves the switch by a block
    transposed = rows > cols
    # Maximizing is minimizing the negated weights; the solver wants no more rows than columns.
    cost = (-block.T if transposed else -block).tolist()
    col_for_row = _shortest_augmenting_paths(cost)
    if not transposed:
        return list(range(rows)), col_for_row
    pairs = sorted(zip(col_for_row, range(cols), strict=True))
    return [r for r, _ in pairs], [c for _, c in pairs]


def _shortest_augmenting_paths(cost: list[list[float]]) -> list[int]:
    """The column of each row in a minimum-cost assignment of ``cost`` (rows <= columns)."""
    n_rows, n_cols = len(cost), len(cost[0])
    u = [0.0] * n_rows
    v = [0.0] * n_cols
    col_for_row = [-1] * n_rows
    row_for_col = [-1] * n_cols
    for current in range(n_rows):
        path = [-1] * n_cols
        path_cost = [math.inf] * n_cols
        rows_seen = [False] * n_rows
        cols_seen = [False] * n_cols
        # Reverse order: a constant matrix gets the identity assignment, as in scipy.
        remaining = list(range(n_cols - 1, -1, -1))
        min_val = 0.0
        i = current
        sink = -1
        while sink == -1:
            rows_seen[i] = True
            best_index, lowest = -1, math.inf
            cost_i, u_i = cost[i], u[i]
            for index, j in enumerate(remaining):
                reduced = min_val + cost_i[j] - u_i - v[j]
                if reduced < path_cost[j]:
                    path[j] = i
                    path_cost[j] = reduced
                # On a tie, prefer a free column: it ends the path.
                if path_cost[j] < lowest or (path_cost[j] == lowest and row_for_col[j] == -1):
                    lowest = path_cost[j]
                    best_index = index
            min_val = lowest
            j = remaining[best_index]
            if row_for_col[j] == -1:
                sink = j
            else:
                i = row_for_col[j]
            cols_seen[j] = True
            remaining[best_index] = remaining[-1]
            remaining.pop()
        u[current] += min_val
        for r in range(n_rows):
            if rows_seen[r] and r != current:
                u[r] += min_val - path_cost[col_for_row[r]]
        for c in range(n_cols):
            if cols_seen[c]:
                v[c] -= min_val - path_cost[c]
        j = sink
        while True:
            r = path[j]
            row_for_col[j] = r
            col_for_row[r], j = j, col_for_row[r]
            if r == current:
                break
    return col_for_row

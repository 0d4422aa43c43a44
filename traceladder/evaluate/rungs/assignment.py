"""Optimal one-to-one assignment (Hungarian / Kuhn–Munkres, O(n^3)).

Why not greedy: first-fit pairing depends on the order of the calls. With E=[f(a=1), f(a=2)] and
A=[f(a=3), f(a=1)], greedy pairs f(a=3) with f(a=1) (name only) and leaves f(a=1) to f(a=2),
scoring 0.5; the best pairing scores 0.75. Peers (agentevals, BFCL, Future AGI) ship that bug.
"""

from __future__ import annotations

from collections.abc import Sequence


def max_weight_assignment(weights: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """Pairs (row, column) maximising the total weight; pairs of weight 0 are dropped.

    `weights` is rows × columns (rectangular allowed). Ties resolve towards the lower column for
    earlier rows, deterministically.
    """
    rows = len(weights)
    cols = len(weights[0]) if rows else 0
    if rows == 0 or cols == 0:
        return []
    if rows == 1 or cols == 1:  # one row (or column): the heaviest single edge, lowest index on ties
        cells = [(weights[i][j], -i, -j) for i in range(rows) for j in range(cols)]
        w, i, j = max(cells)
        return [(-i, -j)] if w > 0 else []
    n = max(rows, cols)
    top = max((w for row in weights for w in row), default=0.0)
    # Minimise cost = top - weight on a square matrix padded with `top` (weight 0).
    cost = [[top - (weights[i][j] if i < rows and j < cols else 0.0) for j in range(n)] for i in range(n)]
    inf = float("inf")
    u = [0.0] * (n + 1)
    v = [0.0] * (n + 1)
    match = [0] * (n + 1)  # match[column] = row (1-based)
    way = [0] * (n + 1)
    for i in range(1, n + 1):
        match[0] = i
        j0 = 0
        minv = [inf] * (n + 1)
        used = [False] * (n + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = match[j0], inf, 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(n + 1):
                if used[j]:
                    u[match[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if match[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            match[j0] = match[j1]
            j0 = j1
    pairs = []
    for j in range(1, n + 1):
        i = match[j] - 1
        if i < rows and j - 1 < cols and weights[i][j - 1] > 0:
            pairs.append((i, j - 1))
    return sorted(pairs)

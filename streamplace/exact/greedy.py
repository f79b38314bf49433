"""A quick feasible placement to start the exact search from (:func:`greedy_placement`)."""

from __future__ import annotations

import numpy as np

from .numbers import dense


SWAP_LIMIT = 300  # greedy_placement tries pairwise swaps only up to this many tasks


def greedy_placement(weights, loads, capacities, *, improve_rounds: int = 50) -> np.ndarray | None:
    """A quick feasible placement (or None): grow nodes by affinity, then local search.

    Nodes are filled largest capacity first; each node starts from the unplaced task with the
    largest weight to the other unplaced tasks and repeatedly takes the unplaced task with the
    largest weight to the node's tasks that still fits. Tasks left over go first-fit-decreasing
    (most free capacity first). Then single-task moves and pairwise swaps that lower the
    inter-node cost are applied until none is left (at most ``improve_rounds`` sweeps).
    """
    W = dense(weights)
    loads = np.asarray(loads, dtype=float).ravel()
    caps = np.asarray(capacities, dtype=float).ravel()
    n, m = loads.size, caps.size
    node = np.full(n, -1, dtype=np.int64)
    free = caps.copy()
    unplaced = np.ones(n, dtype=bool)
    for j in np.argsort(-caps, kind="stable"):
        if not unplaced.any():
            break
        cand = np.flatnonzero(unplaced & (loads <= free[j]))
        if cand.size == 0:
            continue
        deg = W[np.ix_(cand, np.flatnonzero(unplaced))].sum(axis=1)
        t = cand[int(np.argmax(deg))]
        aff = np.zeros(n)
        while True:
            node[t] = j
            unplaced[t] = False
            free[j] -= loads[t]
            aff += W[t]
            cand = np.flatnonzero(unplaced & (loads <= free[j]))
            if cand.size == 0:
                break
            best = cand[np.lexsort((-loads[cand], -aff[cand]))[0]]
            if aff[best] <= 0 and (aff[unplaced] > 0).any():
                break  # nothing connected fits although connected tasks wait: next node
            t = best
    for t in np.flatnonzero(unplaced)[np.argsort(-loads[unplaced], kind="stable")]:
        fits = np.flatnonzero(loads[t] <= free)
        if fits.size == 0:
            return None
        j = fits[np.argmax(free[fits])]
        node[t] = j
        free[j] -= loads[t]
    # local search; A[t, j] = weight between task t and the tasks on node j
    A = np.zeros((n, m))
    for t in range(n):
        np.add.at(A[t], node, W[t])
    for _ in range(improve_rounds):
        improved = False
        for t in range(n):
            j = node[t]
            gain = A[t] - A[t, j]
            gain[loads[t] > free] = -np.inf
            gain[j] = -np.inf
            k = int(np.argmax(gain))
            if gain[k] > 1e-12:
                node[t] = k
                free[j] += loads[t]
                free[k] -= loads[t]
                A[:, j] -= W[t]
                A[:, k] += W[t]
                improved = True
        for t in range(n if n <= SWAP_LIMIT else 0):  # pairwise swaps: O(n^2) per sweep
            for u in range(t + 1, n):
                j, k = node[t], node[u]
                if j == k or loads[u] - loads[t] > free[j] or loads[t] - loads[u] > free[k]:
                    continue
                gain = A[t, k] - A[t, j] + A[u, j] - A[u, k] - 2 * W[t, u]
                if gain > 1e-12:
                    node[t], node[u] = k, j
                    free[j] += loads[t] - loads[u]
                    free[k] += loads[u] - loads[t]
                    A[:, j] += W[u] - W[t]
                    A[:, k] += W[t] - W[u]
                    improved = True
        if not improved:
            break
    return node

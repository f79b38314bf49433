"""k-way graph partitioning with vertex weights, edge weights and per-part targets.

Backed by METIS through ``pymetis`` (multilevel k-way; DESIGN 9: fastest of the PyPI
partitioners and the only fast one with unequal target part weights via ``tpwgts``).
METIS wants positive integer weights: float weights are scaled to integers, zero-weight
edges are dropped (they cannot change a cut). Edge cases are handled here rather than in
METIS: ``k == 1`` puts everything in part 0; ``k >= n`` gives every vertex its own part
(heaviest targets first); an edgeless graph is split greedily by weight.
"""

from __future__ import annotations

import numpy as np
import pymetis
import scipy.sparse as sp

OBJECTIVES = {"cut": 0, "volume": 1}
_EDGE_SCALE = 1_000_000
_VERTEX_SCALE = 10_000


def _to_int_weights(values: np.ndarray, scale: int, *, positive: bool) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return values.astype(np.int64)
    if np.all(values == np.round(values)) and values.max() <= scale:
        out = values.astype(np.int64)
    else:
        top = values.max()
        out = np.round(values * (scale / top)).astype(np.int64) if top > 0 else np.zeros(values.shape, np.int64)
    return np.maximum(out, 1) if positive else out


def _greedy(vweights: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Heaviest vertex to the part with the most remaining target weight (LPT rule)."""
    remaining = targets * vweights.sum()
    parts = np.empty(vweights.shape[0], dtype=np.int64)
    for v in np.argsort(-vweights, kind="stable"):
        p = int(np.argmax(remaining))
        parts[v] = p
        remaining[p] -= vweights[v]
    return parts


def kway_partition(weights: sp.spmatrix, vweights, k: int, *, targets=None, imbalance: float = 1.03,
                   objective: str = "cut", seed: int = 0) -> np.ndarray:
    """Partition a symmetric weighted graph into ``k`` parts; returns the part of each vertex.

    ``targets``: relative part weights (any positive scale; normalised here), e.g. node
    capacities for heterogeneous clusters. ``imbalance``: allowed max part weight / target
    (METIS ``ufactor``). ``objective``: ``cut`` (edge-cut) or ``volume`` (communication volume).
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    n = weights.shape[0]
    vw = np.asarray(vweights, dtype=float)
    tp = np.full(k, 1.0 / k) if targets is None else np.asarray(targets, dtype=float) / np.sum(targets)
    if k == 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    if k >= n:
        order = np.argsort(-tp, kind="stable")[:n]
        parts = np.empty(n, dtype=np.int64)
        parts[np.argsort(-vw, kind="stable")] = order
        return parts
    g = sp.csr_matrix(weights, dtype=float)
    g.setdiag(0)
    g.eliminate_zeros()
    if g.nnz == 0:
        return _greedy(vw, tp)
    options = pymetis.Options(seed=int(seed) % (2**31), ufactor=max(1, int(round((imbalance - 1.0) * 1000))),
                              objtype=OBJECTIVES[objective])
    res = pymetis.part_graph(
        k, pymetis.CSRAdjacency(adj_starts=g.indptr.astype(np.int64), adjacent=g.indices.astype(np.int64)),
        vweights=_to_int_weights(vw, _VERTEX_SCALE, positive=False),
        eweights=_to_int_weights(g.data, _EDGE_SCALE, positive=True),
        tpwgts=(tp / tp.sum()).tolist(), recursive=False, options=options)
    return np.asarray(res.vertex_part, dtype=np.int64)

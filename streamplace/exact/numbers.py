"""Numbers for CP-SAT: integer scaling of weights, loads and capacities, input checks, the
objective on a dense weight matrix.

CP-SAT needs integer coefficients. Weights are multiplied by the smallest power of ten
``S <= MAX_DECIMAL_SCALE`` that makes them integral (to a relative 1e-9; S = 1 for integer data:
exact); if none does, ``S = MAX_DECIMAL_SCALE`` with rounding (:mod:`.solve` then lowers the
bound by the worst-case rounding error). Loads and capacities share one such scale; if it is
inexact, loads are rounded up and capacities down, so every returned placement truly fits.
"""

from __future__ import annotations

import numpy as np


MAX_DECIMAL_SCALE = 10**6


INT_LIMIT = 2**50  # keep every scaled sum far inside CP-SAT's int64 arithmetic


def dense(weights) -> np.ndarray:
    if hasattr(weights, "toarray"):  # scipy.sparse
        weights = weights.toarray()
    return np.asarray(weights, dtype=float)


def cut_weight(weights, node_of_task) -> float:
    """Sum of ``W[u, v]`` over unordered pairs {u, v} placed on different nodes, on a dense
    matrix: the solver's own objective, model-free (the same quantity on a problem's sparse task
    graph is :func:`streamplace.evaluate.metrics.inter_node_cost`)."""
    W = dense(weights)
    x = np.asarray(node_of_task)
    if W.shape[0] == 0:
        return 0.0
    diff = x[:, None] != x[None, :]
    return float(np.triu(W * diff, 1).sum())


def check_inputs(W: np.ndarray, loads: np.ndarray, caps: np.ndarray) -> None:
    n = loads.shape[0]
    if W.shape != (n, n):
        raise ValueError(f"weights must be {n}x{n}, got {W.shape}")
    if not (np.isfinite(W).all() and np.isfinite(loads).all() and np.isfinite(caps).all()):
        raise ValueError("weights, loads and capacities must be finite")
    if (W != W.T).any():
        raise ValueError("weights must be symmetric")
    if (W < 0).any() or (loads < 0).any() or (caps < 0).any():
        raise ValueError("weights, loads and capacities must be non-negative")


def integer_scale(values: np.ndarray, total: float) -> tuple[int, bool]:
    """Smallest power of ten S <= 1e6 with values*S integral: (S, True); else (S, False)."""
    values = np.asarray(values, dtype=float)
    s = 1
    while s <= MAX_DECIMAL_SCALE and total * s <= INT_LIMIT:
        v = values * s
        if np.all(np.abs(v - np.round(v)) <= 1e-9 * np.maximum(1.0, np.abs(v))):
            return s, True
        s *= 10
    return min(MAX_DECIMAL_SCALE, max(1, int(INT_LIMIT // max(total, 1.0)))), False


def fits(node, loads, caps) -> bool:
    """Whether ``node`` places every task within every node's capacity (``loads`` n or n x R,
    ``caps`` m or m x R)."""
    node = np.asarray(node)
    m = caps.shape[0]
    if node.shape != loads.shape[:1] or (node.size and (node.min() < 0 or node.max() >= m)):
        return False
    used = np.zeros(caps.shape)
    np.add.at(used, node.astype(np.int64), loads)
    return bool(np.all(used <= caps))

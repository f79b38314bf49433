"""Exact minimum inter-node cost placement (the ``optimal`` solver core), with OR-Tools CP-SAT.

Problem ([I] Sec. 3, Eq. 1-5)
-----------------------------
Tasks ``t_i`` with load ``L(t_i)``, nodes ``n_u`` with capacity ``C(n_u)``, symmetric traffic
``R(t_i, t_j)`` (the matrix ``W``). The I-Scheduler MILP is

* Eq. 1: ``P[i,u] in {0,1}``, 1 iff task i is on node u;
* Eq. 2: ``X[i,j] = sum_{u != v} P[i,u] P[j,v]`` (1 iff i and j are on different nodes);
* Eq. 3: minimise ``sum_{i<j} R(t_i,t_j) X[i,j]`` (the inter-node cost);
* Eq. 4: ``sum_{i on n_u} L(t_i) <= C(n_u)`` for every node;
* Eq. 5: ``sum_u P[i,u] = 1`` for every task.

Since ``X[i,j] = 1 - sum_u P[i,u] P[j,u]``, minimising Eq. 3 is maximising the intra-node weight
``sum_u sum_{i<j} R(t_i,t_j) P[i,u] P[j,u]``; this module maximises that and reports
``cost = total weight - intra``. Nothing is solved at the level of Eq. 1 directly: the same
problem is expressed over interchangeable task classes and node types, as follows.

1. Interchangeable task classes
-------------------------------
Tasks are grouped into classes such that all tasks of a class have the same load, every block
``W[C, D]`` between two classes is constant (``w_CD``) and all off-diagonal entries of ``W[C, C]``
are equal (``w_CC``). Permuting the tasks inside a class is then an automorphism of the problem,
so only the *number* of tasks of each class on each node matters. Two tasks can share a class iff
they are "twins" (``W[u, x] == W[v, x]`` for every x not in {u, v}, equal loads); twinship is an
equivalence, and the twin classes are the coarsest valid partition (:func:`interchangeable_classes`).
The caller's ``groups`` (e.g. operator ids) are the starting partition: they are refined, and the
solver then merges refined classes whose union is still a valid class (e.g. the parallel middle
operators of a diamond, or all leaf operators of a star: merging is exact and removes that symmetry
entirely). Singletons (the task-level model, reported as ``model="task"``) are always valid;
``model`` gets the suffix ``+config`` when the configuration layer (part 3) was available.

2. Class-count model (CP-SAT)
-----------------------------
Integer ``a[c, j]`` = number of tasks of class c on node j, ``0 <= a <= min(|c|, floor(C_j/l_c))``;
``sum_j a[c, j] = |c|`` (Eq. 5), ``sum_c l_c a[c, j] <= C_j`` (Eq. 4, with ``<=``), and::

    intra_j = sum_{c<d} w_cd a[c,j] a[d,j] + sum_c w_cc a[c,j] (a[c,j] - 1) / 2     (Eq. 2-3)

Products of small integers are encoded with ``AddMultiplicationEquality`` (the self term through an
element table of ``a(a-1)/2``). A unary/order encoding (booleans ``y[c,j,k] = [a[c,j] >= k]``,
``z <= y[c,k], z <= y[d,l]``; only upper bounds are needed as W >= 0 and intra is maximised) and a
half-unary one (``q_k = y[c,k] * a[d]``) are kept as options (``_solve(product=...)``).

Symmetry: nodes of equal capacity are interchangeable; their loads are ordered non-increasing
(``symmetry="load"``); ``"lex"`` orders their count vectors lexicographically instead and also
orders interchangeable but non-mergeable classes row-wise ("double lex", valid for products of
row and column symmetric groups).

Single-node bound: ``D(L)`` = the maximum intra weight one node of load <= L can hold, for every
reachable load level L (a one-node version of the model, or read off the enumerated
configurations below). Per node ``intra_j <= D(load_j)`` (element constraint) and the facets of
the upper concave envelope of ``D`` (linear cuts the LP sees). ``D`` at the capacity alone is
far weaker (see the measurements).

3. Configuration bound and reduced-cost column filtering
--------------------------------------------------------
When the classes and capacities are small enough to enumerate every *configuration* (count
vector ``a`` a single node of capacity C can hold, value ``v(a)`` = its intra weight) of every node
type (nodes of equal capacity; at most ``_CONFIG_LIMIT`` configurations), the problem is the
integer program "choose one configuration per node, covering every class exactly". For any
multipliers ``pi`` (one per class)::

    value(solution) = L(pi) - sum_j g_j,   L(pi) = pi.|c| + sum_T q_T max_a (v(a) - pi.a),
    g_j = max_a (v(a) - pi.a) - (v(a_j) - pi.a_j) >= 0

(``q_T`` nodes of type T), so ``floor(L(pi))`` is an upper bound on the intra weight (and
``L < 0`` proves infeasibility). ``pi`` comes from the configuration LP (Dantzig-Wolfe master,
column generation with GLOP, pricing by enumeration); the bound itself is evaluated in exact
integer arithmetic with ``pi`` rounded to multiples of 2^-20 (valid for any ``pi``). A solution
better than the incumbent V needs ``sum_j g_j <= L(pi) - (V+1)``, so every configuration with a
larger gap can be discarded (reduced-cost fixing); the remaining columns (tens to hundreds on the
micro-benchmarks) form a small integer program solved by CP-SAT: infeasible => the incumbent is
optimal, else its optimum is the global one.

Flow of :func:`solve_min_inter_node`: classes -> incumbent (``hint`` if feasible, and
:func:`greedy_placement`; the better one) -> configuration bound -> filtered configuration IP
(half the remaining time) -> class-count model (30 % of the rest when configurations exist, all
of it otherwise; hinted with the incumbent, cut ``intra <= floor(L)``) -> configuration IP again
with the improved incumbent -> class-count model with what is left. Each step stops the chain
once the incumbent meets the bound.

Measured (72 uniform micro-benchmarks of [I] Sec. 5, 10 s limit, 8 workers on 2 cores): full method 72/72 proven optimal in 1.3 s in total (worst 0.55 s),
with or without ``groups``; without the class merge 71-72/72 (worst ~9 s, diamond/het 24 can miss);
without the configuration layer 66/72 (linear hom 22/26/30 and het 24/28/32 keep a gap of 1);
without either 37/72; without the greedy warm start 69-71/72. Count model alone on 13 hard cases
(linear/het 20-32, unmerged diamond/het 16-20 and star/het 24-32): multiplication 6/13, unary
5/13, half-unary 5/13; load order 6/13, lex 6/13, none 6/13 (slower); ``D(load)`` 6/13 vs
``D(cap)`` 0/13 vs no bound 0/13; 2 workers 6/13 (CP-SAT timings on 2 cores are noisy: these are
single runs).

4. Warm start from ``hint`` (if feasible) or from :func:`greedy_placement`.

Deviations from [I]
-------------------
* Eq. 4 is written ``< C(n_i)`` in the paper; we use ``<=`` (a node of capacity 4 holds 4
  unit-load tasks, as in the paper's own examples and micro-benchmarks).
* Weights are the symmetric matrix ``W`` (traffic of both directions summed by the caller); the
  cost counts every unordered pair once, as Eq. 3 with i < j.

Numbers
-------
CP-SAT needs integer coefficients. Weights are multiplied by the smallest power of ten
``S <= 10**6`` that makes them integral (to a relative 1e-9; S = 1 for integer data: exact). If none
does, ``S = 10**6`` with rounding; the reported ``lower_bound`` is then lowered by the worst-case
rounding error (so it stays valid) and "optimal" is only claimed if the true gap is ~0 (so in
practice such instances end "feasible" with a gap of at most that rounding error). Loads and
capacities share one such scale; if it is inexact, loads are rounded up and capacities down (every
returned placement is truly feasible), but the restricted model may miss solutions, so "optimal"
is downgraded to "feasible", "infeasible" to "unknown", and the bound is the trivial 0.
The reported ``objective`` is always recomputed from the original ``W`` by :func:`inter_node_cost`.

Running time: CP-SAT's branch and bound is exponential in the worst case; the run stops at
``time_limit`` with the best placement and bound found, and jobs above ``max_tasks`` are refused
before a model is built.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from ortools.linear_solver import pywraplp
from ortools.sat.python import cp_model

__all__ = [
    "ExactSolution",
    "solve_min_inter_node",
    "interchangeable_classes",
    "inter_node_cost",
    "greedy_placement",
]

_MAX_DECIMAL_SCALE = 10**6
_INT_LIMIT = 2**50  # keep every scaled sum far inside CP-SAT's int64 arithmetic
_CONFIG_LIMIT = 300_000  # max enumerated configurations over all node types
_COLUMN_LIMIT = 20_000  # max columns of the filtered integer configuration program
_DUAL_BITS = 20  # multipliers are rounded to multiples of 2**-bits, bits <= _DUAL_BITS
_SWAP_LIMIT = 300  # greedy_placement tries pairwise swaps only up to this many tasks
_TERM_LIMIT = 200_000  # max product terms of the class-count model (beyond: no CP-SAT model)


@dataclass(frozen=True)
class ExactSolution:
    """Result of :func:`solve_min_inter_node`."""

    node_of_task: np.ndarray | None  # int array, len n (node index per task); None if none found
    status: str  # "optimal" | "feasible" | "infeasible" | "unknown"
    objective: float | None  # inter-node cost of node_of_task, in the units of W
    lower_bound: float | None  # proven lower bound on the optimal inter-node cost
    seconds: float
    model: str  # "class-count" (some class has > 1 task) or "task" (all classes are singletons)


# --------------------------------------------------------------------------------------------
# public helpers
# --------------------------------------------------------------------------------------------


def _dense(weights) -> np.ndarray:
    if hasattr(weights, "toarray"):  # scipy.sparse
        weights = weights.toarray()
    return np.asarray(weights, dtype=float)


def inter_node_cost(weights, node_of_task) -> float:
    """Sum of ``W[u, v]`` over unordered pairs {u, v} placed on different nodes."""
    W = _dense(weights)
    x = np.asarray(node_of_task)
    if W.shape[0] == 0:
        return 0.0
    diff = x[:, None] != x[None, :]
    return float(np.triu(W * diff, 1).sum())


def interchangeable_classes(weights, loads, groups=None, *, merge: bool = False) -> np.ndarray:
    """Class id (0..k-1, numbered by first task) per task; tasks of a class are interchangeable.

    The classes refine ``groups`` (default: a single group) and the loads: two tasks of the same
    group and load share a class iff they are twins, ``W[u, x] == W[v, x]`` for all x not in
    {u, v} (an equivalence relation). Every class then has constant blocks ``W[C, D]`` and a
    constant off-diagonal inside (verified; a violating class would be split into singletons).
    With ``merge=True`` refined classes of different groups are merged whenever their union is
    still a set of mutual twins; as twinship is an equivalence this is the coarsest valid
    partition, computed directly (``groups`` then no longer matters).
    """
    W = _dense(weights)
    loads = np.asarray(loads, dtype=float).ravel()
    n = loads.shape[0]
    if W.shape != (n, n):
        raise ValueError(f"weights must be {n}x{n}, got {W.shape}")
    if groups is not None and np.asarray(groups).ravel().shape != (n,):
        raise ValueError(f"groups must have one entry per task ({n})")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    g = np.zeros(n, dtype=np.int64) if groups is None or merge else np.unique(np.asarray(groups).ravel(),
                                                                               return_inverse=True)[1]
    # Twins have equal off-diagonal row multisets (row u minus W[u,v] equals row v minus W[v,u]),
    # so only tasks with equal (group, load, sorted off-diagonal row) need the exact test.
    off = W[~np.eye(n, dtype=bool)].reshape(n, n - 1) if n > 1 else np.zeros((n, 0))
    keys = np.sort(off, axis=1) + 0.0  # (+ 0.0 turns -0.0 into 0.0 for the byte keys)
    cls = np.full(n, -1, dtype=np.int64)
    reps: list[int] = []
    buckets: dict[bytes, list[int]] = {}
    for u in range(n):
        key = np.int64(g[u]).tobytes() + np.float64(loads[u] + 0.0).tobytes() + keys[u].tobytes()
        cands = buckets.setdefault(key, [])
        found = -1
        if cands:
            r = np.array([reps[c] for c in cands])
            mism = W[r] != W[u][None, :]
            cnt = mism.sum(axis=1) - mism[:, u] - mism[np.arange(r.size), r]
            hit = np.flatnonzero(cnt == 0)
            if hit.size:
                found = cands[int(hit[0])]
        if found < 0:
            found = len(reps)
            reps.append(u)
            cands.append(found)
        cls[u] = found
    # Safety net (vectorised): W must equal the class model off the diagonal.
    k = len(reps)
    sizes = np.bincount(cls, minlength=k)
    second = np.full(k, -1, dtype=np.int64)  # a second member of each class (for w_CC)
    for u in range(n):
        c = cls[u]
        if u != reps[c] and second[c] < 0:
            second[c] = u
    R = W[np.ix_(reps, reps)].copy()
    multi = sizes > 1
    R[np.flatnonzero(multi), np.flatnonzero(multi)] = W[np.array(reps)[multi], second[multi]]
    model = R[np.ix_(cls, cls)]
    bad_pairs = (model != W) & ~np.eye(n, dtype=bool)
    if bad_pairs.any():  # pragma: no cover - the twin relation guarantees constant blocks
        for u in np.flatnonzero(bad_pairs.any(axis=1)):
            cls[u] = cls.max() + 1
    _, first, inv = np.unique(cls, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inv.ravel()]


def greedy_placement(weights, loads, capacities, *, improve_rounds: int = 50) -> np.ndarray | None:
    """A quick feasible placement (or None): grow nodes by affinity, then local search.

    Nodes are filled largest capacity first; each node starts from the unplaced task with the
    largest weight to the other unplaced tasks and repeatedly takes the unplaced task with the
    largest weight to the node's tasks that still fits. Tasks left over go first-fit-decreasing
    (most free capacity first). Then single-task moves and pairwise swaps that lower the
    inter-node cost are applied until none is left (at most ``improve_rounds`` sweeps).
    """
    W = _dense(weights)
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
        for t in range(n if n <= _SWAP_LIMIT else 0):  # pairwise swaps: O(n^2) per sweep
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


# --------------------------------------------------------------------------------------------
# integer data
# --------------------------------------------------------------------------------------------


def _check_inputs(W: np.ndarray, loads: np.ndarray, caps: np.ndarray) -> None:
    n = loads.shape[0]
    if W.shape != (n, n):
        raise ValueError(f"weights must be {n}x{n}, got {W.shape}")
    if not (np.isfinite(W).all() and np.isfinite(loads).all() and np.isfinite(caps).all()):
        raise ValueError("weights, loads and capacities must be finite")
    if (W != W.T).any():
        raise ValueError("weights must be symmetric")
    if (W < 0).any() or (loads < 0).any() or (caps < 0).any():
        raise ValueError("weights, loads and capacities must be non-negative")


def _scale(values: np.ndarray, total: float) -> tuple[int, bool]:
    """Smallest power of ten S <= 1e6 with values*S integral: (S, True); else (S, False)."""
    values = np.asarray(values, dtype=float)
    s = 1
    while s <= _MAX_DECIMAL_SCALE and total * s <= _INT_LIMIT:
        v = values * s
        if np.all(np.abs(v - np.round(v)) <= 1e-9 * np.maximum(1.0, np.abs(v))):
            return s, True
        s *= 10
    return min(_MAX_DECIMAL_SCALE, max(1, int(_INT_LIMIT // max(total, 1.0)))), False


def _feasible(node, loads, caps) -> bool:
    node = np.asarray(node)
    m = caps.size
    if node.shape != loads.shape or (node.size and (node.min() < 0 or node.max() >= m)):
        return False
    used = np.zeros(m)
    np.add.at(used, node.astype(np.int64), loads)
    return bool(np.all(used <= caps))


class _Classes:
    """The integer problem over classes: sizes, loads, weights; node types."""

    def __init__(self, cls, L, Cp, Wi):
        self.cls = cls
        self.k = k = int(cls.max()) + 1
        self.members = [np.flatnonzero(cls == c) for c in range(k)]
        self.sizes = [int(mc.size) for mc in self.members]
        self.loads = [int(L[mc[0]]) for mc in self.members]
        self.wcc = [int(Wi[mc[0], mc[1]]) if mc.size > 1 else 0 for mc in self.members]
        reps = [int(mc[0]) for mc in self.members]
        self.wcd = Wi[np.ix_(reps, reps)].astype(np.int64)
        np.fill_diagonal(self.wcd, 0)
        self.caps = [int(x) for x in Cp]
        self.m = len(self.caps)
        self.types = sorted(set(self.caps), reverse=True)  # node types, largest capacity first
        self.nodes_of_type = {C: [j for j in range(self.m) if self.caps[j] == C] for C in self.types}

    def counts(self, node) -> np.ndarray:
        H = np.zeros((self.k, self.m), dtype=np.int64)
        np.add.at(H, (self.cls, np.asarray(node, dtype=np.int64)), 1)
        return H

    def value(self, H) -> int:
        """Intra weight (integer units) of the count matrix H (k x m)."""
        H = np.asarray(H, dtype=np.int64)
        v = int(((self.wcd @ H) * H).sum()) // 2
        return v + int((np.array(self.wcc, dtype=np.int64) @ (H * (H - 1) // 2)).sum())

    def placement(self, H) -> np.ndarray:
        node = np.empty(len(self.cls), dtype=np.int64)
        for c in range(self.k):
            reps = np.repeat(np.arange(self.m), H[c])
            node[self.members[c]] = reps
        return node


# --------------------------------------------------------------------------------------------
# the CP-SAT class-count model
# --------------------------------------------------------------------------------------------


class _CountModel:
    """CP-SAT model over count variables a[c][j] (see the module docstring, part 2)."""

    def __init__(self, P: _Classes, caps, *, product="mult", hint_counts=None, cover=True):
        self.m = md = cp_model.CpModel()
        k, nn = P.k, len(caps)
        sizes, cl_loads, wcc, wcd = P.sizes, P.loads, P.wcc, P.wcd
        self.hints: list[tuple] = []
        self.ub = [[sizes[c] if cl_loads[c] == 0 else min(sizes[c], caps[j] // cl_loads[c]) for j in range(nn)]
                   for c in range(k)]
        H = hint_counts
        self.a = [[md.new_int_var(0, self.ub[c][j], f"a{c}_{j}") for j in range(nn)] for c in range(k)]
        for c in range(k):
            if cover:  # Eq. 5: every task on exactly one node
                md.add(sum(self.a[c]) == sizes[c])
            else:  # one node on its own (single-node bound): any subset of the tasks
                md.add(sum(self.a[c]) <= sizes[c])
        self.load = [sum(cl_loads[c] * self.a[c][j] for c in range(k)) for j in range(nn)]
        for j in range(nn):
            md.add(self.load[j] <= caps[j])  # Eq. 4
        if H is not None:
            for c in range(k):
                for j in range(nn):
                    self.hints.append((self.a[c][j], int(H[c, j])))
        pairs = [(c, d, int(wcd[c, d])) for c in range(k) for d in range(c + 1, k) if wcd[c, d] > 0]
        self.y: dict[tuple[int, int], list] = {}
        if product in ("unary", "semi"):
            for j in range(nn):
                active = {c for c in range(k) if wcc[c] > 0 and self.ub[c][j] >= 2}
                for c, d, _ in pairs:
                    if self.ub[c][j] and self.ub[d][j]:
                        active.update((c, d))
                for c in sorted(active):
                    ys = [md.new_bool_var(f"y{c}_{j}_{t + 1}") for t in range(self.ub[c][j])]
                    for t in range(len(ys) - 1):
                        md.add_implication(ys[t + 1], ys[t])
                    md.add(sum(ys) == self.a[c][j])
                    self.y[c, j] = ys
                    if H is not None:
                        for t, v in enumerate(ys):
                            self.hints.append((v, int(H[c, j] >= t + 1)))
        self.intra = []
        for j in range(nn):
            terms = []
            for c in range(k):
                if wcc[c] > 0 and self.ub[c][j] >= 2:
                    if product == "mult":
                        f = [v * (v - 1) // 2 for v in range(self.ub[c][j] + 1)]
                        s = md.new_int_var(0, f[-1], f"s{c}_{j}")
                        md.add_element(self.a[c][j], f, s)
                        terms.append(wcc[c] * s)
                        if H is not None:
                            self.hints.append((s, f[int(H[c, j])]))
                    else:
                        ys = self.y[c, j]
                        terms.append(wcc[c] * sum(t * ys[t] for t in range(1, len(ys))))
            for c, d, w in pairs:
                uc, ud = self.ub[c][j], self.ub[d][j]
                if not (uc and ud):
                    continue
                if product == "mult":
                    p = md.new_int_var(0, uc * ud, f"p{c}_{d}_{j}")
                    md.add_multiplication_equality(p, [self.a[c][j], self.a[d][j]])
                    terms.append(w * p)
                    if H is not None:
                        self.hints.append((p, int(H[c, j] * H[d, j])))
                elif product == "semi":  # q_t = [a_c >= t] * a_d
                    c2, d2 = (d, c) if uc > ud else (c, d)
                    ys, ad, u2 = self.y[c2, j], self.a[d2][j], self.ub[d2][j]
                    qs = []
                    for t, yv in enumerate(ys):
                        q = md.new_int_var(0, u2, f"q{c2}_{d2}_{j}_{t}")
                        md.add(q <= ad)
                        md.add(q <= u2 * yv)
                        if qs:
                            md.add(q <= qs[-1])
                        qs.append(q)
                        if H is not None:
                            self.hints.append((q, int(H[d2, j]) if H[c2, j] >= t + 1 else 0))
                    terms.append(w * sum(qs))
                else:  # full unary: z_{t1,t2} = [a_c >= t1] and [a_d >= t2]
                    zs = []
                    for t1, v1 in enumerate(self.y[c, j]):
                        for t2, v2 in enumerate(self.y[d, j]):
                            z = md.new_bool_var(f"z{c}_{d}_{j}_{t1}_{t2}")
                            md.add_implication(z, v1)
                            md.add_implication(z, v2)
                            zs.append(z)
                            if H is not None:
                                self.hints.append((z, int(H[c, j] >= t1 + 1 and H[d, j] >= t2 + 1)))
                    terms.append(w * sum(zs))
            self.intra.append(sum(terms) if terms else 0)

    def lex_geq(self, xs, ys, tag):
        """Add xs >=_lex ys (lists of int vars)."""
        md = self.m
        eq_prev = None  # None = true
        for i, (x, y) in enumerate(zip(xs, ys)):
            if eq_prev is None:
                md.add(x >= y)
            else:
                md.add(x >= y).only_enforce_if(eq_prev)
            if i == len(xs) - 1:
                break
            e = md.new_bool_var(f"lex{tag}_{i}")
            md.add(x == y).only_enforce_if(e)
            if eq_prev is None:
                md.add(x >= y + 1).only_enforce_if(~e)
            else:
                md.add_implication(e, eq_prev)
                md.add(x >= y + 1).only_enforce_if([eq_prev, ~e])
            eq_prev = e


def _class_orbits(P: _Classes) -> list[list[int]]:
    """Groups of (non-merged) classes that are pairwise interchangeable at class level."""
    k, seen, out = P.k, [False] * P.k, []
    for c in range(k):
        if seen[c]:
            continue
        grp, seen[c] = [c], True
        for d in range(c + 1, k):
            if seen[d] or (P.sizes[d], P.loads[d], P.wcc[d]) != (P.sizes[c], P.loads[c], P.wcc[c]):
                continue
            mask = np.ones(k, dtype=bool)
            mask[[c, d]] = False
            if np.array_equal(P.wcd[c, mask], P.wcd[d, mask]):
                grp.append(d)
                seen[d] = True
        if len(grp) > 1:
            out.append(grp)
    return out


def _canonical_counts(H, col_groups, row_groups):
    """Sort columns within col_groups and rows within row_groups lexicographically (descending)
    until both orders hold (terminates: each sort increases the row-major flattening)."""
    H = H.copy()
    for _ in range(1000):
        changed = False
        for grp in col_groups:
            if len(grp) > 1:
                order = sorted(range(len(grp)), key=lambda i: tuple(H[:, grp[i]]), reverse=True)
                if order != list(range(len(grp))):
                    H[:, grp] = H[:, [grp[i] for i in order]]
                    changed = True
        for grp in row_groups:
            if len(grp) > 1:
                order = sorted(range(len(grp)), key=lambda i: tuple(H[grp[i], :]), reverse=True)
                if order != list(range(len(grp))):
                    H[grp, :] = H[[grp[i] for i in order], :]
                    changed = True
        if not changed:
            break
    return H


def _load_levels(P: _Classes, max_cap: int, limit: int = 48) -> list[int]:
    """The reachable node loads <= max_cap (subset sums of the class loads), or [] if > limit."""
    reach, mask = 1, (1 << (max_cap + 1)) - 1
    for lc, sc in zip(P.loads, P.sizes):
        if lc == 0:
            continue
        for _ in range(min(sc, max_cap // lc)):
            new = (reach | (reach << lc)) & mask
            if new == reach:
                break
            reach = new
        if bin(reach).count("1") > limit:
            return []
    return [x for x in range(max_cap + 1) if reach >> x & 1]


def _upper_hull(pts):
    """Segments ((x1, y1), (x2, y2)) of the upper concave envelope of points sorted by x."""
    hull: list[tuple[int, int]] = []
    for p in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (y2 - y1) * (p[0] - x1) <= (p[1] - y1) * (x2 - x1):
                hull.pop()
            else:
                break
        hull.append(p)
    return list(zip(hull, hull[1:]))


def _new_solver(time_limit, num_workers, seed, params=None, log=False):
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.01, float(time_limit))
    solver.parameters.num_workers = max(1, int(num_workers))
    solver.parameters.random_seed = int(seed)
    solver.parameters.interleave_search = True  # deterministic parallel search: same seed, same answer
    solver.parameters.log_search_progress = bool(log)
    # CP-SAT's own SIGINT handler only ends the search early (the command then went on and exited 0)
    # and clashes with the CLI's; Ctrl-C is the CLI's to handle (streamplace.interrupt).
    solver.parameters.catch_sigint_signal = False
    for key, val in (params or {}).items():
        if isinstance(val, list):
            getattr(solver.parameters, key).extend(val)
        else:
            setattr(solver.parameters, key, val)
    return solver


def _single_node_bound(P: _Classes, cap, time_limit, num_workers, seed):
    """D(cap) = max intra weight of one node of capacity cap: an upper bound (proven or LP) or None."""
    cm = _CountModel(P, [cap], product="mult", cover=False)
    cm.m.maximize(cm.intra[0])
    solver = _new_solver(time_limit, num_workers, seed)
    st = solver.solve(cm.m)
    if st == cp_model.OPTIMAL:
        return int(round(solver.objective_value))
    if st == cp_model.FEASIBLE:
        return int(math.floor(solver.best_objective_bound + 1e-6))
    return None


def _node_level_bounds(P: _Classes, cfgs, budget, num_workers, seed, mode) -> dict[int, int]:
    """D(L) for the reachable load levels (mode "load") or the capacities (mode "cap")."""
    levels = _load_levels(P, max(P.caps)) if mode == "load" else []
    if not levels:
        levels = sorted(set(P.caps) | {0})
    D: dict[int, int] = {}
    if cfgs is not None:  # read off the enumerated configurations of the largest type
        A, v = cfgs[P.types[0]]
        ld = A @ np.array(P.loads, dtype=np.int64)
        for lev in levels:
            D[lev] = int(v[ld <= lev].max())
        return D
    per_level = min(1.0, max(0.02, 0.2 * budget() / max(1, len(levels))))  # <= ~20 % of the budget
    for lev in levels:
        if lev == 0:
            D[0] = 0
            continue
        ub = _single_node_bound(P, lev, per_level, num_workers, seed)
        if ub is not None:
            D[lev] = ub
    run = None  # make D monotone (an unproven level keeps the bound of a higher level)
    for lev in sorted(D, reverse=True):
        run = D[lev] if run is None else min(run, D[lev])
        D[lev] = run
    return D


def _count_phase(P: _Classes, H, time_limit, num_workers, seed, *, ub_cut=None, D=None, product="mult",
                 symmetry="load", node_bound="load", params=None, log=False):
    """Solve the class-count model. Returns (cp status, counts k x m or None, bound or None)."""
    m, k = P.m, P.k
    # nodes sorted by capacity, descending (the count model's node order), mapped back on output
    order = [j for C in P.types for j in P.nodes_of_type[C]]
    caps = [P.caps[j] for j in order]
    col_groups, pos = [], 0
    for C in P.types:
        q = len(P.nodes_of_type[C])
        col_groups.append(list(range(pos, pos + q)))
        pos += q
    row_groups = _class_orbits(P) if symmetry == "lex" else []
    Hs = None
    if H is not None:
        Hs = H[:, order]
        if symmetry == "lex":
            Hs = _canonical_counts(Hs, col_groups, row_groups)
        elif symmetry == "load":
            ld = np.array(P.loads, dtype=np.int64) @ Hs
            for grp in col_groups:
                srt = sorted(grp, key=lambda j: -ld[j])
                Hs[:, grp] = Hs[:, srt]
    cm = _CountModel(P, caps, product=product, hint_counts=Hs)
    md = cm.m
    if D and node_bound:
        for j, cap in enumerate(caps):
            if isinstance(cm.intra[j], int):
                continue
            pts = sorted((lev, d) for lev, d in D.items() if lev <= cap)
            above = [lev for lev in D if lev >= cap]
            if node_bound != "load" or not pts:
                if above:
                    md.add(cm.intra[j] <= D[min(above)])
                continue
            if above and pts[-1][0] < cap:
                pts.append((cap, D[min(above)]))
            for (x1, y1), (x2, y2) in _upper_hull(pts):  # concave envelope facets
                md.add((x2 - x1) * cm.intra[j] <= (x2 - x1) * y1 + (y2 - y1) * (cm.load[j] - x1))
            if cap <= 4096 and len(pts) > 2:
                # step function intra_j <= D(largest level <= load_j) (levels = reachable loads)
                table, cur, it = [], 0, iter(pts)
                nxt = next(it, None)
                for x in range(cap + 1):
                    while nxt is not None and nxt[0] <= x:
                        cur = nxt[1]
                        nxt = next(it, None)
                    table.append(cur)
                lv = md.new_int_var(0, cap, f"load{j}")
                md.add(lv == cm.load[j])
                dv = md.new_int_var(0, max(table), f"dmax{j}")
                md.add_element(lv, table, dv)
                md.add(cm.intra[j] <= dv)
    if symmetry == "lex":
        for grp in col_groups:
            for j1, j2 in zip(grp, grp[1:]):
                cm.lex_geq([cm.a[c][j1] for c in range(k)], [cm.a[c][j2] for c in range(k)], f"n{j1}")
        for grp in row_groups:
            for c1, c2 in zip(grp, grp[1:]):
                cm.lex_geq(cm.a[c1], cm.a[c2], f"c{c1}")
    elif symmetry == "load":
        for grp in col_groups:
            for j1, j2 in zip(grp, grp[1:]):
                md.add(cm.load[j1] >= cm.load[j2])
    obj = sum(cm.intra)
    if ub_cut is not None and not isinstance(obj, int):
        md.add(obj <= ub_cut)
    md.maximize(obj)
    for var, val in cm.hints:
        md.add_hint(var, val)
    solver = _new_solver(time_limit, num_workers, seed, params, log)
    st = solver.solve(md)
    counts, bound = None, None
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        counts = np.zeros((k, m), dtype=np.int64)
        for c in range(k):
            for jj, j in enumerate(order):
                counts[c, j] = solver.value(cm.a[c][jj])
    if st == cp_model.OPTIMAL:
        bound = P.value(counts)
    elif st in (cp_model.FEASIBLE, cp_model.UNKNOWN) and math.isfinite(solver.best_objective_bound):
        bound = int(math.floor(solver.best_objective_bound + 1e-6))
    return st, counts, bound


# --------------------------------------------------------------------------------------------
# configuration bound + filtered configuration integer program
# --------------------------------------------------------------------------------------------


def _enumerate_configs(P: _Classes, cap: int, limit: int):
    """All count vectors one node of capacity cap can hold (row 0 = empty) and their values."""
    A = np.zeros((1, 0), dtype=np.int64)
    used = np.zeros(1, dtype=np.int64)
    for c in range(P.k):
        lc, sc = P.loads[c], P.sizes[c]
        mx = np.full(A.shape[0], sc, dtype=np.int64) if lc == 0 else np.minimum(sc, (cap - used) // lc)
        reps = mx + 1
        tot = int(reps.sum())
        if tot > limit:
            return None
        vals = np.arange(tot, dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps)
        A = np.concatenate([np.repeat(A, reps, axis=0), vals[:, None]], axis=1)
        used = np.repeat(used, reps) + lc * vals
    v = ((A @ P.wcd) * A).sum(axis=1) // 2 + (A * (A - 1) // 2) @ np.array(P.wcc, dtype=np.int64)
    return A, v


def _all_configs(P: _Classes):
    """{capacity: (A, v)} for every node type, or None beyond _CONFIG_LIMIT configurations."""
    r = _enumerate_configs(P, P.types[0], _CONFIG_LIMIT)
    if r is None:
        return None
    A, v = r
    ld = A @ np.array(P.loads, dtype=np.int64)
    out = {P.types[0]: (A, v)}
    for C in P.types[1:]:
        keep = ld <= C  # the configurations of a smaller node are a subset (row 0 stays first)
        out[C] = (A[keep], v[keep])
    return out


def _dual_bits(P: _Classes, cfgs) -> int:
    """Fraction bits for the multipliers so that every integer in _lagrangian fits in int64 (<0: none)."""
    big = _big_m(P)
    vmax = max(int(v.max()) for _, v in cfgs.values())
    mag = (big + vmax + 1) * (sum(P.sizes) + 1) * (P.m + 1)  # >= |pi.a|, |v|, sum_T q_T |M_T|
    return min(_DUAL_BITS, 62 - mag.bit_length())


def _big_m(P: _Classes) -> int:
    return int(P.wcd.sum()) + sum(P.wcc) * max(P.sizes) ** 2 + 1


def _lagrangian(P: _Classes, cfgs, pi_int, b):
    """Exact L(pi) * 2^b (integer) and the per-configuration gaps (same scale)."""
    s = np.array(P.sizes, dtype=np.int64)
    L = int(pi_int @ s)
    gaps = {}
    for C in P.types:
        A, v = cfgs[C]
        r = (v << b) - A @ pi_int
        M = int(r.max())
        L += len(P.nodes_of_type[C]) * M
        gaps[C] = M - r
    return L, gaps


def _config_lp(P: _Classes, cfgs, init_counts, deadline, max_iter=500):
    """Column generation for the configuration LP; returns the cover duals pi, clipped to
    [-big, big] (any pi gives a valid bound, so clipping only keeps the integers small)."""
    lp = pywraplp.Solver.CreateSolver("GLOP")
    k = P.k
    big = float(_big_m(P))
    cover = [lp.Constraint(P.sizes[c], P.sizes[c]) for c in range(k)]
    typ = {C: lp.Constraint(len(P.nodes_of_type[C]), len(P.nodes_of_type[C])) for C in P.types}
    obj = lp.Objective()
    obj.SetMaximization()
    for c in range(k):  # artificial columns keep the master feasible
        x = lp.NumVar(0, P.sizes[c], "")
        cover[c].SetCoefficient(x, 1)
        obj.SetCoefficient(x, -big)
    have = {C: set() for C in P.types}

    def add(C, i):
        if i in have[C]:
            return
        have[C].add(i)
        A, v = cfgs[C]
        x = lp.NumVar(0, len(P.nodes_of_type[C]), "")
        typ[C].SetCoefficient(x, 1)
        obj.SetCoefficient(x, float(v[i]))
        for c in np.flatnonzero(A[i]):
            cover[c].SetCoefficient(x, float(A[i, c]))

    for C in P.types:
        add(C, 0)  # the empty configuration
    if init_counts is not None:
        for C in P.types:
            A, _ = cfgs[C]
            index = {tuple(row): i for i, row in enumerate(A.tolist())} if A.shape[0] < 50_000 else None
            for j in P.nodes_of_type[C]:
                col = tuple(int(x) for x in init_counts[:, j])
                if index is not None and col in index:
                    add(C, index[col])
                elif index is None:
                    hit = np.flatnonzero((A == np.array(col)).all(axis=1))
                    if hit.size:
                        add(C, int(hit[0]))
    pi = np.zeros(k)
    for _ in range(max_iter):
        if lp.Solve() != pywraplp.Solver.OPTIMAL:
            break
        pi = np.array([cover[c].dual_value() for c in range(k)])
        mu = {C: typ[C].dual_value() for C in P.types}  # read every dual before adding columns
        added = 0
        for C in P.types:
            A, v = cfgs[C]
            rc = v - A @ pi - mu[C]
            cand = np.flatnonzero(rc > 1e-7)
            if cand.size:
                top = cand[np.argsort(-rc[cand])[:max(5, 50 // len(P.types))]]
                for i in top:
                    if int(i) not in have[C]:
                        add(C, int(i))
                        added += 1
        if not added or time.perf_counter() > deadline:
            break
    return np.clip(pi, -big, big)


def _config_ip(P: _Classes, cfgs, gaps, delta, target, time_limit, num_workers, seed):
    """Max intra over configurations with gap <= delta and value >= target (None if too many columns).

    Returns (cp status, counts or None, bound or None)."""
    cols = {C: np.flatnonzero(gaps[C] <= delta) for C in P.types}
    if sum(c.size for c in cols.values()) > _COLUMN_LIMIT:
        return None
    md = cp_model.CpModel()
    xs, cover, val = {}, [[] for _ in range(P.k)], []
    for C in P.types:
        A, v = cfgs[C]
        q = len(P.nodes_of_type[C])
        for i in cols[C]:
            x = md.new_int_var(0, q, f"x{C}_{i}")
            xs[C, int(i)] = x
            val.append(int(v[i]) * x)
            for c in np.flatnonzero(A[i]):
                cover[c].append(int(A[i, c]) * x)
        md.add(sum(xs[C, int(i)] for i in cols[C]) == q)
    for c in range(P.k):
        md.add(sum(cover[c]) == P.sizes[c])
    md.add(sum(val) >= target)
    md.maximize(sum(val))
    solver = _new_solver(time_limit, num_workers, seed)
    st = solver.solve(md)
    counts, bound = None, None
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        counts = np.zeros((P.k, P.m), dtype=np.int64)
        for C in P.types:
            nodes = iter(P.nodes_of_type[C])
            A, _ = cfgs[C]
            for i in cols[C]:
                for _ in range(solver.value(xs[C, int(i)])):
                    counts[:, next(nodes)] = A[i]
        bound = P.value(counts) if st == cp_model.OPTIMAL else int(math.floor(solver.best_objective_bound + 1e-6))
    return st, counts, bound


# --------------------------------------------------------------------------------------------
# the solver
# --------------------------------------------------------------------------------------------


def _solve(weights, loads, capacities, *, groups=None, time_limit=10.0, num_workers=8, seed=0, hint=None,
           product="mult", symmetry="load", node_bound="load", merge=True, configs=True, warm_start=True,
           count_share=0.3, log=False, params=None) -> ExactSolution:
    """:func:`solve_min_inter_node` with the formulation switches used for the measurements.

    product: "mult" | "unary" | "semi"; symmetry: "load" | "lex" | "none"; node_bound: "load" |
    "cap" | None; merge: merge twin classes across groups; configs: use the configuration layer
    (part 3 of the module docstring) when enumerable; count_share: share of the remaining time
    given to the count model before the configuration program when the latter is too large for
    the greedy incumbent.
    """
    t_start = time.perf_counter()
    deadline = t_start + float(time_limit)
    budget = lambda: max(0.0, deadline - time.perf_counter())  # noqa: E731
    W = _dense(weights)
    loads = np.asarray(loads, dtype=float).ravel()
    caps = np.asarray(capacities, dtype=float).ravel()
    _check_inputs(W, loads, caps)
    n, m = loads.size, caps.size

    if n == 0:
        return ExactSolution(np.zeros(0, dtype=np.int64), "optimal", 0.0, 0.0, time.perf_counter() - t_start,
                             "task")
    if m == 0 or loads.max() > caps.max() or math.fsum(loads) > math.fsum(caps):
        return ExactSolution(None, "infeasible", None, None, time.perf_counter() - t_start, "task")

    # ---- integer data
    total_w = float(np.triu(W, 1).sum())
    sw, w_exact = _scale(W[np.triu_indices(n, 1)], total_w)
    sl, l_exact = _scale(np.concatenate([loads, caps]), float(max(loads.sum(), caps.max())))
    if l_exact:
        L, Cp = np.round(loads * sl).astype(np.int64), np.round(caps * sl).astype(np.int64)
    else:  # conservative: loads up, capacities down
        L, Cp = np.ceil(loads * sl).astype(np.int64), np.floor(caps * sl).astype(np.int64)
    Wi = np.round(W * sw).astype(np.int64)
    rounding_err = 0.0 if w_exact else float(np.triu(np.maximum(W * sw - Wi, 0), 1).sum())
    total_int = int(np.triu(Wi, 1).sum())

    if groups is not None and np.asarray(groups).ravel().shape != (n,):
        raise ValueError(f"groups must have one entry per task ({n})")
    cls = interchangeable_classes(W, loads, groups, merge=merge)
    P = _Classes(cls, L, Cp, Wi)
    model_name = "class-count" if P.k < n else "task"

    # ---- incumbent (integer intra value V, counts H)
    best_H, V = None, -1
    Lf, Cf = L.astype(float), Cp.astype(float)
    if hint is not None:
        h = np.asarray(hint)
        if h.dtype.kind == "f" and np.all(h == np.round(h)):
            h = h.astype(np.int64)
        if h.shape == (n,) and h.dtype.kind in "iu" and _feasible(h, Lf, Cf) and _feasible(h, loads, caps):
            best_H = P.counts(h)
            V = P.value(best_H)
    if warm_start:
        g = greedy_placement(W, Lf, Cf)
        if g is not None and _feasible(g, Lf, Cf) and _feasible(g, loads, caps):
            Hg = P.counts(g)
            if P.value(Hg) > V:
                best_H, V = Hg, P.value(Hg)

    UB = None  # proven upper bound on the intra weight (integer units)
    infeasible = False

    def take(counts, bound):
        nonlocal best_H, V, UB
        if counts is not None and P.value(counts) > V:
            best_H, V = counts, P.value(counts)
        if bound is not None:
            UB = bound if UB is None else min(UB, bound)

    # ---- configuration layer
    cfgs = _all_configs(P) if configs else None
    gaps, L_int = None, None
    bits = _dual_bits(P, cfgs) if cfgs is not None else -1
    if bits < 0:  # (weights too large for exact int64 arithmetic)
        cfgs = None
    if cfgs is not None:
        pi = _config_lp(P, cfgs, best_H, t_start + 0.3 * float(time_limit))
        pi_int = np.round(pi * (1 << bits)).astype(np.int64)
        L_int, gaps = _lagrangian(P, cfgs, pi_int, bits)
        take(None, L_int >> bits)

    def config_round(share):
        """Filtered configuration IP for 'better than V'; True if it settled optimality."""
        target = V + 1
        delta = L_int - (target << bits)
        if delta < 0:
            take(None, V)
            return True
        r = _config_ip(P, cfgs, gaps, delta, target, budget() * share, num_workers, seed)
        if r is None:
            return False
        st, counts, bound = r
        if st == cp_model.INFEASIBLE:  # no solution better than V exists
            take(None, V)
            return True
        take(counts, bound)
        return st == cp_model.OPTIMAL

    if UB is not None and UB < 0:  # every placement has intra >= 0: the bound proves infeasibility
        infeasible = True
    # the class-count model is only built when it stays of reasonable size
    n_terms = (int(np.count_nonzero(np.triu(P.wcd, 1))) + sum(w > 0 for w in P.wcc) + P.k) * P.m
    count_ok = n_terms <= _TERM_LIMIT

    D_cache: list = []

    def count_round(share):
        nonlocal infeasible
        if not D_cache:
            D_cache.append(_node_level_bounds(P, cfgs, budget, num_workers, seed, node_bound) if node_bound else None)
        D = D_cache[0]
        st, counts, bound = _count_phase(P, best_H, budget() * share, num_workers, seed, ub_cut=UB, D=D,
                                         product=product, symmetry=symmetry, node_bound=node_bound,
                                         params=params, log=log)
        if st == cp_model.INFEASIBLE:
            infeasible = best_H is None  # (with an incumbent this cannot happen: V <= UB)
        else:
            take(counts, bound)

    def open_():
        return not infeasible and (UB is None or V < UB) and budget() > 0

    use_ip = cfgs is not None and best_H is not None
    if open_() and not (use_ip and config_round(0.5)) and open_() and count_ok:
        # the count model improves the incumbent (which shrinks the configuration program) and
        # may prove optimality itself; then one more configuration round, or the count model again
        share = count_share if cfgs is not None else 1.0
        count_round(share)
        if open_() and not (best_H is not None and cfgs is not None and config_round(1.0)) and open_() and share < 1:
            count_round(1.0)
    if cfgs is not None:
        model_name += "+config"

    # ---- result in original units
    elapsed = time.perf_counter() - t_start
    if infeasible:
        return ExactSolution(None, "infeasible" if l_exact else "unknown", None, None if l_exact else 0.0,
                             elapsed, model_name)
    node = P.placement(best_H) if best_H is not None else None
    obj = inter_node_cost(W, node) if node is not None else None
    if UB is None:
        lb = 0.0
    elif w_exact:
        lb = (total_int - UB) / sw
        if sw > 1:
            lb = float(np.nextafter(lb, -np.inf))
    else:
        lb = float(np.nextafter(total_w - (UB + rounding_err) / sw, -np.inf))
    lb = max(0.0, lb)
    proven = UB is not None and best_H is not None and V >= UB
    if node is None:
        status = "unknown"
    elif proven and l_exact and (w_exact or obj - lb <= 1e-9 * max(1.0, total_w)):
        status = "optimal"
        lb = obj if w_exact else min(lb, obj)
    else:
        status = "feasible"
    if not l_exact:
        lb = 0.0
    if obj is not None:
        lb = min(lb, obj)
    return ExactSolution(node, status, obj, lb, time.perf_counter() - t_start, model_name)


def solve_min_inter_node(weights, loads, capacities, *, groups=None, time_limit=10.0, num_workers=8, seed=0,
                         hint=None) -> ExactSolution:
    """Place every task on one node, within capacity, minimising the inter-node cost ([I] Eq. 1-5).

    Args:
        weights: symmetric non-negative n x n matrix (dense, or scipy sparse), zero diagonal
            (the diagonal is ignored).
        loads: n task loads (>= 0). capacities: m node capacities (>= 0).
        groups: optional label per task (e.g. operator id): the starting partition into
            interchangeable classes, refined to exact twins; refined classes whose union is
            still interchangeable are merged (exact, and it removes more symmetry).
        time_limit: wall-clock seconds for the whole call.
        num_workers: CP-SAT workers (keep >= 8 even on 2 cores: the portfolio is what proves).
        seed: CP-SAT random seed.
        hint: optional node-per-task placement used as warm start (ignored if infeasible).

    Returns:
        :class:`ExactSolution`. "optimal" only when proven; otherwise the best placement found
        and a valid lower bound ("feasible"), "infeasible" when no placement fits, or
        "unknown" when nothing was found in time.
    """
    return _solve(weights, loads, capacities, groups=groups, time_limit=time_limit, num_workers=num_workers,
                  seed=seed, hint=hint)


# ---------------------------------------------------------------------- the scheduler
from ..model import Placement, Problem  # noqa: E402  (the solver core above is model-free)
from .base import Outcome, Scheduler, register  # noqa: E402
from .second_level import DEFAULT_TASKS_PER_WORKER, assign_workers  # noqa: E402


@register
@dataclass(frozen=True, kw_only=True)
class OptimalScheduler(Scheduler):
    """``optimal``: :func:`solve_min_inter_node` on the problem's task graph, then the second level.

    ``time_limit`` (s) bounds the solve: when it runs out the best placement found is returned
    with status ``feasible`` and the proven ``lower_bound``. The dense weight matrix limits the
    exact solver to ``max_tasks`` tasks; larger problems are refused with a message (use
    ``ischeduler``, which fuses tasks until the exact solver can take them).
    """

    name = "optimal"
    complexity = "exponential; bounded by time_limit and max_tasks"
    budget_param = "time_limit"
    time_limit: float = 10.0
    num_workers: int = 8
    tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER
    max_tasks: int = 2000

    def __post_init__(self):
        if self.time_limit <= 0:
            raise ValueError(f"time_limit must be > 0, got {self.time_limit}")
        if self.num_workers < 1 or self.tasks_per_worker < 1 or self.max_tasks < 1:
            raise ValueError("num_workers, tasks_per_worker and max_tasks must be >= 1")

    def applicable(self, problem: Problem) -> str | None:
        n = problem.n_tasks
        return f"{n} tasks exceed the exact solver's limit max_tasks={self.max_tasks}; use ischeduler" if n > self.max_tasks else None

    def _schedule(self, problem: Problem) -> Outcome:
        sol = solve_min_inter_node(problem.graph.weights.toarray(), problem.graph.loads, problem.cluster.capacities,
                                   groups=problem.topology.operator_of_task, time_limit=self.time_limit,
                                   num_workers=self.num_workers, seed=self.seed)
        details = {"model": sol.model, "solver_seconds": sol.seconds}
        if sol.node_of_task is None:
            message = ("no placement satisfies the node capacities" if sol.status == "infeasible"
                       else f"no feasible placement found within {self.time_limit:g} s")
            return Outcome(placement=None, status="infeasible", message=message, details=details)
        worker = assign_workers(problem, sol.node_of_task, tasks_per_worker=self.tasks_per_worker, seed=self.seed)
        return Outcome(placement=Placement(node=sol.node_of_task, worker=worker), status=sol.status,
                       lower_bound=sol.lower_bound, details=details)

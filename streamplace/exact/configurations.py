"""The configuration bound and the filtered configuration program.

When the classes and capacities are small enough to enumerate every *configuration* (count
vector ``a`` a single node of capacity C can hold, value ``v(a)`` = its intra weight) of every node
type (at most ``CONFIG_LIMIT`` configurations), the problem is the integer program "choose one
configuration per node, covering every class exactly". For any multipliers ``pi`` (one per class)::

    value(solution) = L(pi) - sum_j g_j,   L(pi) = pi.|c| + sum_T q_T max_a (v(a) - pi.a),
    g_j = max_a (v(a) - pi.a) - (v(a_j) - pi.a_j) >= 0

(``q_T`` nodes of type T), so ``floor(L(pi))`` is an upper bound on the intra weight (``L < 0``
proves infeasibility). ``pi`` comes from the configuration LP (Dantzig-Wolfe master, column
generation with GLOP, pricing by enumeration); the bound is evaluated in exact integer arithmetic
with ``pi`` rounded to multiples of 2^-DUAL_BITS (valid for any ``pi``). A solution better than
the incumbent V needs ``sum_j g_j <= L(pi) - (V+1)``, so every configuration with a larger gap is
discarded (reduced-cost fixing); the remaining columns form a small integer program solved by
CP-SAT: infeasible => the incumbent is optimal, else its optimum is the global one.
"""

from __future__ import annotations

import math
import time

import numpy as np
from ortools.linear_solver import pywraplp
from ortools.sat.python import cp_model

from .classes import Classes
from .count_model import new_solver


CONFIG_LIMIT = 300_000  # max enumerated configurations over all node types


COLUMN_LIMIT = 20_000  # max columns of the filtered integer configuration program


DUAL_BITS = 20  # multipliers are rounded to multiples of 2**-bits, bits <= DUAL_BITS


def enumerate_configs(P: Classes, cap: int, limit: int):
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


def all_configs(P: Classes):
    """{capacity: (A, v)} for every node type, or None beyond CONFIG_LIMIT configurations."""
    r = enumerate_configs(P, P.types[0], CONFIG_LIMIT)
    if r is None:
        return None
    A, v = r
    ld = A @ np.array(P.loads, dtype=np.int64)
    out = {P.types[0]: (A, v)}
    for C in P.types[1:]:
        keep = ld <= C  # the configurations of a smaller node are a subset (row 0 stays first)
        out[C] = (A[keep], v[keep])
    return out


def dual_bits(P: Classes, cfgs) -> int:
    """Fraction bits for the multipliers so that every integer in lagrangian fits in int64 (<0: none)."""
    big = big_m(P)
    vmax = max(int(v.max()) for _, v in cfgs.values())
    mag = (big + vmax + 1) * (sum(P.sizes) + 1) * (P.m + 1)  # >= |pi.a|, |v|, sum_T q_T |M_T|
    return min(DUAL_BITS, 62 - mag.bit_length())


def big_m(P: Classes) -> int:
    return int(P.wcd.sum()) + sum(P.wcc) * max(P.sizes) ** 2 + 1


def lagrangian(P: Classes, cfgs, pi_int, b):
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


def config_lp(P: Classes, cfgs, init_counts, deadline, max_iter=500):
    """Column generation for the configuration LP; returns the cover duals pi, clipped to
    [-big, big] (any pi gives a valid bound, so clipping only keeps the integers small)."""
    lp = pywraplp.Solver.CreateSolver("GLOP")
    k = P.k
    big = float(big_m(P))
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


def config_ip(P: Classes, cfgs, gaps, delta, target, time_limit, num_workers, seed):
    """Max intra over configurations with gap <= delta and value >= target (None if too many columns).

    Returns (cp status, counts or None, bound or None)."""
    cols = {C: np.flatnonzero(gaps[C] <= delta) for C in P.types}
    if sum(c.size for c in cols.values()) > COLUMN_LIMIT:
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
    solver = new_solver(time_limit, num_workers, seed)
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

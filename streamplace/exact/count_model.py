"""The class-count model on CP-SAT, its single-node bound and its search phase.

Integer ``a[c, j]`` = number of tasks of class c on node j, ``0 <= a <= min(|c|, floor(C_j/l_c))``;
``sum_j a[c, j] = |c|`` ([I] Eq. 5), ``sum_c l_c a[c, j] <= C_j`` (Eq. 4, with ``<=``), and::

    intra_j = sum_{c<d} w_cd a[c,j] a[d,j] + sum_c w_cc a[c,j] (a[c,j] - 1) / 2     (Eq. 2-3)

maximised (the inter-node cost is the total weight minus the intra weight). Products of small
integers are encoded with ``AddMultiplicationEquality`` (``product="mult"``; the self term through
an element table of ``a(a-1)/2``); a unary/order encoding (booleans ``y[c,j,k] = [a[c,j] >= k]``,
``"unary"``) and a half-unary one (``"semi"``) are the alternatives (:class:`~.solve.Formulation`).

Symmetry: nodes of equal capacity are interchangeable; their loads are ordered non-increasing
(``symmetry="load"``); ``"lex"`` orders their count vectors lexicographically instead and also
orders interchangeable but non-mergeable classes row-wise ("double lex").

Single-node bound: ``D(L)`` = the maximum intra weight one node of load <= L can hold, for every
reachable load level L (a one-node version of the model, or read off the enumerated
configurations). Per node ``intra_j <= D(load_j)`` (element constraint) and the facets of the upper
concave envelope of ``D`` (linear cuts the LP sees); ``node_bound="cap"`` uses ``D`` at the
capacity alone (far weaker).
"""

from __future__ import annotations

import math

import numpy as np
from ortools.sat.python import cp_model

from .classes import Classes, canonical_counts, class_orbits


TERM_LIMIT = 200_000  # max product terms of the class-count model (beyond: no CP-SAT model)


class CountModel:
    """CP-SAT model over count variables a[c][j] (see the module docstring, part 2)."""

    def __init__(self, P: Classes, caps, *, product="mult", hint_counts=None, cover=True, xcaps=None):
        self.m = md = cp_model.CpModel()
        k, nn = P.k, len(caps)
        sizes, cl_loads, wcc, wcd = P.sizes, P.loads, P.wcc, P.wcd
        xcaps = xcaps if xcaps is not None else [()] * nn   # further resources' limits per node (CPU, memory)
        self.hints: list[tuple] = []
        self.ub = [[min([sizes[c]] + [lim // need for need, lim in zip((cl_loads[c],) + P.xload[c], (caps[j],) + xcaps[j])
                                      if need > 0]) for j in range(nn)] for c in range(k)]
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
            for e, lim in enumerate(xcaps[j]):   # Eq. 4 for each further resource
                md.add(sum(P.xload[c][e] * self.a[c][j] for c in range(k)) <= lim)
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


def load_levels(P: Classes, max_cap: int, limit: int = 48) -> list[int]:
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


def upper_hull(pts):
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


def new_solver(time_limit, num_workers, seed, params=None, log=False):
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


def single_node_bound(P: Classes, cap, time_limit, num_workers, seed):
    """D(cap) = max intra weight of one node of capacity cap: an upper bound (proven or LP) or None."""
    cm = CountModel(P, [cap], product="mult", cover=False)
    cm.m.maximize(cm.intra[0])
    solver = new_solver(time_limit, num_workers, seed)
    st = solver.solve(cm.m)
    if st == cp_model.OPTIMAL:
        return int(round(solver.objective_value))
    if st == cp_model.FEASIBLE:
        return int(math.floor(solver.best_objective_bound + 1e-6))
    return None


def node_level_bounds(P: Classes, cfgs, budget, num_workers, seed, mode) -> dict[int, int]:
    """D(L) for the reachable load levels (mode "load") or the capacities (mode "cap")."""
    levels = load_levels(P, max(P.caps)) if mode == "load" else []
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
    proven = {lev: 0 if lev == 0 else single_node_bound(P, lev, per_level, num_workers, seed) for lev in levels}
    # A node of load L holds at most what one of a higher level can, so D is made monotone and an
    # unproven level (its solve out of time) takes the bound of the next higher proven one. Every
    # level must have a bound: the count model reads a node's bound off the largest level at or
    # below its load, so a missing level would lend it a lower level's, too small (a search on a
    # loaded machine once proved a wrong optimum so); with the top level unproven there is none.
    if proven[max(levels)] is None:
        return D
    run = None
    for lev in sorted(levels, reverse=True):
        if proven[lev] is not None:
            run = proven[lev] if run is None else min(run, proven[lev])
        D[lev] = run
    return D


def count_phase(P: Classes, H, time_limit, num_workers, seed, *, ub_cut=None, D=None, product="mult",
                 symmetry="load", node_bound="load", params=None, log=False):
    """Solve the class-count model. Returns (cp status, counts k x m or None, bound or None)."""
    m, k = P.m, P.k
    # nodes sorted by kind (capacity, then further limits), descending: the count model's node order,
    # mapped back on output; nodes of one kind are interchangeable
    kinds = sorted({P.kind(j) for j in range(m)}, reverse=True)
    order = [j for K in kinds for j in range(m) if P.kind(j) == K]
    caps = [P.caps[j] for j in order]
    col_groups, pos = [], 0
    for K in kinds:
        q = sum(P.kind(j) == K for j in range(m))
        col_groups.append(list(range(pos, pos + q)))
        pos += q
    row_groups = class_orbits(P) if symmetry == "lex" else []
    Hs = None
    if H is not None:
        Hs = H[:, order]
        if symmetry == "lex":
            Hs = canonical_counts(Hs, col_groups, row_groups)
        elif symmetry == "load":
            ld = np.array(P.loads, dtype=np.int64) @ Hs
            for grp in col_groups:
                srt = sorted(grp, key=lambda j: -ld[j])
                Hs[:, grp] = Hs[:, srt]
    cm = CountModel(P, caps, product=product, hint_counts=Hs, xcaps=[P.xcaps[j] for j in order])
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
            for (x1, y1), (x2, y2) in upper_hull(pts):  # concave envelope facets
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
    solver = new_solver(time_limit, num_workers, seed, params, log)
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

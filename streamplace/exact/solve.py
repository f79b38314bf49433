"""The exact minimum inter-node traffic placement: :func:`solve_min_inter_node` and its search.

Problem ([I] Sec. 3, Eq. 1-5): tasks with loads ``L``, nodes with capacities ``C``, symmetric
traffic ``W``; ``P[i,u] = 1`` iff task i is on node u (Eq. 1, 5); minimise the weight of the pairs
on different nodes (Eq. 2-3) within every node's capacity (Eq. 4, written ``<`` in the paper, ``<=``
here: a node of capacity 4 holds 4 unit-load tasks, as in the paper's own examples). Since a pair
is either split or together, this is maximising the intra-node weight; the search works on that
and reports ``cost = total weight - intra``, recomputed from the original ``W``
(:func:`~.numbers.cut_weight`).

Flow: interchangeable classes (:mod:`.classes`) -> incumbent (``hint`` if it fits, and
:func:`~.greedy.greedy_placement`; the better one) -> configuration bound (:mod:`.configurations`)
-> filtered configuration program (half the remaining time) -> class-count model (:mod:`.count_model`;
30 % of the rest when configurations exist, all of it otherwise; hinted with the incumbent, cut
``intra <= floor(L)``) -> the configuration program again with the improved incumbent -> the
class-count model with what is left. Each step ends the chain once the incumbent meets the bound.
:class:`Formulation` names the alternatives the measurements compared; its defaults are the best.

Measured (72 uniform micro-benchmarks of [I] Sec. 5, 10 s limit, 8 workers on 2 cores): the
default 72/72 proven optimal in 1.3 s in total (worst 0.55 s), with or without ``groups``; without
the class merge 71-72/72 (worst ~9 s); without the configuration layer 66/72 (a gap of 1 left on
linear hom 22/26/30 and het 24/28/32); without either 37/72; without the greedy warm start 69-71/72.
Count model alone on 13 hard cases: multiplication 6/13, unary 5/13, half-unary 5/13; load order
6/13, lex 6/13, none 6/13 (slower); ``D(load)`` 6/13 vs ``D(cap)`` 0/13 vs no bound 0/13 (single
runs: CP-SAT timings on 2 cores are noisy).

Numbers: weights are scaled to integers (:mod:`.numbers`); with rounding the reported
``lower_bound`` is lowered by the worst-case rounding error and "optimal" is claimed only when the
true gap is ~0. If loads and capacities cannot be scaled exactly (rounded conservatively), the
restricted model may miss solutions: "optimal" becomes "feasible", "infeasible" becomes
"unknown", and the bound is the trivial 0.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from .classes import Classes, interchangeable_classes
from .configurations import all_configs, config_ip, config_lp, dual_bits, lagrangian
from .count_model import TERM_LIMIT, count_phase, node_level_bounds
from .greedy import greedy_placement
from .numbers import check_inputs, cut_weight, dense, fits, integer_scale


@dataclass(frozen=True)
class ExactSolution:
    """Result of :func:`solve_min_inter_node`."""

    node_of_task: np.ndarray | None  # int array, len n (node index per task); None if none found
    status: str  # "optimal" | "feasible" | "infeasible" | "unknown"
    objective: float | None  # inter-node cost of node_of_task, in the units of W
    lower_bound: float | None  # proven lower bound on the optimal inter-node cost
    seconds: float
    model: str  # "class-count" (some class has > 1 task) or "task" (all classes are singletons)


@dataclass(frozen=True)
class Formulation:
    """How the model is built and searched (the defaults are the measured best; module docstring).

    ``product``: the class-count model's products, ``"mult"`` (CP-SAT multiplication), ``"unary"``
    (order encoding) or ``"semi"`` (half-unary); ``symmetry``: equal-capacity nodes ordered by
    ``"load"``, ``"lex"`` (count vectors, and double lex over unmergeable classes) or ``"none"``;
    ``node_bound``: the single-node bound ``D`` per load level (``"load"``), at the capacity only
    (``"cap"``) or none (None); ``merge``: merge twin classes across the caller's groups;
    ``configs``: use the configuration layer when it can be enumerated; ``warm_start``: start from
    :func:`~.greedy.greedy_placement` too; ``count_share``: share of the remaining time the count
    model gets before the configuration program runs again; ``log``/``params``: CP-SAT's search log
    and extra CP-SAT parameters for the count model.
    """

    product: str = "mult"
    symmetry: str = "load"
    node_bound: str | None = "load"
    merge: bool = True
    configs: bool = True
    warm_start: bool = True
    count_share: float = 0.3
    log: bool = False
    params: tuple[tuple[str, object], ...] | None = None


def solve_min_inter_node(weights, loads, capacities, *, groups=None, time_limit=10.0, num_workers=8, seed=0,
                         hint=None, formulation: Formulation = Formulation(), extra=None) -> ExactSolution:
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
        formulation: the model and search variant (:class:`Formulation`; the default is the best).
        extra: optional ``(needs, limits)`` of further resources every node must also hold (CPU
            cores, memory): ``needs`` n x E, ``limits`` m x E (inf: unlimited). Eq. 4 is then
            written once per resource; the configuration layer, which enumerates node contents
            by one capacity, is left out (the single-node bound ignores them: still a valid bound).

    Returns:
        :class:`ExactSolution`. "optimal" only when proven; otherwise the best placement found
        and a valid lower bound ("feasible"), "infeasible" when no placement fits, or
        "unknown" when nothing was found in time.
    """
    t_start = time.perf_counter()
    W = dense(weights)
    loads = np.asarray(loads, dtype=float).ravel()
    caps = np.asarray(capacities, dtype=float).ravel()
    check_inputs(W, loads, caps)
    n, m = loads.size, caps.size
    xneed, xlim = _extra(extra, n, m)
    if n == 0:
        return ExactSolution(np.zeros(0, dtype=np.int64), "optimal", 0.0, 0.0, time.perf_counter() - t_start, "task")
    if m == 0 or loads.max() > caps.max() or math.fsum(loads) > math.fsum(caps) or \
            (xneed.max(axis=0) > xlim.max(axis=0)).any() or (xneed.sum(axis=0) > xlim.sum(axis=0)).any():
        return ExactSolution(None, "infeasible", None, None, time.perf_counter() - t_start, "task")
    if groups is not None and np.asarray(groups).ravel().shape != (n,):
        raise ValueError(f"groups must have one entry per task ({n})")
    data = _IntegerData(W, loads, caps, xneed, xlim)
    key = np.column_stack([loads, xneed])   # tasks of one class need the same of every resource
    P = Classes(interchangeable_classes(W, key, groups, merge=formulation.merge), data.L, data.C, data.W,
                data.xL if xneed.shape[1] else None, data.xC if xneed.shape[1] else None)
    if xneed.shape[1]:
        formulation = dataclasses.replace(formulation, configs=False)
    search = _Search(P, formulation, t_start + float(time_limit), num_workers, seed)
    search.start(hint, W, np.column_stack([loads, xneed]), np.column_stack([caps, xlim]), data)
    search.bound_by_configurations(t_start + 0.3 * float(time_limit))
    search.run()
    model = ("class-count" if P.k < n else "task") + ("+config" if search.cfgs is not None else "")
    return data.solution(search, W, model, time.perf_counter() - t_start)


def _extra(extra, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The further resources as ``(n x E needs, m x E limits)``, checked; E = 0 without any."""
    if extra is None:
        return np.zeros((n, 0)), np.zeros((m, 0))
    need, limit = (np.asarray(a, dtype=float) for a in extra)
    need, limit = need.reshape(n, -1), limit.reshape(m, -1)
    if need.shape[1] != limit.shape[1]:
        raise ValueError(f"extra: {need.shape[1]} needs per task but {limit.shape[1]} limits per node")
    if not np.isfinite(need).all() or (need < 0).any() or np.isnan(limit).any() or (limit < 0).any():
        raise ValueError("extra: needs must be finite and >= 0, limits >= 0 (inf: unlimited)")
    return need, limit


def _scaled(need: np.ndarray, limit: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """One resource on one integer scale: (needs, limits, exact); inexact rounds needs up and limits
    down, so what fits the integers fits the original."""
    s, exact = integer_scale(np.concatenate([need, limit]), float(max(need.sum(), limit.max(initial=0.0))))
    if exact:
        return np.round(need * s).astype(np.int64), np.round(limit * s).astype(np.int64), True
    return np.ceil(need * s).astype(np.int64), np.floor(limit * s).astype(np.int64), False


class _IntegerData:
    """Weights, loads and capacities (and further resources) scaled to integers
    (:func:`~.numbers.integer_scale`), and the way back to the original units."""

    def __init__(self, W: np.ndarray, loads: np.ndarray, caps: np.ndarray, xneed: np.ndarray, xlim: np.ndarray):
        n = loads.size
        self.total_w = float(np.triu(W, 1).sum())
        self.sw, self.w_exact = integer_scale(W[np.triu_indices(n, 1)], self.total_w)
        self.L, self.C, self.l_exact = _scaled(loads, caps)
        self.xL, self.xC = np.zeros(xneed.shape, dtype=np.int64), np.zeros(xlim.shape, dtype=np.int64)
        for e in range(xneed.shape[1]):   # an unlimited node can hold every task: its limit is their sum
            limit = np.where(np.isfinite(xlim[:, e]), xlim[:, e], xneed[:, e].sum())
            self.xL[:, e], self.xC[:, e], exact = _scaled(xneed[:, e], limit)
            self.l_exact &= exact
        self.W = np.round(W * self.sw).astype(np.int64)
        self.rounding_err = 0.0 if self.w_exact else float(np.triu(np.maximum(W * self.sw - self.W, 0), 1).sum())
        self.total_int = int(np.triu(self.W, 1).sum())

    def solution(self, search: "_Search", W: np.ndarray, model: str, elapsed: float) -> ExactSolution:
        """The result in the original units: placement, status and a valid lower bound."""
        if search.infeasible:
            return ExactSolution(None, "infeasible" if self.l_exact else "unknown", None,
                                 None if self.l_exact else 0.0, elapsed, model)
        node = search.P.placement(search.best_H) if search.best_H is not None else None
        obj = cut_weight(W, node) if node is not None else None
        UB = search.UB
        if UB is None:
            lb = 0.0
        elif self.w_exact:
            lb = (self.total_int - UB) / self.sw
            if self.sw > 1:
                lb = float(np.nextafter(lb, -np.inf))
        else:
            lb = float(np.nextafter(self.total_w - (UB + self.rounding_err) / self.sw, -np.inf))
        lb = max(0.0, lb)
        proven = UB is not None and search.best_H is not None and search.V >= UB
        # or the placement's cost is at the valid bound lb: 0 (no bound yet) for a cost-0 placement,
        # which a search out of time before its first bound must still call optimal
        at_bound = obj is not None and obj <= lb
        if node is None:
            status = "unknown"
        elif self.l_exact and (at_bound or proven and (self.w_exact or obj - lb <= 1e-9 * max(1.0, self.total_w))):
            status = "optimal"
            lb = obj if self.w_exact else min(lb, obj)
        else:
            status = "feasible"
        if not self.l_exact:
            lb = 0.0
        if obj is not None:
            lb = min(lb, obj)
        return ExactSolution(node, status, obj, lb, elapsed, model)


class _Search:
    """The incumbent (counts ``best_H`` of intra value ``V``), the proven upper bound ``UB`` on the
    intra weight (integer units) and the steps that improve either (module docstring)."""

    def __init__(self, P: Classes, formulation: Formulation, deadline: float, num_workers: int, seed: int):
        self.P, self.f = P, formulation
        self.deadline, self.num_workers, self.seed = deadline, num_workers, seed
        self.best_H, self.V, self.UB = None, -1, None
        self.infeasible = False
        self.cfgs, self.gaps, self.L_int, self.bits = None, None, None, -1
        self._node_bounds: list = []   # D(L), computed on the first count round

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.perf_counter())

    def take(self, counts, bound) -> None:
        """Keep ``counts`` if better than the incumbent; tighten the bound with ``bound``."""
        if counts is not None and self.P.value(counts) > self.V:
            self.best_H, self.V = counts, self.P.value(counts)
        if bound is not None:
            self.UB = bound if self.UB is None else min(self.UB, bound)

    def open(self) -> bool:
        """Neither proven (infeasible, or incumbent at the bound) nor out of time."""
        return not self.infeasible and (self.UB is None or self.V < self.UB) and self.remaining() > 0

    def start(self, hint, W: np.ndarray, loads: np.ndarray, caps: np.ndarray, data: _IntegerData) -> None:
        """The incumbent: ``hint`` if it fits, and the greedy placement if better (``loads`` n x R
        and ``caps`` m x R: every resource, in the original units). The greedy packs by the
        first resource only; it counts only if it fits all."""
        Lf, Cf = np.column_stack([data.L, data.xL]).astype(float), np.column_stack([data.C, data.xC]).astype(float)
        if hint is not None:
            h = np.asarray(hint)
            if h.dtype.kind == "f" and np.all(h == np.round(h)):
                h = h.astype(np.int64)
            if h.shape == loads.shape[:1] and h.dtype.kind in "iu" and fits(h, Lf, Cf) and fits(h, loads, caps):
                self.take(self.P.counts(h), None)
        if self.f.warm_start:
            g = greedy_placement(W, Lf[:, 0], Cf[:, 0])
            if g is not None and fits(g, Lf, Cf) and fits(g, loads, caps):
                self.take(self.P.counts(g), None)

    def bound_by_configurations(self, lp_deadline: float) -> None:
        """The configuration bound (when the configurations can be enumerated exactly)."""
        cfgs = all_configs(self.P) if self.f.configs else None
        bits = dual_bits(self.P, cfgs) if cfgs is not None else -1
        if bits < 0:  # (weights too large for exact int64 arithmetic)
            return
        self.cfgs, self.bits = cfgs, bits
        pi = config_lp(self.P, cfgs, self.best_H, lp_deadline)
        pi_int = np.round(pi * (1 << bits)).astype(np.int64)
        self.L_int, self.gaps = lagrangian(self.P, cfgs, pi_int, bits)
        self.take(None, self.L_int >> bits)
        if self.UB is not None and self.UB < 0:  # every placement has intra >= 0: no placement exists
            self.infeasible = True

    def config_round(self, share: float) -> bool:
        """The filtered configuration program for "better than V"; True if it settled optimality."""
        target = self.V + 1
        delta = self.L_int - (target << self.bits)
        if delta < 0:
            self.take(None, self.V)
            return True
        r = config_ip(self.P, self.cfgs, self.gaps, delta, target, self.remaining() * share, self.num_workers, self.seed)
        if r is None:
            return False
        status, counts, bound = r
        if status == cp_model.INFEASIBLE:  # no solution better than V exists
            self.take(None, self.V)
            return True
        self.take(counts, bound)
        return status == cp_model.OPTIMAL

    def count_round(self, share: float) -> None:
        """The class-count model for ``share`` of the remaining time."""
        f = self.f
        if not self._node_bounds:
            self._node_bounds.append(node_level_bounds(self.P, self.cfgs, self.remaining, self.num_workers, self.seed,
                                                       f.node_bound) if f.node_bound else None)
        status, counts, bound = count_phase(self.P, self.best_H, self.remaining() * share, self.num_workers, self.seed,
                                            ub_cut=self.UB, D=self._node_bounds[0], product=f.product,
                                            symmetry=f.symmetry, node_bound=f.node_bound,
                                            params=dict(f.params) if f.params else None, log=f.log)
        if status == cp_model.INFEASIBLE:
            self.infeasible = self.best_H is None  # (with an incumbent this cannot happen: V <= UB)
        else:
            self.take(counts, bound)

    def run(self) -> None:
        """Configuration program, count model, configuration program, count model: each while open."""
        P = self.P
        n_terms = (int(np.count_nonzero(np.triu(P.wcd, 1))) + sum(w > 0 for w in P.wcc) + P.k) * P.m
        if not self.open():
            return
        if self.cfgs is not None and self.best_H is not None and self.config_round(0.5):
            return
        if not self.open() or n_terms > TERM_LIMIT:   # the count model only while it stays of reasonable size
            return
        # the count model improves the incumbent (which shrinks the configuration program) and may
        # prove optimality itself; then one more configuration round, or the count model again
        share = self.f.count_share if self.cfgs is not None else 1.0
        self.count_round(share)
        if not self.open():
            return
        if self.best_H is not None and self.cfgs is not None and self.config_round(1.0):
            return
        if self.open() and share < 1:
            self.count_round(1.0)

"""Aniello, Baldoni & Querzoni's traffic-based online scheduler (DEBS 2013; docs/schedulers.md#online).

Called "OLS" in [I] and "Greedy" in [T3] and [F] (Sec. IV-A2). It reads the measured
directed traffic between tasks and places them in two greedy phases, as the authors' public
code does (``OnlineScheduler.computeBestScheduling``):

Phase 1, tasks -> ``W`` worker slots of the topology. Directed task pairs are taken by traffic,
descending (stable). If neither task is placed, both go to the least-loaded slot that can take
both; failing that the source goes to the least-loaded slot that can take it and the
destination joins it if it still fits, else goes to its own least-loaded slot. If one or both
are placed, the candidate slots are their current slots plus the least-loaded slot able to take
the heavier of the two; every (slot_src, slot_dst) combination is tried and the one with the
least total inter-slot traffic kept. Afterwards every empty slot receives the single task (taken
from a slot holding more than one) whose move gives the least inter-slot traffic. Tasks without
any traffic go, one by one, to the least-loaded slot that can take them (an even spread: the
authors leave them to Storm's EvenScheduler, [F] spreads them over all workers).

Phase 2, slots -> nodes: the same greedy over slot pairs sorted by inter-slot traffic; a node can
take a slot if it has a free worker slot and the slot's load fits its capacity. Slots without
inter-slot traffic then go to the least-loaded node that can take them. Finally, while the
topology uses fewer than ``nodes_to_use`` nodes, the slot move to an unused node (from a node
holding several slots) with the least resulting inter-node traffic is applied.

Limits, with ``E`` tasks, ``W`` slots, ``N`` nodes (Aniello's ``Topology`` class):
``max_per_slot = ceil(E/W) + ceil(alfa ((E - W + 1) - ceil(E/W)))``,
``nodes_to_use = ceil(W/n') + ceil(beta (n' - ceil(W/n')))`` with ``n' = min(N, W)``,
``max_slot_load = gamma x total_load / W`` (``gamma=None``: no slot load limit, the code's
negative gamma). Defaults alfa 0, beta 0.5, gamma 1.1 ([F] used the values of Aniello's paper).

Deliberate differences from the public code:

* ``Node.assign`` adds the node's own load to itself (``this.load += load``), so node loads stay
  0 and "least loaded" always means "first node with a free slot". We implement the intended
  behaviour: a node's load is the sum of its slots' loads, and capacity is respected.
* Traffic totals are plain sums. The code's ``computeInterNodeTraffic`` returns -1 before any
  two nodes ever exchanged traffic (which makes the combination search accept the next
  combination whatever its cost) and ``computeInterSlotTraffic`` fails on a topology with no
  slot pair yet; both are sentinel bugs, not design.
* Ties: task pairs keep the order of the directed edge list (by source, then destination task);
  slot pairs of equal traffic are ordered by slot ids (the code's list merge reorders equal
  pairs depending on trial assignments); slots, nodes and tasks are scanned in index order
  where the code iterates hash maps.
* One topology at a time; W = ``workers`` (default: every worker slot of the cluster), capped at E
  as in the code. The later ``delta`` limit on slots per node (not in the DEBS paper) is not used.

When a greedy step finds no slot or node able to take a task or slot (the code throws), the
scheduler raises :class:`NoSolution` (status ``no_solution``) -- even if another placement would fit. This is the
default: the papers ran OLS with its slot-load limit ([I] Sec. 6, [T3] Sec. 6: "the topology's
worker count and gamma"; [F] Sec. IV-A2: Aniello's alfa 0, beta 0.5, gamma 1.1), and never say
what it did when the limit left a task without a slot. ``relax_gamma=True`` is an explicit
opt-in (CLI ``-p relax_gamma=true``): if the limit makes phase 1 infeasible, the scheduler runs
again without it and says so in ``details["gamma_relaxed"]`` and the result's message. It is
never applied silently.

Running time, with m directed task pairs, W worker slots, d the largest task degree: every pair
scans the slots for the least-loaded one and costs its candidates over the tasks' neighbours,
O(m (W + d)); each empty slot then tries every task move, O(n d) per slot; phase 2 repeats
this over slots and nodes. Quadratic in practice: 8 s at 10^4 tasks, over 300 s at 10^6.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..model import Problem
from ..model.placement import Placement, capacity_slack
from .base import NoSolution, Outcome, Scheduler, register
from .status import Status


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _ceil(x: float) -> int:
    """Ceiling that ignores float noise (0.7 * 10 is 7, not 8)."""
    return math.ceil(x - 1e-9)


def max_per_slot(n_tasks: int, workers: int, alfa: float) -> int:
    """Maximum tasks per worker slot: ``ceil(E/W) + ceil(alfa ((E - W + 1) - ceil(E/W)))``."""
    low = _ceil_div(n_tasks, workers)
    return low + _ceil(alfa * ((n_tasks - workers + 1) - low))


def nodes_to_use(workers: int, n_nodes: int, beta: float) -> int:
    """Nodes the topology should span: ``ceil(W/n') + ceil(beta (n' - ceil(W/n')))``, ``n' = min(N, W)``."""
    n = min(n_nodes, workers)
    low = _ceil_div(workers, n)
    return low + _ceil(beta * (n - low))


def max_slot_load(total_load: float, workers: int, gamma: float | None) -> float:
    """Maximum load of one worker slot, ``gamma x total_load / W`` (infinite without gamma)."""
    return math.inf if gamma is None else gamma * total_load / workers


class _Packing:
    """Greedy state: items (tasks or slots) with loads and symmetric traffic, packed into bins
    (slots or nodes) that each take at most ``count_cap`` items and ``load_cap`` load."""

    def __init__(self, loads, traffic: sp.csr_matrix, count_cap, load_cap, name_of, bin_names, kind: str, limits: str):
        self.loads = np.asarray(loads, dtype=float)
        self.traffic = traffic.tocsr()
        self.count_cap = np.asarray(count_cap, dtype=np.int64)
        self.load_cap = np.asarray(load_cap, dtype=float) + capacity_slack(np.asarray(load_cap, dtype=float))
        self.bin_of = np.full(self.loads.shape[0], -1, dtype=np.int64)
        self.count = np.zeros(self.count_cap.shape[0], dtype=np.int64)
        self.load = np.zeros(self.count_cap.shape[0])
        self.in_use: list[int] = []  # bins holding items, in order of first use (the code's node list)
        self.name_of = name_of  # item index -> text, for messages
        self.bin_names = bin_names
        self.kind = kind  # "worker slot" or "node"
        self.limits = limits

    # ------------------------------------------------------------------ bins
    def fits(self, b: int, count: int, load: float) -> bool:
        return self.count[b] + count <= self.count_cap[b] and self.load[b] + load <= self.load_cap[b]

    def least_loaded(self, count: int, load: float, exclude=()) -> int | None:
        """First bin of minimal load among those that can take ``count`` items of ``load``."""
        ok = (self.count + count <= self.count_cap) & (self.load + load <= self.load_cap)
        ok[list(exclude)] = False
        idx = np.flatnonzero(ok)
        return int(idx[np.argmin(self.load[idx])]) if idx.size else None

    def require(self, b: int | None, item: int) -> int:
        if b is None:
            raise NoSolution(f"online: no {self.kind} can take {self.name_of(item)} (load {self.loads[item]:g}); {self.limits}")
        return b

    def items_in(self, b: int) -> np.ndarray:
        return np.flatnonzero(self.bin_of == b)

    def assign(self, item: int, b: int) -> None:
        if self.count[b] == 0:
            self.in_use.append(b)
        self.bin_of[item] = b
        self.count[b] += 1
        self.load[b] += self.loads[item]

    def remove(self, item: int) -> None:
        b = int(self.bin_of[item])
        self.bin_of[item] = -1
        self.count[b] -= 1
        self.load[b] -= self.loads[item]
        if self.count[b] == 0:
            self.in_use.remove(b)

    # ------------------------------------------------------------------ traffic
    def cost(self, item: int, b: int) -> float:
        """Traffic between ``item`` (if it were in bin b) and its placed neighbours in other bins."""
        lo, hi = self.traffic.indptr[item], self.traffic.indptr[item + 1]
        bins = self.bin_of[self.traffic.indices[lo:hi]]
        return float(self.traffic.data[lo:hi][(bins >= 0) & (bins != b)].sum())

    def total(self) -> float:
        """Total traffic between placed items in different bins (each pair once)."""
        coo = sp.triu(self.traffic, k=1).tocoo()
        bu, bv = self.bin_of[coo.row], self.bin_of[coo.col]
        return float(coo.data[(bu >= 0) & (bv >= 0) & (bu != bv)].sum())

    # ------------------------------------------------------------------ greedy steps
    def place_pair(self, a: int, b: int, *, keep_with_first: bool) -> None:
        """One step of the pair greedy (``computeBestScheduling``'s loop body)."""
        la, lb = self.loads[a], self.loads[b]
        current = sorted({int(x) for x in self.bin_of[[a, b]] if x >= 0})
        if not current:
            both = self.least_loaded(2, la + lb)
            if both is not None:
                self.assign(a, both)
                self.assign(b, both)
                return
            first = self.require(self.least_loaded(1, la), a)
            self.assign(a, first)
            second = first if keep_with_first and self.fits(first, 1, lb) else self.least_loaded(1, lb)
            self.assign(b, self.require(second, b))
            return
        extra = self.least_loaded(1, max(la, lb))
        candidates = current + ([extra] if extra is not None and extra not in current else [])
        for item in (a, b):
            if self.bin_of[item] >= 0:
                self.remove(item)
        cost_a = [self.cost(a, x) for x in candidates]
        cost_b = [self.cost(b, y) for y in candidates]
        w_ab = float(self.traffic[a, b])
        best, best_cost = None, math.inf
        for i, x in enumerate(candidates):
            if not self.fits(x, 1, la):
                continue
            for j, y in enumerate(candidates):
                same = x == y
                if not self.fits(y, 1 + same, lb + (la if same else 0.0)):
                    continue
                total = cost_a[i] + cost_b[j] + (0.0 if same else w_ab)
                if best is None or total < best_cost - 1e-9 * max(1.0, abs(best_cost)):
                    best, best_cost = (x, y), total
        if best is None:
            names = ", ".join(self.bin_names[c] for c in candidates)
            raise NoSolution(f"online: no {self.kind}s among the candidates ({names}) can take {self.name_of(a)} "
                             f"and {self.name_of(b)}; {self.limits}")
        self.assign(a, best[0])
        self.assign(b, best[1])

    def best_move(self, sources, target_of) -> tuple[int, int] | None:
        """The single move (item from a source bin holding > 1 items -> ``target_of(item)``)
        that leaves the least total traffic; first found on ties. Returns (item, target)."""
        best, best_delta = None, math.inf
        for src in sources:
            if self.count[src] <= 1:
                continue
            for item in self.items_in(src).tolist():
                dst = target_of(item)
                if dst is None:
                    continue
                delta = self.cost(item, dst) - self.cost(item, src)
                if best is None or delta < best_delta - 1e-9 * max(1.0, abs(best_delta)):
                    best, best_delta = (item, dst), delta
        return best

    def move(self, item: int, b: int) -> None:
        self.remove(item)
        self.assign(item, b)


@register
@dataclass(frozen=True, kw_only=True)
class OnlineScheduler(Scheduler):
    """``workers``: worker slots W the topology uses (default every slot of the cluster, capped
    at the task count); ``alfa``, ``beta`` in [0, 1] and ``gamma`` >= 1 (None = no slot load
    limit) tune the limits above; ``relax_gamma``: rerun without the slot load limit when it makes
    the greedy infeasible (off by default; see the module doc)."""

    name = "online"
    complexity = "O(m (W + d) + W n d)"
    workers: int | None = None
    alfa: float = 0.0
    beta: float = 0.5
    gamma: float | None = 1.1
    relax_gamma: bool = False

    def __post_init__(self):
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        for key in ("alfa", "beta"):
            if not 0 <= getattr(self, key) <= 1:
                raise ValueError(f"{key} must be in [0, 1], got {getattr(self, key)}")
        if self.gamma is not None and not self.gamma >= 1:
            raise ValueError(f"gamma must be >= 1 (or None for no slot load limit), got {self.gamma}")

    def _schedule(self, problem: Problem) -> Outcome:
        cluster, n = problem.cluster, problem.n_tasks
        w = min(int(cluster.slots.sum()) if self.workers is None else self.workers, n)
        per_slot = max_per_slot(n, w, self.alfa)
        slot_limit = max_slot_load(float(problem.loads.sum()), w, self.gamma)
        target = nodes_to_use(w, cluster.n_nodes, self.beta)
        relaxed = ""
        try:
            tasks, fills = _tasks_to_slots(problem, w, per_slot, slot_limit)
        except NoSolution as exc:
            if not (self.relax_gamma and math.isfinite(slot_limit)):
                raise
            relaxed = f"gamma {self.gamma:g} relaxed to no slot load limit (relax_gamma=true): {exc}"
            slot_limit = math.inf
            tasks, fills = _tasks_to_slots(problem, w, per_slot, slot_limit)
        nodes, spreads = _slots_to_nodes(problem, tasks, target)
        slot_of, node_of_slot = tasks.bin_of, nodes.bin_of
        placement = Placement(node=node_of_slot[slot_of], worker=_worker_index(node_of_slot)[slot_of])
        details = {"workers": w, "max_per_slot": per_slot, "max_slot_load": slot_limit, "nodes_to_use": target,
                   "nodes_used": len(nodes.in_use), "inter_slot_traffic": tasks.total(),
                   "empty_slot_fills": fills, "spread_moves": spreads, "gamma_relaxed": bool(relaxed)}
        return Outcome(placement=placement, status=Status.HEURISTIC, details=details, message=relaxed)


def _tasks_to_slots(problem: Problem, w: int, per_slot: int, slot_limit: float) -> tuple[_Packing, int]:
    """Phase 1: the pair greedy over directed task pairs, then empty slots, then tasks without traffic."""
    graph, labels = problem.graph, problem.topology.task_labels
    tasks = _Packing(graph.loads, graph.weights, np.full(w, per_slot), np.full(w, slot_limit),
                     lambda t: f"task {labels[t]}", [f"slot {s}" for s in range(w)], "worker slot",
                     f"a slot holds at most max_per_slot={per_slot} tasks and max_slot_load={slot_limit:g} (W={w})")
    src, dst, rate = graph.directed
    for k in np.argsort(-rate, kind="stable").tolist():
        tasks.place_pair(int(src[k]), int(dst[k]), keep_with_first=True)
    fills = 0
    used = np.flatnonzero(tasks.count > 0).tolist()
    for empty in np.flatnonzero(tasks.count == 0).tolist():
        found = tasks.best_move(used, lambda t, e=empty: e if tasks.fits(e, 1, tasks.loads[t]) else None)
        if found is not None:
            tasks.move(*found)
            fills += 1
    for t in np.flatnonzero(tasks.bin_of < 0).tolist():
        tasks.assign(t, tasks.require(tasks.least_loaded(1, tasks.loads[t]), t))
    return tasks, fills


def _slots_to_nodes(problem: Problem, tasks: _Packing, target: int) -> tuple[_Packing, int]:
    """Phase 2: the pair greedy over slot pairs, slots without traffic, then the spread to ``target`` nodes."""
    cluster = problem.cluster
    u, v, weight = problem.graph.edges
    su, sv = tasks.bin_of[u], tasks.bin_of[v]
    cross = su != sv
    w = tasks.count.shape[0]
    slot_traffic = sp.csr_matrix((weight[cross], (su[cross], sv[cross])), shape=(w, w))
    slot_traffic = (slot_traffic + slot_traffic.T).tocsr()
    nodes = _Packing(tasks.load.copy(), slot_traffic, cluster.slots, cluster.capacities,
                     lambda s: f"worker slot {s}", [nd.name for nd in cluster.nodes], "node",
                     "a node needs a free worker slot and room for the slot's load")
    pair = sp.triu(slot_traffic, k=1).tocoo()
    for k in np.lexsort((pair.col, pair.row, -pair.data)).tolist():
        nodes.place_pair(int(pair.row[k]), int(pair.col[k]), keep_with_first=False)
    for s in np.flatnonzero((nodes.bin_of < 0) & (tasks.count > 0)).tolist():
        nodes.assign(s, nodes.require(nodes.least_loaded(1, nodes.loads[s]), s))
    spreads = 0
    while len(nodes.in_use) < target:
        found = nodes.best_move(list(nodes.in_use), lambda s: nodes.least_loaded(1, nodes.loads[s], exclude=nodes.in_use))
        if found is None:
            break
        nodes.move(*found)
        spreads += 1
    return nodes, spreads


def _worker_index(node_of_slot: np.ndarray) -> np.ndarray:
    """Worker index of each slot on its node: its rank among the node's slots (slot order)."""
    order = np.lexsort((np.arange(node_of_slot.shape[0]), node_of_slot))
    ranked = node_of_slot[order]
    worker = np.empty_like(node_of_slot)
    worker[order] = np.arange(ranked.shape[0]) - np.searchsorted(ranked, ranked, side="left")
    return worker

"""I-Scheduler: iterative K-way partitioning, task fusion, then an exact solve of the reduced graph.

[I] Sec. 4 (Alg. 1, Eq. 6-9, the worked example of Sec. 4.5); docs/schedulers.md#ischeduler.

Parameters: ``theta`` (seconds the optimiser may use; 0 = heuristic only), ``phi`` (size of the
reduced graph the optimiser solves within theta; ``None`` = the calibration table
``ischeduler_phi.json`` measured by ``benchmarks/calibrate_phi.py`` with the project's own
:func:`streamplace.exact.solve_min_inter_node`: the value of the largest measured theta <= ``theta``,
0 if there is none) and ``tasks_per_worker`` (T of the second level).

First level ([I] Alg. 1 lines 22-53). Nodes are grouped into capacity classes ``(c_i, q_i)``,
largest capacity first; t = unfused tasks, f = fused groups. One class per iteration, while
t > 0 and t + f > phi:

* ``k_i = ceil(L / c_i)`` (Eq. 6), L = load of the unfused tasks (capacity is in load units, so
  "parts of size c_i" means parts of load c_i);
* ``k_i = 1``: the unfused tasks become one group and the loop stops;
* ``k_i > phi`` with the optimiser on: the optimiser is switched off for good (phi = 0);
* the subgraph induced by the unfused tasks is K-way partitioned (METIS,
  :func:`~streamplace.partition.kway_partition`) into k_i parts of target load c_i (the last part
  gets the remainder ``L - (k_i - 1) c_i``), each at most c_i;
* ``alpha`` parts are fused (Eq. 9): ``min(beta, q_i)`` with the optimiser, ``min(k_i, q_i)``
  without; t and f are updated.

Final mapping: optimiser on -> the reduced graph (one vertex per group and per unfused task,
``W' = P^T W P``, loads ``P^T L``) is placed by :func:`streamplace.exact.solve_min_inter_node` within
what is left of theta, warm-started from the better of the direct mapping below and the solver
module's greedy; if it returns nothing, that warm start is used (``details["optimiser"]
["fallback"]``). Optimiser off -> direct mapping:
the groups of iteration i go to distinct nodes of class i (first nodes of the class in cluster
order). Second level: :func:`~.second_level.assign_workers`.

Deliberate deviations and choices where the paper is silent:

* Eq. 8 computes beta from ``t - phi``, ignoring the f groups already in the graph, although the
  loop tests ``t + f > phi``; with ``t - phi`` the second iteration of the paper's own worked
  example (t = 8, f = 1, phi = 8) would fuse nothing, while the text fuses one part. We need a
  reduction of ``t + f - phi`` vertices; a fused part of s tasks removes s - 1 of them, so beta
  is the smallest number of parts (in the fusion order below) whose ``s - 1`` add up to that --
  Eq. 8 exactly when every fused part holds c_i unit-load tasks. Single-task parts are not
  fused while the optimiser is on (they remove nothing).
* Which parts are fused (the paper does not say): highest internal edge weight first, ties by
  higher load, then lower part index.
* Part targets: c_i for all parts but the remainder one (the paper: "parts of roughly size c_i");
  equal targets L / k_i split operators (e.g. 22 tasks, c = 6: parts of 5-6) and were measured
  worse on the micro-benchmarks.
* METIS balance is approximate (on small graphs its k-way mode can leave parts empty and others
  far over) and loads need not be uniform: a part heavier than c_i sheds its tasks with the least
  weight to the part, which are refilled into parts with room by :func:`best_fit` (tasks fitting
  no part stay unfused), so every fused group fits a node of its class.
* Tasks still unfused after the last class (heuristic mode) and the unfused tasks of the warm
  start go best-fit by traffic (:func:`best_fit`). A problem the fused groups make unpackable
  raises :class:`NoSolution`.
* Status: "optimal"/"feasible" (with the solver's lower bound) only when nothing was fused, so
  the solved graph is the original one; otherwise "heuristic".

Running time: one METIS partition of the unfused sub-graph per capacity class, O(c (n + m) log k)
for c classes, plus at most ``theta`` seconds of CP-SAT on a reduced graph of phi vertices.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np
import scipy.sparse as sp

from ..files import quote
from ..exact import cut_weight, greedy_placement
from ..model import Placement, Problem
from ..model.placement import capacity_slack
from ..partition import kway_partition
from .base import Infeasible, NoSolution, Outcome, Scheduler, register
from .fill import best_fit, reduced_graph, require_placed
from .segments import segment_cumsum
from .second_level import DEFAULT_TASKS_PER_WORKER, assign_workers
from .status import Status

PHI_TABLE = "ischeduler_phi.json"
_TOL = 1e-9   # float noise in theta lookups and part counts (capacities: capacity_slack)


@lru_cache(maxsize=1)
def phi_table() -> dict[float, int]:
    """The calibrated ``{theta: phi}`` table shipped with the package."""
    data = json.loads(resources.files(__package__).joinpath(PHI_TABLE).read_text(encoding="utf-8"))
    return {float(theta): int(phi) for theta, phi in data["phi"].items()}


def calibrated_phi(theta: float) -> int:
    """phi of the largest calibrated theta <= ``theta`` (0 if ``theta`` is below every entry)."""
    below = [(t, p) for t, p in phi_table().items() if t <= theta + _TOL]
    return max(below)[1] if below else 0


@dataclass(frozen=True)
class CapacityClass:
    capacity: float
    nodes: np.ndarray  # node indices of this capacity, ascending


def capacity_classes(capacities) -> list[CapacityClass]:
    """Nodes grouped by capacity, largest first ([I] Alg. 1 line 12); zero-capacity nodes skipped."""
    caps = np.asarray(capacities, dtype=float)
    return [CapacityClass(float(c), np.flatnonzero(caps == c)) for c in np.unique(caps[caps > 0])[::-1]]


@dataclass(frozen=True)
class Fusion:
    """Result of the fusion loop."""

    group: np.ndarray  # fused-group id per task, -1 = unfused
    group_class: np.ndarray  # capacity-class index per group
    steps: list[dict]
    optimiser: bool  # still on after the loop


def capped_parts(sub: sp.csr_matrix, loads: np.ndarray, k: int, capacity: float, seed: int) -> np.ndarray:
    """K-way parts (ids 0..k-1) of target load ``capacity`` (the last: the remainder), each at most that.

    A part over ``capacity`` sheds its tasks with the least weight to the part; they are refilled
    into parts with room by :func:`best_fit` (METIS k-way keeps balance only approximately, and on
    small graphs it can leave parts empty and others far over); tasks fitting no part get -1.
    """
    targets = np.full(k, capacity)
    targets[-1] = float(loads.sum()) - (k - 1) * capacity
    parts = kway_partition(sub, loads, k, targets=targets, imbalance=1.0, seed=seed)
    coo = sub.tocoo()
    same = parts[coo.row] == parts[coo.col]
    inner = np.bincount(coo.row[same], weights=coo.data[same], minlength=parts.size)
    order = np.lexsort((-inner, parts))
    keep = segment_cumsum(parts[order], loads[order]) <= capacity + capacity_slack(capacity)
    parts[order[~keep]] = -1
    return best_fit(sub, loads, parts, np.full(k, capacity))


def rank_parts(sub: sp.csr_matrix, loads: np.ndarray, parts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-empty parts in fusion order (internal weight desc, load desc, index); sizes; internal weights."""
    coo = sub.tocoo()
    pr, pc = parts[coo.row], parts[coo.col]
    same = (pr == pc) & (pr >= 0)
    inner = np.bincount(pr[same], weights=coo.data[same], minlength=k) / 2
    member = parts >= 0
    sizes = np.bincount(parts[member], minlength=k)
    load = np.bincount(parts[member], weights=loads[member], minlength=k)
    order = np.lexsort((np.arange(k), -load, -inner))
    return order[sizes[order] > 0], sizes, inner


def fuse(weights: sp.csr_matrix, loads: np.ndarray, classes: list[CapacityClass], phi: int, optimiser: bool,
         seed: int = 0) -> Fusion:
    """The fusion loop of [I] Alg. 1 (lines 23-47); see the module docstring for the choices."""
    n = loads.shape[0]
    group = np.full(n, -1, dtype=np.int64)
    group_class: list[int] = []
    steps: list[dict] = []
    unfused = np.arange(n)
    f = 0
    for i, cls in enumerate(classes):
        t = unfused.size
        if t == 0 or t + f <= phi:
            break
        lu = loads[unfused]
        k = max(1, math.ceil(float(lu.sum()) / cls.capacity - _TOL))
        step = {"iteration": i + 1, "capacity": cls.capacity, "nodes": int(cls.nodes.size), "k": k}
        sub = weights if t == n else weights[unfused][:, unfused]
        if k == 1:
            parts = np.zeros(t, dtype=np.int64)
            chosen, sizes, inner = rank_parts(sub, lu, parts, 1)
            beta = None
        else:
            if optimiser and k > phi:
                optimiser, phi = False, 0
                step["optimiser_switched_off"] = True
            parts = capped_parts(sub, lu, k, cls.capacity, seed)
            order, sizes, inner = rank_parts(sub, lu, parts, k)
            if optimiser:
                order = order[sizes[order] > 1]
                reach = np.searchsorted(np.cumsum(sizes[order] - 1), t + f - phi)
                beta = int(min(reach + 1, order.size))
                chosen = order[:min(beta, cls.nodes.size)]
            else:
                beta = None
                chosen = order[:cls.nodes.size]
        new_id = np.full(k, -1, dtype=np.int64)
        new_id[chosen] = f + np.arange(chosen.size)
        gid = np.where(parts >= 0, new_id[parts], -1)
        group[unfused] = gid
        group_class += [i] * chosen.size
        fused = gid >= 0
        unfused = unfused[~fused]
        f += chosen.size
        nonempty = sizes[sizes > 0]
        step.update({"beta": beta, "alpha": int(chosen.size), "largest_part": int(nonempty.max()),
                     "smallest_part": int(nonempty.min()), "tasks_fused": int(fused.sum()),
                     "fused_part_sizes": sizes[chosen].tolist(), "fused_internal_weight": float(inner[chosen].sum()),
                     "unfused_after": int(unfused.size), "fused_after": f})
        steps.append(step)
        if k == 1:
            break
    return Fusion(group=group, group_class=np.asarray(group_class, dtype=np.int64), steps=steps, optimiser=optimiser)


def direct_group_nodes(fusion: Fusion, classes: list[CapacityClass]) -> np.ndarray:
    """Node of every group in the heuristic mapping: the groups of class i -> distinct nodes of class i."""
    node = np.empty(fusion.group_class.size, dtype=np.int64)
    for i, cls in enumerate(classes):
        ids = np.flatnonzero(fusion.group_class == i)
        node[ids] = cls.nodes[:ids.size]
    return node


def _plain(step: dict) -> dict:
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in step.items()}


@register
@dataclass(frozen=True, kw_only=True)
class IScheduler(Scheduler):
    """``theta``: optimiser seconds (0 = heuristic only); ``phi``: reduced-graph size for the
    optimiser (None = calibrated for theta); ``tasks_per_worker``: T of the second level."""

    name = "ischeduler"
    complexity = "O(c (n + m) log k) + theta"
    budget_param = "theta"
    native_solver = True   # CP-SAT: the search runs in a child process (Scheduler.native_solver)
    theta: float = 1.0
    phi: int | None = None
    tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER

    def __post_init__(self):
        if not math.isfinite(self.theta) or self.theta < 0:
            raise ValueError(f"theta must be a finite number >= 0, got {self.theta}")
        if self.phi is not None and (isinstance(self.phi, bool) or not isinstance(self.phi, int) or self.phi < 0):
            raise ValueError(f"phi must be an integer >= 0 or None, got {quote(self.phi)}")
        if self.tasks_per_worker < 1:
            raise ValueError(f"tasks_per_worker must be >= 1, got {self.tasks_per_worker}")

    def _schedule(self, problem: Problem) -> Outcome:
        start = time.perf_counter()
        graph, caps = problem.graph, problem.cluster.capacities
        optimiser = self.theta > 0
        phi = (calibrated_phi(self.theta) if self.phi is None else self.phi) if optimiser else 0
        classes = capacity_classes(caps)
        fusion = fuse(graph.weights, graph.loads, classes, phi, optimiser, self.seed)
        group_node = direct_group_nodes(fusion, classes)
        details = {"phi": phi, "fusion_steps": [_plain(s) for s in fusion.steps], "optimiser": None}
        status, lower_bound = Status.HEURISTIC, None
        if fusion.optimiser:
            node, info = self._solve_reduced(graph, caps, fusion, group_node, start + self.theta)
            details["optimiser"] = info
            if fusion.group_class.size == 0 and info["status"] in ("optimal", "feasible") and not info["fallback"]:
                status, lower_bound = info["status"], info["lower_bound"]
        else:
            fused = fusion.group >= 0   # (no group at all where no node has capacity: a job of zero loads)
            start_node = np.full(fusion.group.size, -1, dtype=np.int64)
            start_node[fused] = group_node[fusion.group[fused]]
            node = require_placed(best_fit(graph.weights, graph.loads, start_node, caps), graph.loads, caps)
        worker = assign_workers(problem, node, tasks_per_worker=self.tasks_per_worker, seed=self.seed)
        return Outcome(placement=Placement(node=node, worker=worker), status=status, lower_bound=lower_bound,
                       details=details)

    def _solve_reduced(self, graph, caps, fusion: Fusion, group_node: np.ndarray, deadline: float):
        """Exact placement of the reduced graph until ``deadline`` (``perf_counter`` time), warm-started
        from the better of the direct mapping and the solver's greedy, which is also the fallback.
        Returns (node per task, details)."""
        f = fusion.group_class.size
        reduced, reduced_loads, vertex = reduced_graph(graph.weights, graph.loads, fusion.group, f)
        dense = reduced.toarray()
        start = np.full(reduced_loads.size, -1, dtype=np.int64)
        start[:f] = group_node
        direct = best_fit(reduced, reduced_loads, start, caps)
        starts = [p for p in (direct if (direct >= 0).all() else None, greedy_placement(dense, reduced_loads, caps))
                  if p is not None]
        hint = min(starts, key=lambda p: cut_weight(dense, p)) if starts else None
        info = {"vertices": int(reduced_loads.size), "status": "not run", "objective": None, "lower_bound": None,
                "seconds": 0.0, "fallback": False}
        solution = None
        budget = deadline - time.perf_counter()
        if budget > 0:
            from ..exact import solve_min_inter_node   # imports OR-Tools on first use
            sol = solve_min_inter_node(dense, reduced_loads, caps, time_limit=budget, seed=self.seed,
                                       hint=hint)
            info.update(status=sol.status, objective=sol.objective, lower_bound=sol.lower_bound,
                        seconds=round(sol.seconds, 4))
            solution = sol.node_of_task
        if solution is None:
            if hint is None and info["status"] == "infeasible" and f == 0:   # nothing fused: a proof
                raise Infeasible(f"proven: no placement of the {reduced_loads.size} tasks keeps every node's load "
                                 "within its capacity")
            if hint is None:
                raise NoSolution(
                    f"the {f} fused group(s) and {reduced_loads.size - f} remaining task(s) cannot be packed into "
                    f"the nodes (optimiser status: {info['status']})")
            solution = hint
            info["fallback"] = True
        return solution[vertex], info

"""``lns``: our own scheduler. Anytime large-neighbourhood search over the exact solver.

Minimises the inter-node traffic ([I] Eq. 1-5, the objective of ``optimal``) within the node
capacities, using whatever time it is given:

1. **Start** from the best of the fast constructions: I-Scheduler's fusion heuristic
   (``ischeduler`` with theta = 0), the capacity-targeted multilevel partition (``metis``), T3's
   operator grouping (``t3``) and I-Scheduler with its optimiser for 1 s (theta = 1, [I] Sec. 6:
   on random graphs of 50-100 tasks it beats ``optimal`` at 10 s), in that order; none starts once
   half the time limit is spent, so on 10^6 tasks only the first runs. The valid one with the
   least traffic wins (ties: that order).
2. **Prove** when the whole job is small enough (``prove_tasks``): the exact solver gets the whole
   problem, warm-started from the start, for ``prove_share`` of the time limit. A proof ends the
   search (status ``optimal``); otherwise its best placement and its lower bound are kept.
3. **Improve** by large-neighbourhood search until the time runs out or no neighbourhood is left
   untried since the last improvement: free a set of tasks, re-solve it exactly and keep the result
   only if it sends less traffic. Neighbourhoods, in turn: the tasks of the two nodes that exchange
   the most traffic (every pair in order of that traffic), the tasks at both ends of the heaviest
   cut edges, and all tasks of one operator (operators by cut traffic); at most ``max_free`` tasks
   each.

The re-solve is exact, not a restricted guess. The nodes it may use are those holding a freed
task plus, for the edge and operator neighbourhoods, the nodes with the most free capacity (at
most ``max_nodes``). The tasks that stay on those nodes are contracted into one vertex per node
(their load summed, their traffic to the freed tasks summed: ``W' = P^T W P``, the contraction
I-Scheduler uses), so the solver may also swap the contents of two nodes. Traffic to tasks
elsewhere does not depend on where, among the chosen nodes, a freed task goes, so the sub-problem's
optimum is the best move in the neighbourhood. The exact solver is ``optimal``'s
(:func:`streamplace.exact.solve_min_inter_node`), called, not copied.

**Objective.** ``objective="traffic"`` (the default) is the above. ``objective="throughput"``
runs the same search with another cost: the performance model's predicted throughput
(:func:`streamplace.model.performance.predict`, under ``cost_model``, a cost-model file, or the
bundled default), each candidate with the incumbent's workers on the nodes whose tasks did not change
and the second level's on the others. The constructions then
include Storm's ``even``, ``lf``, ``rstorm`` and ``online``, cheapest first (spreading can beat packing on throughput),
each with its own workers and with the second level's;
step 2 is skipped (the exact solver minimises traffic, not throughput); a re-solve is kept only if
the predicted throughput rises; and one more neighbourhood kind, ``bottleneck``, moves single
tasks off the bottleneck node (the node whose CPU or NIC limits the sustainable rate) to the
node where the throughput gains most. Status ``heuristic``: no bound on throughput is proven.

**Stated CPU and memory** (docs/definitions.md#resources): the constructions arrive fitted to them
(each is a scheduler's result), and step 2 writes them into the exact model; the neighbourhood
re-solves of step 3 pack by task units only, so a placement they leave short of CPU or memory on
some node is repaired by the shared :func:`~.fill.fit_resources` at the end (deliberate: the
re-solves stay the single-resource model; the moves are in the result's message).

Status: ``optimal`` when step 2 proved it (or no traffic crosses nodes); ``feasible`` when step 2 ran out of time with a lower
bound (``lower_bound``); ``heuristic`` otherwise. ``details``: the starting construction, the
improvement history ``[(seconds, traffic), ...]`` and the neighbourhoods tried and improved per
kind. Workers: :func:`~.second_level.assign_workers`.

Running time: bounded by ``time_limit`` (plus the constructions, which scale as ``metis``,
``t3`` and ``ischeduler`` do); each neighbourhood costs O(m) to build and one exact solve of at
most ``max_free`` tasks and ``max_nodes`` contracted nodes.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..files import quote
from ..interrupt import ChildFailed
from ..model import Placement, Problem
from ..model.performance import CostModel, Predictor, load_cost_model
from ..model.placement import capacity_slack
from .base import NoPlacement, Outcome, Scheduler, ScheduleResult, make_scheduler, register, solver_ended, with_moves
from .fill import best_fit, reduced_graph, require_placed
from .migration import Current, current_of, sticky_workers
from .second_level import DEFAULT_TASKS_PER_WORKER, assign_workers
from .status import Status

CONSTRUCTIONS = (("ischeduler", {"theta": 0.0}), ("metis", {}), ("t3", {}), ("ischeduler", {"theta": 1.0}))
# more starts for objective=throughput, cheapest first: online places pair by pair (2.6 s on [LF]'s
# star at x10, 18,690 pairs), and starts stop at CONSTRUCTION_SHARE of the time limit
SPREADING = (("even", {}), ("lf", {}), ("rstorm", {}), ("online", {}))
OBJECTIVES = ("traffic", "throughput")
CONSTRUCTION_SHARE = 0.5   # no further construction starts after this share of the time limit
SECOND_LEVEL_SHARE = 0.03  # of the time limit (+ 0.2 s) kept for the second level (0.6 s at 10^5 tasks)
KINDS = ("nodes", "edges", "operator")
_IMPROVEMENT = 1e-9   # relative: a re-solve must save more than this to be taken


def _cut(edges, node: np.ndarray) -> float:
    u, v, w = edges
    return float(w[node[u] != node[v]].sum())


class _Traffic:
    """The traffic objective: cost = inter-node traffic of a node assignment. Workers are those of
    the reference (the starting construction) on every node whose tasks did not change
    (:func:`_workers`); for a reschedule (``sticky``) the reference is the running placement and
    every task that keeps its node keeps its worker (:func:`~.migration.sticky_workers`)."""

    def __init__(self, problem: Problem, node: np.ndarray, worker: np.ndarray, tasks_per_worker: int, seed: int,
                 sticky: bool = False):
        self.problem, self.tasks_per_worker, self.seed = problem, tasks_per_worker, seed
        self.node, self.worker, self.sticky = node, worker, sticky
        self._weights = sp.csr_matrix(problem.graph.weights) if sticky else None   # built once, read per candidate

    def __call__(self, node: np.ndarray) -> float:
        return _cut(self.problem.graph.edges, node)

    def workers(self, node: np.ndarray) -> np.ndarray:
        if self.sticky:
            return sticky_workers(self._weights, node, self.node, self.worker)
        return _workers(self.problem, node, self.node, self.worker, self.tasks_per_worker, self.seed)

    def take(self, node: np.ndarray) -> None:
        """``node`` became the incumbent (workers stay relative to the start: cheap at 10^6 tasks)."""


class _Throughput(_Traffic):
    """The throughput objective: cost = - predicted throughput of a node assignment, with the
    workers of the incumbent on unchanged nodes and the second level on the others (workers
    matter: on [LF]'s star at x10 parallelism, lf's own workers predict 2.3x what the second
    level's would on the same nodes)."""

    def __init__(self, problem: Problem, node: np.ndarray, worker: np.ndarray, tasks_per_worker: int, seed: int,
                 model: Predictor, sticky: bool = False):
        super().__init__(problem, node, worker, tasks_per_worker, seed, sticky)
        self.model = model
        self._last = None   # (node, workers, prediction) of the last assignment predicted

    def performance(self, node: np.ndarray):
        """The prediction for ``node`` (the last one is kept: the search asks for the incumbent's
        cost, then takes it, then asks for its bottleneck; each would otherwise predict again)."""
        if self._last is None or not np.array_equal(self._last[0], node):
            worker = self.workers(node)
            self._last = (node.copy(), worker, self.model.performance(self.problem, Placement(node=node, worker=worker)))
        return self._last[2]

    def __call__(self, node: np.ndarray) -> float:
        return -self.performance(node).throughput

    def take(self, node: np.ndarray) -> None:
        self.performance(node)
        if not self.sticky:   # workers relative to the new incumbent (sticky: to the running placement, always)
            self.node, self.worker = node, self._last[1]

    def bottleneck(self, node: np.ndarray) -> int:
        """The node whose CPU or NIC is the most utilised (the one that limits the rate)."""
        perf = self.performance(node)
        return int(np.argmax(np.maximum(perf.cpu_utilisation, perf.nic_utilisation)))


class _Search:
    """The incumbent placement and the neighbourhood generators of one run."""

    def __init__(self, problem: Problem, node: np.ndarray, rng: np.random.Generator, max_free: int, max_nodes: int,
                 objective: _Traffic):
        self.problem, self.rng = problem, rng
        self.cost_of = objective
        self.weights = sp.csr_matrix(problem.graph.weights)
        self.loads = np.asarray(problem.graph.loads, dtype=float)
        self.caps = np.asarray(problem.cluster.capacities, dtype=float)
        self.edges = problem.graph.edges
        self.op = np.asarray(problem.topology.operator_of_task)
        self.max_free, self.max_nodes = max_free, max_nodes
        self.node = node.copy()
        self.cost = self.cost_of(self.node)
        self.pending: deque = deque()

    # ------------------------------------------------------------------ neighbourhoods
    def refill(self) -> None:
        """Every neighbourhood of the current placement, in the order they are tried (tasks are
        gathered only when a neighbourhood is tried: a large job has tens of thousands of pairs)."""
        u, v, w = self.edges
        cut = self.node[u] != self.node[v]
        a, b = np.minimum(self.node[u][cut], self.node[v][cut]), np.maximum(self.node[u][cut], self.node[v][cut])
        m = self.caps.size
        keys, which = np.unique(a * m + b, return_inverse=True)
        pair_traffic = np.bincount(which, weights=w[cut], minlength=keys.size)
        by_nodes = [("nodes", (int(keys[k]) // m, int(keys[k]) % m)) for k in np.argsort(-pair_traffic, kind="stable")]
        heavy = np.argsort(-w[cut], kind="stable")
        ends = np.stack([u[cut][heavy], v[cut][heavy]], axis=1).ravel()
        by_edges = [("edges", np.unique(ends[start:start + self.max_free]))
                    for start in range(0, min(ends.size, 8 * self.max_free), self.max_free)]
        n_ops = int(self.op.max()) + 1
        op_cut = np.bincount(self.op[u[cut]], weights=w[cut], minlength=n_ops) + \
            np.bincount(self.op[v[cut]], weights=w[cut], minlength=n_ops)
        sizes = np.bincount(self.op, minlength=n_ops)
        by_op = [("operator", int(o)) for o in np.argsort(-op_cut, kind="stable")
                 if op_cut[o] > 0 and 1 < sizes[o] <= self.max_free]
        lists = (by_nodes, by_edges, by_op)
        self.pending = deque(item for i in range(max(map(len, lists), default=0)) for items in lists
                             if i < len(items) for item in (items[i],))
        self._order = np.argsort(self.node, kind="stable")
        self._starts = np.searchsorted(self.node[self._order], np.arange(m + 1))

    def next_neighbourhood(self) -> tuple[str, np.ndarray]:
        """The next neighbourhood to try and its tasks."""
        kind, what = self.pending.popleft()
        if kind == "nodes":
            tasks = np.sort(np.concatenate([self._order[self._starts[j]:self._starts[j + 1]] for j in what]))
            return kind, self._limit(tasks)
        if kind == "operator":
            return kind, np.flatnonzero(self.op == what)
        return kind, what

    def _limit(self, tasks: np.ndarray) -> np.ndarray:
        """At most ``max_free`` tasks of a node pair: those with the most traffic across it."""
        if tasks.size <= self.max_free:
            return tasks
        sub = self.weights[tasks][:, tasks].tocoo()
        across = self.node[tasks][sub.row] != self.node[tasks][sub.col]
        score = np.bincount(sub.row[across], weights=sub.data[across], minlength=tasks.size)
        return np.sort(tasks[np.argsort(-score, kind="stable")[:self.max_free]])

    # ------------------------------------------------------------------ one re-solve
    def resolve(self, free: np.ndarray, time_limit: float, seed: int) -> bool:
        """Re-solve ``free`` exactly (module docstring); True if the placement improved."""
        if free.size < 2:
            return False
        nodes = np.unique(self.node[free])
        if nodes.size < self.max_nodes:   # room to move into: the nodes with the most free capacity
            room = self.caps - np.bincount(self.node, weights=self.loads, minlength=self.caps.size)
            room[nodes] = -np.inf
            extra = np.argsort(-room, kind="stable")[:self.max_nodes - nodes.size]
            nodes = np.union1d(nodes, extra[room[extra] > 0])
        local = np.full(self.caps.size, -1, dtype=np.int64)
        local[nodes] = np.arange(nodes.size)
        inside = local[self.node] >= 0
        freed = np.zeros(self.node.size, dtype=bool)
        freed[free] = True
        kept = inside & ~freed
        members = np.flatnonzero(inside)
        group = np.where(kept[members], local[self.node[members]], -1)   # kept tasks: one vertex per node
        weights, loads, vertex = reduced_graph(self.weights[members][:, members], self.loads[members], group, nodes.size)
        hint = np.empty(weights.shape[0], dtype=np.int64)
        hint[:nodes.size] = np.arange(nodes.size)   # each node's kept tasks where they are (or nothing)
        hint[vertex] = local[self.node[members]]
        classes = np.concatenate([np.arange(nodes.size), nodes.size + self.op[members[~kept[members]]]])
        upper = sp.triu(weights, k=1).tocoo()
        before = _cut((upper.row, upper.col, upper.data), hint)
        from ..exact import solve_min_inter_node   # imports OR-Tools on first use
        sol = solve_min_inter_node(weights.toarray(), loads, self.caps[nodes], groups=classes, time_limit=time_limit,
                                   seed=seed, hint=hint)
        if sol.node_of_task is None or sol.objective is None or sol.objective >= before - _IMPROVEMENT * max(1.0, before):
            return False
        moved = nodes[sol.node_of_task]
        new = self.node.copy()
        new[members] = moved[vertex]
        return self._take(new)

    def _take(self, new: np.ndarray) -> bool:
        """Keep ``new`` if it fits and costs less than the incumbent."""
        if not self._fits(new):
            return False
        cost = self.cost_of(new)
        if cost >= self.cost - _IMPROVEMENT * max(1.0, abs(self.cost)):
            return False
        self.node, self.cost = new, cost
        self.cost_of.take(new)
        return True

    def relieve(self, bottleneck: int, deadline: float = math.inf) -> bool:
        """The ``bottleneck`` neighbourhood (objective=throughput): of the moves of one task off the
        bottleneck node (its ``max_free`` busiest tasks) to one of the ``max_nodes`` nodes with
        the most free capacity, the one with the highest throughput, if it raises it; the moves
        tried by ``deadline`` (up to ``max_free x max_nodes`` predictions: seconds on a large job)."""
        on = np.flatnonzero(self.node == bottleneck)
        on = on[np.argsort(-self.loads[on], kind="stable")][:self.max_free]
        room = self.caps - np.bincount(self.node, weights=self.loads, minlength=self.caps.size)
        room[bottleneck] = -np.inf
        targets = np.argsort(-room, kind="stable")[:self.max_nodes]
        best, best_cost = None, self.cost
        for t in on:
            if time.perf_counter() > deadline:
                break
            for j in targets[room[targets] + capacity_slack(self.caps[targets]) >= self.loads[t]]:
                new = self.node.copy()
                new[t] = j
                cost = self.cost_of(new)
                if cost < best_cost - _IMPROVEMENT * max(1.0, abs(best_cost)):
                    best, best_cost = new, cost
        return best is not None and self._take(best)

    def _fits(self, node: np.ndarray) -> bool:
        used = np.bincount(node, weights=self.loads, minlength=self.caps.size)
        return bool(np.all(used <= self.caps + capacity_slack(self.caps)))


@register
@dataclass(frozen=True, kw_only=True)
class LnsScheduler(Scheduler):
    """``time_limit`` (s): the whole run; ``prove_tasks``: jobs up to this many tasks go to the exact
    solver whole first, for ``prove_share`` of the time; ``max_free`` tasks and ``max_nodes`` nodes
    per neighbourhood; ``tasks_per_worker``: T of the second level; ``objective``: ``traffic`` or
    ``throughput`` (module docstring); ``cost_model``: a cost-model file for the throughput
    objective (None: the bundled default)."""

    name = "lns"
    complexity = "O(m) per neighbourhood + exact re-solves, within time_limit (after ischeduler, metis, t3)"
    budget_param = "time_limit"
    native_solver = True   # CP-SAT: the search runs in a child process (Scheduler.native_solver)
    time_limit: float = 10.0
    prove_tasks: int = 400
    prove_share: float = 0.5
    max_free: int = 40
    max_nodes: int = 8
    tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER
    objective: str = "traffic"
    cost_model: str | None = None
    #: a predictor given by :meth:`with_predictor` (e.g. calibrated on the job's run): the
    #: throughput objective's model instead of ``cost_model``'s
    _predictor: Predictor | None = field(default=None, init=False, repr=False, compare=False)

    def with_predictor(self, predictor: Predictor) -> "LnsScheduler":
        """With the throughput objective, predictions by ``predictor`` (the traffic objective
        uses no model, and an explicit ``cost_model`` file wins: the same scheduler)."""
        if self.objective != "throughput" or self.cost_model is not None:
            return self
        out = dataclasses.replace(self)
        object.__setattr__(out, "_predictor", predictor)
        return out

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {quote(self.objective)}")
        if self.cost_model is not None and self.objective != "throughput":
            raise ValueError("cost_model goes with objective=throughput (the traffic objective uses no cost model)")
        self._model()   # a bad cost-model file fails here, before any search
        if not self.time_limit > 0:
            raise ValueError(f"time_limit must be > 0, got {self.time_limit}")
        if not 0 < self.prove_share <= 1:
            raise ValueError(f"prove_share must be in (0, 1], got {self.prove_share}")
        if self.max_free < 2 or self.max_nodes < 2 or self.prove_tasks < 0 or self.tasks_per_worker < 1:
            raise ValueError("max_free and max_nodes must be >= 2, prove_tasks >= 0, tasks_per_worker >= 1")

    def _model(self) -> Predictor | None:
        """The cost model of the throughput objective (None for traffic)."""
        if self.objective != "throughput":
            return None
        if self._predictor is not None:
            return self._predictor
        return load_cost_model(self.cost_model) if self.cost_model else CostModel()

    def _objective(self, problem: Problem, node: np.ndarray, worker: np.ndarray, model: Predictor | None, *,
                   sticky: bool = False) -> _Traffic:
        """This run's objective, with (node, worker) as its reference placement (``model``: the
        cost model, loaded once per run; None for the traffic objective; ``sticky``: the reference
        is the running placement, :class:`_Traffic`)."""
        if self.objective == "throughput":
            return _Throughput(problem, node, worker, self.tasks_per_worker, self.seed, model, sticky)
        return _Traffic(problem, node, worker, self.tasks_per_worker, self.seed, sticky)

    def _starts(self, problem: Problem, start: float, model: Predictor | None) -> tuple[tuple | None, str | None, list[str]]:
        """Step 1: the valid construction with the least cost, with its own workers (ties: the
        order tried), its name, and the names tried."""
        best, origin, tried = None, None, []
        spreading = list(SPREADING) if self.objective == "throughput" else []
        for name, params in [(n, {**p, "tasks_per_worker": self.tasks_per_worker}) for n, p in CONSTRUCTIONS] + spreading:
            if best is not None and time.perf_counter() - start > CONSTRUCTION_SHARE * self.time_limit:
                break
            tried.append(name)
            result = make_scheduler(name, params, seed=self.seed).schedule(problem)
            if result.placement is None or problem.violations(result.placement):
                continue
            node = result.placement.node
            workers = [result.placement.worker]
            if self.objective == "throughput":   # the second level's workers may predict more than its own
                workers.append(assign_workers(problem, node, tasks_per_worker=self.tasks_per_worker, seed=self.seed))
            for worker in workers:
                cost = self._objective(problem, node, worker, model)(node)
                if best is None or cost < best[0]:
                    best, origin = (cost, node, worker), name
        return best, origin, tried

    def _schedule(self, problem: Problem) -> Outcome:
        start = time.perf_counter()
        deadline = start + self.time_limit * (1 - SECOND_LEVEL_SHARE) - 0.2   # the rest: workers, at the end
        model = self._model()
        best, origin, tried = self._starts(problem, start, model)
        if best is None:
            return Outcome(placement=None, status=Status.NO_SOLUTION,
                           message=f"none of the constructions ({', '.join(tried)}) found a placement within capacity")
        objective = self._objective(problem, best[1], best[2], model)
        throughput = objective if isinstance(objective, _Throughput) else None
        search = _Search(problem, best[1], np.random.default_rng(self.seed), self.max_free, self.max_nodes, objective)
        shown = (lambda cost: -cost) if throughput else (lambda cost: cost)   # history: traffic, or throughput
        history = [(round(time.perf_counter() - start, 3), shown(search.cost))]
        status, bound = Status.HEURISTIC, None
        # (objective=throughput: no exact step; the solver minimises traffic, nothing bounds throughput)
        if throughput is None and search.cost == 0:   # no traffic crosses nodes: nothing to prove
            status, bound = Status.OPTIMAL, 0.0
        elif throughput is None and problem.n_tasks <= self.prove_tasks:
            budget = max(0.1, (deadline - time.perf_counter()) * self.prove_share)
            from ..exact import solve_min_inter_node   # imports OR-Tools on first use
            sol = solve_min_inter_node(problem.graph.weights.toarray(), problem.graph.loads, problem.cluster.capacities,
                                       groups=problem.topology.operator_of_task, time_limit=budget, seed=self.seed,
                                       hint=search.node, extra=problem.resources.extra)
            bound = sol.lower_bound
            if sol.node_of_task is not None and sol.objective is not None and sol.objective < search.cost:
                search.node, search.cost = np.asarray(sol.node_of_task), float(sol.objective)   # (traffic: take() is a no-op)
                history.append((round(time.perf_counter() - start, 3), search.cost))
            if sol.status == Status.OPTIMAL:
                status = Status.OPTIMAL
            elif bound is not None:
                status = Status.FEASIBLE
        kinds = KINDS + (("bottleneck",) if throughput else ())
        tried = {kind: 0 for kind in kinds}
        improved = {kind: 0 for kind in kinds}
        if status != Status.OPTIMAL:
            search.refill()
            relieve = throughput is not None   # worth a try after each change
            while time.perf_counter() < deadline:
                if relieve:
                    tried["bottleneck"] += 1
                    relieve = False
                    if search.relieve(throughput.bottleneck(search.node), deadline):
                        improved["bottleneck"] += 1
                        relieve = True
                        history.append((round(time.perf_counter() - start, 3), shown(search.cost)))
                        search.refill()
                        continue
                if not search.pending:
                    break
                kind, tasks = search.next_neighbourhood()
                tried[kind] += 1
                budget = min(deadline - time.perf_counter(), max(0.5, self.time_limit / 20))
                if budget > 0 and search.resolve(tasks, budget, self.seed):
                    improved[kind] += 1
                    relieve = throughput is not None
                    history.append((round(time.perf_counter() - start, 3), shown(search.cost)))
                    search.refill()   # the neighbourhoods of the new placement
        if not throughput and search.cost == 0:
            bound = 0.0
        if bound is not None and search.cost <= bound + _IMPROVEMENT * max(1.0, bound):
            status = Status.OPTIMAL
        worker = objective.workers(search.node)
        details = {"objective": self.objective, "construction": origin, "history": history,
                   "neighbourhoods": {"tried": tried, "improved": improved},
                   "stopped": "proof" if status == Status.OPTIMAL else ("time limit" if search.pending else "no neighbourhood left")}
        if throughput:
            details["predicted_throughput"] = -search.cost
        return Outcome(placement=Placement(node=search.node, worker=worker), status=status,
                       lower_bound=bound, details=details)

    def reschedule(self, problem: Problem, current: dict[str, tuple[str, int]], *, max_moves: int | None = None,
                   migration_weight: float = 0.0) -> ScheduleResult:
        """:meth:`_reschedule` in a child process (its repairs call CP-SAT: ``native_solver``); a
        solver that aborts gives a result without a placement that says so."""
        start = time.perf_counter()
        try:
            return self._in_child(self._reschedule, problem, current, max_moves, migration_weight)
        except ChildFailed as exc:
            return ScheduleResult(scheduler=self.name, params=self.get_params(), status=Status.NO_SOLUTION, placement=None,
                                  problem=problem, seconds=time.perf_counter() - start, message=solver_ended(exc))

    def _reschedule(self, problem: Problem, current: dict[str, tuple[str, int]], max_moves: int | None,
                    migration_weight: float) -> ScheduleResult:
        """The placement that minimises the objective's cost (traffic, or minus the predicted
        throughput) + ``migration_weight`` x tasks moved with at most
        ``max_moves`` tasks changing node (forced moves apart), among the placements one search
        passes through: the running placement with its forced tasks placed by traffic (best fit),
        then every step of a greedy sequence of single-task moves (best gain first; with the
        throughput objective also a sequence of moves off the predicted bottleneck node,
        :func:`_throughput_moves`), then every improvement of the neighbourhood search from
        there, and the fresh schedule. The search
        does not depend on the budget, so a larger budget never gives a worse placement."""
        if max_moves is not None and max_moves < 0:
            raise ValueError(f"max_moves must be >= 0, got {max_moves}")
        if not migration_weight >= 0:
            raise ValueError(f"migration_weight must be >= 0, got {migration_weight}")
        state = current_of(problem, current)
        start = time.perf_counter()
        weights = sp.csr_matrix(problem.graph.weights)
        loads, caps = np.asarray(problem.graph.loads, dtype=float), problem.cluster.capacities
        try:
            node = require_placed(best_fit(weights, loads, state.node, caps), loads, caps)
        except NoPlacement as exc:
            result = self.schedule(problem)
            return with_moves(dataclasses.replace(result, placement=None, status=exc.status, message=str(exc)),
                              state, max_moves, migration_weight, honoured=True)
        trajectory = [node, *_greedy_moves(weights, loads, caps, node, state, migration_weight)]
        cost_of = self._objective(problem, state.node, state.worker, self._model(), sticky=True)
        if isinstance(cost_of, _Throughput):   # traffic moves rarely relieve the node that limits the rate
            trajectory += _throughput_moves(cost_of, loads, caps, node, max_moves if max_moves is not None else 16,
                                            start + self.time_limit / 4)
        search = _Search(problem, trajectory[-1], np.random.default_rng(self.seed), self.max_free, self.max_nodes, cost_of)
        deadline = start + self.time_limit / 2
        search.refill()
        while search.pending and time.perf_counter() < deadline:
            _, tasks = search.next_neighbourhood()
            budget = min(deadline - time.perf_counter(), max(0.5, self.time_limit / 20))
            if budget > 0 and search.resolve(tasks, budget, self.seed):
                trajectory.append(search.node.copy())
                search.refill()
        rest = dataclasses.replace(self, time_limit=max(0.1, self.time_limit - (time.perf_counter() - start)))
        fresh = (rest.with_predictor(self._predictor) if self._predictor is not None else rest).schedule(problem)
        if fresh.placement is not None:
            trajectory.append(fresh.placement.node)

        def objective(candidate):
            return cost_of(candidate) + migration_weight * state.moves(candidate), state.moves(candidate)

        allowed = [c for c in trajectory if max_moves is None or state.moves(c) <= max_moves]
        chosen = min(allowed, key=objective)
        is_fresh = fresh.placement is not None and chosen is fresh.placement.node and migration_weight == 0
        worker = cost_of.workers(chosen)
        result = ScheduleResult(scheduler=self.name, params=self.get_params(),
                                status=fresh.status if is_fresh else Status.HEURISTIC,
                                placement=Placement(node=chosen, worker=worker), problem=problem,
                                seconds=time.perf_counter() - start,
                                lower_bound=fresh.lower_bound if is_fresh else None,
                                details={"candidates": len(trajectory), "objective": objective(chosen)[0]})
        return with_moves(result, state, max_moves, migration_weight, honoured=True)


def _workers(problem: Problem, node: np.ndarray, start_node: np.ndarray, start_worker: np.ndarray,
             tasks_per_worker: int, seed: int) -> np.ndarray:
    """Workers: the starting construction's on every node whose tasks did not change, the second
    level (:func:`~.second_level.assign_workers`) on the others (at 10^6 tasks the second level of
    every node takes seconds)."""
    changed = np.unique(np.concatenate([node[node != start_node], start_node[node != start_node]]))
    if changed.size == 0:
        return start_worker
    fresh = assign_workers(problem, node, tasks_per_worker=tasks_per_worker, seed=seed, nodes=changed)
    return np.where(np.isin(node, changed), fresh, start_worker)


def _throughput_moves(cost_of: "_Throughput", loads: np.ndarray, caps: np.ndarray, node: np.ndarray, steps: int,
                      deadline: float) -> list[np.ndarray]:
    """Placements after each best single-task move off the predicted bottleneck node: of every
    task there and every other node with room for it, the move that raises the predicted
    throughput most, while one raises it; at most ``steps`` moves, none started after
    ``deadline``. (The throughput objective's own greedy step: a move that saves traffic rarely
    relieves the node that limits the rate.)"""
    node = node.copy()
    free = caps - np.bincount(node, weights=loads, minlength=caps.size)
    eps = capacity_slack(caps)
    cost = cost_of(node)
    out = []
    for _ in range(steps):
        hot, best = cost_of.bottleneck(node), None
        for t in np.flatnonzero(node == hot):
            if time.perf_counter() > deadline:
                break
            for j in np.flatnonzero(free + eps >= loads[t]):
                if j == hot:
                    continue
                candidate = node.copy()
                candidate[t] = j
                c = cost_of(candidate)
                if c < cost - _IMPROVEMENT * abs(cost) and (best is None or c < best[0]):
                    best = (c, int(t), int(j))
        if best is None:
            break
        cost, t, j = best
        free[node[t]] += loads[t]
        free[j] -= loads[t]
        node = node.copy()   # a prediction freezes the array it was given (Placement)
        node[t] = j
        out.append(node)
    return out


def _greedy_moves(weights: sp.csr_matrix, loads: np.ndarray, caps: np.ndarray, node: np.ndarray, state: Current,
                  migration_weight: float) -> list[np.ndarray]:
    """Placements after each best single-task move to a node it has traffic with (gain = traffic
    saved - migration_weight x the change in tasks moved), while a move gains; at most n steps."""
    node = node.copy()
    steps = []
    free = caps - np.bincount(node, weights=loads, minlength=caps.size)
    eps = capacity_slack(caps)
    for _ in range(node.size):
        onto = sp.csr_matrix((np.ones(node.size), (np.arange(node.size), node)), shape=(node.size, caps.size))
        affinity = (weights @ onto).tocsr()   # traffic of each task to each node
        own = np.asarray(affinity[np.arange(node.size), node]).ravel()
        coo = affinity.tocoo()
        t, j, a = coo.row, coo.col, coo.data
        home = state.node[t] == j
        away_now = (node[t] != state.node[t]) & ~state.forced[t]
        leaving_home = (node[t] == state.node[t]) & ~state.forced[t]
        change = np.where(home & away_now, -1, np.where(~home & leaving_home, 1, 0))
        gain = a - own[t] - migration_weight * change
        ok = (j != node[t]) & (free[j] + eps[j] >= loads[t]) & (gain > _IMPROVEMENT * max(1.0, float(a.max(initial=0))))
        if not ok.any():
            break
        best = np.flatnonzero(ok)[np.lexsort((j[ok], t[ok], -gain[ok]))[0]]
        task, target = int(t[best]), int(j[best])
        free[node[task]] += loads[task]
        free[target] -= loads[task]
        node[task] = target
        steps.append(node.copy())
    return steps

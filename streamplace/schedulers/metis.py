"""The METIS graph-partitioning scheduler of Fischer & Bernstein ([F] Sec. III-C; docs/schedulers.md#metis).

[F] builds the communication graph of a running topology: the edge weight of a task pair is
the number of messages between the two tasks; the vertex weight stands for the compute
resources a task consumes, measured by its proxy, the number of messages it sends plus the
number it receives. K-way partitioning with METIS (``gpmetis``, k-way, ``-objtype=vol``,
imbalance 1.03, equal part sizes) into K = number of machines gives one machine per part.
Here:

* edge weight = ``w(u, v)`` of the task graph (rate u->v + rate v->u);
* vertex weight: ``vertex_weight="load"`` (default, see below) = the task loads, the quantity
  [F]'s weight stands for, in node-capacity units; ``"traffic"`` = [F]'s proxy
  ``1 + sent + received`` (we add the 1 so idle tasks still weigh something);
* K = ``nodes`` (default: every node of the cluster with capacity > 0); with fewer, the K
  largest nodes are used (ties by node order) and tasks stay on them;
* ``objective``: ``volume`` (default, [F]: METIS communication volume) or ``cut`` (edge-cut);
  ``imbalance`` 1.03 ([F]);
* heterogeneous extension (ours): ``targets="capacity"`` gives each part a target weight
  proportional to its node's capacity; ``targets="equal"`` is [F]'s equal split;
* parts -> nodes: the heaviest part (in task load) to the largest node, and so on;
* capacity repair (ours, ``repair=True``): traffic-balanced parts are not load-balanced, and
  METIS does not keep the balance on tiny graphs either, so a node can end up over capacity.
  Tasks then leave overloaded nodes in rounds: every task on an overloaded node is given its
  best destination among the nodes its neighbours are on that still have room; each
  overloaded node gives up its tasks in order of the cut change per unit of load relieved
  (least cut increase first) until its excess is covered, one task per round at first and
  then in doubling batches (the cut changes are recomputed every round); tasks without a
  neighbour node with room are spread over the nodes with the most room; each destination
  accepts tasks in that order while they fit, and rejected tasks try again in the next round.
  If no task of an overloaded node fits anywhere (fragmentation), the last resort repacks by
  load: tasks, heaviest first, stay on their node while it has room, else go to the node with
  the most room. ``NoSolution`` is raised only when that fails too.
* the second level (workers) is :func:`~.second_level.assign_workers`.

Faithful [F]: ``vertex_weight=traffic targets=equal repair=false`` (capacity may then be
exceeded; overloaded nodes are reported in ``details`` and ``message``).

Why loads by default (inter-node traffic, ``python benchmarks/scale.py`` and the 72
micro-benchmarks): partitioning on loads respects capacity directly and cut less traffic than
[F]'s proxy followed by the repair, at the same speed: summed over the 72 micro-benchmarks
3941 vs 4150 (volume) and 3949 vs 4246 (cut); on the synthetic 10^4 and 10^5-task workloads
0.507 vs 0.517 and 0.431 vs 0.468 of the traffic (volume), 0.374 vs 0.376 and 0.325 vs 0.342
(cut), with no repair move at all where the traffic weights needed 8,404 at 10^5. The faithful
mode overloads 14 of the 72 micro-benchmarks. Measured too: METIS's volume objective counts
vertex sizes (all 1, as in ``gpmetis`` without a size file) and ignores the edge weights in its
refinement, so on weighted graphs it cuts far more traffic than edge-cut (10^6 tasks on 10^4
nodes: 0.545 vs 0.401 of the traffic, in 29 s vs 18 s); on the unit-weight micro-benchmarks
it is slightly better (3941 vs 3949). Volume stays the default, as in [F].

Running time: METIS's multilevel k-way partition, about O((n + m) log k) for n tasks and m task
edges; each capacity-repair round reads the adjacency of the candidate tasks, O(m) at most, and
the rounds double their batch sizes.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..files import quote
from ..model import Placement, Problem
from ..model.placement import capacity_slack
from ..partition import kway_partition
from ..partition.kway import MAX_IMBALANCE, OBJECTIVES
from .base import Infeasible, NoSolution, Outcome, Scheduler, register
from .segments import segment_cumsum
from .second_level import DEFAULT_TASKS_PER_WORKER, assign_workers
from .status import Status

VERTEX_WEIGHTS = ("traffic", "load")
TARGETS = ("capacity", "equal")
CAREFUL_ROUNDS = 8  # repair rounds that move one task per overloaded node before the batches double


def traffic_weights(rates: sp.csr_matrix) -> np.ndarray:
    """[F]'s vertex weight: 1 + messages sent + messages received per task."""
    return 1.0 + np.asarray(rates.sum(axis=1)).ravel() + np.asarray(rates.sum(axis=0)).ravel()


def parts_to_nodes(parts: np.ndarray, loads: np.ndarray, nodes: np.ndarray, capacities: np.ndarray) -> np.ndarray:
    """Node of every task: parts by load (descending) to ``nodes`` by capacity (descending)."""
    k = nodes.size
    part_load = np.bincount(parts, weights=loads, minlength=k)
    node_of_part = np.empty(k, dtype=np.int64)
    node_of_part[np.argsort(-part_load, kind="stable")] = nodes[np.argsort(-capacities[nodes], kind="stable")]
    return node_of_part[parts]


def _best_moves(weights: sp.csr_matrix, loads: np.ndarray, node: np.ndarray, free: np.ndarray, cand: np.ndarray):
    """For each candidate task: the best node one of its neighbours is on that has room for it
    (-1 if none), and the cut change of moving it there (minus its traffic to its own node
    if none: that is the change of a move to a node without neighbours)."""
    rows = weights[cand]
    r = np.repeat(np.arange(cand.size), np.diff(rows.indptr))
    conn = sp.csr_matrix((rows.data, (r, node[rows.indices])), shape=(cand.size, free.size)).tocoo()
    home = node[cand][conn.row] == conn.col
    own = np.bincount(conn.row[home], weights=conn.data[home], minlength=cand.size)
    ok = ~home & (free[conn.col] >= loads[cand][conn.row])
    row, col, gain = conn.row[ok], conn.col[ok], conn.data[ok] - own[conn.row[ok]]
    dest = np.full(cand.size, -1, dtype=np.int64)
    delta = -own
    order = np.lexsort((col, -gain, row))
    first = order[np.r_[True, row[order][1:] != row[order][:-1]]] if order.size else order
    dest[row[first]] = col[first]
    delta[row[first]] = gain[first]
    return dest, delta


def _spread(task_loads: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Destinations for tasks (in order) with no neighbour room: the nodes with room, most
    room first, filled one after the other (each task goes where its load starts)."""
    nodes = np.argsort(-free, kind="stable")
    nodes = nodes[free[nodes] > 0]
    starts = np.cumsum(task_loads) - task_loads
    at = np.searchsorted(np.cumsum(free[nodes]), starts, side="right")
    return np.where(at < nodes.size, nodes[np.minimum(at, nodes.size - 1)], -1)


def repack(node: np.ndarray, loads: np.ndarray, capacities: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Last resort: tasks by load (descending) stay on their node while it has room, else go to
    the allowed node with the most room (worst fit); raises :class:`NoSolution` if one fits nowhere."""
    room = np.where(allowed, capacities, -np.inf)
    eps = capacity_slack(capacities)
    heap = [(-room[j], j) for j in np.flatnonzero(allowed).tolist()]
    heapq.heapify(heap)
    new = node.copy()
    for t in np.argsort(-loads, kind="stable").tolist():
        j = int(node[t])
        if room[j] + eps[j] < loads[t]:
            while -heap[0][0] != room[heap[0][1]]:  # lazy deletion of stale entries
                j = heapq.heappop(heap)[1]
                heapq.heappush(heap, (-room[j], j))
            j = heap[0][1]
            if room[j] + eps[j] < loads[t]:
                raise NoSolution(f"no node has room for a task of load {loads[t]:g} "
                                 f"(largest room left {room[j]:g}): the loads do not pack into the nodes")
        room[j] -= loads[t]
        new[t] = j
        heapq.heappush(heap, (-room[j], j))
    return new


def _round_moves(weights: sp.csr_matrix, loads: np.ndarray, node: np.ndarray, free: np.ndarray, eps: np.ndarray,
                 cand: np.ndarray, batch: float) -> tuple[np.ndarray, np.ndarray]:
    """One repair round: the candidate tasks to move (indices into ``cand``) and their nodes."""
    dest, delta = _best_moves(weights, loads, node, free, cand)
    rank = np.empty(cand.size, dtype=np.int64)
    rank[np.lexsort((cand, -delta / loads[cand]))] = np.arange(cand.size)
    src = node[cand]
    by_src = np.lexsort((rank, src))
    load, excess = loads[cand[by_src]], -free[src[by_src]] - eps[src[by_src]]
    before = segment_cumsum(src[by_src], load) - load
    position = segment_cumsum(src[by_src], np.ones(by_src.size))
    take = by_src[(before < excess) & (position <= batch)]
    lonely = take[dest[take] < 0]
    lonely = lonely[np.argsort(rank[lonely])]
    dest[lonely] = _spread(loads[cand[lonely]], free)
    take = take[dest[take] >= 0]
    by_dst = take[np.lexsort((rank[take], dest[take]))]
    moved = by_dst[segment_cumsum(dest[by_dst], loads[cand[by_dst]]) <= free[dest[by_dst]] + eps[dest[by_dst]]]
    if moved.size == 0:  # guaranteed progress: the best-ranked task to the node with most room
        moved = np.argsort(rank)[:1]
        dest[moved] = int(np.argmax(free))
    return moved, dest[moved]


def repair_capacity(weights: sp.csr_matrix, loads: np.ndarray, node: np.ndarray, capacities: np.ndarray,
                    allowed: np.ndarray) -> tuple[np.ndarray, int]:
    """Move tasks off overloaded nodes with the least cut increase; returns (node, tasks moved).

    ``allowed``: boolean mask of the nodes tasks may move to. Each round (vectorised): every
    task of an overloaded node gets its best destination among its neighbours' nodes with room;
    each overloaded node offers its tasks, best cut change per unit of load first, until its
    excess is covered, but at most one task in the first ``CAREFUL_ROUNDS`` rounds and then
    2, 4, 8, ... (cut changes are recomputed every round); offered tasks without such a
    neighbour are spread over the nodes with the most room; each destination accepts them in
    the same order while they fit. Rejected tasks are reconsidered in the next round.
    """
    node = node.copy()
    start = node.copy()
    eps = capacity_slack(capacities)
    free = np.where(allowed, capacities - np.bincount(node, weights=loads, minlength=capacities.size), -np.inf)
    rounds = 0
    while True:
        over = allowed & (free < -eps)
        if not over.any():
            return node, int(np.count_nonzero(node != start))
        cand = np.flatnonzero(over[node] & (loads > 0) & (loads <= free.max()))
        if cand.size == 0:  # nothing on an overloaded node fits anywhere: repack by load
            node = repack(node, loads, capacities, allowed)
            return node, int(np.count_nonzero(node != start))
        moved, to = _round_moves(weights, loads, node, free, eps, cand, 2.0 ** max(0, rounds - CAREFUL_ROUNDS))
        tasks = cand[moved]
        free += np.bincount(node[tasks], weights=loads[tasks], minlength=free.size)
        free -= np.bincount(to, weights=loads[tasks], minlength=free.size)
        node[tasks] = to
        rounds += 1

@register
@dataclass(frozen=True, kw_only=True)
class MetisScheduler(Scheduler):
    """[F]'s METIS scheduler with capacity-proportional targets and capacity repair.

    ``nodes``: K, the number of nodes to use (the K largest; default all). ``objective``:
    ``volume`` ([F]) or ``cut``. ``imbalance``: METIS load-imbalance tolerance (1.03, [F]).
    ``vertex_weight``: ``load`` (task loads) or ``traffic`` ([F]'s proxy: 1 + messages sent +
    received).
    ``targets``: ``capacity`` (ours) or ``equal`` ([F]). ``repair``: move tasks off
    overloaded nodes (ours). ``tasks_per_worker``: T of the second level.
    """

    name = "metis"
    complexity = "O((n + m) log k) + O(m) per repair round"
    nodes: int | None = None
    objective: str = "volume"
    imbalance: float = 1.03
    vertex_weight: str = "load"
    targets: str = "capacity"
    repair: bool = True
    tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER

    def __post_init__(self):
        if self.nodes is not None and self.nodes < 1:
            raise ValueError(f"nodes must be >= 1, got {self.nodes}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {quote(self.objective)}")
        if not 1.0 <= self.imbalance <= MAX_IMBALANCE:
            raise ValueError(f"imbalance must be between 1 and {MAX_IMBALANCE:g}, got {self.imbalance}")
        if self.vertex_weight not in VERTEX_WEIGHTS:
            raise ValueError(f"vertex_weight must be one of {', '.join(VERTEX_WEIGHTS)}, got {quote(self.vertex_weight)}")
        if self.targets not in TARGETS:
            raise ValueError(f"targets must be one of {', '.join(TARGETS)}, got {quote(self.targets)}")
        if self.tasks_per_worker < 1:
            raise ValueError(f"tasks_per_worker must be >= 1, got {self.tasks_per_worker}")

    def _schedule(self, problem: Problem) -> Outcome:
        graph, caps = problem.graph, problem.cluster.capacities
        # nodes with capacity; where none has any, the job's loads are all 0 (else it is refused as
        # infeasible first) and one node holds it
        usable = max(1, int(np.count_nonzero(caps > 0)))
        k = usable if self.nodes is None else min(self.nodes, usable)
        chosen = np.sort(np.argsort(-caps, kind="stable")[:k])
        if self.repair and caps[chosen].sum() < graph.loads.sum() - 1e-9:
            raise Infeasible(f"the {k} largest nodes hold {caps[chosen].sum():g} load units, "
                             f"the tasks need {graph.loads.sum():g}: use more nodes")
        vweights = traffic_weights(graph.rates) if self.vertex_weight == "traffic" else graph.loads
        parts = kway_partition(graph.weights, vweights, k, targets=caps[chosen] if self.targets == "capacity" and caps[chosen].sum() > 0 else None,
                               imbalance=self.imbalance, objective=self.objective, seed=self.seed)
        node = parts_to_nodes(parts, graph.loads, chosen, caps)
        u, v, w = graph.edges
        cut_partition = float(w[node[u] != node[v]].sum())
        moves = 0
        if self.repair:
            allowed = np.zeros(caps.size, dtype=bool)
            allowed[chosen] = True
            node, moves = repair_capacity(graph.weights, graph.loads, node, caps, allowed)
        worker = assign_workers(problem, node, tasks_per_worker=self.tasks_per_worker, seed=self.seed)
        placement = Placement(node=node, worker=worker)
        overloaded = placement.overloaded_nodes(graph.loads, problem.cluster)
        details = {"k": int(k), "cut_partition": cut_partition, "repair_moves": int(moves),
                   "cut_repaired": float(w[node[u] != node[v]].sum()), "overloaded_nodes": int(overloaded.size)}
        message = f"{overloaded.size} node(s) over capacity (repair is off)" if overloaded.size else ""
        return Outcome(placement=placement, status=Status.HEURISTIC, details=details, message=message)

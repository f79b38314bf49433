"""R-Storm (Peng et al., Middleware 2015), as in Storm 1.0's ``DefaultResourceAwareStrategy``
(docs/schedulers.md#rstorm).

Offline and traffic-blind: it uses the resources tasks declare, never measured rates.

Task order. Breadth-first search over the operator graph from each not yet visited source
(sources in declaration order); the neighbours of an operator are its children, then its
parents (stream declaration order), marked visited when enqueued. Tasks are then interleaved
round robin over that operator order: the first task of every operator, then the second, ...

Node choice, one task at a time. The first task goes to the rack with the most available
resources (available cpu + memory summed over its nodes) and, inside it, to the node the
distance below ranks first without the network term (Storm 1.0 ``getBestClustering`` then
``getBestWorker``). Every later task goes, over all nodes, to the node minimising::

    sqrt(((cpu_need - cpu_avail) / (cpu_avail + 1))^2 + ((mem_need - mem_avail) / (mem_avail + 1))^2 + d^2)

with ``d`` = 0 on the node of the previously placed task, 0.5 on another node of its rack, 1
elsewhere; ties go to the first node in cluster order. A node is eligible if it has enough
memory (hard), enough cpu (hard by default as in Storm 1.0's code; the paper makes it soft:
``cpu_hard=False``) and a worker slot that can still take the task's memory.

Model mapping (documented choices):

* cpu need of a task = its CPU need in cores when the job states one (the operator's
  ``cpu_demand``, or the ``cpu_cores`` a profile measured: model.resources), against the node's
  ``cores``; a job that states no CPU uses the papers' shorthand, its ``load`` against the node's
  ``capacity``. With ``cpu_hard`` the node's load capacity is also enforced, so the placement is
  valid in the sense of docs/definitions.md. With ``cpu_hard=False`` nodes may be overloaded (the
  metrics report it) and a negative available cpu counts as 0 in the distance.
* memory need = operator ``memory_mb``; node memory = node ``memory_mb``, where 0 means the node
  declares none and is unlimited: it always fits, its memory term is 1 (the limit of the term as
  available memory grows) and it adds 0 to its rack's total.
* Workers: Storm 1.0 takes the first free slot of the chosen node whose scheduled memory plus the
  task's stays within ``topology.worker.max.heap.size.mb`` (768 MB by default); as slots are only
  occupied when the whole assignment is committed, a node's tasks share its first worker until
  that heap is full. We do the same (``worker_max_heap_mb``): with no declared memory, one worker
  per node.

Deliberate difference: Storm ranks nodes in a ``TreeMap`` keyed by the distance, so of two nodes
at exactly the same distance the later one in its iteration order silently replaces the earlier;
we keep the first in cluster order (stable ties). If no node can take a task (Storm
reports "Not enough resources"), :class:`NoSolution` is raised (status ``no_solution``).

Running time: O(o + s) for the breadth-first operator order, then one vectorised distance over
the k nodes per task, O(n k) in all (the scan that makes 10^6 tasks on 10^4 nodes exceed 300 s
in ``benchmarks/scale.py``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..model import Placement, Problem, Topology
from ..model.placement import capacity_slack
from ..model.resources import CPU
from .base import NoSolution, Outcome, Scheduler, register
from .status import Status

DEFAULT_WORKER_MAX_HEAP_MB = 768.0  # Storm's topology.worker.max.heap.size.mb
SAME_RACK_DISTANCE = 0.5


def bfs_operator_order(topo: Topology) -> list[str]:
    """Operators in R-Storm's breadth-first order (children before parents, visited on enqueue)."""
    visited: set[str] = set()
    order: list[str] = []
    for root in (op.name for op in topo.operators if topo.is_source(op.name)):
        if root in visited:
            continue
        visited.add(root)
        queue = deque([root])
        while queue:
            name = queue.popleft()
            order.append(name)
            for nxt in [s.dst for s in topo.downstream(name)] + [s.src for s in topo.upstream(name)]:
                if nxt not in visited:
                    visited.add(nxt)
                    queue.append(nxt)
    return order


def rstorm_task_order(topo: Topology) -> np.ndarray:
    """Task ids interleaved round robin over :func:`bfs_operator_order`."""
    ranges = [topo.tasks_of(name) for name in bfs_operator_order(topo)]
    depth = max(len(r) for r in ranges)
    return np.array([r[i] for i in range(depth) for r in ranges if i < len(r)], dtype=np.int64)


def _ratio_sq(need: float, avail: np.ndarray) -> np.ndarray:
    return ((need - avail) / (avail + 1.0)) ** 2


def _network_sq(racks: np.ndarray, ref: int | None) -> np.ndarray:
    """Squared network distance of every node to the previous task's node (0 for the first task)."""
    if ref is None:
        return np.zeros(racks.shape[0])
    d = np.where(racks == racks[ref], SAME_RACK_DISTANCE, 1.0)
    d[ref] = 0.0
    return d ** 2


@register
@dataclass(frozen=True, kw_only=True)
class RStormScheduler(Scheduler):
    """``cpu_hard``: cpu is a hard constraint (Storm 1.0 code) or soft (the paper);
    ``worker_max_heap_mb``: memory one worker may hold (Storm's default 768)."""

    name = "rstorm"
    complexity = "O(n k)"
    fits_resources = True   # CPU and memory are R-Storm's own dimensions
    cpu_hard: bool = True
    worker_max_heap_mb: float = DEFAULT_WORKER_MAX_HEAP_MB

    def __post_init__(self):
        if not self.worker_max_heap_mb > 0:
            raise ValueError(f"worker_max_heap_mb must be > 0, got {self.worker_max_heap_mb}")

    def _schedule(self, problem: Problem) -> Outcome:
        topo, cluster = problem.topology, problem.cluster
        ops = topo.operators
        op_of = topo.operator_of_task
        loads = problem.loads
        res = problem.resources
        r = res.names.index(CPU) if CPU in res.names else None
        cpu_need, cpu_cap = (loads, cluster.capacities) if r is None else (res.need[:, r], res.limit[:, r])
        mem_need = np.array([op.memory_mb for op in ops], dtype=float)[op_of]
        caps = cluster.capacities
        cpu_avail = cpu_cap.copy()
        load_used = np.zeros(cluster.n_nodes)
        declared = np.array([n.memory_mb for n in cluster.nodes]) > 0
        mem_avail = np.where(declared, [n.memory_mb for n in cluster.nodes], np.inf)
        worker_mem = np.zeros((cluster.n_nodes, int(cluster.slots.max())))
        worker_mem[np.arange(int(cluster.slots.max())) >= cluster.slots[:, None]] = np.inf  # slots a node lacks
        racks = cluster.racks
        tol, cpu_tol = capacity_slack(caps), capacity_slack(cpu_cap)
        # the first task's rack: the most available cpu + (declared) memory
        first_rack = int(np.argmax(np.bincount(racks, weights=cpu_cap + np.where(declared, mem_avail, 0.0))))

        order = rstorm_task_order(topo)
        node = np.empty(topo.n_tasks, dtype=np.int64)
        worker = np.empty(topo.n_tasks, dtype=np.int64)
        ref = None
        for t in order.tolist():
            cpu, mem = cpu_need[t], mem_need[t]
            room = worker_mem + mem <= self.worker_max_heap_mb
            ok = room.any(axis=1) & (mem <= mem_avail) & ((racks == first_rack) if ref is None else True)
            if self.cpu_hard:
                ok &= (cpu <= cpu_avail + cpu_tol) & (load_used + loads[t] <= caps + tol)
            if not ok.any():
                raise NoSolution(self._no_node(topo.task_labels[t], cpu, mem, ref is None, cpu_avail, mem_avail))
            mem_term = np.where(declared, _ratio_sq(mem, np.where(declared, mem_avail, 0.0)), 1.0)
            dist = np.sqrt(_ratio_sq(cpu, np.maximum(cpu_avail, 0.0)) + mem_term + _network_sq(racks, ref))
            j = int(np.flatnonzero(ok)[np.argmin(dist[ok])])
            w = int(np.argmax(room[j]))
            node[t], worker[t] = j, w
            cpu_avail[j] -= cpu
            load_used[j] += loads[t]
            mem_avail[j] -= mem
            worker_mem[j, w] += mem
            ref = j
        details = {"operator_order": bfs_operator_order(topo),
                   "first_rack": cluster.nodes[int(np.argmax(racks == first_rack))].rack,
                   "first_node": cluster.nodes[int(node[order[0]])].name,
                   "workers_used": int(np.unique(node * worker_mem.shape[1] + worker).size)}
        return Outcome(placement=Placement(node=node, worker=worker), status=Status.HEURISTIC, details=details)

    def _no_node(self, label, cpu, mem, first, cpu_avail, mem_avail) -> str:
        where = "in the rack with the most available resources " if first else ""
        return (f"rstorm: no node {where}can host task {label} (cpu need {cpu:g}, memory need {mem:g} MB, "
                f"worker heap {self.worker_max_heap_mb:g} MB): most available cpu {cpu_avail.max():g}, "
                f"memory {'unlimited' if np.isinf(mem_avail.max()) else f'{mem_avail.max():g} MB'}")

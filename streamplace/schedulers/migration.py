"""Moving a running job: where its tasks are now, which of them must move, and what a new
placement costs to reach (``Scheduler.reschedule``; ``streamplace reschedule``).

A task must move (a *forced* move, never counted against a move budget) when its node is no longer
in the cluster, or when its node is over capacity: then the node keeps its tasks in order of their
traffic to the node's other tasks, most first, while they fit, and the rest must go.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..files import quote
from ..model import Problem
from ..model.placement import capacity_slack
from ..model.specs import SpecError

Targets = dict[str, tuple[str, int]]


@dataclass(frozen=True)
class Current:
    """The running placement on ``problem``'s indices: ``node`` (-1 where the task must move),
    ``forced`` (the tasks that must move) and ``worker`` (each task's running worker on its node)."""

    node: np.ndarray
    forced: np.ndarray
    worker: np.ndarray

    def moves(self, node: np.ndarray) -> int:
        """Tasks that change node, forced ones not counted."""
        return int(np.count_nonzero((node != self.node) & ~self.forced))


def current_of(problem: Problem, targets: Targets, source: str = "--current") -> Current:
    """Map the running placement's labels and node names onto ``problem``; find the forced moves."""
    topo, cluster = problem.topology, problem.cluster
    node = np.full(topo.n_tasks, -1, dtype=np.int64)
    worker = np.zeros(topo.n_tasks, dtype=np.int64)
    seen = np.zeros(topo.n_tasks, dtype=bool)
    for label, (name, w) in targets.items():
        try:
            t = topo.task_id(label)
        except KeyError:
            raise SpecError(source, f"placement.{label}", f"unknown task (not a task of {quote(topo.name)})") from None
        seen[t] = True
        node[t] = cluster.index.get(name, -1)   # a node no longer in the cluster: the task must move
        worker[t] = int(w)
    if not seen.all():
        missing = topo.task_labels[int(np.flatnonzero(~seen)[0])]
        raise SpecError(source, "placement", f"{int((~seen).sum())} task(s) of the job not placed, first {missing}")
    node = _evict_overload(problem, node)
    forced = node < 0
    return Current(node=node, forced=forced, worker=worker)


def sticky_workers(weights: sp.csr_matrix, node: np.ndarray, ref_node: np.ndarray, ref_worker: np.ndarray) -> np.ndarray:
    """Workers for the node assignment ``node`` of a running job placed as (``ref_node``,
    ``ref_worker``): a task that stays on its node stays in its worker (in Storm a task that
    changes worker restarts like one that changes node); a task that changes node joins, in task
    order, the worker on its new node it exchanges the most traffic with (ties: the one with
    fewest tasks, then the lowest index), or worker 0 of a node with no task yet."""
    worker = np.where(node == ref_node, ref_worker, -1).astype(np.int64)
    for t in np.flatnonzero(worker < 0):
        on = np.flatnonzero((node == node[t]) & (worker >= 0))
        if on.size == 0:
            worker[t] = 0
            continue
        row = weights.getrow(t)
        pair = np.zeros(node.size)
        pair[row.indices] = row.data
        size = int(worker[on].max()) + 1
        traffic = np.bincount(worker[on], weights=pair[on], minlength=size)
        count = np.bincount(worker[on], minlength=size)
        present = np.flatnonzero(count > 0)
        worker[t] = int(present[np.lexsort((present, count[present], -traffic[present]))[0]])
    return worker


def _evict_overload(problem: Problem, node: np.ndarray) -> np.ndarray:
    """``node`` with the tasks an over-capacity node cannot keep set to -1 (module docstring)."""
    loads = np.asarray(problem.graph.loads, dtype=float)
    caps = problem.cluster.capacities
    placed = node >= 0
    used = np.bincount(node[placed], weights=loads[placed], minlength=caps.size)
    over = np.flatnonzero(used > caps + capacity_slack(caps))
    if over.size == 0:
        return node
    node = node.copy()
    weights = sp.csr_matrix(problem.graph.weights)
    for j in over.tolist():
        tasks = np.flatnonzero(node == j)
        inner = np.asarray(weights[tasks][:, tasks].sum(axis=1)).ravel()
        keep_order = tasks[np.lexsort((tasks, -inner))]
        room = caps[j] + capacity_slack(caps[j])
        kept_load = np.cumsum(loads[keep_order])
        node[keep_order[kept_load > room]] = -1
    return node

"""Second level: the tasks of each node -> worker processes ([I] Sec. 4, [T3] Eq. 3).

A node holding t tasks runs ``w = min(slots, ceil(t / T))`` workers (T = max tasks per
worker, default 5 as in [I] Sec. 6 and [T3]); its induced subgraph is K-way partitioned
into w parts of equal target weight, one part per worker, minimising inter-worker traffic.
"""

from __future__ import annotations

import numpy as np

from ..model import Problem
from ..partition import kway_partition

DEFAULT_TASKS_PER_WORKER = 5


def assign_workers(problem: Problem, node_of_task: np.ndarray, *, tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER,
                   seed: int = 0, nodes: np.ndarray | None = None) -> np.ndarray:
    """Worker index (0-based, contiguous per node) of every task; with ``nodes`` (node ids) only the
    tasks of those nodes are split (the others get 0: the caller keeps what it had for them)."""
    if tasks_per_worker < 1:
        raise ValueError(f"tasks_per_worker must be >= 1, got {tasks_per_worker}")
    node_of_task = np.asarray(node_of_task, dtype=np.int64)
    worker = np.zeros(node_of_task.shape[0], dtype=np.int64)
    order = np.argsort(node_of_task, kind="stable")
    sorted_nodes = node_of_task[order]
    present = np.unique(sorted_nodes)
    starts = np.searchsorted(sorted_nodes, present)
    ends = np.searchsorted(sorted_nodes, present, side="right")
    n_workers = np.minimum(problem.cluster.slots[present], -(-(ends - starts) // tasks_per_worker))
    if nodes is not None:
        n_workers = np.where(np.isin(present, nodes), n_workers, 1)
    split = np.flatnonzero(n_workers > 1)
    if split.size == 0:
        return worker
    weights = problem.graph.weights[order][:, order]  # each node's tasks form one diagonal block
    loads = problem.graph.loads[order]
    for i in split.tolist():
        lo, hi = int(starts[i]), int(ends[i])
        parts = kway_partition(weights[lo:hi, lo:hi], loads[lo:hi], int(n_workers[i]), seed=seed)
        worker[order[lo:hi]] = np.unique(parts, return_inverse=True)[1]
    return worker

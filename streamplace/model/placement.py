"""Placements: every task -> (node, worker slot on that node).

docs/definitions.md: a placement is *valid* iff every task is placed exactly once on an
existing node and worker slot, each node's load <= capacity (``<=``, as the papers'
examples fill nodes exactly) and each node uses <= ``slots`` workers. Structural problems
(missing tasks, unknown nodes, slot out of range) make a placement unusable; capacity
overloads are reported separately, because the baselines (Storm's even scheduler) ignore
capacity and we must still be able to evaluate what they produce.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cluster import Cluster
from .errors import FieldError

CAPACITY_EPS = 1e-9


def capacity_slack(capacities):
    """How far a node's load may exceed its capacity and still be within it: float noise, relative
    (``CAPACITY_EPS`` x capacity), absolute below capacity 1. The one rule of every capacity check
    (the validator, every scheduler's fill and repair)."""
    return CAPACITY_EPS * np.maximum(1.0, capacities)


class PlacementError(FieldError):
    """A placement that violates a rule; ``field_path`` names the offending field."""


@dataclass(frozen=True, eq=False)
class Placement:
    """``node[t]`` and ``worker[t]`` (slot index within the node) for every task t."""

    node: np.ndarray
    worker: np.ndarray

    def __post_init__(self):
        node = np.asarray(self.node, dtype=np.int64)
        worker = np.asarray(self.worker, dtype=np.int64)
        node.setflags(write=False)
        worker.setflags(write=False)
        object.__setattr__(self, "node", node)
        object.__setattr__(self, "worker", worker)

    def __eq__(self, other):
        return isinstance(other, Placement) and np.array_equal(self.node, other.node) and np.array_equal(self.worker, other.worker)

    @property
    def n_tasks(self) -> int:
        return int(self.node.shape[0])

    def slot_ids(self, cluster: Cluster) -> np.ndarray:
        """A global id per (node, worker) pair: ``node * max_slots + worker``."""
        return self.node * int(cluster.slots.max()) + self.worker

    def node_loads(self, loads: np.ndarray, n_nodes: int) -> np.ndarray:
        return np.bincount(self.node, weights=loads, minlength=n_nodes)

    def workers_used(self, cluster: Cluster) -> np.ndarray:
        """Distinct workers in use per node."""
        slots = np.unique(self.slot_ids(cluster))
        return np.bincount(slots // int(cluster.slots.max()), minlength=cluster.n_nodes)

    def structural_errors(self, n_tasks: int, cluster: Cluster) -> list[str]:
        """Problems that make the placement unusable (empty list = structurally valid)."""
        errors = []
        if self.node.shape != (n_tasks,) or self.worker.shape != (n_tasks,):
            return [f"placement covers {self.node.shape[0]} tasks, the topology has {n_tasks}"]
        bad = np.flatnonzero((self.node < 0) | (self.node >= cluster.n_nodes))
        if bad.size:
            errors.append(f"task {int(bad[0])} is on node index {int(self.node[bad[0]])}, the cluster has {cluster.n_nodes} nodes")
            return errors
        bad = np.flatnonzero((self.worker < 0) | (self.worker >= cluster.slots[self.node]))
        if bad.size:
            t = int(bad[0])
            errors.append(f"task {t} is on worker {int(self.worker[t])} of node {cluster.nodes[self.node[t]].name}, which has {cluster.nodes[self.node[t]].slots} slots")
        return errors

    def overloaded_nodes(self, loads: np.ndarray, cluster: Cluster) -> np.ndarray:
        """Indices of nodes whose load exceeds their capacity."""
        node_load = self.node_loads(loads, cluster.n_nodes)
        return np.flatnonzero(node_load > cluster.capacities + capacity_slack(cluster.capacities))

    def violations(self, loads: np.ndarray, cluster: Cluster) -> list[str]:
        """Every reason the placement is not valid in the sense of docs/definitions.md."""
        errors = self.structural_errors(loads.shape[0], cluster)
        if errors:
            return errors
        node_load = self.node_loads(loads, cluster.n_nodes)
        for j in self.overloaded_nodes(loads, cluster):
            errors.append(f"node {cluster.nodes[j].name} holds load {node_load[j]:g} > capacity {cluster.capacities[j]:g}")
        return errors

    def check(self, loads: np.ndarray, cluster: Cluster) -> None:
        errors = self.violations(loads, cluster)
        if errors:
            raise PlacementError("placement", errors[0])

    # ------------------------------------------------------------------ label form
    def to_mapping(self, labels: list[str], cluster: Cluster) -> dict[str, dict]:
        """``{task label: {"node": name, "worker": slot}}`` (the JSON form)."""
        names = [n.name for n in cluster.nodes]
        return {lab: {"node": names[j], "worker": int(w)} for lab, j, w in zip(labels, self.node.tolist(), self.worker.tolist())}

"""A scheduling problem: topology + task graph + cluster (+ the current placement)."""

from __future__ import annotations

from dataclasses import dataclass

from .cluster import Cluster
from .graph import TaskGraph, build_task_graph
from .placement import Placement
from .topology import Topology


@dataclass(frozen=True)
class Problem:
    topology: Topology
    graph: TaskGraph
    cluster: Cluster
    current: Placement | None = None

    @classmethod
    def from_topology(cls, topology: Topology, cluster: Cluster, *, graph: TaskGraph | None = None) -> "Problem":
        """The analytic task graph of ``topology`` unless a measured ``graph`` is given."""
        return cls(topology=topology, graph=graph if graph is not None else build_task_graph(topology), cluster=cluster)

    @property
    def n_tasks(self) -> int:
        return self.topology.n_tasks

    @property
    def loads(self):
        return self.graph.loads

    def infeasibility(self) -> str | None:
        """Why no capacity-respecting placement can exist, if that is obvious; else None."""
        loads, caps = self.graph.loads, self.cluster.capacities
        if loads.size and loads.max() > caps.max():
            t = int(loads.argmax())
            return f"task {self.topology.task_labels[t]} has load {loads[t]:g}, more than the largest node capacity {caps.max():g}"
        if loads.sum() > caps.sum() + 1e-9:
            return f"total task load {loads.sum():g} exceeds total cluster capacity {caps.sum():g}"
        return None

"""A scheduling problem: topology + task graph + cluster (+ the current placement)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .cluster import Cluster
from .graph import TaskGraph, build_task_graph
from .placement import Placement
from .resources import Resources
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

    @cached_property
    def resources(self) -> Resources:
        """Task units, and CPU and memory where the job states them (model.resources)."""
        return Resources.of(self.topology, self.graph, self.cluster)

    def violations(self, placement: Placement) -> list[str]:
        """Every reason ``placement`` is not valid: structure, task units, and each stated resource."""
        broken = placement.structural_errors(self.n_tasks, self.cluster)
        if broken:
            return broken
        return placement.violations(self.graph.loads, self.cluster) + self.resources.overloads(placement, self.cluster)

    def overloaded(self, placement: Placement) -> np.ndarray:
        """Indices of the nodes that hold more than they offer of some resource."""
        return np.flatnonzero(self.resources.over(placement.node).any(axis=1))

    def infeasibility(self) -> str | None:
        """Why no placement can fit, if one resource alone shows it (naming the resource); else None."""
        return self.resources.infeasibility(self.topology.task_labels)

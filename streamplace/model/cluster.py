"""Physical clusters: nodes with a capacity (load units), worker slots and hardware facts.

docs/definitions.md. ``capacity`` is in the same unit as task loads (the papers: tasks per
node). ``slots`` is the number of worker processes the node may run (Storm's
``supervisor.slots.ports``, 4 by default).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..memory import cluster_bytes, over_limit
from .errors import FieldError, check_non_negative, index_names

DEFAULT_SLOTS = 4
DEFAULT_CORES = 4
DEFAULT_BANDWIDTH = 125e6  # bytes/s: 1 Gbit/s Ethernet, the papers' testbeds


class ClusterError(FieldError):
    """A cluster that violates a rule; ``field_path`` names the offending field."""


def check_cluster_size(n_nodes: int, n_slots: int, field_path: str = "nodes") -> None:
    """Refuse (:class:`ClusterError`, with the estimate) a cluster whose nodes and worker slots
    would not fit the memory limit: called by every generator before it builds a node and by
    the spec loader before it expands ``groups``."""
    refusal = over_limit(cluster_bytes(n_nodes, n_slots), f"{n_nodes:,} nodes with {n_slots:,} worker slots")
    if refusal:
        raise ClusterError(field_path, refusal)


@dataclass(frozen=True)
class Node:
    name: str
    capacity: float
    slots: int = DEFAULT_SLOTS
    machine_type: str = "default"
    cores: float = DEFAULT_CORES
    memory_mb: float = 0.0
    bandwidth: float = DEFAULT_BANDWIDTH
    rack: str | None = None


@dataclass(frozen=True)
class Cluster:
    name: str
    nodes: tuple[Node, ...]

    @classmethod
    def build(cls, name: str, nodes) -> "Cluster":
        cluster = cls(name=name, nodes=tuple(nodes))
        cluster.validate()
        return cluster

    @classmethod
    def from_capacities(cls, spec: dict[float, int], *, name: str = "cluster", slots: int = DEFAULT_SLOTS) -> "Cluster":
        """The papers' shorthand: ``{6: 3, 4: 3, 2: 4}`` = 3 nodes of capacity 6, 3 of 4, 4 of 2."""
        nodes = []
        for capacity, count in spec.items():
            for _ in range(count):
                nodes.append(Node(name=f"node{len(nodes):02d}", capacity=capacity, slots=slots))
        return cls.build(name, nodes)

    def validate(self) -> None:
        index_names(self.nodes, "nodes", "node", "cluster", ClusterError)
        for i, node in enumerate(self.nodes):
            where = f"nodes[{i}]"
            check_non_negative(node, ("capacity",), where, ClusterError)
            if isinstance(node.slots, bool) or not isinstance(node.slots, int) or node.slots < 1:
                raise ClusterError(f"{where}.slots", f"must be an integer >= 1, got {node.slots}")
            check_non_negative(node, ("cores", "memory_mb", "bandwidth"), where, ClusterError)
        check_cluster_size(len(self.nodes), sum(node.slots for node in self.nodes))

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @cached_property
    def capacities(self) -> np.ndarray:
        return np.array([n.capacity for n in self.nodes], dtype=float)

    @cached_property
    def slots(self) -> np.ndarray:
        return np.array([n.slots for n in self.nodes], dtype=np.int64)

    @cached_property
    def index(self) -> dict[str, int]:
        return {n.name: i for i, n in enumerate(self.nodes)}

    @cached_property
    def racks(self) -> np.ndarray:
        """Rack id per node (nodes without a rack share rack 0)."""
        names: dict[str | None, int] = {}
        return np.array([names.setdefault(n.rack, len(names)) for n in self.nodes], dtype=np.int64)


def cpu_scale(cluster: Cluster, budget: float) -> float:
    """The Storm testbed's one factor on every node's cores: ``min(1, budget / total cores)``, so
    the nodes keep their relative speeds and together get ``budget`` cores at most."""
    total = float(sum(n.cores for n in cluster.nodes))
    return min(1.0, budget / total) if total > 0 else 1.0


def scaled_cluster(cluster: Cluster, cpu_budget: float, *, bandwidth_scaled: bool = False) -> Cluster:
    """The cluster as the testbed runs it: each node's cores times :func:`cpu_scale`, and with
    ``bandwidth_scaled`` its bandwidth too."""
    scale = cpu_scale(cluster, cpu_budget)
    return Cluster.build(cluster.name, [dataclasses.replace(n, cores=n.cores * scale,
                                                            bandwidth=n.bandwidth * scale if bandwidth_scaled else n.bandwidth)
                                        for n in cluster.nodes])

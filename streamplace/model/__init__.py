"""Topologies, clusters, task graphs, placements and problems (no Spark here)."""

from .cluster import Cluster, ClusterError, Node
from .graph import TaskGraph, build_task_graph
from .placement import Placement, PlacementError
from .problem import Problem
from .topology import GROUPINGS, Operator, Stream, Topology, TopologyError

__all__ = [
    "Cluster", "ClusterError", "GROUPINGS", "Node", "Operator", "Placement", "PlacementError",
    "Problem", "Stream", "TaskGraph", "Topology", "TopologyError", "build_task_graph",
]

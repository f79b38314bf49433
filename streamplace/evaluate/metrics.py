"""Placement metrics: pure functions of (problem, placement). DESIGN section 4.

Traffic costs sum the undirected weight ``w(u, v)`` of each task pair once ([I] Eq. 3,
[T3] Eq. 1), split by locality: different nodes (``inter_node_cost``), same node but
different workers (``inter_worker_cost``), same worker (``intra_worker_traffic``). All
functions are vectorised over the graph's edge arrays.
"""

from __future__ import annotations

import numpy as np

from ..model import Placement, Problem


def _locality(problem: Problem, placement: Placement):
    u, v, w = problem.graph.edges
    node = placement.node
    same_node = node[u] == node[v]
    same_worker = same_node & (placement.worker[u] == placement.worker[v])
    return w, same_node, same_worker


def inter_node_cost(problem: Problem, placement: Placement) -> float:
    """Sum of w(u, v) over pairs placed on different nodes."""
    w, same_node, _ = _locality(problem, placement)
    return float(w[~same_node].sum())


def inter_worker_cost(problem: Problem, placement: Placement) -> float:
    """Sum of w(u, v) over pairs on the same node but in different workers."""
    w, same_node, same_worker = _locality(problem, placement)
    return float(w[same_node & ~same_worker].sum())


def intra_worker_traffic(problem: Problem, placement: Placement) -> float:
    """Sum of w(u, v) over pairs in the same worker."""
    w, _, same_worker = _locality(problem, placement)
    return float(w[same_worker].sum())


def traffic_by_locality(problem: Problem, placement: Placement) -> tuple[float, float, float]:
    """``(inter_node, inter_worker, intra_worker)`` in one pass over the edges."""
    w, same_node, same_worker = _locality(problem, placement)
    intra_node = float(w[same_node].sum())
    intra_worker = float(w[same_worker].sum())
    return float(w.sum()) - intra_node, intra_node - intra_worker, intra_worker


def node_loads(problem: Problem, placement: Placement) -> np.ndarray:
    return placement.node_loads(problem.graph.loads, problem.cluster.n_nodes)


def utilisation(problem: Problem, placement: Placement) -> np.ndarray:
    """Load / capacity per node (inf where a zero-capacity node holds load)."""
    loads = node_loads(problem, placement)
    caps = problem.cluster.capacities
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(caps > 0, loads / np.where(caps > 0, caps, 1.0), np.where(loads > 0, np.inf, 0.0))


def overloaded_nodes(problem: Problem, placement: Placement) -> list[str]:
    return [problem.cluster.nodes[j].name for j in placement.overloaded_nodes(problem.graph.loads, problem.cluster)]


def nodes_used(problem: Problem, placement: Placement) -> int:
    return int(np.unique(placement.node).size)


def imbalance(problem: Problem, placement: Placement) -> float:
    """Max node load / mean node load over the nodes used ([F]'s balance measure)."""
    loads = node_loads(problem, placement)
    used = loads[np.bincount(placement.node, minlength=problem.cluster.n_nodes) > 0]
    mean = used.mean() if used.size else 0.0
    return float(used.max() / mean) if mean > 0 else 1.0


def network_distance_score(problem: Problem, placement: Placement) -> float:
    """Traffic-weighted distance per directed edge: 0 same worker, 1 same node, 2 same rack,
    3 other rack (R-Storm's test-framework metric), divided by the total traffic."""
    u, v, rate = problem.graph.directed
    if rate.sum() == 0:
        return 0.0
    node = placement.node
    rack = problem.cluster.racks[node]
    dist = np.full(u.shape[0], 3.0)
    dist[rack[u] == rack[v]] = 2.0
    dist[node[u] == node[v]] = 1.0
    dist[(node[u] == node[v]) & (placement.worker[u] == placement.worker[v])] = 0.0
    return float((dist * rate).sum() / rate.sum())


def summary(problem: Problem, placement: Placement) -> dict:
    """The metric keys shared by ``schedule``, ``evaluate`` and ``compare`` output."""
    util = utilisation(problem, placement)
    inter_node, inter_worker, intra_worker = traffic_by_locality(problem, placement)
    return {
        "inter_node_cost": inter_node,
        "inter_worker_cost": inter_worker,
        "intra_worker_traffic": intra_worker,
        "total_traffic": problem.graph.total_weight,
        "nodes_used": nodes_used(problem, placement),
        "max_utilisation": float(util.max()) if util.size else 0.0,
        "imbalance": imbalance(problem, placement),
        "overloaded_nodes": overloaded_nodes(problem, placement),
        "network_distance": network_distance_score(problem, placement),
    }

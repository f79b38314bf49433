"""The shared placement pieces: contraction, best-fit fill, the placed check."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamplace.model import Placement
from streamplace.schedulers import NoSolution
from streamplace.schedulers.fill import best_fit, reduced_graph, require_placed


def test_reduced_graph_aggregates_loads_and_edges():
    W = sp.csr_matrix(np.array([[0, 5, 1, 0], [5, 0, 2, 3], [1, 2, 0, 4], [0, 3, 4, 0]], dtype=float))
    group = np.array([0, 0, -1, -1])  # tasks 0, 1 fused; 2, 3 stay single
    reduced, loads, vertex = reduced_graph(W, np.array([1.0, 2.0, 3.0, 4.0]), group, 1)
    assert vertex.tolist() == [0, 0, 1, 2]
    assert loads.tolist() == [3.0, 3.0, 4.0]
    assert reduced.toarray().tolist() == [[0, 3, 3], [3, 0, 4], [3, 4, 0]]


def test_best_fit_follows_traffic_into_free_room_and_never_overfills():
    # 0-1 talk heavily, 2-3 too; task 0 sits on node 0, task 3 on node 1; room 2 per node
    W = sp.csr_matrix(np.array([[0, 9, 1, 0], [9, 0, 0, 1], [1, 0, 0, 9], [0, 1, 9, 0]], dtype=float))
    loads = np.ones(4)
    node = best_fit(W, loads, np.array([0, -1, -1, 1]), np.array([2.0, 2.0]))
    assert node.tolist() == [0, 0, 1, 1]
    # node 0 full: task 2 still follows its traffic to node 1; task 1 fits nowhere and waits (-1)
    assert best_fit(W, loads, np.array([0, -1, -1, 1]), np.array([1.0, 2.0])).tolist() == [0, -1, 1, 1]
    # with room on node 1 only, task 1 goes there despite its partner on node 0
    assert best_fit(W, loads, np.array([0, -1, -1, 1]), np.array([1.0, 3.0])).tolist() == [0, 1, 1, 1]


def test_require_placed_names_what_did_not_fit():
    loads = np.array([2.0, 1.0, 3.0])
    assert require_placed(np.array([0, 1, 1]), loads, np.array([2.0, 4.0])).tolist() == [0, 1, 1]
    with pytest.raises(NoSolution, match=r"1 task\(s\) of total load 3 fit in no node's remaining capacity "
                                         r"\(heaviest waiting load 3, largest free capacity 3\)"):
        require_placed(np.array([0, 1, -1]), loads, np.array([2.0, 4.0]))


def test_fit_resources_moves_the_cheapest_task_to_a_node_where_it_fits_everything():
    from streamplace.model import Cluster, Operator, Problem, Stream, Topology
    from streamplace.model.cluster import Node
    from streamplace.schedulers.fill import fit_resources
    # s -> b (2 tasks each, all-to-all); b needs 600 MB, node a offers 1000 MB: one b must leave a.
    topo = Topology.build("t", [Operator("s", 2), Operator("b", 2, memory_mb=600)], [Stream("s", "b")])
    problem = Problem.from_topology(topo, Cluster.build("c", [Node("a", 4, memory_mb=1000), Node("x", 4, memory_mb=1000)]))
    node, moved = fit_resources(problem.graph.weights, problem.resources, np.array([0, 0, 0, 0]), ["a", "x"])
    assert moved == [2] and node.tolist() == [0, 0, 1, 0]   # b[0] (ties: lower id) costs 2 edges anywhere
    assert problem.violations(Placement(node=node, worker=np.zeros(4, dtype=int))) == []
    full = Problem.from_topology(topo, Cluster.build("c", [Node("a", 4, memory_mb=1000), Node("x", 0, memory_mb=1000)]))
    with pytest.raises(NoSolution, match="node a holds more memory than it offers and none of its tasks fits"):
        fit_resources(full.graph.weights, full.resources, np.array([0, 0, 0, 0]), ["a", "x"])

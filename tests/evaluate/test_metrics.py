import numpy as np
import pytest

from streamplace.evaluate import metrics
from streamplace.model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from streamplace.workloads import microbench


def small():
    # a(2) -> b(2), pair_rate 1: 4 unit edges; racks r1 = {n0, n1}, r2 = {n2}
    topo = Topology.build("t", [Operator("a", 2), Operator("b", 2, load=2.0)], [Stream("a", "b", pair_rate=1.0)])
    cluster = Cluster.build("c", [Node("n0", 4, slots=2, rack="r1"), Node("n1", 4, rack="r1"), Node("n2", 2, rack="r2")])
    return Problem.from_topology(topo, cluster)


def test_hand_computed_split_by_locality():
    p = small()
    # a0,b0 on n0 worker 0; a1 on n0 worker 1; b1 on n2
    pl = Placement(node=[0, 0, 0, 2], worker=[0, 1, 0, 0])
    # pairs: a0-b0 same worker (1), a1-b0 same node other worker (1), a0-b1 and a1-b1 inter-node (2)
    assert metrics.inter_node_cost(p, pl) == 2.0
    assert metrics.inter_worker_cost(p, pl) == 1.0
    assert metrics.intra_worker_traffic(p, pl) == 1.0
    assert metrics.traffic_by_locality(p, pl) == (2.0, 1.0, 1.0)
    assert metrics.node_loads(p, pl).tolist() == [4.0, 0.0, 2.0]
    assert metrics.utilisation(p, pl).tolist() == [1.0, 0.0, 1.0]
    assert metrics.nodes_used(p, pl) == 2
    assert metrics.imbalance(p, pl) == pytest.approx(4.0 / 3.0)
    assert metrics.overloaded_nodes(p, pl) == []
    # directed edges a->b: a0b0 d0, a0b1 d3 (other rack), a1b0 d1, a1b1 d3 -> mean 7/4
    assert metrics.network_distance_score(p, pl) == pytest.approx(7 / 4)


def test_summary_keys_and_overload():
    p = small()
    pl = Placement(node=[2, 2, 2, 2], worker=[0, 0, 0, 0])
    s = metrics.summary(p, pl)
    assert s["overloaded_nodes"] == ["n2"] and s["max_utilisation"] == 3.0 and s["inter_node_cost"] == 0.0


def test_costs_match_independent_recomputation_on_random_placements(recompute):
    rng = np.random.default_rng(7)
    for inst in microbench.instances(sizes=(10, 20)):
        p = inst.problem
        node = rng.integers(0, p.cluster.n_nodes, p.n_tasks)
        worker = rng.integers(0, 4, p.n_tasks)
        pl = Placement(node=node, worker=worker)
        inter_node, inter_worker = recompute(p, node, worker)
        assert metrics.inter_node_cost(p, pl) == pytest.approx(inter_node)
        assert metrics.inter_worker_cost(p, pl) == pytest.approx(inter_worker)
        assert sum(metrics.traffic_by_locality(p, pl)) == pytest.approx(p.graph.total_weight)

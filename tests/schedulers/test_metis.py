import numpy as np
import pytest
import scipy.sparse as sp

from streamplace.evaluate.metrics import inter_node_cost, inter_worker_cost
from streamplace.model import Cluster, Node, Operator, Problem, Stream, TaskGraph, Topology
from streamplace.schedulers import ParameterError, make_scheduler
from streamplace.schedulers.metis import parts_to_nodes, repair_capacity, traffic_weights
from streamplace.workloads.microbench import instances


def chain(name, n):
    ops = [Operator(f"{name}{i}", 1) for i in range(n)]
    return ops, [Stream(f"{name}{i}", f"{name}{i + 1}", pair_rate=1.0) for i in range(n - 1)]


def two_chains_problem(capacity=4):
    a_ops, a_streams = chain("a", 4)
    b_ops, b_streams = chain("b", 4)
    topo = Topology.build("two", a_ops + b_ops, a_streams + b_streams)
    return Problem.from_topology(topo, Cluster.from_capacities({capacity: 2}))


def star_problem(rate=100.0):
    """One hub task sending to 7 leaves; two nodes of capacity 4 (8 tasks: the cluster is full)."""
    topo = Topology.build("star", [Operator("hub", 1), Operator("leaf", 7)],
                          [Stream("hub", "leaf", pair_rate=rate)])
    return Problem.from_topology(topo, Cluster.from_capacities({4: 2}))


@pytest.mark.parametrize("objective", ["volume", "cut"])
@pytest.mark.parametrize("vertex_weight", ["traffic", "load"])
def test_two_disconnected_chains_on_two_nodes_cut_nothing(objective, vertex_weight):
    p = two_chains_problem()
    res = make_scheduler("metis", {"objective": objective, "vertex_weight": vertex_weight}).schedule(p)
    node = res.placement.node
    assert len(set(node[:4])) == 1 and len(set(node[4:])) == 1 and node[0] != node[4]
    assert inter_node_cost(p, res.placement) == 0.0
    # 4 tasks per node, T = 5: one worker each, nothing crosses a worker either
    assert inter_worker_cost(p, res.placement) == 0.0 and res.placement.worker.tolist() == [0] * 8


def test_one_node_big_enough_for_everything_takes_everything():
    ops, streams = chain("c", 6)
    topo = Topology.build("c", ops, streams)
    cluster = Cluster.build("c", [Node("small", 2), Node("big", 10, slots=2), Node("mid", 4)])
    p = Problem.from_topology(topo, cluster)
    res = make_scheduler("metis", {"nodes": "1"}).schedule(p)
    assert res.placement.node.tolist() == [1] * 6 and inter_node_cost(p, res.placement) == 0.0
    # 6 tasks, T = 5 -> 2 workers; the chain is cut once between them
    assert sorted(np.bincount(res.placement.worker).tolist()) == [3, 3]
    assert inter_worker_cost(p, res.placement) == 1.0
    single = Problem.from_topology(topo, Cluster.from_capacities({6: 1}))
    assert make_scheduler("metis").schedule(single).placement.node.tolist() == [0] * 6


def test_fewer_nodes_than_needed_is_infeasible_with_a_clear_message():
    ops, streams = chain("c", 6)
    p = Problem.from_topology(Topology.build("c", ops, streams), Cluster.from_capacities({4: 3}))
    res = make_scheduler("metis", {"nodes": 1}).schedule(p)
    assert res.status == "infeasible" and "use more nodes" in res.message


def test_bigger_node_gets_more_tasks_with_capacity_targets():
    ops, streams = chain("c", 24)
    topo = Topology.build("c", ops, streams)
    cluster = Cluster.build("c", [Node("small", 10), Node("big", 20)])
    p = Problem.from_topology(topo, cluster)
    per_node = np.bincount(make_scheduler("metis").schedule(p).placement.node, minlength=2)
    assert per_node[1] > per_node[0] and abs(per_node[1] - 16) <= 1  # target 24 * 20/30
    equal = make_scheduler("metis", {"targets": "equal", "repair": False}).schedule(p)
    assert np.bincount(equal.placement.node, minlength=2).tolist() == [12, 12]


def test_traffic_weights_follow_the_paper():
    p = star_problem(rate=100.0)
    # hub sends 7 x 100 and receives nothing; each leaf receives 100
    assert traffic_weights(p.graph.rates).tolist() == [701.0] + [101.0] * 7


def test_repair_moves_leaves_to_the_hub_with_least_cut_increase():
    p = star_problem(rate=100.0)
    traffic = {"vertex_weight": "traffic", "targets": "equal", "objective": "cut"}
    faithful = make_scheduler("metis", {**traffic, "repair": False}).schedule(p)
    # balancing messages, not loads, leaves 7 tasks on one capacity-4 node
    assert sorted(np.bincount(faithful.placement.node, minlength=2).tolist()) == [1, 7]
    assert faithful.details["overloaded_nodes"] == 1 and "over capacity" in faithful.message
    res = make_scheduler("metis", traffic).schedule(p)
    assert res.placement.violations(p.loads, p.cluster) == []
    # capacity 4 each: the hub keeps 3 leaves, 4 leaves stay apart -> the optimum 400
    assert inter_node_cost(p, res.placement) == 400.0
    assert res.details["repair_moves"] == 3 and res.details["cut_repaired"] == 400.0


def test_repair_repacks_when_fragmented_and_refuses_when_packing_is_impossible():
    w = sp.csr_matrix(np.ones((4, 4)) - np.eye(4))
    loads = np.array([2.0, 2.0, 1.0, 1.0])
    caps = np.array([3.0, 3.0])
    node, moves = repair_capacity(w, loads, np.array([0, 0, 1, 1]), caps, np.ones(2, bool))
    assert np.bincount(node, weights=loads, minlength=2).tolist() == [3.0, 3.0] and moves == 2
    topo = Topology.build("t", [Operator("x", 3, load=2.0)])
    p = Problem.from_topology(topo, Cluster.from_capacities({3: 2}))
    assert p.infeasibility() is None  # total load 6 = total capacity 6, but 2 + 2 > 3
    res = make_scheduler("metis").schedule(p)
    assert res.status == "no_solution" and "do not pack" in res.message


def test_parts_go_heaviest_to_largest_node():
    parts = np.array([0, 1, 1, 1, 2, 2])
    node = parts_to_nodes(parts, np.ones(6), np.array([0, 2, 3]), np.array([2.0, 9.0, 3.0, 5.0]))
    # part 1 (3 tasks) -> node 3 (cap 5), part 2 (2) -> node 2 (cap 3), part 0 (1) -> node 0 (cap 2)
    assert node.tolist() == [0, 3, 3, 3, 2, 2]


@pytest.mark.parametrize("vertex_weight", ["load", "traffic"])
def test_capacity_respected_on_all_micro_benchmarks(recompute, vertex_weight):
    count = 0
    for inst in instances():
        p = inst.problem
        res = make_scheduler("metis", {"seed": 1, "vertex_weight": vertex_weight}).schedule(p)
        assert res.status == "heuristic", inst.name
        assert res.placement.violations(p.loads, p.cluster) == [], inst.name
        assert np.all(res.placement.workers_used(p.cluster) <= p.cluster.slots)
        inter_node, inter_worker = recompute(p, res.placement.node, res.placement.worker)
        assert inter_node == pytest.approx(inter_node_cost(p, res.placement)), inst.name
        assert inter_worker == pytest.approx(inter_worker_cost(p, res.placement)), inst.name
        assert inter_node == pytest.approx(res.details["cut_repaired"]) and inter_node <= p.graph.total_weight
        count += 1
    assert count == 72


def test_deterministic_for_a_seed():
    p = next(i for i in instances() if i.name == "diamond-30@heterogeneous").problem
    for params in ({}, {"objective": "cut", "vertex_weight": "traffic"}):
        a = make_scheduler("metis", {**params, "seed": 5}).schedule(p)
        b = make_scheduler("metis", {**params, "seed": 5}).schedule(p)
        assert a.placement == b.placement


def test_measured_graph_with_heterogeneous_loads_respects_capacity():
    rng = np.random.default_rng(3)
    n = 300
    src = rng.integers(0, n, 1500)
    dst = rng.integers(0, n, 1500)
    loads = rng.uniform(0.2, 3.0, n)
    graph = TaskGraph.from_edges(n, src, dst, rng.exponential(50.0, 1500), loads)
    topo = Topology.build("m", [Operator("x", n)])
    cluster = Cluster.from_capacities({80.0: 3, 40.0: 6, 20.0: 4})  # 560 for a load of ~480
    p = Problem.from_topology(topo, cluster, graph=graph)
    res = make_scheduler("metis").schedule(p)
    assert res.placement.violations(p.loads, cluster) == []
    assert res.details["cut_repaired"] == pytest.approx(inter_node_cost(p, res.placement))


@pytest.mark.parametrize("params", [{"nodes": "0"}, {"objective": "edges"}, {"imbalance": "0.9"},
                                    {"vertex_weight": "cpu"}, {"targets": "slots"}, {"tasks_per_worker": "0"},
                                    {"k": "3"}])
def test_bad_parameters_are_refused(params):
    with pytest.raises(ParameterError):
        make_scheduler("metis", params)

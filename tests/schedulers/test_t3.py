import json

import numpy as np
import pytest

from streamplace.evaluate.metrics import inter_node_cost
from streamplace.model import Cluster, Node, Operator, Problem, Stream, TaskGraph, Topology
from streamplace.schedulers import ParameterError, make_scheduler
from streamplace.schedulers.t3 import greedy_fit
from streamplace.workloads import microbench


def chain(names, sizes, rate=1.0):
    ops = [Operator(n, k) for n, k in zip(names, sizes)]
    return ops, [Stream(a, b, pair_rate=rate) for a, b in zip(names, names[1:])]


def per_node(problem, placement):
    """{node name: {operator: task count}} of a placement."""
    out = {}
    ops = problem.topology.operator_of_task
    for t, j in enumerate(placement.node.tolist()):
        counts = out.setdefault(problem.cluster.nodes[j].name, {})
        name = problem.topology.operators[ops[t]].name
        counts[name] = counts.get(name, 0) + 1
    return out


def steps(result, node):
    return [(s["group"], s["tasks"], s["rest"]) for s in result.details["nodes"][node]]


# ---------------------------------------------------------------- [T3] Appendix C
def trending_topics_problem():
    """Top trending topics ([T3] Fig. 2, App. C): A(5) -> B(9) -> C(4) -> D(1), unit loads.

    The appendix only says the per-pair rates a, b, c of (A,B), (B,C), (C,D) satisfy
    a > b > c. We use a, b, c = 3, 2, 1, which forces every choice it describes:
    starting pair on node 3: (A,B) = 45a = 135 beats (B,C) = 36b = 72 and (C,D) = 4c = 4;
    on node 1: (B2,C) = 16b = 32 beats (C,D) = 4; on node 4: (B3,C2) = b = 2 beats
    (C2,D) = c = 1, and D is then the only neighbour. Equal rates inside a group pair make
    every split take one task of each group per step, as in the appendix.
    """
    ops, _ = chain("ABCD", [5, 9, 4, 1])
    streams = [Stream("A", "B", pair_rate=3.0), Stream("B", "C", pair_rate=2.0), Stream("C", "D", pair_rate=1.0)]
    nodes = [Node("node1", 6, slots=2), Node("node2", 4, slots=2), Node("node3", 10, slots=4),
             Node("node4", 6, slots=2), Node("node5", 5, slots=2)]
    return Problem.from_topology(Topology.build("trending", ops, streams), Cluster.build("app-c", nodes))


def test_appendix_c_top_trending_topics():
    p = trending_topics_problem()
    # seed 1 breaks the node1/node4 capacity tie the way the appendix does (node 1 first)
    res = make_scheduler("t3", {"seed": 1, "tasks_per_worker": 6}).schedule(p)
    assert res.status == "heuristic"
    assert res.details["node_order"] == ["node3", "node1", "node4", "node5", "node2"]
    # node 3: (A,B) is too big (14 > 10) -> pair split: all of A and B1 (5 tasks); rest B2
    assert steps(res, "node3") == [("A", 5, None), ("B", 5, "B2")]
    # node 1: (B2,C) is too big (8 > 6) -> pair split: 3 + 3 tasks; rests B3 and C2
    assert steps(res, "node1") == [("B2", 3, "B3"), ("C", 3, "C2")]
    # node 4: (B3,C2) fits, then its only neighbour D
    assert steps(res, "node4") == [("B3", 1, None), ("C2", 1, None), ("D", 1, None)]
    assert [s["how"] for s in res.details["nodes"]["node4"]] == ["pair", "pair", "neighbour"]
    assert per_node(p, res.placement) == {"node3": {"A": 5, "B": 5}, "node1": {"B": 3, "C": 3},
                                          "node4": {"B": 1, "C": 1, "D": 1}}
    # second level with T = 6 (as in the appendix): 2, 1 and 1 workers
    assert res.details["workers"] == {"node3": 2, "node1": 1, "node4": 1}
    assert json.loads(json.dumps(res.details)) == res.details
    # cut: A x (B off node 3) = 5*4 pairs of rate 3; (B, C) pairs across nodes: B on node 3 x
    # all 4 C, 3 B on node 1 x 1 C on node 4, 1 B on node 4 x 3 C on node 1, rate 2; C on node 1 x D
    assert inter_node_cost(p, res.placement) == 5 * 4 * 3 + (5 * 4 + 3 * 1 + 1 * 3) * 2 + 3 * 1


def test_appendix_c_other_tie_break_swaps_the_equal_nodes():
    p = trending_topics_problem()
    orders = {}
    for seed in range(8):
        res = make_scheduler("t3", {"seed": seed}).schedule(p)
        order = res.details["node_order"]
        orders[order[1]] = True
        second, third = order[1], order[2]
        assert {second, third} == {"node1", "node4"}
        assert steps(res, second) == [("B2", 3, "B3"), ("C", 3, "C2")]
        assert steps(res, third) == [("B3", 1, None), ("C2", 1, None), ("D", 1, None)]
    assert set(orders) == {"node1", "node4"}  # both tie-break outcomes occur


# ---------------------------------------------------------------- [T3] Appendix A and B
def test_appendix_a_group_pair_partitioning():
    # A = tasks 0,1,2 (paper's 1,2,3), B = 3,4,5 (paper's 4,5,6); distinct rates so no
    # random tie-break is needed: (1,4) 10 > (1,5) 9 > (1,6) 8 > (2,5) 7 > (3,5) 6 > rest 1
    topo = Topology.build("pair", [Operator("A", 3), Operator("B", 3)], [Stream("A", "B")])
    rate = {(0, 3): 10, (0, 4): 9, (0, 5): 8, (1, 4): 7, (2, 4): 6}
    pairs = [(a, b) for a in range(3) for b in range(3, 6)]
    graph = TaskGraph.from_edges(6, [a for a, _ in pairs], [b for _, b in pairs], [rate.get(e, 1) for e in pairs], np.ones(6))
    cluster = Cluster.build("c", [Node("big", 4), Node("small", 2)])
    res = make_scheduler("t3").schedule(Problem.from_topology(topo, cluster, graph=graph))
    # (1,4) both new -> taken; (1,5): 1 selected, 5 new -> best unselected partner of 5 is 2
    assert np.flatnonzero(res.placement.node == 0).tolist() == [0, 1, 3, 4]
    assert steps(res, "big") == [("A", 2, "A2"), ("B", 2, "B2")]
    assert steps(res, "small") == [("A2", 1, None), ("B2", 1, None)]


def test_appendix_b_single_group_partitioning():
    # P - Q is the heaviest pair and starts the node; B (3 tasks) is the only neighbour but
    # only 2 units are left: take B's tasks with the highest rate to the sub-graph (P)
    topo = Topology.build("single", [Operator("P", 1), Operator("Q", 1), Operator("B", 3)],
                          [Stream("P", "Q"), Stream("P", "B")])
    graph = TaskGraph.from_edges(5, [0, 0, 0, 0], [1, 2, 3, 4], [100, 9, 10, 1], np.ones(5))
    cluster = Cluster.build("c", [Node("n1", 4), Node("n2", 1)])
    res = make_scheduler("t3").schedule(Problem.from_topology(topo, cluster, graph=graph))
    assert np.flatnonzero(res.placement.node == 0).tolist() == [0, 1, 2, 3]
    assert steps(res, "n1") == [("P", 1, None), ("Q", 1, None), ("B", 2, "B2")]
    assert res.details["nodes"]["n1"][2]["how"] == "neighbour"


# ---------------------------------------------------------------- obvious answers
def test_two_disconnected_chains_each_on_its_own_node():
    ops1, s1 = chain(["a1", "a2", "a3"], [2, 2, 2], rate=5.0)
    ops2, s2 = chain(["b1", "b2"], [3, 3], rate=1.0)
    p = Problem.from_topology(Topology.build("two", ops1 + ops2, s1 + s2),
                              Cluster.from_capacities({6: 2, 4: 2}))
    res = make_scheduler("t3").schedule(p)
    assert inter_node_cost(p, res.placement) == 0
    nodes = per_node(p, res.placement)
    assert sorted(map(sorted, nodes.values())) == [["a1", "a2", "a3"], ["b1", "b2"]]


def test_one_node_big_enough_for_everything():
    topo = microbench.microbench("diamond", 16)
    p = Problem.from_topology(topo, Cluster.from_capacities({4: 3, 16: 1, 8: 2}))
    res = make_scheduler("t3").schedule(p)
    assert set(res.placement.node.tolist()) == {3}
    assert inter_node_cost(p, res.placement) == 0


def test_pair_that_must_be_split_is_split_one_task_of_each_per_node():
    topo = Topology.build("ab", [Operator("A", 2), Operator("B", 2)], [Stream("A", "B", pair_rate=1.0)])
    p = Problem.from_topology(topo, Cluster.from_capacities({2: 2}))
    res = make_scheduler("t3").schedule(p)
    assert per_node(p, res.placement) == {"node00": {"A": 1, "B": 1}, "node01": {"A": 1, "B": 1}}
    assert inter_node_cost(p, res.placement) == 2  # the optimum (A|B would cut 4)


def test_non_uniform_loads_fill_nodes_and_respect_capacity():
    # heavy A tasks (load 3) and light B tasks (load 1); capacity 5 leaves room for 2 B per A
    ops = [Operator("A", 2, load=3.0), Operator("B", 4, load=1.0)]
    p = Problem.from_topology(Topology.build("nu", ops, [Stream("A", "B", pair_rate=1.0)]),
                              Cluster.from_capacities({5: 2}))
    res = make_scheduler("t3").schedule(p)
    assert res.placement.violations(p.loads, p.cluster) == []
    assert per_node(p, res.placement) == {"node00": {"A": 1, "B": 2}, "node01": {"A": 1, "B": 2}}


def test_fragmented_capacity_is_reported_as_no_solution():
    # total capacity 6 = total load 6, but every node can hold only one task of load 2
    p = Problem.from_topology(Topology.build("x", [Operator("A", 3, load=2.0)]), Cluster.from_capacities({3: 2}))
    res = make_scheduler("t3").schedule(p)
    assert res.status == "no_solution" and res.placement is None
    assert "1 of 3 tasks unplaced" in res.message and "A[2]" in res.message


def test_parameters_are_validated():
    with pytest.raises(ParameterError, match="tasks_per_worker"):
        make_scheduler("t3", {"tasks_per_worker": "0"})


def test_greedy_fit_takes_each_item_that_still_fits_in_order():
    assert greedy_fit(np.array([3.0, 1.0, 2.0, 1.0]), 4.0).tolist() == [True, True, False, False]
    assert greedy_fit(np.array([3.0, 1.0, 2.0, 1.0]), 5.0).tolist() == [True, True, False, True]
    assert greedy_fit(np.array([6.0, 2.0]), 5.0).tolist() == [False, True]


# ---------------------------------------------------------------- micro-benchmarks
@pytest.mark.parametrize("inst", list(microbench.instances()), ids=lambda i: i.name)
def test_microbenchmarks_valid_cost_checked_and_deterministic(inst, recompute):
    p = inst.problem
    res = make_scheduler("t3", {"seed": 3}).schedule(p)
    assert res.status == "heuristic"
    assert res.placement.violations(p.loads, p.cluster) == []
    assert np.all(res.placement.workers_used(p.cluster) <= p.cluster.slots)
    inter_node, _ = recompute(p, res.placement.node, res.placement.worker)
    assert inter_node_cost(p, res.placement) == pytest.approx(inter_node)
    again = make_scheduler("t3", {"seed": 3}).schedule(p)
    assert again.placement == res.placement and again.details == res.details

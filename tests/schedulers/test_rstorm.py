import pytest

from streamplace.evaluate.metrics import inter_node_cost, inter_worker_cost
from streamplace.model import Cluster, Node, Operator, Problem, Stream, Topology
from streamplace.schedulers import ParameterError, make_scheduler
from streamplace.schedulers.rstorm import bfs_operator_order, rstorm_task_order
from streamplace.workloads import microbench


def single(n, **op):
    return Topology.build("one", [Operator("s", n, **op)])


def run(topo, nodes, **params):
    return make_scheduler("rstorm", params).schedule(Problem.from_topology(topo, Cluster.build("c", nodes)))


def test_bfs_order_on_a_diamond_with_a_second_source():
    topo = Topology.build("d", [Operator("src", 2), Operator("a", 1), Operator("b", 3), Operator("snk", 1), Operator("src2", 1)],
                          [Stream("src", "a"), Stream("src", "b"), Stream("a", "snk"), Stream("b", "snk"), Stream("src2", "b")])
    # src; its children a, b; a's child snk; b's parent src2 (reached through b, not as a root)
    assert bfs_operator_order(topo) == ["src", "a", "b", "snk", "src2"]
    labels = [topo.task_labels[t] for t in rstorm_task_order(topo)]
    assert labels == ["src[0]", "a[0]", "b[0]", "snk[0]", "src2[0]", "src[1]", "b[1]", "b[2]"]


def test_bfs_visits_children_before_parents():
    topo = Topology.build("v", [Operator("s1", 1), Operator("s2", 1), Operator("m", 1), Operator("k", 1)],
                          [Stream("s1", "m"), Stream("s2", "m"), Stream("m", "k")])
    assert bfs_operator_order(topo) == ["s1", "m", "k", "s2"]


def test_stays_on_the_previous_node_while_it_fits():
    res = run(single(6), [Node("a", 4), Node("b", 4), Node("c", 4)])
    assert res.placement.node.tolist() == [0, 0, 0, 0, 1, 1]
    assert res.placement.worker.tolist() == [0] * 6  # no memory declared: one worker per node


def test_first_task_rack_choice_and_same_rack_preference():
    # rack r2 has 6 cpu available, r1 4: the first task goes to r2, best fit there (tie: n1).
    # When n1 is full, n3 (same rack, d = 0.5, distance 0.71) beats the better-fitting n0 (d = 1, 1.05).
    nodes = [Node("n0", 2, rack="r1"), Node("n1", 3, rack="r2"), Node("n2", 2, rack="r1"), Node("n3", 3, rack="r2")]
    res = run(single(10), nodes)
    assert res.placement.node.tolist() == [1, 1, 1, 3, 3, 3, 0, 0, 2, 2]
    assert (res.details["first_rack"], res.details["first_node"]) == ("r2", "n1")


def test_first_task_goes_to_the_best_fitting_node_of_the_rack():
    # distance without network term: big ((1-6)/7)^2 = 0.51, small ((1-2)/3)^2 = 0.11
    res = run(single(1), [Node("big", 6), Node("small", 2)])
    assert res.placement.node.tolist() == [1]


def test_memory_is_hard_and_workers_fill_up_to_the_heap():
    res = run(single(2, memory_mb=300), [Node("a", 4, memory_mb=100), Node("b", 4, memory_mb=1000)])
    assert res.placement.node.tolist() == [1, 1]
    packed = run(single(5, memory_mb=300), [Node("n", 10)])  # 768 MB heap: two 300 MB tasks per worker
    assert packed.placement.worker.tolist() == [0, 0, 1, 1, 2]
    assert packed.details["workers_used"] == 3


def test_cpu_demand_is_the_cpu_need():
    res = run(single(3, cpu_demand=2), [Node("a", 4), Node("b", 4)])   # 2 cores each on 4-core nodes
    assert res.placement.node.tolist() == [0, 0, 1]
    # cores, not capacity, bind: the tightest fit a (2 cores) takes one 1.5-core task, b (4 cores) the next two;
    # by capacity 9 all three would stay on a
    real = run(single(3, cpu_demand=1.5), [Node("a", 9, cores=2), Node("b", 9, cores=4)])
    assert real.placement.node.tolist() == [0, 1, 1]


def test_soft_cpu_may_overload():
    nodes = [Node("a", 1, rack="r1"), Node("b", 1, rack="r2")]
    assert run(single(2), nodes).placement.node.tolist() == [0, 1]
    soft = run(single(2), nodes, cpu_hard=False)  # a: 1 (cpu term, d = 0) ties b: 1 (d = 1) -> a
    assert soft.placement.node.tolist() == [0, 0]
    assert soft.placement.overloaded_nodes(soft.problem.loads, soft.problem.cluster).tolist() == [0]


def test_no_solution_messages():
    # rack r1 has the most available cpu + memory (8 + 400 > 1 + 400) but no node of it takes 300 MB; c could
    nodes = [Node("a", 4, memory_mb=200, rack="r1"), Node("b", 4, memory_mb=200, rack="r1"), Node("c", 1, memory_mb=400, rack="r2")]
    res = run(single(1, memory_mb=300), nodes)
    assert res.status == "no_solution" and res.placement is None
    assert res.message == ("rstorm: no node in the rack with the most available resources can host task s[0] "
                           "(cpu need 1, memory need 300 MB, worker heap 768 MB): most available cpu 4, memory 400 MB")
    proven = run(single(1, memory_mb=300), [Node("a", 4, memory_mb=100)])   # no node has 300 MB: refused before the search
    assert proven.status == "infeasible" and proven.message == (
        "task s[0] needs 300 MB of memory, more than the largest node offers (100 MB)")
    heap = run(single(1, memory_mb=1000), [Node("a", 4)])
    assert heap.status == "no_solution" and heap.message.endswith("worker heap 768 MB): most available cpu 4, memory unlimited")


def test_bad_parameter():
    with pytest.raises(ParameterError):
        make_scheduler("rstorm", {"worker_max_heap_mb": "0"})


@pytest.mark.parametrize("inst", list(microbench.instances()), ids=lambda i: i.name)
def test_micro_benchmarks_valid_recomputed_and_deterministic(inst, recompute):
    res = make_scheduler("rstorm").schedule(inst.problem)
    assert res.placement.violations(inst.problem.loads, inst.problem.cluster) == []
    assert res.placement.workers_used(inst.problem.cluster).max() == 1  # no memory declared: one worker per node
    assert recompute(inst.problem, res.placement.node, res.placement.worker) == (
        inter_node_cost(inst.problem, res.placement), inter_worker_cost(inst.problem, res.placement))
    assert make_scheduler("rstorm", {"seed": 3}).schedule(inst.problem).placement == res.placement

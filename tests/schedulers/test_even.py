from streamplace.model import Cluster, Node, Operator, Problem, Stream, Topology
from streamplace.schedulers import make_scheduler
from streamplace.model.storm_ids import storm_task_order
from streamplace.schedulers.slots import sort_slots


def problem():
    cluster = Cluster.build("c", [Node("b", 2, slots=2), Node("a", 3, slots=3), Node("c", 2, slots=2)])
    topo = Topology.build("t", [Operator("z", 2), Operator("m", 3)], [Stream("z", "m", pair_rate=1.0)])
    return Problem.from_topology(topo, cluster)


def test_slot_sorting_groups_by_node_sorts_by_free_slots_and_interleaves():
    # nodes by name a, b, c; a has most slots; b and c tie and keep name order
    p = problem()
    names = [n.name for n in p.cluster.nodes]
    order = [(names[j], w) for j, w in sort_slots(p.cluster).tolist()]
    assert order == [("a", 0), ("b", 0), ("c", 0), ("a", 1), ("b", 1), ("c", 1), ("a", 2)]


def test_storm_task_order_sorts_components_by_id():
    assert storm_task_order(problem().topology).tolist() == [2, 3, 4, 0, 1]


def test_round_robin_over_all_slots_and_over_requested_workers():
    p = problem()
    names = [n.name for n in p.cluster.nodes]
    res = make_scheduler("even").schedule(p)
    got = [(names[j], w) for j, w in zip(res.placement.node.tolist(), res.placement.worker.tolist())]
    # task order m0 m1 m2 z0 z1 -> slots a0 b0 c0 a1 b1
    assert got == [("a", 1), ("b", 1), ("a", 0), ("b", 0), ("c", 0)]
    res2 = make_scheduler("even", {"workers": "2"}).schedule(p)
    got2 = [(names[j], w) for j, w in zip(res2.placement.node.tolist(), res2.placement.worker.tolist())]
    assert got2 == [("b", 0), ("a", 0), ("a", 0), ("b", 0), ("a", 0)]


def test_even_ignores_capacity_and_reports_overload():
    cluster = Cluster.build("c", [Node("a", 1, slots=1)])
    topo = Topology.build("t", [Operator("x", 3)])
    res = make_scheduler("even").schedule(Problem.from_topology(topo, cluster))
    assert res.status == "heuristic" and res.placement.node.tolist() == [0, 0, 0]
    assert res.placement.overloaded_nodes(res.problem.loads, cluster).tolist() == [0]

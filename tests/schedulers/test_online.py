import math

import pytest

from streamplace.evaluate.metrics import inter_node_cost, inter_worker_cost
from streamplace.model import Cluster, Node, Operator, Problem, Stream, Topology
from streamplace.schedulers import ParameterError, make_scheduler
from streamplace.schedulers.online import max_per_slot, max_slot_load, nodes_to_use
from streamplace.workloads import microbench


def chain(*rates):
    """One task per operator a -> b -> c ... with the given pair rates."""
    names = "abcdefgh"[:len(rates) + 1]
    return Topology.build("chain", [Operator(n, 1) for n in names],
                          [Stream(x, y, pair_rate=r) for x, y, r in zip(names, names[1:], rates)])


def bipartite():
    """x(2) -shuffle-> y(2), rate 1 per pair: tasks x0 x1 y0 y1."""
    return Topology.build("xy", [Operator("x", 2), Operator("y", 2)], [Stream("x", "y", pair_rate=1.0)])


def run(topo, nodes, **params):
    return make_scheduler("online", params).schedule(Problem.from_topology(topo, Cluster.build("c", nodes)))


def test_formulas_hand_worked():
    # E = 30 tasks, W = 10 slots, N = 10 nodes
    assert max_per_slot(30, 10, 0.0) == 3                  # ceil(30/10)
    assert max_per_slot(30, 10, 0.5) == 3 + 9              # + ceil(0.5 * ((30-10+1) - 3))
    assert max_per_slot(22, 2, 0.7) == 11 + 7              # 0.7 * 10 is 7 despite float noise
    assert nodes_to_use(10, 10, 0.5) == 1 + 5              # ceil(10/10) + ceil(0.5 * (10 - 1))
    assert nodes_to_use(30, 10, 0.5) == 3 + 4              # n' = 10: ceil(30/10) + ceil(0.5 * 7)
    assert nodes_to_use(4, 10, 0.5) == 1 + 2               # n' = min(10, 4) = 4
    assert nodes_to_use(4, 10, 0.0) == 1 and nodes_to_use(4, 10, 1.0) == 4
    assert max_slot_load(30, 10, 1.1) == pytest.approx(3.3)
    assert max_slot_load(30, 10, None) == math.inf


def test_details_follow_the_formulas_on_a_micro_benchmark():
    prob = Problem.from_topology(microbench.microbench("linear", 30), microbench.cluster("homogeneous"))
    default = make_scheduler("online").schedule(prob).details  # W = min(40 slots, 30 tasks)
    assert (default["workers"], default["max_per_slot"], default["nodes_to_use"]) == (30, 1, 7)
    assert default["max_slot_load"] == pytest.approx(1.1)
    ten = make_scheduler("online", {"workers": "10"}).schedule(prob).details
    assert (ten["workers"], ten["max_per_slot"], ten["nodes_to_use"]) == (10, 3, 6)
    assert ten["max_slot_load"] == pytest.approx(3.3)


def test_two_disconnected_chains_each_stay_together():
    topo = Topology.build("two", [Operator("a1", 1), Operator("b1", 1), Operator("a2", 1), Operator("b2", 1)],
                          [Stream("a1", "b1", pair_rate=5.0), Stream("a2", "b2", pair_rate=1.0)])
    res = run(topo, [Node("n0", 2, slots=1), Node("n1", 2, slots=1)], workers=2)
    assert res.placement.node.tolist() == [0, 0, 1, 1]
    assert inter_node_cost(res.problem, res.placement) == 0


def test_pair_trace_combinations_and_one_node_big_enough_for_all():
    # (x0,y0) -> slot 0; (x0,y1): x0 stays, y1 -> slot 1 (cost 1 beats 2); (x1,y0): x1 -> slot 1,
    # y0 stays (cost 1 beats 3); (x1,y1) already together: slots {x0,y0}, {x1,y1}, inter-slot 2.
    res = run(bipartite(), [Node("big", 10, slots=4), Node("small", 1, slots=1)], workers=2)
    assert res.placement.node.tolist() == [0, 0, 0, 0]
    assert res.placement.worker.tolist() == [0, 1, 0, 1]
    assert res.details["inter_slot_traffic"] == 2
    assert inter_node_cost(res.problem, res.placement) == 0 and inter_worker_cost(res.problem, res.placement) == 2
    # the small node cannot take a slot of load 2, so nodes_to_use = 2 is not reached
    assert (res.details["nodes_to_use"], res.details["nodes_used"]) == (2, 1)


def test_spreading_to_nodes_to_use_splits_what_one_node_could_hold():
    nodes = [Node("big", 10, slots=4), Node("small", 2, slots=1)]
    kept = run(bipartite(), nodes, workers=2, beta=0.0)
    assert kept.placement.node.tolist() == [0, 0, 0, 0] and kept.details["nodes_to_use"] == 1
    spread = run(bipartite(), nodes, workers=2, beta=0.5)
    assert spread.placement.node.tolist() == [1, 0, 1, 0]  # slot 0 = {x0, y0} moved to the unused node
    assert spread.details["spread_moves"] == 1
    assert inter_node_cost(spread.problem, spread.placement) == 2


def test_a_pair_that_must_be_split():
    res = run(chain(7.0), [Node("n0", 1, slots=1), Node("n1", 1, slots=1)])
    assert sorted(res.placement.node.tolist()) == [0, 1]
    assert inter_node_cost(res.problem, res.placement) == 7


def test_empty_slot_gets_the_task_whose_move_costs_least():
    # a-b (3), c-d (2) -> slots 0, 1; b-c (1) keeps them; slot 2 is empty: moving c costs 2,
    # a or b would cost 3, d ties with c but comes later -> c moves to slot 2.
    res = run(chain(3.0, 1.0, 2.0), [Node("n", 10, slots=3)], workers=3, alfa=1.0, gamma=None)
    assert res.details["max_per_slot"] == 2 and res.details["empty_slot_fills"] == 1
    assert res.placement.worker.tolist() == [0, 0, 2, 1]
    assert res.details["inter_slot_traffic"] == 3


def test_unpaired_tasks_go_to_the_least_loaded_slot_after_empty_slots_are_filled():
    topo = Topology.build("iso", [Operator("a", 1), Operator("b", 1), Operator("z", 1)], [Stream("a", "b", pair_rate=1.0)])
    res = run(topo, [Node("n", 10, slots=4)], workers=2, gamma=None)
    # a, b share slot 0; the empty slot 1 takes a; z joins the least-loaded slot (slot 0, first)
    assert res.placement.worker.tolist() == [1, 0, 0]
    # with gamma = 1.1 a slot may hold 1.65: after a and b no slot can take z
    bad = run(topo, [Node("n", 10, slots=4)], workers=2)
    assert bad.status == "no_solution" and bad.placement is None
    assert bad.message == ("online: no worker slot can take task z[0] (load 1); "
                           "a slot holds at most max_per_slot=2 tasks and max_slot_load=1.65 (W=2)")


def test_greedy_failure_is_reported_as_no_solution():
    # one worker slot holds both tasks (load 2) but no node can take load 2
    res = run(chain(1.0), [Node("n0", 1, slots=2), Node("n1", 1, slots=2)], workers=1)
    assert res.status == "no_solution"
    assert res.message == ("online: no node can take worker slot 0 (load 2); "
                           "a node needs a free worker slot and room for the slot's load")


def test_slot_load_limit_can_defeat_the_greedy_on_a_micro_benchmark():
    # linear-12 with W = 10: max_slot_load = 1.1 * 12 / 10 = 1.32, so each slot holds one
    # load-1 task and 10 slots cannot take 12 tasks, although every node could host 4.
    prob = Problem.from_topology(microbench.microbench("linear", 12), microbench.cluster("homogeneous"))
    res = make_scheduler("online", {"workers": 10}).schedule(prob)
    assert res.status == "no_solution"
    assert res.message.endswith("a slot holds at most max_per_slot=2 tasks and max_slot_load=1.32 (W=10)")
    assert make_scheduler("online", {"workers": 10, "gamma": "none"}).schedule(prob).status == "heuristic"


@pytest.mark.parametrize("params", [{"alfa": "1.5"}, {"beta": "-0.1"}, {"gamma": "0.9"}, {"workers": "0"}])
def test_bad_parameters(params):
    with pytest.raises(ParameterError):
        make_scheduler("online", params)


def test_gamma_none_from_string():
    assert make_scheduler("online", {"gamma": "none"}).gamma is None


@pytest.mark.parametrize("inst", list(microbench.instances()), ids=lambda i: i.name)
def test_micro_benchmarks_valid_recomputed_and_deterministic(inst, recompute):
    res = make_scheduler("online").schedule(inst.problem)
    node, worker = res.placement.node, res.placement.worker
    assert res.placement.violations(inst.problem.loads, inst.problem.cluster) == []
    assert len(set(zip(node.tolist(), worker.tolist()))) <= res.details["workers"]  # one worker per logical slot
    assert res.details["nodes_used"] == len(set(node.tolist()))
    assert recompute(inst.problem, res.placement.node, res.placement.worker) == (
        inter_node_cost(inst.problem, res.placement), inter_worker_cost(inst.problem, res.placement))
    assert make_scheduler("online", {"seed": 3}).schedule(inst.problem).placement == res.placement


def test_slot_load_limit_is_relaxed_only_when_asked_and_then_says_so():
    """The papers ran OLS with gamma ([I]/[T3] Sec. 6, [F] Sec. IV-A2): by default the limit holds."""
    topo = Topology.build("iso", [Operator("a", 1), Operator("b", 1), Operator("z", 1)], [Stream("a", "b", pair_rate=1.0)])
    nodes = [Node("n", 10, slots=4)]
    strict = run(topo, nodes, workers=2)
    assert strict.status == "no_solution" and strict.params["relax_gamma"] is False
    relaxed = run(topo, nodes, workers=2, relax_gamma="true")  # as from the CLI: -p relax_gamma=true
    assert relaxed.ok and relaxed.details["gamma_relaxed"] is True
    assert relaxed.message.startswith("gamma 1.1 relaxed to no slot load limit (relax_gamma=true): ")
    assert strict.message in relaxed.message
    no_limit = run(topo, nodes, workers=2, gamma=None)
    assert relaxed.placement.worker.tolist() == no_limit.placement.worker.tolist()
    # a run the limit does not block is untouched and says it was not relaxed
    easy = run(bipartite(), nodes, workers=2, relax_gamma=True)
    assert easy.ok and easy.details["gamma_relaxed"] is False and easy.message == ""

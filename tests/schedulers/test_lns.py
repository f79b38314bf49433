"""lns: the proven optima of the micro-benchmarks, never worse than its constructions, exact
re-solves of a neighbourhood (contents of two nodes swapped), anytime history."""

import json

import numpy as np
import pytest

from streamplace.model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from streamplace.schedulers import make_scheduler
from streamplace.schedulers.lns import CONSTRUCTIONS, SPREADING, _cut, _Search, _Traffic
from streamplace.model.performance import load_cost_model, predict
from streamplace.workloads import lf, microbench, runtime
from streamplace.workloads.synthetic import synthetic_problem


@pytest.mark.parametrize("layout, tasks, optimum", [("diamond", 30, 146.0), ("star", 30, 86.0)])
def test_proves_the_papers_optima(layout, tasks, optimum):
    # [I] Sec. 5: 30 tasks on the heterogeneous cluster, published optima 146 (diamond) and 86 (star)
    problem = Problem.from_topology(microbench.microbench(layout, tasks), microbench.cluster("heterogeneous"))
    result = make_scheduler("lns", time_limit=20).schedule(problem)
    assert result.status == "optimal" and result.lower_bound == optimum
    assert _cut(problem.graph.edges, result.placement.node) == optimum
    assert not result.placement.violations(problem.graph.loads, problem.cluster)


def test_never_worse_than_its_constructions_and_the_history_only_falls():
    problem = synthetic_problem(1000, 10, seed=1)
    result = make_scheduler("lns", time_limit=3).schedule(problem)
    costs = [_cut(problem.graph.edges, make_scheduler(n, p).schedule(problem).placement.node) for n, p in CONSTRUCTIONS]
    final = _cut(problem.graph.edges, result.placement.node)
    history = [cost for _, cost in result.details["history"]]
    assert history[0] == min(costs) and history[-1] == pytest.approx(final) and final <= min(costs)
    assert all(b < a for a, b in zip(history, history[1:]))
    assert not result.placement.violations(problem.graph.loads, problem.cluster)
    assert result.status == "heuristic" and result.details["stopped"] in ("time limit", "no neighbourhood left")


def test_a_re_solve_can_swap_what_two_nodes_hold():
    # shuffle a -> b: every a talks to every b (4 pairs of weight 1); three nodes of capacity 2
    topo = Topology.build("ab", [Operator("a", 2, role="source"), Operator("b", 2)], [Stream("a", "b", pair_rate=1.0)])
    problem = Problem.from_topology(topo, Cluster.from_capacities({2.0: 3}))
    bad = np.array([0, 1, 0, 1])   # a0 b0 on node 0, a1 b1 on node 1: cut a0-b1, a1-b0 = 2
    search = _Search(problem, bad, np.random.default_rng(0), 4, 3, _Traffic(problem, bad, 0 * bad, 4, 0))
    assert search.cost == 2.0
    assert not search.resolve(np.arange(4), time_limit=5, seed=0)   # 2 is optimal with capacity 2
    heavy = Topology.build("ab", [Operator("a", 1, role="source"), Operator("b", 1), Operator("c", 1)],
                           [Stream("a", "b", pair_rate=5.0), Stream("b", "c", pair_rate=1.0)])
    problem = Problem.from_topology(heavy, Cluster.from_capacities({2.0: 2}))
    start = np.array([0, 1, 1])
    search = _Search(problem, start, np.random.default_rng(0), 2, 2, _Traffic(problem, start, 0 * start, 4, 0))
    assert search.cost == 5.0
    assert search.resolve(np.array([0, 1]), time_limit=5, seed=0)   # frees a and b: a joins b (or b joins a)
    assert search.cost == 1.0 and search._fits(search.node)


# ---------------------------------------------------------------------------- objective=throughput
@pytest.mark.parametrize("problem", [
    Problem.from_topology(lf.synthetic("star", high=True), lf.cluster("lf-high")),   # lf's own workers win
    Problem.from_topology(runtime.microbench("star", "io"), runtime.cluster(2, 4)),   # the second level's win
], ids=["lf-star-x10", "runtime-star-io"])
def test_throughput_objective_never_below_any_construction_and_its_figure_is_the_placements(problem):
    result = make_scheduler("lns", {"objective": "throughput"}, time_limit=3).schedule(problem)
    assert result.status == "heuristic" and result.lower_bound is None
    assert not result.placement.violations(problem.graph.loads, problem.cluster)
    achieved = predict(problem, result.placement).throughput
    assert result.details["predicted_throughput"] == pytest.approx(achieved)
    others = [make_scheduler(n, p).schedule(problem).placement for n, p in CONSTRUCTIONS + SPREADING]
    best = max(predict(problem, p).throughput for p in others
               if p is not None and not p.violations(problem.graph.loads, problem.cluster))
    assert achieved >= best * (1 - 1e-9)
    history = [t for _, t in result.details["history"]]
    assert all(b > a for a, b in zip(history, history[1:])) and history[-1] == pytest.approx(achieved)
    traffic = make_scheduler("lns", time_limit=3).schedule(problem)   # the other objective: less traffic, less throughput
    assert _cut(problem.graph.edges, traffic.placement.node) <= _cut(problem.graph.edges, result.placement.node)
    assert predict(problem, traffic.placement).throughput < achieved


def test_throughput_objective_follows_the_cost_model_file(tmp_path):
    problem = Problem.from_topology(runtime.microbench("linear", "cpu"), runtime.cluster(2, 4))
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"cost_model": {"worker_cpu": 0.5}}))
    result = make_scheduler("lns", {"objective": "throughput", "cost_model": str(path)}, time_limit=2).schedule(problem)
    model = load_cost_model(path)
    assert result.details["predicted_throughput"] == pytest.approx(predict(problem, result.placement, model).throughput)
    assert predict(problem, result.placement, model).throughput != pytest.approx(predict(problem, result.placement).throughput)


@pytest.mark.parametrize("params, message", [
    ({"objective": "latency"}, "objective must be one of traffic, throughput"),
    ({"cost_model": "x.json"}, "cost_model goes with objective=throughput"),
    ({"objective": "throughput", "cost_model": "/nonexistent/model.json"}, "/nonexistent/model.json"),
])
def test_bad_objective_parameters_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        make_scheduler("lns", params)


# ---------------------------------------------------------------------------- reschedule
def _running(problem, scheduler="even"):
    from streamplace.evaluate.diff import targets_of
    return targets_of(problem, make_scheduler(scheduler).schedule(problem).placement)


def test_reschedule_budget_zero_keeps_a_feasible_placement_and_cost_falls_with_the_budget():
    problem = Problem.from_topology(microbench.microbench("diamond", 30), microbench.cluster("homogeneous"))
    current = _running(problem, "t3")   # within capacity: nothing forced
    lns = make_scheduler("lns", time_limit=4)
    results = {k: lns.reschedule(problem, current, max_moves=k) for k in (0, 1, 2, 4, 8, None)}
    assert results[0].details["reschedule"]["moves"] == 0 and results[0].details["reschedule"]["forced_moves"] == 0
    assert [t for t in problem.topology.task_labels if current[t][0] != problem.cluster.nodes[
        results[0].placement.node[problem.topology.task_id(t)]].name] == []
    costs = [_cut(problem.graph.edges, results[k].placement.node) for k in (0, 1, 2, 4, 8, None)]
    assert all(b <= a for a, b in zip(costs, costs[1:]))
    assert all(results[k].details["reschedule"]["moves"] <= k for k in (0, 1, 2, 4, 8))
    assert costs[-1] <= _cut(problem.graph.edges, lns.schedule(problem).placement.node)


@pytest.mark.parametrize("objective, start", [("traffic", "even"), ("throughput", "even"), ("throughput", "t3")])
def test_a_rescheduled_task_that_keeps_its_node_keeps_its_worker(objective, start):
    """In Storm a task that changes worker restarts like one that changes node: a reschedule
    changes the (node, worker) of its moved and forced tasks only, whatever the workers of a fresh
    schedule would be, and a moved task joins the worker it exchanges the most traffic with. (From
    t3's placement on the heterogeneous cluster, lns with the throughput objective used to move 9
    tasks to other workers while reporting 0 moves.)"""
    problem = Problem.from_topology(microbench.microbench("diamond", 30), microbench.cluster("heterogeneous"))
    current = _running(problem, start)
    result = make_scheduler("lns", {"objective": objective}, time_limit=2).reschedule(problem, current, max_moves=4)
    after = result.placement.to_mapping(problem.topology.task_labels, problem.cluster)
    changed = [lab for lab, (node, worker) in current.items() if (after[lab]["node"], after[lab]["worker"]) != (node, worker)]
    info = result.details["reschedule"]
    assert len(changed) == info["moves"] + info["forced_moves"] and info["moves"] <= 4
    w = problem.graph.dense_weights()
    for lab in changed:   # joined the worker of its node it exchanges the most traffic with
        t, node = problem.topology.task_id(lab), after[lab]["node"]
        traffic = {}
        for m, x in after.items():
            if x["node"] == node and m != lab:
                traffic[x["worker"]] = traffic.get(x["worker"], 0.0) + w[t, problem.topology.task_id(m)]
        assert not traffic or traffic.get(after[lab]["worker"], 0.0) == max(traffic.values())


def test_a_throughput_reschedule_relieves_the_bottleneck_within_a_one_move_budget():
    """Everything packed on one of two one-core nodes: no move saves traffic (none crosses nodes)
    and a fresh schedule moves more than one task, so only a move off the bottleneck node can
    use a budget of one; it raises the predicted throughput."""
    topo = Topology.build("job", [Operator("s", 2, role="source", cpu_per_tuple=1e-4),
                                  Operator("b", 2, role="sink", cpu_per_tuple=1e-4)], [Stream("s", "b")])
    problem = Problem.from_topology(topo, Cluster.build("c", [Node("n0", 4, cores=1, slots=2),
                                                               Node("n1", 4, cores=1, slots=2)]))
    packed = Placement(node=np.zeros(4, int), worker=np.zeros(4, int))
    current = {lab: ("n0", 0) for lab in topo.task_labels}
    result = make_scheduler("lns", {"objective": "throughput"}, time_limit=2).reschedule(problem, current, max_moves=1)
    assert result.details["reschedule"]["moves"] == 1
    assert predict(problem, result.placement).throughput > 1.2 * predict(problem, packed).throughput


def test_removing_a_node_forces_exactly_its_tasks_to_move():
    problem = Problem.from_topology(microbench.microbench("linear", 12), microbench.cluster("homogeneous"))
    current = _running(problem, "t3")
    gone = current[problem.topology.task_labels[0]][0]
    smaller = Cluster.build("smaller", [n for n in problem.cluster.nodes if n.name != gone])
    shrunk = Problem.from_topology(problem.topology, smaller)
    result = make_scheduler("lns", time_limit=4).reschedule(shrunk, current, max_moves=0)
    on_gone = {t for t, (node, _) in current.items() if node == gone}
    moved = {t for t in problem.topology.task_labels
             if smaller.nodes[result.placement.node[problem.topology.task_id(t)]].name != current[t][0]}
    assert moved == on_gone and result.details["reschedule"] == {
        "moves": 0, "forced_moves": len(on_gone), "max_moves": 0, "migration_weight": 0.0, "budget_honoured": True}


def test_migration_weight_trades_traffic_for_moves_and_other_schedulers_report_moves():
    problem = Problem.from_topology(microbench.microbench("diamond", 30), microbench.cluster("homogeneous"))
    current = _running(problem, "t3")
    lns = make_scheduler("lns", time_limit=4)
    free, costly = lns.reschedule(problem, current), lns.reschedule(problem, current, migration_weight=1e6)
    assert costly.details["reschedule"]["moves"] == 0 <= free.details["reschedule"]["moves"]
    other = make_scheduler("metis").reschedule(problem, current, max_moves=0)
    info = other.details["reschedule"]
    assert info["budget_honoured"] is False
    assert (info["moves"] > 0) == ("over the budget of 0" in other.message)


def test_cli_reschedule_prints_moves_and_the_diff(tmp_path, capsys):
    import json

    from streamplace.cli import main
    main(["workload", "microbench", "--layout", "diamond", "--tasks", "12", "-o", str(tmp_path / "t.yaml")])
    main(["workload", "cluster", "--preset", "heterogeneous", "-o", str(tmp_path / "c.yaml")])
    main(["schedule", str(tmp_path / "t.yaml"), str(tmp_path / "c.yaml"), "-s", "even", "-o", str(tmp_path / "now.json"),
          "--format", "json"])
    capsys.readouterr()
    main(["reschedule", str(tmp_path / "t.yaml"), str(tmp_path / "c.yaml"), "--current", str(tmp_path / "now.json"),
          "--max-moves", "1", "--time-limit", "3", "--format", "json", "-o", str(tmp_path / "new.json")])
    out = json.loads(capsys.readouterr().out)
    assert out["moves"] <= 1 and out["valid"] is True
    assert len(out["diff"]) == out["moves"] + out["forced_moves"]
    assert {"task", "from", "to"} == set(out["diff"][0])
    assert json.loads((tmp_path / "new.json").read_text())["inter_node_cost"] == out["inter_node_cost"]


def _random_problem(rng, n_nodes):
    ops = [Operator("s", int(rng.integers(1, 4)), role="source")] + \
          [Operator(f"o{i}", int(rng.integers(1, 3)), load=float(rng.choice([1.0, 2.0]))) for i in range(2)]
    streams = [Stream("s", "o0", pair_rate=float(rng.integers(1, 9))), Stream("o0", "o1", pair_rate=float(rng.integers(1, 9))),
               Stream("s", "o1", pair_rate=float(rng.integers(1, 9)))]
    topo = Topology.build("r", ops, streams)
    total = float(sum(op.parallelism * op.load for op in ops))
    caps = {float(np.ceil(total / n_nodes * rng.uniform(1.0, 1.6))) + 2.0: n_nodes}
    return Problem.from_topology(topo, Cluster.from_capacities(caps))


@pytest.mark.parametrize("seed", range(6))
def test_equals_brute_force_on_small_random_instances(seed):
    from itertools import product
    rng = np.random.default_rng(seed)
    for n_nodes, params in ((2, {"prove_tasks": 0}), (3, {})):   # two nodes: the neighbourhoods alone; three: with the proof
        problem = _random_problem(rng, n_nodes)
        w, loads, caps = problem.graph.weights.toarray(), problem.graph.loads, problem.cluster.capacities
        n = problem.n_tasks
        best = min(sum(w[u, v] for u in range(n) for v in range(u + 1, n) if a[u] != a[v])
                   for a in product(range(n_nodes), repeat=n)
                   if all(loads[np.array(a) == j].sum() <= caps[j] for j in range(n_nodes)))
        result = make_scheduler("lns", {"time_limit": 5.0, **params}).schedule(problem)
        assert _cut(problem.graph.edges, result.placement.node) == pytest.approx(best), (seed, n_nodes)

"""Fitting the cost model: constants recovered from runs a known model 'measured'; the scores."""

import dataclasses

import numpy as np
import pytest

from streamplace.fit.cases import Case, predictions
from streamplace.model.cluster import scaled_cluster
from streamplace.fit.scores import bias, cpu_gap, cross_validate, scores
from streamplace.fit.solve import FITTED, cpu_terms, fit, fit_cap, fit_cpu
from streamplace.model.performance import CostModel, predict, worker_connections
from streamplace.model import Problem
from streamplace.schedulers import make_scheduler
from streamplace.workloads import runtime

# every constant the fits touch is set here, so that the tests do not drift with the bundled defaults
TRUE = CostModel(task_cpu_per_tuple=3e-5, ser_cpu_per_tuple=8e-6, worker_cpu=0.05, node_cpu=0.0, executor_cpu=0.00202,
                 connection_cpu=0.0, fixed_cpu_cap=1.0)
START = CostModel(task_cpu_per_tuple=2.17e-6, ser_cpu_per_tuple=2e-6, worker_cpu=0.0, node_cpu=0.0, executor_cpu=0.00202,
                  connection_cpu=0.0, fixed_cpu_cap=1.0)   # the analytic constants before the testbed fit


@pytest.fixture(scope="module")
def cases():
    out = []
    for layout in ("linear", "diamond"):
        base = Problem.from_topology(runtime.microbench(layout, "cpu"), runtime.named_cluster("1high+2low"))
        scaled = Problem.from_topology(base.topology, scaled_cluster(base.cluster, 1.5))
        for name in ("even", "metis", "rstorm", "t3", "ischeduler"):
            placement = make_scheduler(name).schedule(base).placement
            out.append(Case(f"{layout}", name, scaled, placement, 0.0, 1))
    measured = predictions(TRUE, out)
    return [dataclasses.replace(c, measured=float(m)) for c, m in zip(out, measured)]


def test_scaled_cluster_divides_the_budget_by_the_total_cores():
    cluster = scaled_cluster(runtime.named_cluster("1high+2low"), 1.6)   # 4 + 2 + 2 cores
    assert [n.cores for n in cluster.nodes] == pytest.approx([0.8, 0.4, 0.4])


def test_fit_recovers_what_a_known_model_measured(cases):
    before = scores(START, cases)
    model, info = fit(cases, START)
    after = scores(model, cases)
    assert before["median_abs_error"] > 0.5          # the analytic defaults are far off
    assert after["median_abs_error"] < 0.02, (model, info)
    assert after["mean_kendall_tau"] >= 0.9   # near-ties may swap within the 2 % left


def test_scores_are_zero_error_and_tau_one_for_the_true_model(cases):
    s = scores(TRUE, cases)
    assert s["median_abs_error"] == pytest.approx(0.0, abs=1e-12)
    assert all(t == pytest.approx(1.0) for t in s["kendall_tau"].values())


def test_worker_cpu_takes_capacity_from_the_node_per_worker():
    base = Problem.from_topology(runtime.microbench("linear", "cpu"), runtime.named_cluster("1high+2low"))
    placement = make_scheduler("even").schedule(base).placement
    from streamplace.model.performance import predict
    plain = predict(base, placement, CostModel(worker_cpu=0.0, node_cpu=0.0, executor_cpu=0.0, connection_cpu=0.0, fixed_cpu_cap=1.0))
    loaded = predict(base, placement, CostModel(worker_cpu=0.5, node_cpu=0.0, executor_cpu=0.0, connection_cpu=0.0, fixed_cpu_cap=1.0))
    workers = placement.workers_used(base.cluster)
    cores = np.array([n.cores for n in base.cluster.nodes], float)
    assert np.allclose(loaded.cpu_capacity, cores - 0.5 * workers)
    assert loaded.throughput < plain.throughput


def test_a_constant_the_runs_do_not_need_is_fitted_to_exactly_zero(cases):
    """Measured by a model without an engine cost per tuple: the fit drives
    ``task_cpu_per_tuple`` down to 0 (not to a denormal like 1e-176), and recovers the rest."""
    truth = dataclasses.replace(TRUE, task_cpu_per_tuple=0.0)
    measured = predictions(truth, cases)
    cases = [dataclasses.replace(c, measured=float(m)) for c, m in zip(cases, measured)]
    model, _ = fit(cases, dataclasses.replace(START, worker_cpu=truth.worker_cpu), ("task_cpu_per_tuple", "ser_cpu_per_tuple"))
    assert model.task_cpu_per_tuple == 0.0
    assert model.ser_cpu_per_tuple == pytest.approx(truth.ser_cpu_per_tuple, rel=0.05)
    assert scores(model, cases)["median_abs_error"] < 0.02


def test_fixed_cpu_cap_bounds_the_fixed_costs_by_a_share_of_the_node():
    """0.5 cores per worker, capped at 30 % of the node: METIS puts three workers on each 4-core
    node (1.5 cores, capped to 1.2) and one on two of the 2-core nodes (0.5, under the cap of 0.6)."""
    base = Problem.from_topology(runtime.microbench("linear", "cpu"), runtime.named_cluster("2high+4low"))
    placement = make_scheduler("metis").schedule(base).placement
    free = CostModel(worker_cpu=0.5, node_cpu=0.0, executor_cpu=0.0, connection_cpu=0.0)
    capped = predict(base, placement, dataclasses.replace(free, fixed_cpu_cap=0.3))
    workers = placement.workers_used(base.cluster)
    assert workers.tolist() == [3, 3, 1, 1, 0, 0]
    assert np.allclose(capped.cpu_capacity, [4 - 1.2, 4 - 1.2, 2 - 0.5, 2 - 0.5, 2, 2])
    assert capped.throughput > predict(base, placement, free).throughput
    with pytest.raises(ValueError, match="fixed_cpu_cap must be in"):
        CostModel(fixed_cpu_cap=0.0)


def test_fit_cap_recovers_the_cap_a_known_model_measured(cases):
    """'Measured' by a model whose fixed costs (0.1 cores per worker) are capped at 40 % of a node:
    from the same model uncapped, the fit finds the cap again."""
    truth = dataclasses.replace(TRUE, worker_cpu=0.1, fixed_cpu_cap=0.4)
    measured = [dataclasses.replace(c, measured=float(m)) for c, m in zip(cases, predictions(truth, cases))]
    model, info = fit_cap(measured, dataclasses.replace(truth, fixed_cpu_cap=1.0))
    assert model.fixed_cpu_cap == pytest.approx(0.4, abs=0.005)
    assert info["capped_loss"] < 1e-3 < info["uncapped_loss"]
    assert fit_cap(measured, truth)[0].fixed_cpu_cap == pytest.approx(0.4, abs=0.005)   # and keeps a right one


def test_node_cpu_takes_capacity_only_from_nodes_that_host_workers():
    base = Problem.from_topology(runtime.microbench("linear", "cpu"), runtime.named_cluster("2high+4low"))
    packed = make_scheduler("t3").schedule(base).placement   # fits on the two high capacity nodes
    from streamplace.model.performance import predict
    loaded = predict(base, packed, CostModel(worker_cpu=0.0, node_cpu=0.25, executor_cpu=0.0, connection_cpu=0.0))
    hosting = packed.workers_used(base.cluster) > 0
    cores = np.array([n.cores for n in base.cluster.nodes], float)
    assert 0 < hosting.sum() < len(cores)
    assert np.allclose(loaded.cpu_capacity, np.where(hosting, cores - 0.25, cores))


def test_pairs_within_the_noise_are_left_out_of_the_pair_agreement(cases):
    """Three cells of one experiment: A and B 10 apart with sd 1 over 4 runs (apart: 10 > 2 x
    sqrt(1/4 + 1/4) = 1.41), B and C 1 apart (within the noise), A and C apart. A model that
    orders A > B > C agrees on both distinguishable pairs; swapping B and C costs tau but no pair."""
    from streamplace.fit.scores import distinguishable
    a, b, c = (dataclasses.replace(cases[i], experiment="x", runs=4, sd=1.0) for i in range(3))
    a, b, c = (dataclasses.replace(x, measured=m) for x, m in ((a, 30.0), (b, 20.0), (c, 19.0)))
    assert distinguishable(a, b) and distinguishable(a, c) and not distinguishable(b, c)
    assert not distinguishable(dataclasses.replace(a, runs=1), b)   # one run: no spread known
    pred = predictions(TRUE, [a, b, c])
    order = {x.scheduler: p for x, p in zip((a, b, c), pred)}
    s = scores(TRUE, [a, b, c])
    expected = sum((m1 - m2) * (order[x.scheduler] - order[y.scheduler]) > 0
                   for (x, m1), (y, m2) in (((a, 30.0), (b, 20.0)), ((a, 30.0), (c, 19.0))))
    assert s["pairs"] == 2 and s["pairs_agree"] == expected


def test_executor_cpu_takes_capacity_from_the_node_per_task():
    base = Problem.from_topology(runtime.microbench("linear", "cpu"), runtime.named_cluster("1high+2low"))
    placement = make_scheduler("t3").schedule(base).placement
    plain = predict(base, placement, CostModel(worker_cpu=0.0, node_cpu=0.0, executor_cpu=0.0, connection_cpu=0.0))
    loaded = predict(base, placement, CostModel(worker_cpu=0.0, node_cpu=0.0, executor_cpu=0.01, connection_cpu=0.0))
    tasks = np.bincount(placement.node, minlength=base.cluster.n_nodes)
    cores = np.array([n.cores for n in base.cluster.nodes], float)
    assert np.allclose(loaded.cpu_capacity, cores - 0.01 * tasks)
    assert loaded.throughput < plain.throughput


def test_cpu_terms_worked_by_hand():
    """source (1 task, 1 ms/tuple) -> sink (1 task, 2 ms/tuple) on two nodes, measured at 100
    bolt tuples/s: each node executes 100 tuples/s, serialises 100 (one side of the hop each)."""
    from streamplace.model import Cluster, Node, Operator, Placement, Stream, Topology
    topo = Topology.build("two", [Operator("s", 1, role="source", source_rate=1.0, cpu_per_tuple=1e-3, tuple_bytes=100),
                                  Operator("k", 1, role="sink", cpu_per_tuple=2e-3)], [Stream("s", "k")])
    cluster = Cluster.build("c", [Node("a", 4, slots=1, cores=1), Node("b", 4, slots=1, cores=1)])
    case = Case("two", "x", Problem.from_topology(topo, cluster), Placement(node=np.array([0, 1]), worker=np.zeros(2, int)),
                100.0, 1)
    known, terms = cpu_terms(case, CostModel(ser_cpu_per_byte=1e-6))
    assert known == pytest.approx([100 * (1e-3 + 1e-4), 100 * (2e-3 + 1e-4)])   # own work + 100 B x 1 us/B per side
    assert terms.tolist() == [[100, 100, 1, 1, 1, 1], [100, 100, 1, 1, 1, 1]]   # one connection, a's worker to b's


def _node_cores_measured(cases, true, extra=0.0):
    """The cases at ``true``'s throughput, each node 'measured' using what ``true`` demands there
    (demand x scale + fixed) plus ``extra`` of its cores."""
    out = []
    for c, m in zip(cases, predictions(true, cases)):
        perf = predict(c.problem, c.placement, true)
        workers = c.placement.workers_used(c.problem.cluster)
        tasks = np.bincount(c.placement.node, minlength=c.problem.cluster.n_nodes)
        connections = worker_connections(c.problem.topology, c.placement, c.problem.cluster)
        cores = (perf.cpu_demand * perf.max_scale + true.worker_cpu * workers + true.node_cpu * (workers > 0)
                 + true.executor_cpu * tasks + true.connection_cpu * connections)
        out.append(dataclasses.replace(c, measured=float(m), node_cores={
            n.name: float(v) + extra * n.cores for n, v in zip(c.problem.cluster.nodes, cores)}))
    return out


def test_cpu_gap_is_the_share_of_a_saturated_nodes_cores_the_model_leaves_out(cases):
    true = dataclasses.replace(TRUE, node_cpu=0.02, executor_cpu=0.004)
    exact = cpu_gap(_node_cores_measured(cases, true), true)
    assert set(exact) == {"linear", "diamond"}   # each has a bottleneck node, used to its last core
    assert exact == {e: pytest.approx(0.0, abs=1e-9) for e in exact}
    assert cpu_gap(_node_cores_measured(cases, true, extra=0.1), true) == {e: pytest.approx(0.1) for e in exact}
    assert cpu_gap(cases, true) == {}   # no node CPU measured


def test_fit_cpu_recovers_the_constants_from_the_cores_each_node_used(cases):
    """Node cores 'measured' under a known model at its own throughput: demand x scale + fixed."""
    true = dataclasses.replace(TRUE, node_cpu=0.02, executor_cpu=0.004, connection_cpu=0.003)
    measured = _node_cores_measured(cases, true)
    model, info = fit_cpu(measured, START)
    for name in FITTED:
        assert getattr(model, name) == pytest.approx(getattr(true, name), rel=1e-6, abs=1e-9), name
    assert info["r2"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no case has measured node CPU"):
        fit_cpu(cases, START)
    # some constants only: the others are held at the start model's values, here the true ones
    held = dataclasses.replace(true, worker_cpu=0.0, node_cpu=0.0)
    model, info = fit_cpu(measured, held, ("worker_cpu", "node_cpu"))
    assert (model.worker_cpu, model.node_cpu) == (pytest.approx(true.worker_cpu), pytest.approx(true.node_cpu))
    assert model.executor_cpu == true.executor_cpu and info["params"] == ["worker_cpu", "node_cpu"]
    # held at a wrong value, the rest of the fit cannot make up for it exactly
    assert fit_cpu(measured, dataclasses.replace(held, executor_cpu=0.0), ("worker_cpu", "node_cpu"))[1]["r2"] < 0.999
    with pytest.raises(ValueError, match="not 'header_bytes'"):
        fit_cpu(measured, START, ("worker_cpu", "header_bytes"))


def test_cross_validation_predicts_each_experiment_by_the_fit_to_the_others(cases):
    fitted_to = []

    def fit_one(cs):
        fitted_to.append(sorted({c.experiment for c in cs}))
        return TRUE if len(fitted_to) == 1 else START   # "diamond" by the true model, "linear" by the analytic one
    cv = cross_validate(cases, fit_one)
    assert fitted_to == [["linear"], ["diamond"]]   # each experiment predicted by a fit that never saw it
    assert cv["kendall_tau"]["diamond"] == pytest.approx(1.0)
    assert cv["kendall_tau"]["linear"] == pytest.approx(scores(START, [c for c in cases if c.experiment == "linear"])["kendall_tau"]["linear"])
    linear_errors = np.abs(predictions(START, cases[:5]) / np.array([c.measured for c in cases[:5]]) - 1)
    assert cv["median_abs_error"] == pytest.approx(float(np.median(np.concatenate([np.zeros(5), linear_errors]))))
    assert cross_validate(cases, lambda cs: TRUE)["median_abs_error"] == pytest.approx(0.0, abs=1e-12)


def test_bias_is_the_median_signed_error_of_each_schedulers_placements(cases):
    """Over-predicting one scheduler's placements by half shows as +50 % for it and 0 for the rest."""
    pred = predictions(TRUE, cases) * np.array([1.5 if c.scheduler == "metis" else 1.0 for c in cases])
    b = bias(cases, pred)
    assert set(b) == {c.scheduler for c in cases}
    assert b["metis"] == pytest.approx(0.5)
    assert all(v == pytest.approx(0.0, abs=1e-12) for s, v in b.items() if s != "metis")


def test_across_scores_one_campaign_as_the_predictor_of_another():
    from streamplace.fit.scores import across

    def camp(values, sd=1.0):
        return [Case("e", s, None, None, v, 3, sd) for s, v in values.items()]
    first = camp({"a": 100.0, "b": 200.0, "c": 300.0, "only-here": 5.0})
    second = camp({"a": 110.0, "b": 160.0, "c": 330.0, "d": 50.0})
    s = across(first, second)
    assert s["cases"] == 3   # d and only-here are not in both
    assert s["median_abs_error"] == pytest.approx(sorted([10 / 110, 40 / 160, 30 / 330])[1])
    assert s["kendall_tau"]["e"] == pytest.approx(1.0) and (s["pairs_agree"], s["pairs"]) == (3, 3)
    swapped = across(camp({"a": 200.0, "b": 100.0}), camp({"a": 100.0, "b": 200.0}))
    assert swapped["kendall_tau"]["e"] == pytest.approx(-1.0) and swapped["pairs_agree"] == 0
    assert across(first, camp({"z": 1.0})) is None

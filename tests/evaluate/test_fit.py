"""Fitting the cost model: constants recovered from runs a known model 'measured'; the scores."""

import dataclasses

import numpy as np
import pytest

from streamplace.evaluate.fit import Case, fit, predictions, scaled_cluster, scores
from streamplace.model.performance import CostModel
from streamplace.model import Problem
from streamplace.schedulers import make_scheduler
from streamplace.workloads import runtime

TRUE = CostModel(task_cpu_per_tuple=3e-5, ser_cpu_per_tuple=8e-6, worker_cpu=0.05)
START = CostModel(ser_cpu_per_tuple=2e-6)   # the analytic constants before the testbed fit


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
    plain = predict(base, placement, CostModel())
    loaded = predict(base, placement, CostModel(worker_cpu=0.5))
    workers = placement.workers_used(base.cluster)
    cores = np.array([n.cores for n in base.cluster.nodes], float)
    assert np.allclose(loaded.cpu_capacity, cores - 0.5 * workers)
    assert loaded.throughput < plain.throughput

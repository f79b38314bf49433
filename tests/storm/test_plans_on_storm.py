"""Every scheduler's plan, applied by the plugin on an embedded Storm: what Storm reports equals the plan.

One LocalCluster (one JVM) per cluster runs its jobs one after another; each job is submitted,
fully assigned, read back from Storm and killed.
"""

import pytest

from streamplace.model import Problem
from streamplace.schedulers import available, make_scheduler
from streamplace.storm.plans import plan_document, workers_of
from streamplace.storm.run import Job, RunSettings, run_jobs

from .topologies import five_groupings, micro, micro_linear, smart_home, union

#: Aniello's online scheduler runs with the topology's worker count, as the papers ran it.
ONLINE = {"micro": {"workers": 6}, "application": {"workers": 10}, "groupings": {"workers": 6, "gamma": None}}
TOPOLOGIES = {"micro": micro, "application": smart_home, "groupings": five_groupings, "micro-linear": micro_linear}


def plans():
    """(topology kind, scheduler, problem, placement) for every scheduler whose model covers the
    topology: three topologies each, the linear micro-benchmark only for the throughput scheduler
    (its model does not cover the groupings topology's global and all streams)."""
    out = []
    for kind, make in TOPOLOGIES.items():
        topo, cluster = make()
        problem = Problem.from_topology(topo, cluster)
        for name in (["throughput"] if kind == "micro-linear" else available()):
            params = {"optimal": {"time_limit": 2.0}, "online": ONLINE.get(kind, {})}.get(name, {})
            try:
                result = make_scheduler(name, params).schedule(problem)
            except ValueError:   # the scheduler's model does not cover this topology (throughput: global/all)
                continue
            if result.placement is not None:
                out.append((kind, name, result.problem, result.placement))
    return out


@pytest.fixture(scope="module")
def storm_results(storm_ready, tmp_path_factory):
    """Runs every plan on one embedded Storm (each topology kind on its own nodes), one scheduler's
    plans at a time; returns (kind, scheduler, problem, placement, Storm's result)."""
    cases = sorted(plans(), key=lambda case: case[1])
    names = sorted({case[1] for case in cases})
    jobs = [Job(f"{kind}-{name}", problem.topology, None, workers_of(placement), group=names.index(name),
                plan=plan_document(problem.topology, problem.cluster, placement))
            for kind, name, problem, placement in cases]
    cluster = union(case[2].cluster for case in cases)
    results = run_jobs(cluster, jobs, RunSettings(), tmp_path_factory.mktemp("storm-plans"))
    return [(*case, results[job.name]) for case, job in zip(cases, jobs)]


def test_every_scheduler_runs_on_at_least_three_topologies(storm_results):
    kinds = {}
    for kind, name, *_ in storm_results:
        kinds.setdefault(name, set()).add(kind)
    assert set(kinds) == set(available())
    assert all(len(k) >= 3 for k in kinds.values()), kinds


def test_storm_assignment_equals_every_plan(storm_results):
    for kind, name, problem, placement, result in storm_results:
        plan = placement.to_mapping(problem.topology.task_labels, problem.cluster)
        assert result["assignment"] == plan, f"{kind}/{name}"
        assert result["scheduler_status"].startswith("streamplace: plan applied"), result["scheduler_status"]
        assert result["workers"] == workers_of(placement)

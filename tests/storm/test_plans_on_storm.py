"""Every scheduler's plan, applied by the plugin on an embedded Storm: what Storm reports equals the plan.

One LocalCluster (one JVM) runs the jobs in groups, one group after another; each job is
submitted, fully assigned, read back from Storm and killed. Two schedulers' plans share a group,
each on its own copy of the nodes (renamed), so that no two plans in Storm at once share a slot.
"""

import pytest

from streamplace.model import Problem
from streamplace.schedulers import available, make_scheduler
from streamplace.storm.plans import plan_document, workers_of
from streamplace.storm.run import Job, RunSettings, run_jobs

from .topologies import copy_of, five_groupings, micro, micro_linear, page_view, union

#: Aniello's online scheduler runs with the topology's worker count, as the papers ran it (on the
#: application, one worker per node: at more, its default gamma leaves page-view's tasks unplaced)
ONLINE = {"micro": {"workers": 6}, "application": {"workers": 5, "gamma": None}, "groupings": {"workers": 6, "gamma": None}}
TOPOLOGIES = {"micro": micro, "application": page_view, "groupings": five_groupings, "micro-linear": micro_linear}
#: schedulers whose plans run in Storm at once (each on its own copy of the nodes): every group
#: waits once for its workers to start, so fewer groups take less time; more copies mean more
#: supervisors in the one JVM (two copies: 30 of them, against 17 with one)
AT_ONCE = 2


def plans():
    """(topology kind, scheduler, problem, placement) for every scheduler whose model covers the
    topology: three topologies each, the linear micro-benchmark only for the throughput scheduler
    (its model does not cover the groupings topology's global and all streams)."""
    out = []
    for kind, make in TOPOLOGIES.items():
        topo, cluster = make()
        problem = Problem.from_topology(topo, cluster)
        for name in (["throughput"] if kind == "micro-linear" else available()):
            params = {"optimal": {"time_limit": 0.5}, "lns": {"time_limit": 0.5}, "online": ONLINE.get(kind, {})}.get(name, {})
            try:
                result = make_scheduler(name, params).schedule(problem)
            except ValueError:   # the scheduler's model does not cover this topology (throughput: global/all)
                continue
            if result.placement is not None:
                out.append((kind, name, result.problem, result.placement))
    return out


@pytest.fixture(scope="module")
def storm_results(storm_ready, tmp_path_factory):
    """Runs every plan on one embedded Storm (each topology kind on its own nodes), ``AT_ONCE``
    schedulers' plans at a time, scheduler ``i``'s on copy ``i % AT_ONCE`` of the nodes; returns
    (kind, scheduler, problem, placement, the cluster it ran on, Storm's result)."""
    cases = sorted(plans(), key=lambda case: case[1])
    names = sorted({case[1] for case in cases})
    runs = []
    for kind, name, problem, placement in cases:
        runs.append((kind, name, problem, placement, copy_of(problem.cluster, names.index(name) % AT_ONCE)))
    runs.sort(key=lambda run: names.index(run[1]) // AT_ONCE)
    jobs = [Job(f"{kind}-{name}", problem.topology, None, workers_of(placement), group=names.index(name) // AT_ONCE,
                plan=plan_document(problem.topology, cluster, placement))
            for kind, name, problem, placement, cluster in runs]
    results = run_jobs(union(run[4] for run in runs), jobs, RunSettings(), tmp_path_factory.mktemp("storm-plans"))
    return [(*run, results[job.name]) for run, job in zip(runs, jobs)]


def test_every_scheduler_runs_on_at_least_three_topologies(storm_results):
    kinds = {}
    for kind, name, *_ in storm_results:
        kinds.setdefault(name, set()).add(kind)
    assert set(kinds) == set(available())
    assert all(len(k) >= 3 for k in kinds.values()), kinds


def test_storm_assignment_equals_every_plan(storm_results):
    for kind, name, problem, placement, cluster, result in storm_results:
        plan = placement.to_mapping(problem.topology.task_labels, cluster)
        assert result["assignment"] == plan, f"{kind}/{name}"
        assert result["scheduler_status"].startswith("streamplace: plan applied"), result["scheduler_status"]
        assert result["workers"] == workers_of(placement)

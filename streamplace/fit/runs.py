"""Campaign run records as the fit reads them: which problem a record's experiment ran, which
runs train a model and which validate it, which runs measured nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from ..model import Problem, Topology
from ..model.performance import CostModel
from ..model.specs import placement_from_dict
from ..workloads import runtime
from .cases import predicted_figures, with_model


#: What the experiment of a run recorded before the spouts applied ``selectivity`` (2026-11-25)
#: is relabelled with when the experiment's sources filter: those sources sent every record they
#: read, so the run measured another workload, never pooled with the runs recorded since.
UNFILTERED = " (sources unfiltered)"


def sources_filter(topology: Topology) -> bool:
    """Whether a source of ``topology`` sends fewer tuples than it reads (selectivity below 1)."""
    return any(op.selectivity != 1.0 for op in topology.operators if not topology.upstream(op.name))


def unfiltered(problem: Problem) -> Problem:
    """``problem`` with every source at selectivity 1, as the testbed's spouts ran it before
    2026-11-25 (it is ``problem`` itself when no source filters)."""
    topo = problem.topology
    if not sources_filter(topo):
        return problem
    ops = [op if topo.upstream(op.name) else dataclasses.replace(op, selectivity=1.0) for op in topo.operators]
    return Problem.from_topology(Topology.build(topo.name, ops, topo.streams), problem.cluster)


def problems() -> dict[str, Problem]:
    """Experiment name (``<topology>@<cluster>``, as in the run records) -> its problem; for the
    experiments whose sources filter, also ``<topology>@<cluster> (sources unfiltered)`` ->
    :func:`unfiltered` (the older runs :func:`relabel` names so)."""
    out = {f"{s.topology.name}@{s.cluster}": Problem.from_topology(s.topology, runtime.named_cluster(s.cluster))
           for s in runtime.scenarios() + runtime.calibration_scenarios()}
    for name, problem in list(out.items()):
        if (older := unfiltered(problem)) is not problem:
            out[name + UNFILTERED] = older
    return out


def relabel(runs: Sequence[dict]) -> list[dict]:
    """The run records as measured: a run recorded before the spouts applied ``selectivity``
    (no ``spout_selectivity`` key) of an experiment whose sources filter gets the experiment
    ``<experiment> (sources unfiltered)``, so that every grouping by experiment keeps it apart
    from the runs recorded since and scores it with the topology it ran (of the campaign's
    workloads only smart-home changes). Other records are returned as they are."""
    filtering = {f"{s.topology.name}@{s.cluster}" for s in runtime.scenarios() if sources_filter(s.topology)}
    return [{**r, "experiment": r["experiment"] + UNFILTERED}
            if not r.get("spout_selectivity") and r["experiment"] in filtering else r for r in runs]


def run_problems() -> Callable[[dict], Problem]:
    """Run record (as :func:`relabel` names it) -> the problem its experiment ran, each problem
    built once."""
    by_name = problems()

    def problem_of(run: dict) -> Problem:
        return by_name[run["experiment"]]
    return problem_of


def repredict(runs: Sequence[dict], model: CostModel, cpu_budget: float) -> list[dict]:
    """The runs with every ``predicted_*`` key recomputed under ``model`` from their placements."""
    problem_of = run_problems()
    out = []
    for r in runs:
        problem = problem_of(r)
        placement = placement_from_dict({"placement": r["placement"]}, problem.topology, problem.cluster, r["job"])
        figures = predicted_figures(problem, placement, model, float(r.get("cpu_budget", cpu_budget)))
        out.append({**r, **with_model(r, figures)})
    return out


def stalled(run: dict) -> bool:
    """Whether the run's bolts executed no tuple in the measured window: its workers were still
    starting (one run of 32 single-task workers on 8 high's 0.19-core nodes), so it measured the
    start-up, not the placement; a fit leaves it out and says so."""
    return not run["bolt_throughput"] > 0


def run_label(run: dict) -> str:
    """``<experiment> / <scheduler> rep <n>``: one run named in messages."""
    return f"{run['experiment']} / {run['scheduler']} rep {run['rep']}"


def held_out(kind: str) -> bool:
    """Whether runs of this scenario kind validate a fitted cost model rather than train it: the
    papers' applications (:data:`streamplace.workloads.runtime.APPLICATIONS`), which no fit may
    see; the micro-benchmarks and the calibration runs train it."""
    return kind in runtime.APPLICATIONS

"""Measured placements as the fit sees them, and the model's prediction of each.

A *case* is one placement of one experiment with the mean bolt throughput measured over its
runs. Its prediction is :func:`~streamplace.model.performance.predict` on the cluster as the
testbed ran it (each node's cores times the testbed's CPU scale,
:func:`~streamplace.model.cluster.cpu_scale`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..model import Placement, Problem
from ..model.cluster import scaled_cluster
from ..model.specs import placement_from_dict
from ..model.performance import CostModel, Routes, predict, routes


@dataclass(frozen=True)
class Case:
    """One measured placement: ``measured`` = mean bolt tuples executed per second over ``runs`` runs."""

    experiment: str
    scheduler: str
    problem: Problem        # on the cluster as the testbed ran it
    placement: Placement
    measured: float
    runs: int
    sd: float = math.nan    # sample standard deviation of the runs (nan: one run)
    #: node -> mean cores its cgroup used over the runs that measured it (None: none did)
    node_cores: Mapping[str, float] | None = None

    @cached_property
    def routes(self) -> Routes:
        """The placement's model-independent routing, made on first use: a fit predicts every
        case under thousands of models."""
        return routes(self.problem, self.placement)


def cases_from_runs(runs: Sequence[dict], problem_of: Callable[[dict], Problem], cpu_budget: float) -> list[Case]:
    """Group campaign records by (experiment, scheduler); ``problem_of(record)`` is the problem
    the record's experiment ran (e.g. :func:`streamplace.fit.runs.run_problems`)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in runs:
        groups.setdefault((r["experiment"], r["scheduler"]), []).append(r)
    out = []
    for (exp, sched), rs in sorted(groups.items()):
        base = problem_of(rs[0])
        problem = Problem.from_topology(base.topology, scaled_cluster(base.cluster, float(rs[0].get("cpu_budget", cpu_budget))))
        placement = placement_from_dict({"placement": rs[0]["placement"]}, base.topology, base.cluster, f"{exp}/{sched}")
        values = np.array([r["bolt_throughput"] for r in rs], dtype=float)
        with_cpu = [r["node_cpu"] for r in rs if r.get("node_cpu")]
        cores = {n: float(np.mean([c[n]["cores"] for c in with_cpu])) for n in with_cpu[0]} if with_cpu else None
        out.append(Case(exp, sched, problem, placement, float(values.mean()), len(rs),
                        float(values.std(ddof=1)) if len(rs) > 1 else math.nan, cores))
    return out


def predicted_figures(problem: Problem, placement: Placement, model: CostModel, cpu_budget: float) -> dict:
    """The model's throughput, bottleneck and unit-load figures of ``placement`` as the testbed
    runs it (on :func:`scaled_cluster`); ``predicted_unit_*`` are at the topology's nominal rates."""
    perf = predict(Problem.from_topology(problem.topology, scaled_cluster(problem.cluster, cpu_budget)), placement, model)
    return {"predicted_throughput": perf.throughput, "predicted_bolt_throughput": bolt_throughput(problem, perf),
            "predicted_bottleneck": perf.bottleneck, "predicted_unit_throughput": float(perf.in_rate.sum()),
            "predicted_unit_inter_node_bytes": float(perf.nic_out.sum())}


def bolt_throughput(problem: Problem, perf) -> float:
    """Tuples executed per second by the non-source tasks at the sustainable scale: what [I]/[T3]
    count (per bolt task), and what a saturated Storm run measures (its spouts stall while the
    bolts drain the back-pressured queues, so their emit counts say little)."""
    bolts = ~problem.topology.source_task_mask
    return float(perf.max_scale * perf.in_rate[bolts].sum()) if np.isfinite(perf.max_scale) else math.inf


def predictions(model: CostModel, cases: Sequence[Case]) -> np.ndarray:
    """Predicted bolt throughput of every case (:func:`bolt_throughput`); the latency, which a fit
    never reads, is not computed (a quarter of a prediction's time)."""
    return np.array([bolt_throughput(c.problem, predict(c.problem, c.placement, model, latency=False, routed=c.routes))
                     for c in cases])


def with_model(run: dict, figures: dict) -> dict:
    """``figures`` (:func:`predicted_figures`) plus the inter-node bytes
    the model predicts at the run's measured rate (its unit-load bytes scaled by measured / unit
    bolt throughput)."""
    unit_bolts = figures["predicted_unit_throughput"] * (figures["predicted_bolt_throughput"] / figures["predicted_throughput"]
                                                           if figures["predicted_throughput"] else 0.0)
    scale = run["bolt_throughput"] / unit_bolts if unit_bolts else 0.0
    return {**figures, "predicted_inter_node_bytes_per_s": figures["predicted_unit_inter_node_bytes"] * scale}

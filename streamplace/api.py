"""The library's public API: everything the CLI does, as functions (``import streamplace``).

>>> import streamplace as sp
>>> problem = sp.load_problem("diamond30.yaml", "het.yaml")            # doctest: +SKIP
>>> result = sp.schedule(problem, "ischeduler", time_limit=5)          # doctest: +SKIP
>>> sp.evaluate_placement(problem, result.placement)["inter_node_cost"]  # doctest: +SKIP

Specs load and save with :func:`load_topology`, :func:`load_cluster`, :func:`load_placement` and
:func:`write_document`; a :class:`Problem` is a topology, its task graph and a cluster; every
scheduler is built by name through :func:`make_scheduler` (``available()`` lists them) and
returns an immutable :class:`ScheduleResult`; :func:`evaluate_placement` gives the metrics record the CLI
prints, :func:`predict` the performance model's throughput and latency, :func:`diff_placements`
what changes between two placements.
"""

from __future__ import annotations

from typing import Any

from .evaluate.diff import diff_placements
from .model.performance import CostModel, load_cost_model, predict
from .evaluate.records import evaluation_record
from .model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from .model.cluster import ClusterError
from .model.specs import SpecError, load_cluster, load_placement, load_topology, write_document
from .model.topology import TopologyError
from .schedulers import ScheduleResult, available, make_scheduler


def load_problem(topology: str, cluster: str, profile: str | None = None) -> Problem:
    """The problem of a topology and a cluster file; with a profile directory (``streamplace
    profile``) its measured rates are the edge weights. A model error names its file (:class:`SpecError`)."""
    topo, clus = load_topology(topology), load_cluster(cluster)
    try:
        if profile is None:
            return Problem.from_topology(topo, clus)
        from .profile import load_profile_graph   # Spark-free reader, imported only when asked for
        return Problem.from_topology(topo, clus, graph=load_profile_graph(profile, topo))
    except (TopologyError, ClusterError) as exc:
        raise SpecError(topology if isinstance(exc, TopologyError) else cluster, exc.field_path, exc.problem) from None


def schedule(problem: Problem, scheduler: str, params: dict[str, Any] | None = None, *, seed: int | None = None,
             time_limit: float | None = None, profiling: Any = None) -> ScheduleResult:
    """Run the registered ``scheduler`` on ``problem`` (parameters as :func:`make_scheduler` takes them)."""
    return make_scheduler(scheduler, params, seed=seed, time_limit=time_limit, profiling=profiling).schedule(problem)


def evaluate_placement(problem: Problem, placement: Placement, *, cost_model: CostModel | None = None) -> dict:
    """Every metric of ``placement`` (the record ``streamplace evaluate --format json`` prints). Not
    named ``evaluate``: ``streamplace.evaluate`` is the package of the metrics."""
    return evaluation_record(problem, placement, model=cost_model)


__all__ = ["Cluster", "CostModel", "Node", "Operator", "Placement", "Problem", "ScheduleResult", "SpecError", "Stream",
           "Topology", "available", "diff_placements", "evaluate_placement", "load_cluster", "load_cost_model", "load_placement",
           "load_problem", "load_topology", "make_scheduler", "predict", "schedule", "write_document"]

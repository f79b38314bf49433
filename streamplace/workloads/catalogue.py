"""The catalogue of bundled workloads: every topology generator, cluster generator and cluster
preset by name, with its arguments. The sweep's grid, the demo and ``streamplace workload`` read
this one table, so whatever one of them can build the others can too.

A :class:`Generator` builds from keyword arguments declared as :class:`Arg` (type, allowed
values, default); a topology generator returns ``(Topology, TaskGraph | None)``, a cluster
generator also receives the workload's task ``graph`` (clusters sized to the job).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from collections.abc import Iterable
from typing import Any, Callable

from ..files import quote
from ..model import Cluster
from ..model.errors import InputError
from ..model.keyvalue import parse_bool, parse_pairs
from ..model.specs import MAX_INT, MAX_NUMBER
from . import fischer, microbench, nasiri, runtime
from . import lf as lf_workloads
from .applications import APPLICATIONS, application
from .synthetic import synthetic_cluster, synthetic_topology

REQUIRED = object()


@dataclass(frozen=True)
class Arg:
    kind: type
    choices: tuple = ()
    default: Any = REQUIRED


@dataclass(frozen=True)
class Generator:
    """``build(**args)``: a workload returns ``(Topology, TaskGraph | None)``; a cluster generator
    also receives the workload's task ``graph``. ``label(args)`` names the result in the records;
    ``layout(args)`` names its family (reports draw one line per family against the task count)."""

    build: Callable
    args: dict[str, Arg]
    label: Callable[[dict], str]
    layout: Callable[[dict], str] = lambda a: ""
    needs_job: bool = False   # a cluster generator that sizes the cluster to the workload's task graph


def _lf(config, high, grouping):
    if config == "page-view-count":
        if high or grouping != "local_or_shuffle":
            raise ValueError("the page-view-count topology has fixed parallelism and groupings (no high, no grouping)")
        return lf_workloads.page_view_count(), None
    return lf_workloads.synthetic(config, high=high, grouping=grouping), None


TOPOLOGIES: dict[str, Generator] = {
    "microbench": Generator(lambda layout, tasks: (microbench.microbench(layout, tasks), None),
                            {"layout": Arg(str, microbench.LAYOUTS), "tasks": Arg(int)},
                            lambda a: f"{a['layout']}-{a['tasks']}", lambda a: a["layout"]),
    "lf": Generator(_lf, {"config": Arg(str, (*lf_workloads.CONFIGS, "page-view-count")), "high": Arg(bool, default=False),
                          "grouping": Arg(str, lf_workloads.SW_GROUPINGS, default="local_or_shuffle")},
                    lambda a: a["config"] if a["config"] == "page-view-count" else
                    f"sw-{a['config']}{'-high' if a['high'] else ''}{'-shuffle' if a['grouping'] == 'shuffle' else ''}",
                    lambda a: a["config"] if a["config"] == "page-view-count" else f"sw-{a['config']}"),
    "nasiri": Generator(lambda layout, compute: (nasiri.topology(layout, compute), None),
                        {"layout": Arg(str, nasiri.LAYOUTS), "compute": Arg(str, nasiri.COMPUTE, default="mixed")},
                        lambda a: f"nasiri-{a['layout']}-{a['compute']}", lambda a: f"nasiri-{a['layout']}"),
    "runtime": Generator(lambda layout, mode: (runtime.microbench(layout, mode), None),
                         {"layout": Arg(str, runtime.LAYOUTS), "mode": Arg(str, tuple(runtime.MODES))},
                         lambda a: f"{a['layout']}-{a['mode']}", lambda a: f"runtime-{a['layout']}"),
    "fischer": Generator(lambda topology, nodes: (fischer.topology(topology, nodes), None),
                         {"topology": Arg(str, fischer.TOPOLOGIES), "nodes": Arg(int)},
                         lambda a: f"{a['topology']}-{a['nodes']}", lambda a: a["topology"]),
    "application": Generator(lambda name: (application(name).topology, None), {"name": Arg(str, tuple(APPLICATIONS))},
                             lambda a: a["name"], lambda a: a["name"]),
    "synthetic": Generator(lambda tasks, seed, jobs, fanout: synthetic_topology(tasks, seed=seed, jobs=jobs, fanout=fanout),
                           {"tasks": Arg(int), "seed": Arg(int, default=0), "jobs": Arg(int, default=None),
                            "fanout": Arg(int, default=3)},
                           lambda a: f"synthetic-{a['tasks']}-s{a['seed']}", lambda a: "synthetic"),
}

CLUSTER_GENERATORS: dict[str, Generator] = {
    "synthetic": Generator(lambda nodes, slack, seed, graph: synthetic_cluster(
                               nodes, float(graph.loads.sum()), seed=seed, slack=slack,
                               min_capacity=float(graph.loads.max(initial=0.0))),
                           {"nodes": Arg(int), "slack": Arg(float, default=0.2), "seed": Arg(int, default=0)},
                           lambda a: f"synthetic-{a['nodes']}-slack{a['slack']:g}-s{a['seed']}", needs_job=True),
    "imacs": Generator(lambda nodes, graph: fischer.cluster(nodes), {"nodes": Arg(int)}, lambda a: f"imacs-{a['nodes']}"),
    "testbed": Generator(lambda high, low, graph: runtime.cluster(high, low), {"high": Arg(int), "low": Arg(int, default=0)},
                         lambda a: f"{a['high']}high" + (f"+{a['low']}low" if a["low"] else "")),
    "sized": Generator(lambda kind, slack, graph: sized_cluster(kind, int(graph.loads.size), slack),
                       {"kind": Arg(str, ("homogeneous", "heterogeneous")), "slack": Arg(float, default=1.25)},
                       lambda a: f"sized-{a['kind']}" + (f"-slack{a['slack']:g}" if a["slack"] != 1.25 else ""),
                       needs_job=True),
}

PRESETS: dict[str, Callable[[str], Cluster]] = {
    **{name: microbench.cluster for name in microbench.CLUSTER_PRESETS},
    **{name: lf_workloads.cluster for name in lf_workloads.CLUSTER_PRESETS},
    **{name: nasiri.cluster for name in nasiri.CLUSTER_PRESETS},
    **{name: runtime.named_cluster for name in runtime.CLUSTERS},
}


# ---------------------------------------------------------------------- grid -> scenarios


def sized_cluster(kind: str, n_tasks: int, slack: float = 1.25) -> Cluster:
    """The testbed cluster of ``kind`` sized to a job of ``n_tasks`` unit-load tasks: capacity
    ``slack`` x the task count in all. ``homogeneous``: 8 high nodes sharing it equally;
    ``heterogeneous``: 4 high and 4 low nodes, a high node holding twice a low one."""
    if kind not in ("homogeneous", "heterogeneous") or n_tasks < 1 or not slack > 0:
        raise ValueError(f"sized cluster: kind homogeneous|heterogeneous, n_tasks >= 1, slack > 0 "
                         f"(got {kind!r}, {n_tasks}, {slack})")
    total = slack * n_tasks
    if kind == "homogeneous":
        return _with_capacity(runtime.cluster(8, 0), {"high": math.ceil(total / 8)})
    low = math.ceil(total / 12)
    return _with_capacity(runtime.cluster(4, 4), {"high": 2 * low, "low": low})


def _with_capacity(cluster: Cluster, capacity: dict[str, int]) -> Cluster:
    return Cluster.build(cluster.name, [dataclasses.replace(n, capacity=float(capacity[n.machine_type]))
                                        for n in cluster.nodes])


def preset(name: str) -> Cluster:
    """The cluster preset ``name`` (:data:`PRESETS`)."""
    if name not in PRESETS:
        raise ValueError(f"no cluster preset {quote(name)} (presets: {', '.join(PRESETS)})")
    return PRESETS[name](name)


def describe(gen: Generator) -> str:
    """``key=choice|choice [default]`` for each argument: what ``--help`` and ``workload list`` show."""
    parts = []
    for key, arg in gen.args.items():
        kind = "|".join(map(str, arg.choices)) if arg.choices else arg.kind.__name__
        parts.append(f"{key}={kind}" + ("" if arg.default is REQUIRED else f" [{arg.default}]"))
    return " ".join(parts)


def generate(generators: dict[str, Generator], name: str, args: Iterable[str], **extra):
    """``generators[name]`` built from ``KEY=VALUE`` strings (``streamplace workload topology|cluster``),
    each converted and checked by its :class:`Arg` (booleans: :func:`~..model.keyvalue.parse_bool`);
    :class:`~..model.errors.InputError` names the generator and the argument.

    >>> generate(TOPOLOGIES, "microbench", ["layout=diamond", "tasks=30"])[0].n_tasks
    30
    """
    gen = generators[name]
    given = parse_pairs(args)
    unknown = sorted(set(given) - set(gen.args))
    if unknown:
        raise InputError(f"{name}: unknown argument {quote(unknown[0])} (arguments: {describe(gen)})")
    values = {}
    for key, arg in gen.args.items():
        if key not in given:
            if arg.default is REQUIRED:
                raise InputError(f"{name}: missing argument {key} (arguments: {describe(gen)})")
            values[key] = arg.default
            continue
        try:
            value = parse_bool(given[key]) if arg.kind is bool else arg.kind(given[key])
        except ValueError:
            raise InputError(f"{name}: {key}: cannot read {quote(given[key])} as {arg.kind.__name__}") from None
        if arg.choices and value not in arg.choices:
            raise InputError(f"{name}: {key}: {quote(value)} is not one of {', '.join(map(str, arg.choices))}")
        if arg.kind in (int, float):
            most = MAX_INT if arg.kind is int else MAX_NUMBER   # counts and seeds: 32-bit ints
            if not (math.isfinite(value) and 0 <= value <= most):
                raise InputError(f"{name}: {key}: must be a number 0..{most:,.0f}, got {quote(given[key])}")
        values[key] = value
    if gen.needs_job and extra.get("graph") is None:
        raise InputError(f"{name}: give --topology: this generator sizes the cluster to a job")
    try:
        return gen.build(**values, **extra)
    except ValueError as exc:
        raise InputError(f"{name}: {exc}") from None

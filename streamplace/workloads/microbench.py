"""The uniform micro-benchmarks and clusters of [I] Sec. 5 / [T3] Sec. 5 (docs/workloads.md).

Load 1 per task and rate 1 per communicating task pair; shuffle streams make connected
operators complete bipartite. Sizes 10, 12, ..., 32 tasks:

* ``linear``: a chain of 2-task operators (10 tasks = 5 operators);
* ``diamond``: a 4-task source and a 4-task sink with k 2-task middle operators, each
  source -> middle -> sink;
* ``star``: a 4-task centre; 2-task sources and sinks added alternately, source first.

Clusters: ``homogeneous`` = 10 nodes of capacity 4; ``heterogeneous`` = {6: 3, 4: 3, 2: 4}.
With these conventions the optimum at 30 tasks on the heterogeneous cluster is 146 (diamond)
and 86 (star), the values [I] Sec. 5 reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..files import quote
from ..model import Cluster, Operator, Problem, Stream, Topology

LAYOUTS = ("linear", "diamond", "star")
SIZES = tuple(range(10, 33, 2))
CLUSTER_PRESETS = {
    "homogeneous": {4: 10},
    "heterogeneous": {6: 3, 4: 3, 2: 4},
}
MIN_TASKS = {"linear": 4, "diamond": 10, "star": 6}


def _stream(a: str, b: str) -> Stream:
    return Stream(src=a, dst=b, grouping="shuffle", pair_rate=1.0)


def microbench(layout: str, n_tasks: int) -> Topology:
    """The ``layout`` micro-benchmark with ``n_tasks`` tasks (even, >= the layout's minimum)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {quote(layout)} (expected one of {', '.join(LAYOUTS)})")
    if n_tasks % 2 or n_tasks < MIN_TASKS[layout]:
        raise ValueError(f"{layout} needs an even task count >= {MIN_TASKS[layout]}, got {n_tasks}")
    name = f"{layout}-{n_tasks}"
    if layout == "linear":
        k = n_tasks // 2
        names = [f"op{i:02d}" for i in range(k)]
        roles = ["source"] + ["compute"] * (k - 2) + ["sink"] if k > 1 else ["source"]
        ops = [Operator(n, 2, role=r) for n, r in zip(names, roles)]
        streams = [_stream(a, b) for a, b in zip(names, names[1:])]
    elif layout == "diamond":
        mids = [f"mid{i:02d}" for i in range((n_tasks - 8) // 2)]
        ops = [Operator("source", 4, role="source"), *(Operator(m, 2) for m in mids), Operator("sink", 4, role="sink")]
        streams = [_stream("source", m) for m in mids] + [_stream(m, "sink") for m in mids]
    else:
        ops = [Operator("centre", 4)]
        streams = []
        for i in range((n_tasks - 4) // 2):
            if i % 2 == 0:
                name_i = f"src{i // 2:02d}"
                ops.append(Operator(name_i, 2, role="source"))
                streams.append(_stream(name_i, "centre"))
            else:
                name_i = f"snk{i // 2:02d}"
                ops.append(Operator(name_i, 2, role="sink"))
                streams.append(_stream("centre", name_i))
    return Topology.build(name, ops, streams)


def cluster(preset: str) -> Cluster:
    """``homogeneous`` or ``heterogeneous`` (the papers' micro-benchmark clusters)."""
    if preset not in CLUSTER_PRESETS:
        raise ValueError(f"unknown cluster preset {quote(preset)} (expected one of {', '.join(CLUSTER_PRESETS)})")
    return Cluster.from_capacities(CLUSTER_PRESETS[preset], name=preset)


@dataclass(frozen=True)
class Instance:
    layout: str
    cluster: str
    n_tasks: int
    problem: Problem

    @property
    def name(self) -> str:
        return f"{self.layout}-{self.n_tasks}@{self.cluster}"


def instances(layouts=LAYOUTS, clusters=tuple(CLUSTER_PRESETS), sizes=SIZES) -> Iterator[Instance]:
    """All micro-benchmark instances (3 layouts x 2 clusters x 12 sizes = 72 by default)."""
    for layout in layouts:
        for preset in clusters:
            c = cluster(preset)
            for n in sizes:
                yield Instance(layout, preset, n, Problem.from_topology(microbench(layout, n), c))

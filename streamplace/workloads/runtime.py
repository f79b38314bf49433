"""The runtime experiments of [I] Sec. 6 and [T3] Sec. 6: topologies and testbed clusters (docs/workloads.md).

Micro-benchmarks ([I]/[T3] Sec. 6.1). The three layouts are Storm's micro-benchmark shapes
([T3] Fig. 4 cites R-Storm's; the same shapes as :mod:`streamplace.workloads.nasiri`, whose
builder we reuse): linear spout -> bolt1 -> bolt2 -> bolt3; diamond spout -> bolt1, bolt2,
bolt3 -> bolt4; star spout1, spout2 -> bolt1 -> bolt2, bolt3. Linear and diamond run 8 tasks
per operator; star runs "four and eight tasks for the spout and bolts respectively" ([T3]
6.1): 4 per spout, 8 per bolt (we read it as 4-task sinks too; the papers' wording
names the spouts only). Streams are shuffle. Two configurations ([I] 6.1):

* ``io`` ("I/O-intensive": little processing per bolt, the rate is limited by the traffic
  between nodes): 1 us of CPU per tuple, run on 1 high + 2 low capacity nodes;
* ``cpu`` ("CPU-intensive": bolts fully loaded): 10 us per tuple, the project's default light
  bolt (:class:`~streamplace.model.performance.CostModel`), run on 2 high + 4 low nodes.

Tuples are 100 bytes (the papers give no size; the project's operator default).

Applications ([I] 6.2-6.3, [T3] 6.2-6.3): smart-home and frequent-routes from
:mod:`streamplace.workloads.applications`; homogeneous runs on 8 high capacity nodes, the
heterogeneous ones on 2 high + 4 low (smart-home) and 2 high + 2 low (frequent routes).
The papers rerun OLS on fewer nodes (4 for smart-home, 3 for frequent routes):
:data:`OLS_NODES`.

Testbed ([I] Sec. 6, [T3] Sec. 6): VirtualBox VMs on 2.7 GHz Core i5-3330S hosts, 1 Gbit/s;
high capacity nodes have 4 cores, 4 GiB and 4 worker slots, low capacity nodes 2 cores, 2 GiB
and 2 slots; at most T = 5 tasks per worker. Capacity in tasks = slots x T (20 and 10): the
most a node can host without a worker above T tasks (the second level uses
``min(slots, ceil(t / T))`` workers), and proportional to the cores (5 tasks per core), so a
full node is as loaded per core as any other. It is also the smallest capacity at which the
diamond micro-benchmark (40 tasks) fits the 1 high + 2 low I/O cluster. Every operator
declares 128 MB of memory (Storm's default ``topology.component.resources.onheap.memory.mb``),
which R-Storm reads against the nodes' memory and its 768 MB worker heap.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..files import quote
from ..model import Cluster, Node, Operator, Stream, Topology
from ..model.topology import Phase
from ..model.cluster import check_cluster_size
from . import applications, nasiri

LAYOUTS = nasiri.LAYOUTS
MODES = {"io": 1e-6, "cpu": 1e-5}  # CPU seconds per tuple of every operator
MODE_CLUSTER = {"io": "1high+2low", "cpu": "2high+4low"}
#: training runs beyond the papers' experiments: CPU-intensive micro-benchmarks on the homogeneous
#: application cluster, so that a cost model fitted to micro-benchmarks has seen nodes of
#: 8 high's size hosting four workers (benchmarks/results/HISTORY.md, "Calibration runs")
CALIBRATION = (("linear", "cpu", "8high"), ("star", "cpu", "8high"))
#: training runs of an application the papers did not run: trending-topics has frequent-routes'
#: shape (fields groupings on Zipf keys, a filtering ranker, a global sink, 400-byte tuples), which
#: no micro-benchmark has, on frequent-routes' heterogeneous cluster; frequent-routes and
#: smart-home stay held out (benchmarks/results/HISTORY.md, "Calibration runs")
CALIBRATION_APPS = (("trending-topics", "2high+2low"),)
TASKS_PER_OPERATOR = 8
STAR_SPOUT_TASKS = 4
TUPLE_BYTES = 100.0
TASKS_PER_WORKER = 5
COMPONENT_MEMORY_MB = 128.0
BANDWIDTH = 125e6  # 1 Gbit/s


@dataclass(frozen=True)
class NodeType:
    name: str
    cores: int
    memory_mb: float
    slots: int

    @property
    def capacity(self) -> float:
        return float(self.slots * TASKS_PER_WORKER)


HIGH = NodeType("high", cores=4, memory_mb=4096.0, slots=4)
LOW = NodeType("low", cores=2, memory_mb=2048.0, slots=2)

CLUSTERS = {  # name: (high capacity nodes, low capacity nodes)
    "1high+2low": (1, 2),
    "2high+4low": (2, 4),
    "8high": (8, 0),
    "2high+2low": (2, 2),
}
APPLICATIONS = {"smart-home": ("8high", "2high+4low"), "frequent-routes": ("8high", "2high+2low")}  # homogeneous, heterogeneous
OLS_NODES = {"smart-home": 4, "frequent-routes": 3}


def cluster(high: int, low: int) -> Cluster:
    """``high`` high capacity then ``low`` low capacity testbed nodes, named like ``2high+4low``."""
    if high < 0 or low < 0 or high + low < 1:
        raise ValueError(f"need at least one node, got high={high}, low={low}")
    check_cluster_size(high + low, high * HIGH.slots + low * LOW.slots)
    nodes = [Node(f"{t.name}{i}", t.capacity, slots=t.slots, machine_type=t.name, cores=t.cores, memory_mb=t.memory_mb,
                  bandwidth=BANDWIDTH) for t, count in ((HIGH, high), (LOW, low)) for i in range(count)]
    return Cluster.build(f"{high}high" + (f"+{low}low" if low else ""), nodes)


def named_cluster(name: str) -> Cluster:
    """One of :data:`CLUSTERS`."""
    if name not in CLUSTERS:
        raise ValueError(f"unknown testbed cluster {quote(name)} (expected one of {', '.join(CLUSTERS)})")
    return cluster(*CLUSTERS[name])


def microbench(layout: str, mode: str) -> Topology:
    """The runtime-size ``layout`` micro-benchmark in configuration ``mode`` (``io`` or ``cpu``)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {quote(mode)} (expected one of {', '.join(MODES)})")
    shape = nasiri.topology(layout, "low")
    spout_tasks = STAR_SPOUT_TASKS if layout == "star" else TASKS_PER_OPERATOR
    ops = [dataclasses.replace(op, parallelism=spout_tasks if op.role == "source" else TASKS_PER_OPERATOR,
                               cpu_per_tuple=MODES[mode], tuple_bytes=TUPLE_BYTES, memory_mb=COMPONENT_MEMORY_MB,
                               source_rate=float(spout_tasks) if op.role == "source" else 1.0)
           for op in shape.operators]
    return Topology.build(f"{layout}-{mode}", ops, shape.streams)


def application(name: str) -> Topology:
    """The topology of one of :data:`APPLICATIONS` or :data:`CALIBRATION_APPS`, with R-Storm's
    memory declarations."""
    known = [*APPLICATIONS, *(app for app, _ in CALIBRATION_APPS)]
    if name not in known:
        raise ValueError(f"unknown application {quote(name)} (expected one of {', '.join(known)})")
    topo = applications.application(name).topology
    return Topology.build(topo.name, [dataclasses.replace(op, memory_mb=COMPONENT_MEMORY_MB) for op in topo.operators],
                          topo.streams)


def shift(at: float = 120.0) -> Topology:
    """A job whose best placement changes while it runs (the autopilot's workload shift):
    ``spout`` (4 tasks, 1 us per tuple) -> shuffle -> ``split`` (8, 10 us) -> fields on ``w``
    over 100 keys -> ``count`` (8, 20 us, sink). From ``at`` seconds after submission the keys
    turn from uniform to Zipf (s = 1.5): Storm sends key k to counter ``(31 + k) mod 8``, so
    counter 7 then executes about 45 % of ``count``'s tuples (the rest 4-18 % each)."""
    ops = [Operator("spout", 4, role="source", cpu_per_tuple=1e-6), Operator("split", 8, cpu_per_tuple=1e-5),
           Operator("count", 8, role="sink", cpu_per_tuple=2e-5)]
    streams = [Stream("spout", "split"), Stream("split", "count", "fields", key="w", num_keys=100)]
    return Topology.build("shift", ops, streams,
                          [Phase(at, streams={("split", "count"): {"key_distribution": "zipf", "zipf_s": 1.5}})])


@dataclass(frozen=True)
class Scenario:
    """One runtime experiment: ``kind`` is ``micro-io``, ``micro-cpu`` or the application's name."""

    kind: str
    workload: str
    cluster: str
    topology: Topology


def scenarios() -> list[Scenario]:
    """The six micro-benchmark runs and the four application runs of [I]/[T3] Sec. 6."""
    out = [Scenario(f"micro-{mode}", layout, MODE_CLUSTER[mode], microbench(layout, mode))
           for mode in MODES for layout in LAYOUTS]
    out += [Scenario(app, app, c, application(app)) for app, clusters in APPLICATIONS.items() for c in clusters]
    return out


def calibration_scenarios() -> list[Scenario]:
    """The :data:`CALIBRATION` and :data:`CALIBRATION_APPS` runs (training runs only; no paper
    statement refers to them)."""
    return ([Scenario(f"micro-{mode}", layout, c, microbench(layout, mode)) for layout, mode, c in CALIBRATION]
            + [Scenario(app, app, c, application(app)) for app, c in CALIBRATION_APPS])

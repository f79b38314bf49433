"""The workloads of [LF] (Son & Moon 2020) Sec. 4.1 and 4.5 (docs/workloads.md).

Synthetic workloads (Table 3): a chain of eight operators ``po1 -> ... -> po8`` with the
parallelism per operator of each configuration (x10 for high parallelism):

* ``linear`` 1,1,1,1,1,1,1,1; ``ascent`` 1..8; ``descent`` 8..1;
* ``symmetry`` 2,4,6,8,8,6,4,2 (the paper's text calls it SW_diamond);
* ``star`` 8,6,4,2,2,4,6,8.

Every ``po1`` task emits a 1 KB message every millisecond (1000 tuples/s per task) and every
operator forwards what it receives (selectivity 1). Streams use ``local_or_shuffle``: [LF]
targets locality-aware stream partitioning (Storm's Local-or-Shuffle, Sec. 4.3) and uses
plain ``shuffle`` only for its non-LSP runs (Sec. 4.4), available as ``grouping="shuffle"``.
Cohesion and coupling (Sec. 4.2) do not depend on the grouping.

Clusters: ``lf-low`` = 8 nodes with 1 slot each (low parallelism), ``lf-high`` = 8 nodes with
10 slots each (high parallelism); worker nodes as in the paper (6 cores, 64 GB). Capacity is
set so that any [LF] workload fits on one node: L/F and even ignore capacity, so it never binds.

Page view count (Sec. 4.5, Fig. 11; the simple variant RW_spvc): source(4) -local_or_shuffle->
view(4) -fields(page)-> count(4) -local_or_shuffle-> sink(4); a click every millisecond per
source task. Pages are clicked 70/20/10 %: the model has no explicit key weights, so the page
key is Zipf over 3 keys with s = 1.79 (69.97/20.23/9.79 %). The other click fields (HTTP status
95/5 %, 2 zip codes, 100 users) only matter to a data generator, not to the topology.
"""

from __future__ import annotations

from typing import Iterator

from ..files import quote
from ..model import Cluster, Node, Operator, Problem, Stream, Topology
from .microbench import Instance

CONFIGS = {
    "linear": (1, 1, 1, 1, 1, 1, 1, 1),
    "ascent": (1, 2, 3, 4, 5, 6, 7, 8),
    "descent": (8, 7, 6, 5, 4, 3, 2, 1),
    "symmetry": (2, 4, 6, 8, 8, 6, 4, 2),
    "star": (8, 6, 4, 2, 2, 4, 6, 8),
}
HIGH_FACTOR = 10
SW_GROUPINGS = ("local_or_shuffle", "shuffle")
MESSAGE_RATE = 1000.0  # tuples/s per source task: one message per millisecond
MESSAGE_BYTES = 1024.0
N_NODES = 8
CLUSTER_PRESETS = {"lf-low": 1, "lf-high": HIGH_FACTOR}  # slots per node
CAPACITY = float(HIGH_FACTOR * max(sum(p) for p in CONFIGS.values()))  # the largest [LF] workload fits one node
PAGE_ZIPF_S = 1.79


def parallelism(config: str, high: bool = False) -> tuple[int, ...]:
    if config not in CONFIGS:
        raise ValueError(f"unknown [LF] configuration {quote(config)} (expected one of {', '.join(CONFIGS)})")
    return tuple(p * (HIGH_FACTOR if high else 1) for p in CONFIGS[config])


def synthetic(config: str, *, high: bool = False, grouping: str = "local_or_shuffle") -> Topology:
    """The SW_config chain of [LF] Table 3 (``high``: x10 parallelism)."""
    if grouping not in SW_GROUPINGS:
        raise ValueError(f"grouping must be one of {', '.join(SW_GROUPINGS)}, got {quote(grouping)}")
    par = parallelism(config, high)
    names = [f"po{i + 1}" for i in range(len(par))]
    roles = ["source"] + ["compute"] * (len(par) - 2) + ["sink"]
    ops = [Operator(n, p, role=r, tuple_bytes=MESSAGE_BYTES, source_rate=MESSAGE_RATE * p if r == "source" else 1.0)
           for n, p, r in zip(names, par, roles)]
    streams = [Stream(a, b, grouping=grouping) for a, b in zip(names, names[1:])]
    return Topology.build(f"sw-{config}{'-high' if high else ''}", ops, streams)


def page_view_count() -> Topology:
    """[LF] Sec. 4.5 simple page view count (docs/workloads.md)."""
    ops = [Operator("source", 4, role="source", source_rate=4 * MESSAGE_RATE), Operator("view", 4),
           Operator("count", 4), Operator("sink", 4, role="sink")]
    streams = [Stream("source", "view", grouping="local_or_shuffle"),
               Stream("view", "count", grouping="fields", key="page", key_distribution="zipf", zipf_s=PAGE_ZIPF_S, num_keys=3),
               Stream("count", "sink", grouping="local_or_shuffle")]
    return Topology.build("page-view-count", ops, streams)


def cluster(preset: str) -> Cluster:
    """``lf-low`` (8 nodes x 1 slot) or ``lf-high`` (8 nodes x 10 slots)."""
    if preset not in CLUSTER_PRESETS:
        raise ValueError(f"unknown cluster preset {quote(preset)} (expected one of {', '.join(CLUSTER_PRESETS)})")
    nodes = [Node(f"node{i:02d}", CAPACITY, slots=CLUSTER_PRESETS[preset], machine_type="xeon-e5-2620v3", cores=6,
                  memory_mb=65536.0) for i in range(N_NODES)]
    return Cluster.build(preset, nodes)


def instances(levels=(False, True)) -> Iterator[Instance]:
    """The ten SW instances: five configurations, low (on lf-low) and high (on lf-high) parallelism."""
    for high in levels:
        preset = "lf-high" if high else "lf-low"
        c = cluster(preset)
        for config in CONFIGS:
            topo = synthetic(config, high=high)
            yield Instance(config, preset, topo.n_tasks, Problem.from_topology(topo, c))

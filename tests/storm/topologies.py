"""Topologies and clusters the Storm tests run."""

import dataclasses

from streamplace.model import Cluster, Node, Operator, Stream, Topology
from streamplace.workloads import microbench
from streamplace.workloads.applications import application


def renamed(cluster: Cluster, prefix: str) -> Cluster:
    """The cluster with node names ``<prefix>00``...: several clusters then share one embedded Storm."""
    return Cluster.build(cluster.name, [dataclasses.replace(n, name=f"{prefix}{i:02d}") for i, n in enumerate(cluster.nodes)])


def copy_of(cluster: Cluster, copy: int) -> Cluster:
    """The cluster with node names ``c<copy>-<name>``: copies of one cluster share one embedded Storm."""
    return Cluster.build(cluster.name, [dataclasses.replace(n, name=f"c{copy}-{n.name}") for n in cluster.nodes])


def union(clusters) -> Cluster:
    """One cluster holding every node of ``clusters`` once (by name)."""
    nodes = {}
    for c in clusters:
        for n in c.nodes:
            nodes.setdefault(n.name, n)
    return Cluster.build("union", list(nodes.values()))


def with_cpu(topo: Topology, seconds: float = 1e-5) -> Topology:
    return Topology.build(topo.name, [dataclasses.replace(op, cpu_per_tuple=seconds) for op in topo.operators], topo.streams)


def micro():
    """A [I]/[T3] micro-benchmark (diamond, 12 tasks) on a small heterogeneous cluster."""
    topo = with_cpu(microbench.microbench("diamond", 12))
    return dataclasses.replace(topo, name="diamond12"), renamed(Cluster.from_capacities({6: 1, 4: 1, 2: 2}, slots=2), "m")


def micro_linear():
    topo = with_cpu(microbench.microbench("linear", 12))
    return dataclasses.replace(topo, name="linear12"), renamed(Cluster.from_capacities({4: 4}, slots=2), "l")


def page_view():
    """[LF]'s page-view count (16 tasks) on its five nodes, two slots each."""
    app = application("page-view")
    return app.topology, renamed(Cluster.build("app", [dataclasses.replace(n, slots=2) for n in app.cluster().nodes]), "a")


def five_groupings(name="groupings", *, rate=400.0, ops=("src", "Fan", "pick", "glob", "all_", "loc")):
    """Every grouping once; component names sort differently from their declaration order."""
    src, fan, pick, glob, all_, loc = ops
    topo = Topology.build(name, [
        Operator(src, 2, role="source", source_rate=rate, tuple_bytes=64, cpu_per_tuple=1e-4),
        Operator(fan, 3, cpu_per_tuple=1e-6),
        Operator(pick, 3),
        Operator(glob, 2),
        Operator(all_, 2),
        Operator(loc, 2, role="sink")],
        [Stream(src, fan, grouping="shuffle"),
         Stream(fan, pick, grouping="fields", key="k", num_keys=2),
         Stream(fan, glob, grouping="global"),
         Stream(src, all_, grouping="all"),
         Stream(all_, loc, grouping="local_or_shuffle")])
    cluster = Cluster.build("four", [Node(f"g{i:02d}", 6, slots=2) for i in range(4)])
    return topo, cluster

"""The topologies and cluster of Fischer & Bernstein ([F], IEEE BigData 2015) Sec. IV-C/D (docs/workloads.md).

Every topology is sized by ``p``, the number of cluster machines: [F] sets the degree of
parallelism of every spout and bolt to the number of machines (Sec. IV-C), so an even
schedule puts about 8 tasks on each machine.

* ``parallel`` (Fig. 3): one spout and ``D = 7`` bolts in a chain, ``p`` instances each, 16-byte
  tuples (one 128-bit hash). Each spout task emits one key and every bolt forwards the key it
  received over a fields-grouped edge, so tuples travel in ``p`` straight lines. The key of spout
  task k hashes to bolt instance ``h(k)`` (a seeded permutation: distinct keys, as Fig. 3 draws
  straight lines); every later bolt has the same parallelism and hashes the same key, so the
  line stays on instance ``h(k)`` of every bolt. The project's groupings are per operator pair
  (a fields stream reaches every downstream task with the key shares), so each line is built
  from single-task operators ``spout-k -> bolt1-h(k) -> ... -> bolt7-h(k)``; their names sort
  like Storm's task ids (all ``bolt1`` instances, then ``bolt2`` ..., then the spouts), which is
  the order the even scheduler deals tasks in.
* ``payload``: ``parallel`` with 3072-byte tuples (an average e-mail of the Enron data set).
* ``reference`` (Fig. 5, Aniello et al.'s topology): ``stages = 7`` components from the spout on
  (spout + 6 bolts) and the final ack bolt, ``p`` tasks each, 12-byte tuples; edges alternate
  fields and shuffle grouping, both of which spread messages evenly over the receivers (the
  fields key is a counter), so consecutive components are complete bipartite.
* ``opengov`` (Fig. 2): ticker spout T and contracts spout C (``p`` tasks together, split
  evenly: "5 input files for the contract and the ticker source" on 10 machines), aggregate A,
  ratio B, filter F and join J with ``p`` tasks each, output O with 1 task. T -fields(ticker)->
  A -fields(ticker)-> B -shuffle-> F -fields(company)-> J <-fields(company)- C; J -global-> O.
  Tuple sizes in Table II's 50-110 byte range; F keeps the ~5 % of ratios that at least double,
  J emits a match for ~10 % of its inputs. Contracts are Zipf-skewed over companies (a few
  firms win many contracts); ticks are uniform over companies. These rates and selectivities
  are our reading: [F] gives the shape, the parallelism and the tuple sizes only.

Storm's acking ([F] Sec. V-B2) is on for parallel, payload and opengov and off for reference
(it ships its own ack bolt, which is part of the chain): :data:`ACKING`. The acker traffic is
not part of these topologies (the model sizes every message of an operator with its
``tuple_bytes``, and acks are small): ``streamplace.reproduce`` adds it analytically with
:data:`ACK_BYTES` per ack message and :data:`ACK_CPU` of acker work per ack.

Cluster (Sec. IV-D): iMacs with a 4-core 2.7 GHz Core i5, one worker slot each, 1 Gbit/s,
rows of at most 8 machines per switch (``rack`` = row). Capacity 12 tasks per machine: [F]
Fig. 4 shows no throughput gain beyond 12 tasks on one machine, and about 8 were run.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..files import quote
from ..model import Cluster, Node, Operator, Problem, Stream, Topology
from ..model.cluster import check_cluster_size
from .microbench import Instance

TOPOLOGIES = ("parallel", "payload", "reference", "opengov")
SIZES = tuple(range(10, 81, 10))
DEPTH = 7
STAGES = 7
TUPLE_BYTES = {"parallel": 16.0, "payload": 3072.0, "reference": 12.0}
ACKING = {"parallel": True, "payload": True, "reference": False, "opengov": True}
ACK_BYTES = 24.0  # an ack: 64-bit tuple id and 64-bit XOR value plus Storm's stream and task ids
ACK_CPU = 2e-6  # acker CPU seconds per ack (one XOR into a hash-map entry)
SPOUT_RATE = 1000.0  # tuples/s per spout task at unit offered load (the model is linear in it)
CAPACITY = 12.0
CORES = 4
MEMORY_MB = 6144.0
ROW = 8  # machines per switch
MACHINE_TYPE = "imac-core-i5-2.7ghz"


def _check_p(p: int) -> None:
    if isinstance(p, bool) or not isinstance(p, int) or p < 2:
        raise ValueError(f"p (machines) must be an integer >= 2, got {quote(p)}")


def parallel(p: int, *, tuple_bytes: float = TUPLE_BYTES["parallel"], depth: int = DEPTH, seed: int = 0,
             name: str = "parallel") -> Topology:
    """[F]'s Parallel topology: ``p`` straight lines of a spout task and ``depth`` bolt tasks."""
    _check_p(p)
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    width = len(str(p - 1))
    line = np.random.default_rng(seed).permutation(p)  # spout task k -> bolt instance line[k]
    bolts = [[f"bolt{j}-{i:0{width}d}" for i in range(p)] for j in range(1, depth + 1)]
    spouts = [f"spout-{k:0{width}d}" for k in range(p)]
    ops = [Operator(b, 1, role="sink" if j == depth else "compute", tuple_bytes=tuple_bytes)
           for j, names in enumerate(bolts, 1) for b in names]
    ops += [Operator(s, 1, role="source", tuple_bytes=tuple_bytes, source_rate=SPOUT_RATE) for s in spouts]
    streams = [Stream(spouts[k], bolts[0][line[k]], grouping="fields", key="key") for k in range(p)]
    streams += [Stream(a[i], b[i], grouping="fields", key="key") for a, b in zip(bolts, bolts[1:]) for i in range(p)]
    return Topology.build(f"{name}-{p}", ops, streams)


def payload(p: int, *, seed: int = 0) -> Topology:
    """[F]'s Payload topology: Parallel with 3 KB tuples."""
    return parallel(p, tuple_bytes=TUPLE_BYTES["payload"], seed=seed, name="payload")


def reference(p: int, *, stages: int = STAGES) -> Topology:
    """Aniello et al.'s reference topology as [F] ran it: spout, ``stages - 1`` bolts, ack bolt."""
    _check_p(p)
    if stages < 1:
        raise ValueError(f"stages must be >= 1, got {stages}")
    size = TUPLE_BYTES["reference"]
    names = ["spout", *(f"bolt{i}" for i in range(1, stages)), "ackbolt"]
    ops = [Operator(names[0], p, role="source", tuple_bytes=size, source_rate=SPOUT_RATE * p)]
    ops += [Operator(n, p, tuple_bytes=size) for n in names[1:-1]] + [Operator(names[-1], p, role="sink", tuple_bytes=size)]
    streams = [Stream(a, b, grouping="fields" if i % 2 == 0 else "shuffle", key="counter" if i % 2 == 0 else None)
               for i, (a, b) in enumerate(zip(names, names[1:]))]
    return Topology.build(f"reference-{p}", ops, streams)


def opengov(p: int) -> Topology:
    """[F]'s OpenGov query (Fig. 2): ticks joined with public contracts."""
    _check_p(p)
    t, c = (p + 1) // 2, p // 2
    ops = [Operator("T", t, role="source", tuple_bytes=60, source_rate=SPOUT_RATE * t),
           Operator("C", c, role="source", tuple_bytes=110, source_rate=SPOUT_RATE * c),
           Operator("A", p, tuple_bytes=70), Operator("B", p, tuple_bytes=50),
           Operator("F", p, selectivity=0.05, tuple_bytes=50), Operator("J", p, selectivity=0.1, tuple_bytes=110),
           Operator("O", 1, role="sink")]
    streams = [Stream("T", "A", grouping="fields", key="ticker"), Stream("A", "B", grouping="fields", key="ticker"),
               Stream("B", "F", grouping="shuffle"), Stream("F", "J", grouping="fields", key="company"),
               Stream("C", "J", grouping="fields", key="company", key_distribution="zipf", zipf_s=1.0, num_keys=2000),
               Stream("J", "O", grouping="global")]
    return Topology.build(f"opengov-{p}", ops, streams)


BUILDERS = {"parallel": parallel, "payload": payload, "reference": reference, "opengov": opengov}


def topology(name: str, p: int) -> Topology:
    """The [F] topology ``name`` for ``p`` machines."""
    if name not in BUILDERS:
        raise ValueError(f"unknown [F] topology {quote(name)} (expected one of {', '.join(TOPOLOGIES)})")
    return BUILDERS[name](p)


def spout_rate(topo: Topology) -> float:
    """Tuples/s all spouts emit at unit offered load ([F]'s throughput counts spout emissions)."""
    return float(sum(op.source_rate for op in topo.operators if topo.is_source(op.name)))


def cluster(n: int) -> Cluster:
    """``n`` iMac workers (Sec. IV-D): 4 cores, one slot, 1 Gbit/s, rows of 8 per switch."""
    _check_p(n)
    check_cluster_size(n, n)
    width = len(str(n - 1))
    nodes = [Node(f"imac{i:0{width}d}", CAPACITY, slots=1, machine_type=MACHINE_TYPE, cores=CORES, memory_mb=MEMORY_MB,
                  rack=f"row{i // ROW}") for i in range(n)]
    return Cluster.build(f"imacs-{n}", nodes)


def instances(names=TOPOLOGIES, sizes=SIZES) -> Iterator[Instance]:
    """Every [F] topology on every cluster size (4 x 8 = 32 by default); ``layout`` = topology name."""
    for name in names:
        for p in sizes:
            topo = topology(name, p)
            yield Instance(name, f"imacs-{p}", topo.n_tasks, Problem.from_topology(topo, cluster(p)))

"""Seeded large synthetic workloads for scale tests (docs/workloads.md; our own generator).

The papers' workloads stop at a few hundred tasks. To measure schedulers at 10^4-10^6 tasks
on 10^2-10^4 nodes we generate topologies that look like a cluster running several streaming
jobs, and heterogeneous clusters sized to hold them.

Topology (:func:`synthetic_topology`): ``jobs`` independent jobs, each an operator chain of
4-10 operators (source first, sink last) with occasional skip streams ``op[i-1] -> op[i+1]``
(fork/join). Operators are declared in chain order, so every task edge goes from a lower to a
higher task id (the task graph is a DAG). Parallelism per operator is drawn log-normally and
the job sizes add up to exactly ``n_tasks``. Every stream has bounded fan-out, so the edge
count stays linear in ``n_tasks`` (no complete bipartite blocks):

* ``local_or_shuffle``: the ``M = max(pa, pb)`` aligned pairs ``(k pa // M, k pb // M)`` plus a
  window of the next ``d - 1`` receivers (a sender talks to its neighbours downstream);
* ``fields``: the aligned pairs through a random permutation of receivers plus ``d - 1``
  random receivers per pair, with Zipf-skewed receiver popularity (hot keys).

Every sender and every receiver of a stream takes part. A source task emits a log-normal
rate around 100 tuples/s; each stream carries the sender's whole output (as Storm does for
every subscriber), split over its receivers equally (local) or by popularity (fields);
``out = selectivity x in``. The task load (node-capacity units, mean about 1) is the
operator's cost factor scaled by the task's input rate relative to its operator's mean
(skewed keys give hot tasks), clipped to [0.2, 4].

Cluster (:func:`synthetic_cluster`): nodes drawn from four machine classes (relative capacity
1/2/4/8, slots 2/4/8/16, probabilities 0.5/0.3/0.15/0.05), capacities scaled so the total
is ``(1 + slack)`` x the total load, and never below the heaviest task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import Cluster, Node, Operator, Problem, Stream, TaskGraph, Topology
from ..model.cluster import check_cluster_size
from ..memory import over_limit, problem_bytes

MAX_TASKS = 20_000_000
MIN_OPS, MAX_OPS = 4, 10
SKIP_PROBABILITY = 0.3
SOURCE_RATE = 100.0
ZIPF_S = 0.8
LOAD_RANGE = (0.2, 4.0)


@dataclass(frozen=True)
class MachineClass:
    name: str
    relative_capacity: float
    slots: int
    cores: float
    probability: float


MACHINE_CLASSES = (
    MachineClass("small", 1.0, 2, 4, 0.50),
    MachineClass("medium", 2.0, 4, 8, 0.30),
    MachineClass("large", 4.0, 8, 16, 0.15),
    MachineClass("xlarge", 8.0, 16, 32, 0.05),
)


def _split(total: int, weights: np.ndarray, minimum: int) -> np.ndarray:
    """Integers >= ``minimum`` summing to ``total``, proportional to ``weights`` (largest remainder)."""
    spare = total - minimum * weights.size
    share = spare * weights / weights.sum()
    parts = np.floor(share).astype(np.int64)
    rest = spare - int(parts.sum())
    parts[np.argsort(-(share - parts), kind="stable")[:rest]] += 1
    return parts + minimum


def default_jobs(n_tasks: int) -> int:
    """Number of jobs for ``n_tasks`` tasks: 2 at 10^4, 6 at 10^5, 20 at 10^6."""
    return max(1, min(n_tasks // MIN_OPS, round(np.sqrt(n_tasks) / 50)))


def _stream_edges(rng: np.random.Generator, grouping: str, pa: int, pb: int, fanout: int):
    """Sender and receiver indices (within the two operators) and each pair's share weight."""
    m = max(pa, pb)
    k = np.arange(m)
    senders = k * pa // m
    aligned = k * pb // m
    d = min(fanout, pb)
    if grouping == "local_or_shuffle":
        receivers = (aligned[:, None] + np.arange(d)) % pb
        popularity = np.ones(pb)
    else:
        first = rng.permutation(pb)[aligned][:, None]
        receivers = np.concatenate([first, rng.integers(0, pb, size=(m, d - 1))], axis=1)
        popularity = 1.0 / np.power(rng.permutation(pb) + 1.0, ZIPF_S)
    senders = np.repeat(senders, d)
    receivers = receivers.ravel()
    return senders, receivers, popularity[receivers]


def _job_structure(rng: np.random.Generator, size: int):
    """Parallelism per operator and streams as (upstream, downstream) operator positions."""
    n_ops = min(int(rng.integers(MIN_OPS, MAX_OPS + 1)), size)
    par = _split(size, rng.lognormal(0.0, 0.5, n_ops), 1)
    skips = [(i - 1, i + 1) for i in range(1, n_ops - 1) if rng.random() < SKIP_PROBABILITY]
    return par, sorted([(i, i + 1) for i in range(n_ops - 1)] + skips)


def synthetic_topology(n_tasks: int, *, seed: int = 0, jobs: int | None = None,
                       fanout: int = 3) -> tuple[Topology, TaskGraph]:
    """A topology with exactly ``n_tasks`` tasks and its task graph (tuples/s)."""
    if not MIN_OPS <= n_tasks <= MAX_TASKS:
        raise ValueError(f"n_tasks must be between {MIN_OPS} and {MAX_TASKS:,}, got {n_tasks}")
    if fanout < 1:
        raise ValueError(f"fanout must be >= 1, got {fanout}")
    # measured: 3.5-3.6 edges per task at fan-out 3 (benchmarks/scale.py), so fan-out + 1 bounds it
    too_big = over_limit(problem_bytes(n_tasks, (fanout + 1) * n_tasks), f"{n_tasks:,} tasks with fan-out {fanout}")
    if too_big:
        raise ValueError(too_big)
    jobs = default_jobs(n_tasks) if jobs is None else jobs
    if not 1 <= jobs <= n_tasks // MIN_OPS:
        raise ValueError(f"jobs must be between 1 and n_tasks / {MIN_OPS} = {n_tasks // MIN_OPS}, got {jobs}")
    rng = np.random.default_rng(seed)
    names, parallelism, pairs, groupings = [], [], [], []
    for j, size in enumerate(_split(n_tasks, rng.lognormal(0.0, 0.5, jobs), MIN_OPS).tolist()):
        par, job_pairs = _job_structure(rng, size)
        base = len(names)
        names += [f"j{j:03d}.op{i}" for i in range(par.size)]
        parallelism += par.tolist()
        pairs += [(base + a, base + b) for a, b in job_pairs]
        groupings += [str(g) for g in rng.choice(["local_or_shuffle", "fields"], size=len(job_pairs))]
    n_ops = len(names)
    offsets = np.concatenate([[0], np.cumsum(parallelism)]).astype(np.int64)
    has_up = np.zeros(n_ops, bool)
    has_down = np.zeros(n_ops, bool)
    for a, b in pairs:
        has_down[a] = has_up[b] = True
    cost = rng.lognormal(0.0, 0.3, n_ops)
    selectivity = np.where(has_up & has_down, rng.uniform(0.5, 1.5, n_ops), 1.0)
    op_of = np.repeat(np.arange(n_ops), parallelism)
    in_rate = np.where(has_up[op_of], 0.0, SOURCE_RATE * rng.lognormal(0.0, 0.3, n_tasks))
    src_parts, dst_parts, rate_parts = [], [], []
    for (a, b), grouping in zip(pairs, groupings):  # sorted by upstream operator: its in_rate is final
        lo, hi = int(offsets[a]), int(offsets[a + 1])
        senders, receivers, share = _stream_edges(rng, grouping, hi - lo, parallelism[b], fanout)
        rate = selectivity[a] * in_rate[lo + senders] * share / np.bincount(senders, weights=share)[senders]
        src_parts.append(senders + lo)
        dst_parts.append(receivers + offsets[b])
        rate_parts.append(rate)
        in_rate[offsets[b]:offsets[b + 1]] += np.bincount(receivers, weights=rate, minlength=parallelism[b])
    op_mean = np.bincount(op_of, weights=in_rate) / np.asarray(parallelism)
    relative = np.divide(in_rate, op_mean[op_of], out=np.ones(n_tasks), where=op_mean[op_of] > 0)
    loads = np.round(np.clip(cost[op_of] * (0.5 + 0.5 * relative), *LOAD_RANGE), 2)
    op_load = np.bincount(op_of, weights=loads) / np.asarray(parallelism)
    roles = np.where(~has_up, "source", np.where(~has_down, "sink", "compute"))
    operators = [Operator(names[i], parallelism[i], role=str(roles[i]), selectivity=float(selectivity[i]),
                          load=float(op_load[i])) for i in range(n_ops)]
    streams = [Stream(names[a], names[b], grouping=g, key="key" if g == "fields" else None)
               for (a, b), g in zip(pairs, groupings)]
    topo = Topology.build(f"synthetic-{n_tasks}-s{seed}", operators, streams)
    graph = TaskGraph.from_edges(n_tasks, np.concatenate(src_parts), np.concatenate(dst_parts),
                                 np.concatenate(rate_parts), loads)
    graph.meta["in_rate"] = in_rate
    return topo, graph


def synthetic_cluster(n_nodes: int, total_load: float, *, seed: int = 0, slack: float = 0.2,
                      min_capacity: float = 0.0) -> Cluster:
    """``n_nodes`` heterogeneous nodes whose capacities add up to ``(1 + slack) x total_load``.

    ``min_capacity``: the largest node is at least this big (pass the heaviest task load).
    """
    if n_nodes < 1:
        raise ValueError(f"n_nodes must be >= 1, got {n_nodes}")
    if slack < 0 or total_load < 0:
        raise ValueError(f"slack and total_load must be >= 0, got {slack} and {total_load}")
    check_cluster_size(n_nodes, n_nodes * max(c.slots for c in MACHINE_CLASSES))
    rng = np.random.default_rng(seed)
    probs = np.array([c.probability for c in MACHINE_CLASSES])
    kind = np.sort(rng.choice(len(MACHINE_CLASSES), size=n_nodes, p=probs))[::-1]
    relative = np.array([c.relative_capacity for c in MACHINE_CLASSES])[kind]
    unit = max((1.0 + slack) * total_load / relative.sum(), min_capacity / relative.max())
    capacity = np.ceil(relative * unit * 100.0) / 100.0
    nodes = [Node(name=f"node{i:05d}", capacity=float(capacity[i]), slots=MACHINE_CLASSES[c].slots,
                  machine_type=MACHINE_CLASSES[c].name, cores=MACHINE_CLASSES[c].cores, rack=f"rack{i // 40:03d}")
             for i, c in enumerate(kind.tolist())]
    return Cluster.build(f"synthetic-{n_nodes}-s{seed}", nodes)


def synthetic_problem(n_tasks: int, n_nodes: int, *, seed: int = 0, slack: float = 0.2, fanout: int = 3) -> Problem:
    """A synthetic topology of ``n_tasks`` tasks on a fitting cluster of ``n_nodes`` nodes."""
    topo, graph = synthetic_topology(n_tasks, seed=seed, fanout=fanout)
    cluster = synthetic_cluster(n_nodes, float(graph.loads.sum()), seed=seed, slack=slack,
                                min_capacity=float(graph.loads.max()))
    return Problem.from_topology(topo, cluster, graph=graph)

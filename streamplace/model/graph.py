"""The task communication graph on NumPy/SciPy arrays.

docs/definitions.md. ``rates`` is the directed rate matrix (CSR, ``rates[u, v]`` = tuples/s
or bytes/s from task u to task v); ``weights`` is its undirected version
``w(u, v) = rate(u->v) + rate(v->u)``; ``loads`` holds the vertex weights in the unit of node
capacity. Everything is built with vectorised array code so 10^6 tasks and 10^7 edges fit.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..files import quote
from ..memory import over_limit, problem_bytes
from .topology import Stream, Topology, TopologyError

MAX_EDGES = 50_000_000


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """Stable 64-bit mix (SplitMix64 finaliser); independent of Python's hash seed."""
    z = (x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15))
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def key_shares(stream: Stream, parallelism: int) -> np.ndarray:
    """Fraction of a fields-grouped stream each downstream task receives.

    ``uniform`` gives exactly ``1/p`` each (the analytic idealisation of many keys); ``zipf``
    ranks ``num_keys`` integer keys with weight ``1/rank^s`` and routes key k to task
    ``splitmix64(k) mod p``, the stable hash also used when replaying data. A stream's measured
    ``shares`` (calibration) replace both.
    """
    if stream.grouping == "fields" and stream.shares is not None:
        return np.asarray(stream.shares, dtype=float)
    if stream.grouping != "fields" or stream.key_distribution == "uniform":
        return np.full(parallelism, 1.0 / parallelism)
    keys = np.arange(stream.num_keys)
    probs = 1.0 / np.power(keys + 1.0, stream.zipf_s)
    probs /= probs.sum()
    target = (_splitmix64(keys) % np.uint64(parallelism)).astype(np.int64)
    return np.bincount(target, weights=probs, minlength=parallelism)


@dataclass(frozen=True)
class TaskGraph:
    """Weighted task graph. Build with :meth:`from_edges` or :func:`build_task_graph`."""

    loads: np.ndarray
    rates: sp.csr_matrix
    unit: str = "tuples/s"
    meta: dict = field(default_factory=dict, compare=False)
    # CPU cores each task was measured to use (a profile's ``cpu_cores``), or None: the topology's
    # ``cpu_demand`` is the tasks' CPU need (model.resources)
    cpu: np.ndarray | None = field(default=None, compare=False)

    @classmethod
    def from_edges(cls, n: int, src, dst, rate, loads, *, unit: str = "tuples/s") -> "TaskGraph":
        """Directed edge lists -> graph; parallel edges are summed, self-loops dropped."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        rate = np.asarray(rate, dtype=float)
        keep = src != dst
        rates = sp.csr_matrix((rate[keep], (src[keep], dst[keep])), shape=(n, n))
        rates.sum_duplicates()
        rates.eliminate_zeros()
        return cls(loads=np.asarray(loads, dtype=float), rates=rates, unit=unit)

    @property
    def n(self) -> int:
        return int(self.loads.shape[0])

    @cached_property
    def weights(self) -> sp.csr_matrix:
        """Undirected weights ``rates + rates.T`` (symmetric CSR)."""
        w = (self.rates + self.rates.T).tocsr()
        w.sum_duplicates()
        return w

    @cached_property
    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each undirected pair once: ``(u, v, w)`` with ``u < v``."""
        coo = sp.triu(self.weights, k=1).tocoo()
        return coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data.astype(float)

    @cached_property
    def directed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Directed edges ``(u, v, rate)``."""
        coo = self.rates.tocoo()
        return coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data.astype(float)

    @property
    def total_weight(self) -> float:
        return float(self.edges[2].sum())

    def dense_weights(self) -> np.ndarray:
        return self.weights.toarray()


def stream_block(topo: Topology, stream: Stream) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Communicating task pairs of one stream and the share each receiver gets (placement-free)."""
    a = topo.tasks_of(stream.src)
    b = topo.tasks_of(stream.dst)
    if stream.grouping == "global":
        src = np.arange(a.start, a.stop)
        return src, np.full(len(a), b.start), np.ones(len(a))
    shares = np.ones(len(b)) if stream.grouping == "all" else key_shares(stream, len(b))
    src = np.repeat(np.arange(a.start, a.stop), len(b))
    dst = np.tile(np.arange(b.start, b.stop), len(a))
    return src, dst, np.tile(shares, len(a))


def edge_count(topo: Topology) -> int:
    """Directed task edges the analytic graph will have (checked before allocating)."""
    total = 0
    for s in topo.streams:
        pa = topo.operators[topo.index[s.src]].parallelism
        pb = topo.operators[topo.index[s.dst]].parallelism
        total += pa if s.grouping == "global" else pa * pb
    return total


def stream_flows(topo: Topology, block=stream_block) -> tuple[np.ndarray, list]:
    """Flow the source rates through the DAG: ``(in_rate per task, [(stream, src, dst, rate)])``.

    Sources read ``source_rate`` records split evenly over their tasks; each stream carries
    ``selectivity x in_rate(sender) x share`` per pair, or exactly ``pair_rate`` on every pair
    ``block`` returns. ``block(topo, stream) -> (src, dst, share)`` decides the routing
    (:func:`stream_block` by default; the performance model passes a placement-aware one).
    """
    n_edges = edge_count(topo)
    if n_edges > MAX_EDGES:
        raise TopologyError("streams", f"the topology expands to {n_edges:,} task edges (limit {MAX_EDGES:,})")
    too_big = over_limit(problem_bytes(topo.n_tasks, n_edges), f"its {topo.n_tasks:,} tasks and {n_edges:,} task edges")
    if too_big:
        raise TopologyError("streams", too_big)
    in_rate = np.zeros(topo.n_tasks)
    for op in topo.operators:
        if topo.is_source(op.name):
            r = topo.tasks_of(op.name)
            in_rate[r.start:r.stop] = op.source_rate / op.parallelism
    flows = []
    with np.errstate(over="ignore", invalid="ignore"):   # an overflow is found once, below
        for name in topo.topological_order:
            op = topo.operators[topo.index[name]]
            for s in topo.downstream(name):
                src, dst, share = block(topo, s)
                if s.pair_rate is not None:
                    rate = np.full(src.shape[0], float(s.pair_rate))
                else:
                    rate = op.selectivity * in_rate[src] * share
                np.add.at(in_rate, dst, rate)
                flows.append((s, src, dst, rate))
    if not np.isfinite(in_rate).all():   # every rate reaches its receivers' in_rate: one check covers all
        _refuse_first_overflow(topo, [(s, r) for s, _, _, r in flows])
    with np.errstate(over="ignore"):   # the bytes each stream carries, which the model's NICs and serialisation add up
        wire = [(s, r * topo.operators[topo.index[s.src]].tuple_bytes) for s, _, _, r in flows]
    if not all(np.isfinite(r).all() for _, r in wire):
        _refuse_first_overflow(topo, wire, "bytes")
    return in_rate, flows


#: :func:`unit_flows` by ``id(topology)``: (a weak reference to it, its flows); an entry goes with its topology
_UNIT_FLOWS: dict[int, tuple[weakref.ref, tuple[np.ndarray, list]]] = {}


def unit_flows(topo: Topology) -> tuple[np.ndarray, list]:
    """:func:`stream_flows` with the placement-free routing, computed once per topology (a
    ``Topology`` is frozen): a search or a fit predicts thousands of placements of one job, and
    flowing the rates through it was a third of each prediction. The arrays are read-only."""
    hit = _UNIT_FLOWS.get(id(topo))
    if hit is not None and hit[0]() is topo:
        return hit[1]
    in_rate, flows = stream_flows(topo)
    for array in (in_rate, *(a for _, *arrays in flows for a in arrays)):
        array.flags.writeable = False
    _UNIT_FLOWS[id(topo)] = (weakref.ref(topo), (in_rate, flows))
    weakref.finalize(topo, _UNIT_FLOWS.pop, id(topo), None)
    return in_rate, flows


def _refuse_first_overflow(topo: Topology, rates, what: str = "tuples") -> None:
    """Raise :class:`TopologyError` naming the first stream of ``(stream, rates)`` whose rate is not
    a finite number: source rates and selectivities (each at most 10^12) multiplied along a long
    job can pass what a double holds, and every metric of the job would be NaN or Infinity."""
    stream = next(s for s, r in rates if not np.isfinite(r).all())
    raise TopologyError(f"streams[{topo.streams.index(stream)}]",
                        f"the {what} rate of {stream.src} -> {stream.dst} exceeds the largest number a double holds "
                        "(source rates x selectivities multiplied along the job)")


def build_task_graph(topo: Topology, *, weight: str = "tuples") -> TaskGraph:
    """Analytic task graph: source rate x selectivity x grouping shares (docs/definitions.md, [N] Eq. 6).

    Streams with ``pair_rate`` carry exactly that rate on every communicating pair (the
    papers' micro-benchmarks). ``local_or_shuffle`` is treated as shuffle here because it
    depends on a placement; the performance model re-routes it. ``weight="bytes"`` multiplies
    each stream's rate by the sender's ``tuple_bytes``.
    """
    if weight not in ("tuples", "bytes"):
        raise ValueError(f"weight must be 'tuples' or 'bytes', got {quote(weight)}")
    in_rate, flows = stream_flows(topo)
    if flows:
        unit = {op.name: op.tuple_bytes if weight == "bytes" else 1.0 for op in topo.operators}
        src = np.concatenate([f[1] for f in flows])
        dst = np.concatenate([f[2] for f in flows])
        with np.errstate(over="ignore"):
            weighted = [r * unit[s.src] for s, _, _, r in flows]
        rate = np.concatenate(weighted)
        if not np.isfinite(rate).all():
            _refuse_first_overflow(topo, [(s, r) for (s, *_), r in zip(flows, weighted)], weight)
    else:
        src = dst = np.zeros(0, dtype=np.int64)
        rate = np.zeros(0)
    graph = TaskGraph.from_edges(topo.n_tasks, src, dst, rate, topo.task_loads, unit=f"{weight}/s")
    graph.meta["in_rate"] = in_rate
    return graph

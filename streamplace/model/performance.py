"""Analytic throughput and latency of a placement (docs/definitions.md, ``model/performance.py``).

The model is linear in the offered rate. At *unit offered load* (scale 1) every source task
reads ``source_rate / parallelism`` records/s (sending ``selectivity`` tuples per record) and
every stream with ``pair_rate`` carries that rate per communicating pair; at scale ``s`` all
rates are multiplied by ``s``.

1. **Rates.** Edge u->v carries ``selectivity(u) x in_rate(u) x share(u->v)`` (docs/definitions.md,
   [N] Eq. 6), computed per stream by :func:`streamplace.model.graph.stream_flows`.
   ``local_or_shuffle`` is routed by the placement: uniformly over the downstream tasks in the
   sender's worker if there are any, else shuffle over all of them (Storm's
   ``LocalOrShuffleGrouping``; [LF] Sec. 4 relies on it).
2. **Demand per node** at unit load. CPU (reference core-seconds per second): each task's
   ``(cpu_per_tuple + task_cpu_per_tuple) x in_rate`` (the linear part of [N] Eq. 5, ``TCU = e x IR + MET``; the
   constant MET is left out so the model stays linear) plus, for every tuple crossing a worker
   boundary, ``ser_cpu_per_tuple + ser_cpu_per_byte x tuple_bytes`` at the sender (Kryo
   serialisation) and again at the receiver (deserialisation). NIC: bytes/s of inter-node
   tuples (``tuple_bytes + header_bytes`` each), inbound and outbound counted apart because
   the papers' 1 Gbit/s Ethernet links are full duplex: ``nic_demand = max(in, out)``.
3. **Capacity**: ``(cores - min(fixed_cpu_cap x cores, executor_cpu x tasks + worker_cpu x
   workers + connection_cpu x connections + node_cpu)) x speed(machine_type)`` (the fixed CPU of
   the node's executors, of its worker processes, of the connections between workers that end
   on it (:func:`worker_connections`) and of the node itself, where it hosts workers, but never
   more than a share of the node: on a node out of CPU the background threads get less than they
   take on an idle one) and ``bandwidth``. The max sustainable scale is
   ``min`` over nodes and both resources of capacity / demand; the argmin is the bottleneck
   (``"node03:cpu"``; ties go to the lowest node index, CPU before NIC). Throughput is reported
   as the papers do ([I] Sec. 5, [N] Sec. 3: tuples executed per second summed over all tasks)
   at that scale: ``max_scale x sum(in_rate)``, where a source task's in_rate is what it emits.
4. **Latency** at an offered scale (default ``latency_load`` = 70 % of the max scale). Hop u->v
   costs a base latency by locality class (same worker / other worker / other node), for
   inter-node hops the transfer ``wire_bytes / bandwidth(v)`` as an M/M/1 sojourn at v's inbound
   NIC utilisation, and v's CPU work for the tuple (its ``cpu_per_tuple``, plus
   deserialisation when the hop crosses a worker) as an M/M/1 sojourn at v's CPU utilisation:
   ``service / (1 - rho)``. A task's latency is the rate-weighted mean over its inbound edges of
   (sender's latency + hop), sources start at 0 (DP over the DAG in topological order); the
   end-to-end figure is the inflow-weighted mean over sink tasks.

Deliberate simplifications: Storm's acking traffic ([F] Sec. V-B2 measures it doubling the
messages) and the sender's outbound NIC queue are not modelled; the rates are re-derived from
the topology (routing needs the grouping), so a measured ``problem.graph`` is not consulted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from functools import partial
from types import MappingProxyType
from typing import Mapping, Protocol

import numpy as np

from ..files import quote
from .cluster import Cluster
from .graph import stream_block, stream_flows, unit_flows
from .placement import Placement
from .problem import Problem
from .specs import MAX_NUMBER
from .topology import Topology


@dataclass(frozen=True)
class CostModel:
    """Every constant of the performance model, with the reason for its default.

    Times in seconds unless the name says ms; CPU figures are for a reference core (speed 1).
    """

    #: CPU s per input tuple for operators without ``cpu_per_tuple``: 10 us, i.e. ~10^5 tuples/s
    #: per executor thread, the order of a light Storm bolt (parse, filter, count) on the
    #: papers' 2.4-2.7 GHz testbed cores ([I] Sec. 5, [LF] Sec. 4).
    default_cpu_per_tuple: float = 1e-5
    #: CPU s per tuple per side for a tuple crossing a worker (Kryo, Storm's transfer queue and
    #: Netty per-message handling): 1.36 us, fitted by :mod:`streamplace.fit` (node-CPU fit) to the
    #: campaign benchmarks/results/2026-11-26-sleep-10ms (docs/performance-model.md, "Constants";
    #: the values of earlier fits: that campaign's README). The analytic guess was 2 us.
    ser_cpu_per_tuple: float = 1.36e-06
    #: CPU s per payload byte per side: 5 ns/B, i.e. ~200 MB/s per core, Kryo-class throughput.
    ser_cpu_per_byte: float = 5e-9
    #: wire bytes added to every inter-node tuple: Storm's Netty ``TaskMessage`` frame (2-byte
    #: task id + 4-byte length); TCP/IP headers are amortised by Netty batching and ignored.
    header_bytes: float = 6.0
    #: base hop latency inside one worker: 0.05 ms, an executor queue hand-off (LMAX Disruptor).
    hop_ms_same_worker: float = 0.05
    #: base hop latency between workers of one node: 0.5 ms, loopback Netty with batching.
    hop_ms_other_worker: float = 0.5
    #: base hop latency between nodes (transfer time added on top): 1 ms, the above plus a
    #: switched 1 Gbit/s LAN hop ([I], [N] and [F] testbeds).
    hop_ms_other_node: float = 1.0
    #: offered load for the latency figure, as a fraction of the max sustainable scale: 70 %,
    #: loaded but clear of the M/M/1 knee (latency doubles the service time at 50 %, x10 at 90 %).
    latency_load: float = 0.7
    #: per-core speed of each machine type relative to the reference machine (unlisted = 1):
    #: heterogeneous CPUs as in [N] Table 2.
    machine_speed: Mapping[str, float] = field(default_factory=dict)
    #: CPU s per tuple that every task pays on top of its operator's own work: the engine's
    #: per-tuple cost (executor queue hand-off, emit and routing, task hooks): 1.03 us, fitted with
    #: ``ser_cpu_per_tuple``.
    task_cpu_per_tuple: float = 1.03e-06
    #: cores each worker process uses whatever its load (heartbeats, metrics ticks, JVM threads);
    #: subtracted from its node's CPU capacity: 0.00377 cores, fitted with ``ser_cpu_per_tuple``.
    worker_cpu: float = 0.00377
    #: cores each node that hosts at least one worker uses whatever its load (its Storm supervisor,
    #: the worker launches' log pumps); subtracted from its CPU capacity: 0.0278 cores, fitted with
    #: ``ser_cpu_per_tuple``.
    node_cpu: float = 0.0278
    #: cores each executor (one per task here) uses whatever its load (an idle executor wakes every
    #: 10 ms on the testbed, every millisecond with Storm's default sleeps); subtracted from its
    #: node's CPU capacity: 0.00153 cores, fitted with ``ser_cpu_per_tuple``.
    executor_cpu: float = 0.00153
    #: cores each connection between two workers takes at each of its ends; subtracted from the
    #: capacity of both ends' nodes. Storm's worker opens a Netty connection to every other worker
    #: that hosts a task of a component its own components send to, whatever the grouping
    #: (``WorkerState.refreshConnections``). 0.000932 cores, fitted with ``ser_cpu_per_tuple``;
    #: kept by leave-one-experiment-out on the training runs (6.9 % median error, mean tau +0.771,
    #: against 7.6 % and +0.769 without it). 0 in the cost model files fitted before it existed.
    connection_cpu: float = 0.000932
    #: the largest fraction of a node's cores its fixed costs (``worker_cpu``, ``node_cpu``,
    #: ``executor_cpu`` and ``connection_cpu``) take (1: charged in full however small the node): on
    #: a node out of CPU the background threads get less than on an idle one. 0.391, fitted after
    #: the node-CPU fit to the training throughput of the same runs (``streamplace.fit.solve.fit_cap``).
    fixed_cpu_cap: float = 0.391

    def __post_init__(self):
        for name in ("default_cpu_per_tuple", "ser_cpu_per_tuple", "ser_cpu_per_byte", "header_bytes",
                     "hop_ms_same_worker", "hop_ms_other_worker", "hop_ms_other_node", "task_cpu_per_tuple", "worker_cpu", "node_cpu",
                     "executor_cpu", "connection_cpu"):
            value = getattr(self, name)
            if not np.isfinite(value) or not 0 <= value <= MAX_NUMBER:   # the specs' bound: no prediction overflows
                raise ValueError(f"CostModel.{name} must be a number 0..{MAX_NUMBER:g}, got {value}")
        if not 0 < self.fixed_cpu_cap <= 1:
            raise ValueError(f"CostModel.fixed_cpu_cap must be in (0, 1], got {self.fixed_cpu_cap}")
        if not 0 < self.latency_load < 1:
            raise ValueError(f"CostModel.latency_load must be in (0, 1), got {self.latency_load}")
        for machine_type, speed in self.machine_speed.items():
            if not np.isfinite(speed) or not 0 < speed <= MAX_NUMBER:
                raise ValueError(f"CostModel.machine_speed[{quote(machine_type)}] must be a number > 0 and at most "
                                 f"{MAX_NUMBER:g}, got {speed}")
        object.__setattr__(self, "machine_speed", MappingProxyType(dict(self.machine_speed)))

    def summary(self, problem: Problem, placement: Placement) -> dict:
        """``throughput``, ``bottleneck`` and ``latency_ms`` of ``placement`` (:class:`Predictor`)."""
        return predict(problem, placement, self).summary()

    def performance(self, problem: Problem, placement: Placement) -> "Performance":
        """:func:`predict` under these constants, without the latency (:class:`Predictor`: what a
        search reads)."""
        return predict(problem, placement, self, latency=False)

    def covers(self, problem: Problem) -> bool:
        """Every job: the constants are not tied to one (:class:`Predictor`)."""
        return True

    def speeds(self, cluster: Cluster) -> np.ndarray:
        """Per-node core speed."""
        return np.array([self.machine_speed.get(n.machine_type, 1.0) for n in cluster.nodes])

    def to_dict(self) -> dict:
        return {f.name: (dict(getattr(self, f.name)) if f.name == "machine_speed" else getattr(self, f.name))
                for f in fields(self)}


def _number(value, path, field_path: str) -> float:
    """A number, also written as YAML 1.1 reads ``1e-5`` (a string)."""
    from ..model.specs import SpecError
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(path, field_path, f"must be a number, got {quote(value)}")
    return float(value)


def load_cost_model(path) -> CostModel:
    """A cost model file (``--cost-model FILE``): YAML or JSON with a ``cost_model`` mapping of
    :class:`CostModel` fields (omitted ones keep their defaults) and optional ``provenance``.
    Unknown or invalid fields are a :class:`~streamplace.model.specs.SpecError` naming them."""
    from ..model.specs import SpecError, read_document
    doc = read_document(path)
    values = doc.get("cost_model") if isinstance(doc, dict) else None
    if not isinstance(values, dict):
        raise SpecError(path, "cost_model", "missing: expected a mapping of cost model constants")
    known = {f.name for f in fields(CostModel)}
    numbers = {}
    for key, value in values.items():
        if key not in known:
            raise SpecError(path, f"cost_model.{key}", f"unknown constant (known: {', '.join(sorted(known))})")
        if key == "machine_speed":
            if not isinstance(value, dict):
                raise SpecError(path, "cost_model.machine_speed", f"must be a mapping of machine type to speed, got {quote(value)}")
            numbers[key] = {str(t): _number(v, path, f"cost_model.machine_speed.{t}") for t, v in value.items()}
        else:
            numbers[key] = _number(value, path, f"cost_model.{key}")
    try:
        return CostModel(**numbers)
    except (TypeError, ValueError) as exc:
        raise SpecError(path, "cost_model", str(exc)) from None


class Predictor(Protocol):
    """What the metrics read a placement's performance from: the bundled :class:`CostModel`, or
    a model calibrated on the job's own run (:class:`~streamplace.model.calibration.CalibratedModel`)."""

    def summary(self, problem: Problem, placement: Placement) -> dict:
        """``throughput`` (tuples/s executed by every task), ``bottleneck``, ``latency_ms``."""

    def covers(self, problem: Problem) -> bool:
        """Whether it predicts ``problem`` (a calibrated model predicts only its own job)."""

    def performance(self, problem: Problem, placement: Placement) -> "Performance":
        """The full prediction (per-node demand and capacity, what a search reads)."""


@dataclass(frozen=True, eq=False)
class Performance:
    """Prediction for one placement. Per-node arrays are at unit offered load."""

    throughput: float        # tuples executed per second, all tasks, at max_scale
    max_scale: float         # largest sustainable multiple of the unit offered load
    bottleneck: str | None   # "node:cpu" / "node:nic" limiting max_scale (None: no demand)
    latency_ms: float        # end-to-end mean latency at latency_scale
    latency_scale: float     # offered scale the latency refers to
    in_rate: np.ndarray      # per task, tuples/s
    cpu_demand: np.ndarray   # per node, reference core-seconds per second
    cpu_capacity: np.ndarray  # per node, cores x speed
    nic_in: np.ndarray       # per node, inter-node bytes/s received
    nic_out: np.ndarray      # per node, inter-node bytes/s sent
    nic_capacity: np.ndarray  # per node, bandwidth in bytes/s

    @property
    def nic_demand(self) -> np.ndarray:
        """Busier direction of each (full-duplex) NIC, bytes/s."""
        return np.maximum(self.nic_in, self.nic_out)

    @property
    def cpu_utilisation(self) -> np.ndarray:
        """CPU utilisation per node at the max sustainable scale (the CPU bottleneck is at 1)."""
        return _ratio(self.cpu_demand, self.cpu_capacity, self.max_scale)

    @property
    def nic_utilisation(self) -> np.ndarray:
        """NIC utilisation per node at the max sustainable scale."""
        return _ratio(self.nic_demand, self.nic_capacity, self.max_scale)

    def summary(self) -> dict:
        """``throughput``, ``bottleneck``, ``latency_ms`` (JSON-safe: None when unbounded)."""
        return {"throughput": _finite(self.throughput), "bottleneck": self.bottleneck,
                "latency_ms": _finite(self.latency_ms)}


@dataclass(frozen=True)
class Hops:
    """The directed edges of one stream with positive rate, and their locality."""

    src: np.ndarray
    dst: np.ndarray
    rate: np.ndarray          # tuples/s at unit offered load
    same_worker: np.ndarray
    same_node: np.ndarray
    ser_cpu: float            # reference CPU s per tuple per side when crossing a worker
    wire_bytes: float         # bytes per tuple on the network


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _ratio(demand: np.ndarray, capacity: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``scale x demand / capacity``: 0 without demand, inf with demand but no capacity.

    An infinite ``scale`` only occurs when every demand is 0 (see :func:`sustainable_scale`).
    """
    load = np.where(demand > 0, demand * (scale if np.isfinite(scale) else 0.0), 0.0)
    out = np.where(load > 0, np.inf, 0.0)
    np.divide(load, capacity, out=out, where=capacity > 0)
    return out


def _local_or_shuffle_block(topo: Topology, stream, *, slot: np.ndarray):
    """:func:`stream_block` with local_or_shuffle routed to the sender's worker when possible."""
    src, dst, share = stream_block(topo, stream)
    if stream.grouping != "local_or_shuffle":
        return src, dst, share
    senders = topo.tasks_of(stream.src)
    local = slot[src] == slot[dst]
    n_local = np.bincount(src - senders.start, weights=local, minlength=len(senders))[src - senders.start]
    share = np.where(n_local > 0, local / np.maximum(n_local, 1), share)
    keep = share > 0
    return src[keep], dst[keep], share[keep]


def routed_flows(topology: Topology, slot: np.ndarray) -> tuple[np.ndarray, list]:
    """``stream_flows`` with placement-aware local_or_shuffle; ``slot`` = a worker id per task.
    Without a local_or_shuffle stream the flows do not depend on the placement (:func:`unit_flows`)."""
    if all(s.grouping != "local_or_shuffle" for s in topology.streams):
        return unit_flows(topology)
    return stream_flows(topology, partial(_local_or_shuffle_block, slot=np.asarray(slot)))


def task_cpu(topology: Topology, cluster: Cluster, node: np.ndarray, model: CostModel) -> np.ndarray:
    """Reference CPU seconds per input tuple of every task on its node ``node[t]``: its operator's
    :func:`cpu_per_tuple` there plus the engine's own ``task_cpu_per_tuple``."""
    return cpu_per_tuple(topology, cluster, model)[topology.operator_of_task, node] + model.task_cpu_per_tuple


def cpu_per_tuple(topology: Topology, cluster: Cluster, model: CostModel) -> np.ndarray:
    """Reference CPU seconds per input tuple, shape ``(operators, nodes)``.

    A number is already in reference seconds; a table gives seconds measured on each machine
    type, converted with ``x speed``; no value means ``model.default_cpu_per_tuple``.
    """
    types = [n.machine_type for n in cluster.nodes]
    speeds = model.speeds(cluster)
    table = np.empty((len(topology.operators), cluster.n_nodes))
    for i, op in enumerate(topology.operators):
        c = op.cpu_per_tuple
        if c is None:
            table[i] = model.default_cpu_per_tuple
        elif isinstance(c, Mapping):
            missing = sorted(set(types) - set(c))
            if missing:
                raise ValueError(f"operator {quote(op.name)}: cpu_per_tuple has no entry for machine type {quote(missing[0])}")
            table[i] = np.array([c[t] for t in types], dtype=float) * speeds
        else:
            table[i] = c
    return table


def worker_connections(topology: Topology, placement: Placement, cluster: Cluster) -> np.ndarray:
    """Connections between workers per node, each counted at both of its ends: worker A
    connects to every other worker B that hosts a task of a component that one of A's components
    sends to (any stream, any grouping, as Storm's ``WorkerState.refreshConnections`` does)."""
    used, worker_of_task = np.unique(placement.slot_ids(cluster), return_inverse=True)
    hosts = np.zeros((len(topology.operators), len(used)))   # operator x worker: hosts a task of it
    hosts[topology.operator_of_task, worker_of_task] = 1.0
    linked = hosts.T @ topology.operator_links @ hosts > 0   # worker -> worker
    np.fill_diagonal(linked, False)
    ends = linked.sum(axis=1) + linked.sum(axis=0)
    return np.bincount(used // int(cluster.slots.max()), weights=ends, minlength=cluster.n_nodes).astype(float)


@dataclass(frozen=True, eq=False)
class Routes:
    """What :func:`predict` reads of a placement that no model constant changes: the rates at
    unit load, every positive-rate edge with its locality, the workers, tasks and connections per
    node. Made by :func:`routes`; a fit, which predicts the same placements under thousands of
    models, makes them once per placement."""

    problem: Problem
    placement: Placement
    in_rate: np.ndarray
    flows: list               # (stream, src, dst, rate) per stream, as :func:`routed_flows`
    edges: tuple              # (src, dst, rate, same_worker, same_node, tuple_bytes) per stream, rate > 0
    workers: np.ndarray       # worker processes per node
    tasks: np.ndarray         # tasks per node
    connections: np.ndarray   # :func:`worker_connections`
    cores: np.ndarray
    bandwidth: np.ndarray
    names: list[str]


def routes(problem: Problem, placement: Placement) -> Routes:
    """The model-independent part of :func:`predict` for ``placement`` (checked first)."""
    topo, cluster = problem.topology, problem.cluster
    errors = placement.structural_errors(topo.n_tasks, cluster)
    if errors:
        raise ValueError(f"placement: {errors[0]}")
    slot = placement.slot_ids(cluster)
    in_rate, flows = routed_flows(topo, slot)
    edges = []
    for stream, src, dst, rate in flows:
        keep = rate > 0
        src, dst, rate = src[keep], dst[keep], rate[keep]
        same_node = placement.node[src] == placement.node[dst]
        edges.append((src, dst, rate, same_node & (slot[src] == slot[dst]), same_node,
                      topo.operators[topo.index[stream.src]].tuple_bytes))
    return Routes(problem, placement, in_rate, flows, tuple(edges), placement.workers_used(cluster),
                  np.bincount(placement.node, minlength=cluster.n_nodes), worker_connections(topo, placement, cluster),
                  np.array([n.cores for n in cluster.nodes], dtype=float),
                  np.array([n.bandwidth for n in cluster.nodes], dtype=float), [n.name for n in cluster.nodes])


def stream_hops(routed: Routes, model: CostModel) -> list[Hops]:
    """Locality and per-tuple costs of every positive-rate edge, one :class:`Hops` per stream."""
    return [Hops(src, dst, rate, same_worker, same_node, ser_cpu=model.ser_cpu_per_tuple + model.ser_cpu_per_byte * size,
                 wire_bytes=size + model.header_bytes)
            for src, dst, rate, same_worker, same_node, size in routed.edges]


def node_demands(node: np.ndarray, n_nodes: int, task_cpu: np.ndarray, in_rate: np.ndarray, hops: list[Hops]):
    """``(cpu, nic_in, nic_out)`` per node at unit load; ``task_cpu`` = reference s per tuple."""
    cpu = np.bincount(node, weights=task_cpu * in_rate, minlength=n_nodes)
    nic_in = np.zeros(n_nodes)
    nic_out = np.zeros(n_nodes)
    for h in hops:
        ser = np.where(h.same_worker, 0.0, h.rate * h.ser_cpu)
        cpu += np.bincount(node[h.src], weights=ser, minlength=n_nodes)
        cpu += np.bincount(node[h.dst], weights=ser, minlength=n_nodes)
        wire = np.where(h.same_node, 0.0, h.rate * h.wire_bytes)
        nic_out += np.bincount(node[h.src], weights=wire, minlength=n_nodes)
        nic_in += np.bincount(node[h.dst], weights=wire, minlength=n_nodes)
    return cpu, nic_in, nic_out


def sustainable_scale(cpu: np.ndarray, cpu_capacity: np.ndarray, nic: np.ndarray, nic_capacity: np.ndarray,
                      names: list[str]) -> tuple[float, str | None]:
    """``(max scale, bottleneck)``: min over nodes of capacity / demand, CPU before NIC in ties."""
    util = np.stack([_ratio(cpu, cpu_capacity), _ratio(nic, nic_capacity)], axis=1).ravel()
    if not util.size or util.max() == 0:
        return np.inf, None
    k = int(util.argmax())
    return float(1.0 / util[k]), f"{names[k // 2]}:{('cpu', 'nic')[k % 2]}"


def _sojourn(service: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """M/M/1 time in system ``service / (1 - rho)``; inf when saturated, 0 without service."""
    out = np.where(service > 0, np.inf, 0.0)
    np.divide(service, 1.0 - rho, out=out, where=(service > 0) & (rho < 1))
    return out


def hop_seconds(h: Hops, node: np.ndarray, task_service: np.ndarray, speed: np.ndarray, bandwidth: np.ndarray,
                rho_cpu: np.ndarray, rho_nic_in: np.ndarray, model: CostModel) -> np.ndarray:
    """Latency of each edge of ``h`` (seconds) at the given per-node utilisations.

    ``task_service`` is each task's own CPU seconds per tuple on its node (local time).
    """
    v = node[h.dst]
    base = np.where(h.same_worker, model.hop_ms_same_worker,
                    np.where(h.same_node, model.hop_ms_other_worker, model.hop_ms_other_node)) / 1e3
    transfer = np.where(h.same_node, 0.0, _ratio(np.full(v.shape, h.wire_bytes), bandwidth[v]))
    service = task_service[h.dst] + np.where(h.same_worker, 0.0, h.ser_cpu / speed[v])
    return base + _sojourn(transfer, rho_nic_in[v]) + _sojourn(service, rho_cpu[v])


def path_latency(topology: Topology, flows: list, hop_latency: list[np.ndarray]) -> float:
    """Traffic-weighted mean source-to-sink latency by DP over the DAG.

    ``flows`` = ``[(stream, src, dst, rate)]`` and ``hop_latency`` the matching per-edge
    latencies. Sources start at 0; a task's latency is the rate-weighted mean of (sender's
    latency + hop) over its inbound edges; the result is the inflow-weighted mean over the
    tasks of operators without downstream streams. Returns 0.0 if no tuple reaches a sink.
    """
    latency = np.zeros(topology.n_tasks)
    inflow = np.zeros(topology.n_tasks)
    by_dst: dict[str, list[int]] = {}
    for i, f in enumerate(flows):
        by_dst.setdefault(f[0].dst, []).append(i)
    for name in topology.topological_order:
        if topology.is_source(name) or name not in by_dst:
            continue
        tasks = topology.tasks_of(name)
        total = np.zeros(len(tasks))
        for i in by_dst[name]:
            _, src, dst, rate = flows[i]
            pos = rate > 0
            idx = dst[pos] - tasks.start
            inflow[tasks.start:tasks.stop] += np.bincount(idx, weights=rate[pos], minlength=len(tasks))
            total += np.bincount(idx, weights=rate[pos] * (latency[src[pos]] + hop_latency[i][pos]), minlength=len(tasks))
        arrived = inflow[tasks.start:tasks.stop] > 0
        latency[tasks.start:tasks.stop][arrived] = total[arrived] / inflow[tasks.start:tasks.stop][arrived]
    senders = {s.src for s in topology.streams}
    weight = total = 0.0
    for op in topology.operators:
        if op.name not in senders:
            r = topology.tasks_of(op.name)
            arrived = inflow[r.start:r.stop] > 0
            weight += inflow[r.start:r.stop][arrived].sum()
            total += (inflow[r.start:r.stop] * latency[r.start:r.stop])[arrived].sum()
    return float(total / weight) if weight > 0 else 0.0


def predict(problem: Problem, placement: Placement, model: CostModel = CostModel(), *,
            offered_scale: float | None = None, latency: bool = True, routed: Routes | None = None) -> Performance:
    """Throughput, bottleneck and latency of ``placement`` under ``model`` (see module doc).

    ``offered_scale`` sets the load the latency refers to (default ``model.latency_load x
    max_scale``); capacity overloads in load units do not matter here, only CPU and NIC.
    ``latency=False`` leaves the latency out (NaN): a search that reads throughput only saves
    the per-hop sojourns (most of a prediction's time on a job of a thousand tasks).
    ``routed``: :func:`routes` of this very problem and placement, made once for many models.
    """
    topo, cluster = problem.topology, problem.cluster
    if routed is None:
        routed = routes(problem, placement)
    elif routed.problem is not problem or routed.placement is not placement:
        raise ValueError("the routes given were made for another problem or placement")
    if offered_scale is not None and not (np.isfinite(offered_scale) and offered_scale >= 0):
        raise ValueError(f"offered_scale must be a finite number >= 0, got {offered_scale}")
    node, in_rate, flows = placement.node, routed.in_rate, routed.flows
    hops = stream_hops(routed, model)
    per_tuple = task_cpu(topo, cluster, node, model)
    cpu, nic_in, nic_out = node_demands(node, cluster.n_nodes, per_tuple, in_rate, hops)
    speed = model.speeds(cluster)
    workers, cores, bandwidth, names = routed.workers, routed.cores, routed.bandwidth, routed.names
    fixed = np.minimum(model.fixed_cpu_cap * cores,
                       model.executor_cpu * routed.tasks + model.worker_cpu * workers + model.node_cpu * (workers > 0)
                       + model.connection_cpu * routed.connections)
    cpu_capacity = np.maximum(0.0, cores - fixed) * speed
    max_scale, bottleneck = sustainable_scale(cpu, cpu_capacity, np.maximum(nic_in, nic_out), bandwidth, names)
    total = float(in_rate.sum())
    throughput = max_scale * total if total > 0 else 0.0
    if offered_scale is None:
        offered_scale = model.latency_load * max_scale if np.isfinite(max_scale) else 1.0
    if not latency:
        return Performance(throughput=float(throughput), max_scale=float(max_scale), bottleneck=bottleneck,
                           latency_ms=math.nan, latency_scale=float(offered_scale), in_rate=in_rate, cpu_demand=cpu,
                           cpu_capacity=cpu_capacity, nic_in=nic_in, nic_out=nic_out, nic_capacity=bandwidth)
    rho_cpu = _ratio(cpu, cpu_capacity, offered_scale)
    rho_in = _ratio(nic_in, bandwidth, offered_scale)
    service = per_tuple / speed[node]
    hop_latency = [hop_seconds(h, node, service, speed, bandwidth, rho_cpu, rho_in, model) for h in hops]
    kept = [(f[0], h.src, h.dst, h.rate) for f, h in zip(flows, hops)]
    return Performance(throughput=float(throughput), max_scale=float(max_scale), bottleneck=bottleneck,
                       latency_ms=1e3 * path_latency(topo, kept, hop_latency), latency_scale=float(offered_scale),
                       in_rate=in_rate, cpu_demand=cpu, cpu_capacity=cpu_capacity, nic_in=nic_in, nic_out=nic_out,
                       nic_capacity=bandwidth)

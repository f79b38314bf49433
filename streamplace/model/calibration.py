"""The performance model calibrated on one measured run of the user's own job.

The bundled :class:`~streamplace.model.performance.CostModel` was fitted at one operating point
(saturated spouts, acking off, the campaign's Storm settings). A job that runs elsewhere is
predicted from a run of its own, under any one placement (typically Storm's even, which is what a
running job has), at its own operating point (:class:`~.operating_point.OperatingPoint`):

1. **Costs from the run.** An operator whose spec declares no ``cpu_per_tuple`` gets the CPU its
   tasks' executor threads used over the tuples they executed, less the engine's per-tuple
   cost (``CostModel.task_cpu_per_tuple``) and less the serialising of the run's remote emits,
   which Storm does on the sending executor's thread (:func:`remote_emit_cores`): the model adds
   both back, the second per tuple crossing a worker in whatever placement it predicts; a
   declared cost is kept (an executor thread's CPU also holds its idle waits, which a parking or
   spinning wait strategy makes large: on the campaign's runs the declared costs predicted
   better, benchmarks/results/HISTORY.md). Each non-source operator's selectivity is what it
   sent over its streams per tuple it executed.
2. **CPU bound.** :func:`~.performance.predict` on the calibrated topology (on a testbed: its
   cluster scaled to the testbed's CPU budget) gives the throughput back-pressure allows. Its
   fixed costs (per worker, executor, node and connection) are scaled by what the run's nodes
   used beyond their tuples' work (:func:`fixed_cpu_factor`), when the run measured node CPU. When the
   run itself was CPU-bound (acking off, and its spouts emitted less than they asked),
   ``capacity_factor`` scales every placement's CPU bound: the share of the modelled capacity
   this job really gets on this cluster, read at the run's busiest node with the rates its tasks
   really executed (:func:`measured_capacity_factor`): the modelled demand there at those rates
   over the modelled capacity. Saturated spouts do not emit alike: Storm's back-pressure sets each
   one's rate, differently from run to run, and a spout sharing the busiest node with a hot bolt
   takes more or less of its CPU (2026-11-30-demo-step, HISTORY.md), where the model gives every
   spout task the same rate; reading the node at the measured rates keeps that run's split out of
   the factor. With acking on the run shows the flow bound, not the CPU bound, and the factor
   stays 1.
3. **Flow-control bound** (acking on). A spout task holds at most ``M`` =
   ``topology.max.spout.pending`` tuple trees in flight. Storm 2.8's ``SpoutExecutor`` drains its
   acks on every pass, emits while under ``M`` and otherwise sleeps ``S`` (the spout wait
   strategy's level-3 sleep: 1 ms by default, 10 ms in the campaign's settings). An ack that lands
   during a sleep is seen at the next wake-up, so by Little's law each spout task emits
   ``M / T`` tuples/s, ``T`` the time a tree stays pending: ``T = max(S', R + S'/2)``, with ``R``
   the tuple tree's round trip and ``S' = S + 0.08 ms`` (the sleep's overshoot on Linux). Below
   ``R = S'/2`` every ack of a burst is back before the next wake-up and ``T = S'`` (the
   spouts emit ``M`` per sleep); above it acks land spread over the sleep, half a sleep late on
   average. ``R`` is built from the hops the placement creates: each data hop and the ack path
   (last bolt -> acker -> spout; the acker is chosen by hashing the tuple tree's random root id,
   so uniformly over the ackers, which a plan deals over its workers interleaved by node) costs
   the receiving executor's wake-up (half a level-3 sleep when idle bolts sleep at once, as in the
   campaign's settings; a ``parkNanos`` of about 0.05 ms when they park first, as by Storm's
   default) plus, between workers, the sending worker's transfer thread (it sleeps 1 ms when idle:
   0.5 ms on average) and, between nodes, the bytes over the link. What the run measured beyond
   that (``round_trip_residual``: queueing, CPU-quota stalls, the JVMs) is added to every
   placement's round trip. A run whose spouts emitted what they asked (a fixed rate below both
   bounds) calibrates the costs only.

   **The messages' CPU with acking.** With few tuple trees in flight Storm's transfer thread and
   Netty send each message nearly alone, and the ack path adds a message per tuple executed (the
   spout's ``ack_init``, each bolt's ack, the acker's ack back): on the campaign's acking runs the
   nodes spent 17-37 % of their cores in executor threads (51-79 % without acking), and what the
   rest used followed the messages crossing a worker boundary at the node
   (``benchmarks/acking_cpu.py``; 2026-11-28, HISTORY.md). So a run with acking that measured its
   nodes' CPU gives a cost per message per end (:func:`message_cpu_s`: the cores outside executor
   threads, which every run's task records give, less the fixed costs the model has there, over
   those messages, :func:`crossing_messages`), which every placement's CPU bound then pays on its
   own messages (its fixed costs are not rescaled by :func:`fixed_cpu_factor`: that CPU is the
   messages').
   When the run's own placement is CPU-bound so, the run measured that bound and sets
   ``capacity_factor``; otherwise the flow-control bound is calibrated as above.

The prediction is the smaller of the two bounds; its throughput is counted as ``run.json``'s
``throughput`` is: tuples executed per second by every task, spouts' emits included
(``bolt_throughput`` without them).

4. **Latency at the sources' own rate** (acking off, a run whose spouts emitted what they asked).
   Every placement runs at the offered rate, so latency, not throughput, tells them apart. A
   tuple's end-to-end latency (from its emit to the sink's execute, as the monitor counts it) is
   :func:`~.performance.predict`'s at the offered load (scale 1): per hop the receiving task's
   CPU work as an M/M/1 sojourn at its node's utilisation and the bytes over the link as one at
   the receiving NIC's, with the hop's base delay taken from the operating point instead of the
   bundled analytic constants: the receiving bolt's wake-up (:func:`bolt_wake_s`) on every hop,
   plus the sending worker's transfer thread (``TRANSFER_WAIT_S``) between workers. What the run
   measured beyond that for its own placement (``latency_residual``: the spouts' bursts, CPU-quota
   stalls, the JVMs) is added to every placement's latency.

Deliberate simplifications: the wake-up of a bolt is charged on every hop whatever its load (a
busy bolt does not sleep); CPU-quota stalls enter only through the residual measured on the run's
own placement; the cost per message is one number per run, although messages batch better as more
trees are in flight (about 5-8 us at max spout pending 50 against 12-23 us at 10 on the campaign's
nodes), so it holds at the run's own max spout pending.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .cluster import Cluster, scaled_cluster
from .operating_point import OperatingPoint
from .performance import (CostModel, Performance, node_demands, path_latency, predict, routed_flows, routes,
                          stream_hops, sustainable_scale, task_cpu, worker_connections)
from .placement import Placement
from .problem import Problem
from .topology import Topology

#: how much later than asked a thread's sleep ends on Linux: the timer slack (50 us) and the
#: wake-up; observed 0.05-0.1 ms (Storm's ``Thread.sleep(1)`` in ``WaitStrategyProgressive``)
SLEEP_OVERSHOOT_S = 0.00008
#: one ``LockSupport.parkNanos(1)`` on Linux: about 50-60 us (the timer slack); what a hop to an
#: idle bolt costs while its wait strategy is still parking (Storm's default: 1,000 parks first)
PARK_S = 0.00005
#: mean wait of a tuple for the worker transfer thread, which sleeps a flat 1 ms when its queue is
#: empty (``WorkerTransfer.makeTransferThread``, ``Utils.asyncLoop``): half of it
TRANSFER_WAIT_S = 0.0005
#: how the plugin deals a plan's ackers over its workers (``PlanAssignment``): ``interleaved``
#: (the first worker of each node by name, then the second of each, as Storm's EvenScheduler
#: interleaves slots), since 2026-11-30; ``node-major`` ((node name, worker) order) before, which
#: a run record without ``acker_order`` ran under
ACKER_ORDERS = ("interleaved", "node-major")
PLUGIN_ACKER_ORDER = "interleaved"
UNRECORDED_ACKER_ORDER = "node-major"


@dataclass(frozen=True)
class MeasuredRun:
    """What a calibration reads from one run of the job.

    ``bolt_throughput`` and ``source_rate``: tuples executed by non-source tasks, and emitted by
    spout tasks, per second; ``tasks``: per task label ``(executed per s, cores of its executor
    thread)``; ``streams``: per (from, to) operator pair, tuples per second; ``cpu_budget``: the
    testbed's cores (None: the cluster as its spec says)."""

    point: OperatingPoint
    placement: Placement
    bolt_throughput: float
    source_rate: float
    tasks: Mapping[str, tuple[float, float]]
    streams: Mapping[tuple[str, str], float]
    latency_ms: float | None = None
    cpu_budget: float | None = None
    #: spout tuples/s the sources asked to emit (None: saturated, far above what they emit)
    offered_source_rate: float | None = None
    #: cores each node used over the run (a testbed's cgroups; empty: not measured)
    node_cores: Mapping[str, float] = dataclasses.field(default_factory=dict)
    #: how the plugin placed the run's ackers (:data:`ACKER_ORDERS`); the other placements of a
    #: calibration are predicted with the same
    acker_order: str = PLUGIN_ACKER_ORDER

    def __post_init__(self):
        if self.acker_order not in ACKER_ORDERS:
            raise ValueError(f"must be one of {', '.join(ACKER_ORDERS)} (how the plan's ackers were dealt), "
                             f"got {self.acker_order!r}")

    @property
    def throughput(self) -> float:
        return self.bolt_throughput + self.source_rate

    @property
    def held_back(self) -> bool:
        """Whether the spouts emitted less than they asked (by more than 10 %): back-pressure or
        max spout pending set the rate, not the sources. A run at its sources' own rate shows
        neither bound, and calibrates neither."""
        return self.offered_source_rate is None or self.source_rate < 0.9 * self.offered_source_rate


@dataclass(frozen=True)
class Prediction:
    """A calibrated prediction: throughput counted as ``run.json`` counts it."""

    throughput: float          # tuples/s executed by every task (spouts' emits included)
    bolt_throughput: float     # tuples/s executed by non-source tasks
    bound: str                 # "cpu" or "flow control"
    round_trip_ms: float | None  # the tuple tree's round trip (acking on), else None
    cpu: Performance           # the CPU-bound model's figures on the calibrated topology
    latency_ms: float | None = None  # mean end-to-end latency at the sources' own rate (item 4), else None


def calibrated_topology(topology: Topology, run: MeasuredRun, model: CostModel, cluster: Cluster) -> Topology:
    """``topology`` with each operator's CPU per tuple and (non-sources) selectivity as ``run``
    measured them, and the shares of each fields stream that is its receiver's only input as the
    receiver's tasks executed them (the keys' real skew and Storm's own hashing of them);
    operators whose tasks executed nothing keep theirs. A measured CPU per tuple leaves out what
    the executor spent serialising its remote emits (:func:`remote_emit_cores`): the model adds
    that per tuple crossing a worker, for every placement, itself. ``cluster``: the run's."""
    serialised = dict(zip(topology.task_labels, remote_emit_cores(topology, run, cluster, model)))
    executed: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for label, (rate, cores) in run.tasks.items():
        op = label[:label.rindex("[")]
        executed[op] = executed.get(op, 0.0) + rate
        cpu[op] = cpu.get(op, 0.0) + cores - serialised.get(label, 0.0)
    sent: dict[str, float] = {}
    copies = {(st.src, st.dst): topology.operators[topology.index[st.dst]].parallelism if st.grouping == "all" else 1
              for st in topology.streams}
    for (src, dst), rate in run.streams.items():
        # the monitor counts a tuple once per receiving task: an `all` stream's emit reaches every one
        sent[src] = sent.get(src, 0.0) + rate / copies.get((src, dst), 1)
    ops = []
    for op in topology.operators:
        changes = {}
        if executed.get(op.name, 0.0) > 0:
            if op.cpu_per_tuple is None:   # a declared cost is the user's knowledge; an undeclared one is measured
                changes["cpu_per_tuple"] = max(0.0, cpu[op.name] / executed[op.name] - model.task_cpu_per_tuple)
            if op.role != "source" and topology.downstream(op.name):
                out_streams = len(topology.downstream(op.name))
                # selectivity is per output stream in the spec: tuples sent per stream per tuple executed
                changes["selectivity"] = sent.get(op.name, 0.0) / executed[op.name] / out_streams
        ops.append(dataclasses.replace(op, **changes) if changes else op)
    streams = []
    for st in topology.streams:
        if st.grouping == "fields" and len(topology.upstream(st.dst)) == 1:
            receivers = topology.tasks_of(st.dst)
            executed_by = [run.tasks.get(label, (0.0, 0.0))[0] for label in topology.task_labels[receivers.start:receivers.stop]]
            if sum(executed_by) > 0:
                st = dataclasses.replace(st, shares=tuple(r / sum(executed_by) for r in executed_by))
        streams.append(st)
    return Topology.build(topology.name, ops, streams)


def testbed_cluster(cluster: Cluster, cpu_budget: float | None, bandwidth_scaled: bool = False) -> Cluster:
    """The cluster as the run had it: scaled to the testbed's CPU budget, or as specified."""
    if cpu_budget is None or not math.isfinite(cpu_budget):
        return cluster
    return scaled_cluster(cluster, cpu_budget, bandwidth_scaled=bandwidth_scaled)


def ack_slots(placement: Placement, cluster: Cluster, ackers: int, order: str = PLUGIN_ACKER_ORDER) -> np.ndarray:
    """Global worker ids holding the ackers: round-robin over the placement's workers, as the
    plugin deals them (``PlanAssignment``): ``interleaved``, each worker ranked by its index
    within its node, by (rank, node name); ``node-major``, by (node name, worker)."""
    slots = np.unique(placement.slot_ids(cluster))
    per_node = int(cluster.slots.max())
    names = [n.name for n in cluster.nodes]
    node_of = slots // per_node
    rank = np.arange(slots.size) - np.searchsorted(node_of, node_of) if order == "interleaved" else np.zeros_like(slots)
    ordered = [s for _, _, s in sorted(zip(rank.tolist(), (names[n] for n in node_of), slots.tolist()))]
    return np.array([ordered[i % len(ordered)] for i in range(ackers)], dtype=int)


def crossing_messages(topology: Topology, placement: Placement, cluster: Cluster, flows: list, executed: np.ndarray,
                      ackers: int, acker_order: str = PLUGIN_ACKER_ORDER) -> np.ndarray:
    """Per node: messages per second that cross a worker boundary there, sent or received (both
    ends counted). Data: each edge of ``flows`` (``(stream, src, dst, rate)``, rates already at the
    load wanted) between tasks of different workers. With ``ackers`` > 0, Storm's ack messages:
    each task's ``executed`` tuples (a spout's: its emits, the ``ack_init``) go to an acker, and
    each spout emit comes back from one as the tree completes; the acker is drawn uniformly
    (Storm hashes the tree's random root id) over :func:`ack_slots` (in ``acker_order``)."""
    slot = placement.slot_ids(cluster)
    out = np.zeros(cluster.n_nodes)
    for _stream, src, dst, rate in flows:
        cross = slot[src] != slot[dst]
        np.add.at(out, placement.node[src][cross], rate[cross])
        np.add.at(out, placement.node[dst][cross], rate[cross])
    if ackers > 0:
        per_node = int(cluster.slots.max())
        per_task = executed + np.where(topology.source_task_mask, executed, 0.0)
        for a in ack_slots(placement, cluster, ackers, acker_order):
            cross = slot != a
            share = per_task[cross] / ackers
            np.add.at(out, placement.node[cross], share)
            out[a // per_node] += float(share.sum())
    return out


@dataclass(frozen=True)
class CalibratedModel:
    """The model calibrated on ``run`` for ``problem`` (see the module docstring)."""

    problem: Problem               # the calibrated topology on the cluster as the run had it
    run: MeasuredRun
    base: CostModel
    capacity_factor: float
    round_trip_residual_s: float
    latency_residual_s: float = 0.0
    #: with acking: CPU seconds outside executor threads per message crossing a worker, per end
    #: (item 3); 0 without acking or without the run's node CPU
    message_cpu_s: float = 0.0
    #: the throughputs of the runs averaged into ``run`` (:func:`calibrate_on_runs`), when more than one
    run_throughputs: tuple[float, ...] = ()

    # -- the two bounds ------------------------------------------------------------------
    def _hop_s(self, same_worker: np.ndarray, same_node: np.ndarray, wire_bytes: float, bandwidth: np.ndarray,
               to_bolt: bool = True) -> np.ndarray:
        """One hop's delay: the receiving bolt's wake-up (a spout's is in :func:`pending_time`),
        the sending worker's transfer thread between workers, the bytes over the link between nodes."""
        wake = bolt_wake_s(self.run.point) if to_bolt else 0.0
        return wake + np.where(same_worker, 0.0, TRANSFER_WAIT_S) + np.where(same_node, 0.0, wire_bytes / bandwidth)

    def round_trip_s(self, placement: Placement) -> float:
        """The modelled tuple-tree round trip of ``placement`` (without the residual): the
        rate-weighted mean path from the spouts to the sinks, plus the ack path."""
        topo, cluster = self.problem.topology, self.problem.cluster
        slot = placement.slot_ids(cluster)
        _, flows = routed_flows(topo, slot)
        bandwidth = np.array([n.bandwidth for n in cluster.nodes], dtype=float)
        hop_latency = []
        for stream, src, dst, _rate in flows:
            size = topo.operators[topo.index[stream.src]].tuple_bytes + self.base.header_bytes
            same_node = placement.node[src] == placement.node[dst]
            hop_latency.append(self._hop_s(same_node & (slot[src] == slot[dst]), same_node, size, bandwidth[placement.node[dst]]))
        data_path = path_latency(topo, [(f[0], f[1], f[2], f[3]) for f in flows], hop_latency)
        ackers = ack_slots(placement, cluster, self.run.point.ackers, self.run.acker_order)
        per_node = int(cluster.slots.max())
        sinks = np.flatnonzero(~np.isin(topo.operator_of_task, [topo.index[s.src] for s in topo.streams]))
        sources = np.flatnonzero(topo.source_task_mask)
        ack_bytes = 40.0 + self.base.header_bytes   # (root id, xor) or (root id, time): two longs in a tuple

        def mean_hop(tasks: np.ndarray, to_acker: bool) -> float:
            """Mean hop between ``tasks`` and an acker drawn uniformly (to it, or from it)."""
            t_slot = slot[tasks][:, None]
            same_worker = t_slot == ackers[None, :]
            same_node = (t_slot // per_node) == (ackers[None, :] // per_node)
            link = bandwidth[ackers // per_node][None, :] if to_acker else bandwidth[placement.node[tasks]][:, None]
            return float(self._hop_s(same_worker, same_node, ack_bytes, link, to_bolt=to_acker).mean())

        # the last bolt's ack to the acker (a bolt: it wakes), the acker's ack to the spout
        return data_path + mean_hop(sinks, True) + mean_hop(sources, False)

    def summary(self, problem: Problem, placement: Placement) -> dict:
        """``throughput``, ``bottleneck`` (a node's resource, or ``flow control``) and
        ``latency_ms`` (the tuple tree's round trip with acking on, for every placement alike; the
        mean latency at the run's rate when the run's spouts emitted what they asked (item 4: the
        throughput beside it is still the placement's sustainable one); else the CPU model's
        latency at ``latency_load``)
        of ``placement`` of ``problem``, which must be the job the model was calibrated on
        (:class:`~streamplace.model.performance.Predictor`)."""
        mine = self.problem
        if not self.covers(problem):
            raise ValueError(f"the calibration run is of {mine.topology.name} on {mine.cluster.name}, not of "
                             f"{problem.topology.name} on {problem.cluster.name} (same tasks and nodes needed)")
        pred = self.predict(placement, latency=True)
        flow = pred.bound == "flow control"
        latency = pred.round_trip_ms if pred.round_trip_ms is not None else \
            pred.latency_ms if pred.latency_ms is not None else pred.cpu.latency_ms
        return {"throughput": pred.throughput, "bottleneck": "flow control" if flow else pred.cpu.bottleneck,
                "latency_ms": latency}

    def describe(self) -> str:
        """One line: the operating point read from the run and what was calibrated on it."""
        point, run = self.run.point, self.run
        flow = (f"{point.ackers} ackers, max spout pending {point.max_spout_pending}, spout sleep "
                f"{point.sleep_s('spout') * 1e3:g} ms" if point.acking and point.max_spout_pending else
                f"{point.ackers} ackers, no max spout pending" if point.acking else "acking off")
        held = "" if run.held_back else (
            f"; its spouts emitted what they asked, so the costs are calibrated and the latency at that rate: "
            f"{self.latency_residual_s * 1e3:+.3g} ms beyond the modelled hops"
            if self.at_offered_rate and run.latency_ms is not None else
            "; its spouts emitted what they asked, so only the costs are calibrated (and the latency at that rate "
            "from the modelled hops alone: the run measured none)" if self.at_offered_rate else
            "; its spouts emitted what they asked, so only the costs are calibrated")
        messages = (f", {self.message_cpu_s * 1e6:.3g} us of CPU per message across workers (outside executors)"
                    if self.message_cpu_s > 0 else "")
        measured = (f"the run measured {run.throughput:,.0f} tuples/s" if len(self.run_throughputs) < 2 else
                    f"{len(self.run_throughputs)} runs measured {min(self.run_throughputs):,.0f}-"
                    f"{max(self.run_throughputs):,.0f} tuples/s (mean {run.throughput:,.0f}, spread "
                    f"{self.runs_spread:.0%} of it: no prediction is surer than that)")
        return (f"{flow}; {measured}; capacity factor {self.capacity_factor:.3g}"
                f"{messages}, round trip beyond the modelled hops {self.round_trip_residual_s * 1e3:.3g} ms{held}")

    @property
    def runs_spread(self) -> float:
        """(max - min) / mean of the calibration runs' throughputs: 0 for one run. The same
        placement at the same operating point measures this far apart from run to run; on
        Storm's own settings with a CPU-bound job ``even``'s four runs measured 7-20k bolt
        tuples/s (benchmarks/results/2026-12-01-fresh-runs)."""
        values = self.run_throughputs
        return (max(values) - min(values)) / float(np.mean(values)) if len(values) > 1 and np.mean(values) > 0 else 0.0

    def covers(self, problem: Problem) -> bool:
        """``problem`` is the calibrated job: same task labels, same node names."""
        return problem.topology.task_labels == self.problem.topology.task_labels and \
            [n.name for n in problem.cluster.nodes] == [n.name for n in self.problem.cluster.nodes]

    def performance(self, problem: Problem, placement: Placement) -> Performance:
        """The CPU model's figures of ``placement`` with the calibrated throughput (the smaller
        bound) and its scale (:class:`~streamplace.model.performance.Predictor`)."""
        pred = self.predict(placement)
        scale = pred.throughput / float(pred.cpu.in_rate.sum()) if pred.cpu.in_rate.sum() > 0 else pred.cpu.max_scale
        return dataclasses.replace(pred.cpu, throughput=pred.throughput, max_scale=scale)

    def cpu_bound(self, placement: Placement, latency: bool = False) -> Performance:
        """The CPU model's figures of ``placement``; with a message cost (item 3), each node's
        CPU demand holds its messages across workers at that cost, and the bound follows."""
        perf = predict(self.problem, placement, self.base, latency=latency)
        if self.message_cpu_s <= 0:
            return perf
        topo, cluster = self.problem.topology, self.problem.cluster
        _, flows = routed_flows(topo, placement.slot_ids(cluster))
        messages = crossing_messages(topo, placement, cluster, flows, perf.in_rate, self.run.point.ackers, self.run.acker_order)
        demand = perf.cpu_demand + self.message_cpu_s * messages * self.base.speeds(cluster)
        scale, bottleneck = sustainable_scale(demand, perf.cpu_capacity, perf.nic_demand, perf.nic_capacity,
                                              [n.name for n in cluster.nodes])
        return dataclasses.replace(perf, cpu_demand=demand, max_scale=scale, bottleneck=bottleneck,
                                   throughput=float(scale * perf.in_rate.sum()) if np.isfinite(scale) else perf.throughput)

    def predict(self, placement: Placement, latency: bool = False) -> Prediction:
        """The calibrated prediction; ``latency``: with the CPU model's latency in ``cpu``."""
        topo = self.problem.topology
        perf = self.cpu_bound(placement, latency)
        sources = topo.source_task_mask
        unit_sources = float(perf.in_rate[sources].sum())
        unit_bolts = float(perf.in_rate[~sources].sum())
        scale = perf.max_scale * self.capacity_factor
        bound, round_trip = "cpu", None
        point = self.run.point
        if point.acking and point.max_spout_pending is not None and unit_sources > 0:
            round_trip = self.round_trip_s(placement) + self.round_trip_residual_s
            flow_scale = int(sources.sum()) * point.max_spout_pending / pending_time(round_trip, point) / unit_sources
            if flow_scale < scale:
                scale, bound = flow_scale, "flow control"
        at_rate = self.latency_at_rate_ms(placement) if latency and self.at_offered_rate else None
        return Prediction(throughput=float(scale * (unit_sources + unit_bolts)), bolt_throughput=float(scale * unit_bolts),
                          bound=bound, round_trip_ms=None if round_trip is None else 1e3 * round_trip, cpu=perf,
                          latency_ms=at_rate)

    @property
    def at_offered_rate(self) -> bool:
        """Whether the run ran at its sources' own rate with acking off (module docstring, item 4)."""
        return not self.run.held_back and not self.run.point.acking

    def latency_hops(self) -> CostModel:
        """The cost model with the hops' base delays of this operating point (item 4): the
        receiving bolt's wake-up, plus the transfer thread's wait between workers."""
        wake = bolt_wake_s(self.run.point)
        return dataclasses.replace(self.base, hop_ms_same_worker=1e3 * wake,
                                   hop_ms_other_worker=1e3 * (wake + TRANSFER_WAIT_S),
                                   hop_ms_other_node=1e3 * (wake + TRANSFER_WAIT_S))

    @property
    def run_scale(self) -> float:
        """The spout rate the run asked for (else, saturated, what it emitted) as a multiple of
        the calibrated topology's unit load: the load its latency refers to, whatever rates the
        topology file gives."""
        unit = offered_spout_rate(self.problem.topology)
        rate = self.run.offered_source_rate if self.run.offered_source_rate is not None else self.run.source_rate
        return rate / unit if unit > 0 else 1.0

    def modelled_latency_s(self, placement: Placement) -> float:
        """Mean end-to-end latency at the run's spout rate without the residual (inf when the
        placement cannot sustain that rate)."""
        scale = self.run_scale
        perf = predict(self.problem, placement, self.latency_hops(), offered_scale=scale)
        return perf.latency_ms / 1e3 if perf.max_scale >= scale else math.inf

    def latency_at_rate_ms(self, placement: Placement) -> float:
        """Mean end-to-end latency of ``placement`` at the run's rate (item 4), ms. The residual
        may be negative (a run measured below its modelled hops: a bolt that is busy does not
        sleep); a prediction never goes below 0."""
        return 1e3 * max(0.0, self.modelled_latency_s(placement) + self.latency_residual_s)


def bolt_wake_s(point: OperatingPoint) -> float:
    """Mean wait of a tuple for an idle bolt (or acker) to wake: half a level-3 sleep when idle
    bolts sleep at once (no parking level: the campaign's settings), else about one
    ``parkNanos`` (Storm's default parks 1,000 times, about 50 ms, before sleeping)."""
    if point.setting("topology.bolt.wait.progressive.level2.count") == 0:
        return point.sleep_s("bolt") / 2
    return PARK_S


def spout_sleep_s(point: OperatingPoint) -> float:
    """``S'``: one spout sleep as it really lasts."""
    return point.sleep_s("spout") + SLEEP_OVERSHOOT_S


def pending_time(round_trip: float, point: OperatingPoint) -> float:
    """``T``: how long a tuple tree stays in a spout's pending map (module docstring)."""
    sleep = spout_sleep_s(point)
    return max(sleep, round_trip + sleep / 2)


def calibrate(problem: Problem, run: MeasuredRun, model: CostModel | None = None) -> CalibratedModel:
    """The model of ``problem`` calibrated on ``run`` (module docstring)."""
    model = model or CostModel()
    topo = calibrated_topology(problem.topology, run, model, problem.cluster)
    calibrated = Problem.from_topology(topo, testbed_cluster(problem.cluster, run.cpu_budget, run.point.bandwidth_scaled))
    point = run.point
    message_cpu = message_cpu_s(calibrated, run, model) if point.acking else None
    if message_cpu is None:
        model = with_fixed_costs(model, fixed_cpu_factor(calibrated, run, model))
    first = CalibratedModel(calibrated, run, model, 1.0, 0.0, message_cpu_s=message_cpu or 0.0)
    factor, residual, latency_residual = 1.0, 0.0, 0.0
    if not run.held_back:   # the sources set the rate: the run says nothing of either bound, but its latency
        if first.at_offered_rate and run.latency_ms is not None:
            modelled = first.modelled_latency_s(run.placement)
            if not math.isfinite(modelled):
                raise ValueError(f"the run emitted {run.source_rate:,.0f} spout tuples/s, more than the model lets its "
                                 "own placement sustain: its latency cannot be calibrated")
            latency_residual = run.latency_ms / 1e3 - modelled
    elif message_cpu is not None and (own := first.predict(run.placement)).bound == "cpu":
        # the run's own placement is CPU-bound once its messages are paid for: the run measured that bound
        if own.throughput > 0 and run.throughput > 0:
            factor = run.throughput / own.throughput
    elif point.acking and point.max_spout_pending is not None:
        spouts = int(topo.source_task_mask.sum())
        if run.source_rate > 0:
            measured_pending = spouts * point.max_spout_pending / run.source_rate
            # measured round trip: T = R + S'/2 above the floor; at the floor (T = S') R is only
            # known to be at most S'/2 and the modelled round trip stands
            if measured_pending > spout_sleep_s(point):
                residual = max(0.0, measured_pending - spout_sleep_s(point) / 2 - first.round_trip_s(run.placement))
    else:
        factor = measured_capacity_factor(calibrated, run, model)
    return CalibratedModel(calibrated, run, model, factor, residual, latency_residual, message_cpu or 0.0)


def calibrate_on_runs(problem: Problem, runs: list[MeasuredRun], model: CostModel | None = None) -> CalibratedModel:
    """The model calibrated on several runs of one placement at one operating point: on their
    :func:`mean_run`, keeping each run's throughput (:attr:`CalibratedModel.runs_spread`)."""
    calibrated = calibrate(problem, mean_run(runs), model)
    return dataclasses.replace(calibrated, run_throughputs=tuple(r.throughput for r in runs)) if len(runs) > 1 else calibrated


def measured_capacity_factor(problem: Problem, run: MeasuredRun, model: CostModel) -> float:
    """Item 2's ``capacity_factor`` of a run held back by back-pressure: the highest share of a
    node's modelled CPU (or NIC) capacity that the run's placement demands at the rates its tasks
    executed in the run (each task's tuples at its measured rate, a source's records being its
    emits over its selectivity; each stream's tuples at its sender's), the run's busiest node being
    at its real limit. 1 when the run executed nothing. When the run's rates are ``k`` times the
    model's unit rates, this is ``k`` over the model's sustainable scale."""
    placement, topo, cluster = run.placement, problem.topology, problem.cluster
    routed = routes(problem, placement)
    capacity = predict(problem, placement, model, latency=False, routed=routed)
    executed = np.array([run.tasks.get(label, (0.0, 0.0))[0] for label in topo.task_labels])
    # a spout's executed count is its emits, the model's rate of a source task its records
    selectivity = np.array([op.selectivity for op in topo.operators])[topo.operator_of_task]
    records = np.where(topo.source_task_mask,
                       np.divide(executed, selectivity, out=np.zeros_like(executed), where=selectivity > 0), executed)
    unit = routed.in_rate
    ratio = np.divide(records, unit, out=np.zeros_like(records), where=unit > 0)
    hops = [dataclasses.replace(h, rate=h.rate * ratio[h.src]) for h in stream_hops(routed, model)]
    cpu, nic_in, nic_out = node_demands(placement.node, cluster.n_nodes, task_cpu(topo, cluster, placement.node, model),
                                        records, hops)
    scale, _ = sustainable_scale(cpu, capacity.cpu_capacity, np.maximum(nic_in, nic_out), capacity.nic_capacity,
                                 [n.name for n in cluster.nodes])
    return 1.0 / scale if np.isfinite(scale) and scale > 0 else 1.0


def run_messages(problem: Problem, run: MeasuredRun) -> np.ndarray:
    """Per node of ``problem``'s cluster: messages per second crossing a worker boundary there in
    ``run`` (:func:`crossing_messages`), data at the run's measured stream rates, acks from the
    tuples its tasks executed."""
    topo, cluster = problem.topology, problem.cluster
    measured = measured_flows(topo, run, cluster)
    executed = np.array([run.tasks.get(label, (0.0, 0.0))[0] for label in topo.task_labels])
    return crossing_messages(topo, run.placement, cluster, measured, executed, run.point.ackers, run.acker_order)


def measured_flows(topology: Topology, run: MeasuredRun, cluster: Cluster) -> list:
    """The flows of ``run``'s placement (:func:`~.performance.routed_flows`: ``(stream, src, dst,
    rate)``) at the run's measured rates: each (from, to) operator pair's edges scaled together to
    the tuples per second the run measured on that pair."""
    _, flows = routed_flows(topology, run.placement.slot_ids(cluster))
    unit: dict[tuple[str, str], float] = {}
    for stream, _src, _dst, rate in flows:
        unit[(stream.src, stream.dst)] = unit.get((stream.src, stream.dst), 0.0) + float(np.sum(rate))
    measured = []
    for stream, src, dst, rate in flows:
        pair = (stream.src, stream.dst)
        factor = run.streams.get(pair, 0.0) / unit[pair] if unit[pair] > 0 else 0.0
        measured.append((stream, src, dst, np.asarray(rate, dtype=float) * factor))
    return measured


def remote_emit_cores(topology: Topology, run: MeasuredRun, cluster: Cluster, model: CostModel) -> np.ndarray:
    """Per task: the cores its executor thread spent in ``run`` serialising the tuples it sent to
    tasks in other workers. Storm 2.8 serialises a remote emit on the sending executor's thread
    (``ExecutorTransfer.tryTransfer`` -> ``WorkerTransfer.tryTransferRemote``, once per receiving
    task; the receiver deserialises on its Netty thread, ``DeserializingConnectionCallback``), at the
    model's cost per side of a tuple crossing a worker (``ser_cpu_per_tuple + ser_cpu_per_byte x
    tuple_bytes`` reference seconds, over the sender's node speed)."""
    slot = run.placement.slot_ids(cluster)
    speed = model.speeds(cluster)[run.placement.node]
    out = np.zeros(topology.n_tasks)
    for stream, src, dst, rate in measured_flows(topology, run, cluster):
        cross = slot[src] != slot[dst]
        size = topology.operators[topology.index[stream.src]].tuple_bytes
        np.add.at(out, src[cross], rate[cross] * (model.ser_cpu_per_tuple + model.ser_cpu_per_byte * size))
    return out / speed


def executor_cores(problem: Problem, run: MeasuredRun) -> np.ndarray:
    """Per node: the cores of the executor threads of the tasks ``run`` placed there."""
    cores = np.array([run.tasks.get(label, (0.0, 0.0))[1] for label in problem.topology.task_labels])
    return np.bincount(run.placement.node, weights=cores, minlength=problem.cluster.n_nodes)


def message_cpu_s(problem: Problem, run: MeasuredRun, model: CostModel) -> float | None:
    """Item 3's message cost: the cores ``run``'s worker nodes used outside their executor
    threads (:func:`executor_cores`), less the model's fixed costs outside executors (per worker,
    node and connection), over the messages crossing a worker boundary at those nodes
    (:func:`run_messages`); CPU seconds per message per end. None when the run measured no node
    CPU, or no message crossed a worker."""
    if not run.node_cores:
        return None
    cluster = problem.cluster
    workers = run.placement.workers_used(cluster)
    hosts = np.array([w > 0 and n.name in run.node_cores for w, n in zip(workers, cluster.nodes)])
    other = np.array([run.node_cores.get(n.name, 0.0) for n in cluster.nodes]) - executor_cores(problem, run)
    fixed = (model.worker_cpu * workers + model.node_cpu * (workers > 0)
             + model.connection_cpu * worker_connections(problem.topology, run.placement, cluster))
    messages = float(run_messages(problem, run)[hosts].sum())
    if messages <= 0:
        return None
    return max(0.0, float((other - fixed)[hosts].sum())) / messages


def offered_spout_rate(topology: Topology) -> float:
    """Spout tuples/s the topology's own rates ask for: each source reads ``source_rate`` records
    and emits ``selectivity`` tuples per record (what a spout's executed count is in the monitor)."""
    return float(sum((op.source_rate or 0.0) * op.selectivity for op in topology.operators if op.role == "source"))


def offered_rate(point: OperatingPoint, topology: Topology) -> float | None:
    """Spout tuples/s a run at ``point`` asked for (:attr:`MeasuredRun.offered_source_rate`): a
    named point's rate per spout task times the spout tasks (None: saturated); at no named point
    (``measured``, a user's own job), the topology's own rates."""
    if point.name == "measured":
        return offered_spout_rate(topology)
    return None if point.source_rate is None else point.source_rate * int(topology.source_task_mask.sum())


def fixed_cpu_factor(problem: Problem, run: MeasuredRun, model: CostModel) -> float:
    """How many times the model's fixed CPU (workers, executors, nodes, connections) the run's
    nodes used: their measured cores less their tuples' modelled work at the measured rate, over
    the fixed costs of the nodes that host workers. Idle executors that park or wake often,
    ackers and transfer threads at low rates make this differ by operating point. 1 when the run
    measured no node CPU."""
    if not run.node_cores:
        return 1.0
    perf = predict(problem, run.placement, model)
    unit = float(perf.in_rate.sum())
    if unit <= 0:
        return 1.0
    cluster = problem.cluster
    speed = model.speeds(cluster)
    cores = np.array([n.cores for n in cluster.nodes], dtype=float)
    hosts = run.placement.workers_used(cluster) > 0
    fixed = ((cores - perf.cpu_capacity / speed) * hosts).sum()
    work = run.throughput / unit * perf.cpu_demand / speed
    measured = np.array([float(run.node_cores.get(n.name, 0.0)) for n in cluster.nodes])
    return float(max(0.0, (measured - work)[hosts].sum()) / fixed) if fixed > 0 else 1.0


def with_fixed_costs(model: CostModel, factor: float) -> CostModel:
    """``model`` with its fixed CPU costs times ``factor`` (the cap on them kept)."""
    if factor == 1.0:
        return model
    return dataclasses.replace(model, worker_cpu=model.worker_cpu * factor, node_cpu=model.node_cpu * factor,
                               executor_cpu=model.executor_cpu * factor, connection_cpu=model.connection_cpu * factor)


def rate_maps(rates: Mapping) -> tuple[dict, dict]:
    """(``tasks``, ``streams``) of :class:`MeasuredRun` from the JSON form a run records
    (:func:`streamplace.storm.records.rates`: ``tasks`` by label, ``streams`` by ``"<from>><to>"``)."""
    tasks = {label: (float(t["executed_per_s"]), float(t["cpu_cores"])) for label, t in rates["tasks"].items()}
    streams = {tuple(pair.split(">", 1)): float(s["tuples_per_s"]) for pair, s in rates["streams"].items()}
    return tasks, streams


def run_from_record(record: Mapping, problem: Problem) -> MeasuredRun:
    """The :class:`MeasuredRun` of a campaign run record (:mod:`streamplace.campaign.testbed`)
    of ``problem``, or of the mean of several records of one placement (``records_mean``)."""
    from .specs import placement_from_dict
    point = OperatingPoint.from_document(record["operating_point"])
    placement = placement_from_dict({"placement": record["placement"]}, problem.topology, problem.cluster,
                                    f"{record.get('job', 'run')}.placement")
    tasks, streams = rate_maps(record)
    offered = offered_rate(point, problem.topology)
    node_cores = {node: float(cpu["cores"]) for node, cpu in (record.get("node_cpu") or {}).items()}
    return MeasuredRun(point, placement, float(record["bolt_throughput"]), float(record["source_rate"]), tasks, streams,
                       (record.get("latency_ms") or {}).get("mean"), float(record["cpu_budget"]), offered, node_cores,
                       record.get("acker_order", UNRECORDED_ACKER_ORDER))


def mean_run(runs: list[MeasuredRun]) -> MeasuredRun:
    """Several runs of one placement at one point as one: every rate averaged."""
    if not runs:
        raise ValueError("no run to calibrate on")
    first = runs[0]
    if any(r.point != first.point or r.placement != first.placement for r in runs):
        raise ValueError("runs of different placements or operating points are not averaged")

    def avg(values):
        return float(np.mean(values))
    tasks = {label: (avg([r.tasks.get(label, (0.0, 0.0))[0] for r in runs]), avg([r.tasks.get(label, (0.0, 0.0))[1] for r in runs]))
             for label in first.tasks}
    streams = {pair: avg([r.streams.get(pair, 0.0) for r in runs]) for pair in first.streams}
    latencies = [r.latency_ms for r in runs if r.latency_ms is not None]
    node_cores = {node: avg([r.node_cores.get(node, 0.0) for r in runs]) for node in first.node_cores}
    return dataclasses.replace(first, bolt_throughput=avg([r.bolt_throughput for r in runs]),
                               source_rate=avg([r.source_rate for r in runs]), tasks=tasks, streams=streams,
                               latency_ms=avg(latencies) if latencies else None, node_cores=node_cores)

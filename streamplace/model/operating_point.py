"""Operating points: the conditions under which a Storm job runs that change what it measures.

A placement's throughput depends on more than the placement. With acking off and saturated
spouts, back-pressure holds every spout to what the busiest node sustains: the cost model's CPU
bound. With acking on, each spout task may have at most ``topology.max.spout.pending`` tuple
trees in flight, so a spout emits that many per tuple-tree round trip (Little's law) and the
round trip, not the CPU, often sets the rate. How long an idle executor sleeps (the progressive
wait strategies), the CPU a miniature testbed gives each node and the bandwidth of its links
change both bounds. An :class:`OperatingPoint` names all of these; ``storm run``, the campaign
and every run record carry one, and the calibrated model
(:mod:`streamplace.model.calibration`) reads its flow-control settings from it.

Per-hop delay cannot be emulated on a kernel without ``netem`` (this project's testbed): links
are shaped in rate only (HTB), never delayed.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from ..files import quote
from .specs import MAX_INT, MAX_TASKS

if TYPE_CHECKING:   # the annotation's type only: topology is imported where it is used
    from .topology import Topology

#: Storm 2.8's defaults (``conf/defaults.yaml``) for the settings the flow-control bound reads:
#: idle spouts sleep at once (levels 1 and 2 are 0 iterations), idle bolts and held-back
#: producers first spin once and park 1,000 times, then sleep; every sleep is 1 ms.
#: ``topology.max.spout.pending`` is null (no limit) by default.
STORM_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "topology.spout.wait.progressive.level1.count": 0,
    "topology.spout.wait.progressive.level2.count": 0,
    "topology.spout.wait.progressive.level3.sleep.millis": 1,
    "topology.bolt.wait.progressive.level1.count": 1,
    "topology.bolt.wait.progressive.level2.count": 1000,
    "topology.bolt.wait.progressive.level3.sleep.millis": 1,
    "topology.backpressure.wait.progressive.level1.count": 1,
    "topology.backpressure.wait.progressive.level2.count": 1000,
    "topology.backpressure.wait.progressive.level3.sleep.millis": 1,
    "topology.executor.receive.buffer.size": 32768,
    "topology.max.spout.pending": None,
})

#: The Storm settings of the testbed campaigns since the evening of 2026-11-26 (the bundled cost
#: model's operating point). Executor receive queues of 1,024 tuples instead of 32,768, so that
#: back-pressure, not queues still filling, sets the rate within the warm-up; idle and
#: back-pressured executors sleep at once, for 10 ms, instead of parking 1,000 times and then
#: sleeping 1 ms (an executor waking 1,000 times a second used a fifth to a half of a
#: 0.19-core node); 64-kB socket buffers and Netty watermarks of 32/64 kB instead of 5 MB and
#: 8/16 MB, so that a sender waits for a slow receiver instead of queueing tens of MB. The pilots
#: that chose each value are in benchmarks/results/HISTORY.md.
CAMPAIGN_CONF: Mapping[str, Any] = MappingProxyType({
    "topology.executor.receive.buffer.size": 1024,
    "topology.bolt.wait.progressive.level2.count": 0,
    "topology.backpressure.wait.progressive.level2.count": 0,
    "storm.messaging.netty.buffer_size": 65536,
    "storm.messaging.netty.buffer.high.watermark": 65536,
    "storm.messaging.netty.buffer.low.watermark": 32768,
    "topology.spout.wait.progressive.level3.sleep.millis": 10,
    "topology.bolt.wait.progressive.level3.sleep.millis": 10,
    "topology.backpressure.wait.progressive.level3.sleep.millis": 10,
})

#: tuples/s asked of every spout task when spouts are saturated: far above what 2 cores sustain,
#: so back-pressure (or max spout pending) sets the rate
SATURATED_RATE = 50_000.0
#: tuples/s asked of every spout task at the fixed-rate points: on linear-io@1high+2low (8 spout
#: tasks, three bolts of selectivity 1) 4,800 spout and 14,400 bolt tuples/s, an eighth of what
#: the campaign's placements sustain saturated at 10ms-sleeps and a quarter of the weakest at
#: storm-defaults (2026-11-27-operating-points): every placement runs at the sources' own rate
FIXED_RATE = 600.0
#: the most ackers or max spout pending a run may state: a topology's task limit; the model deals
#: every acker a slot, so more would only take memory. The other settings above are at most a Java
#: int (``MAX_INT``: Storm reads the counts and sizes as ints, the sleeps as longs, any number >= 0)
MAX_COUNT = MAX_TASKS


@dataclass(frozen=True)
class OperatingPoint:
    """The conditions a job runs under (see the module docstring).

    ``storm_conf``: Storm topology settings over Storm's own defaults (``max_spout_pending`` and
    ``ackers`` are fields of their own, as the run sets them). ``source_rate``: tuples/s asked of
    every spout task, ``None`` for saturated spouts. ``cpu_budget``: cores of the whole testbed
    (``None``: the machine's, less the testbed's head-room). ``bandwidth_scaled``: the testbed's
    links carry the spec's bandwidth times the testbed's CPU scale, so that a miniature keeps the
    cluster's CPU:network ratio (else every link keeps the spec's full bandwidth)."""

    name: str
    storm_conf: Mapping[str, Any] = field(default_factory=dict)
    ackers: int = 0
    max_spout_pending: int | None = None
    source_rate: float | None = None
    cpu_budget: float | None = None
    bandwidth_scaled: bool = False

    def __post_init__(self):
        if not isinstance(self.ackers, int) or self.ackers < 0:
            raise ValueError(f"operating point {self.name}: ackers must be an integer >= 0, got {self.ackers}")
        if self.max_spout_pending is not None and (not isinstance(self.max_spout_pending, int) or self.max_spout_pending < 1):
            raise ValueError(f"operating point {self.name}: max_spout_pending must be an integer >= 1 or null")
        if self.source_rate is not None and not (math.isfinite(self.source_rate) and self.source_rate > 0):
            raise ValueError(f"operating point {self.name}: source_rate must be a positive number of tuples/s or null")
        if self.cpu_budget is not None and not (math.isfinite(self.cpu_budget) and self.cpu_budget > 0):
            raise ValueError(f"operating point {self.name}: cpu_budget must be a positive number of cores or null")
        if "topology.max.spout.pending" in self.storm_conf or "topology.acker.executors" in self.storm_conf:
            raise ValueError(f"operating point {self.name}: set max spout pending and ackers as fields, not in storm_conf")
        object.__setattr__(self, "storm_conf", MappingProxyType(dict(self.storm_conf)))

    @property
    def acking(self) -> bool:
        return self.ackers > 0

    def conf(self) -> dict:
        """The Storm topology settings a job at this point runs with (ackers set by the run)."""
        out = dict(self.storm_conf)
        if self.max_spout_pending is not None:
            out["topology.max.spout.pending"] = self.max_spout_pending
        return out

    def setting(self, key: str):
        """The value Storm uses for ``key`` at this point: ours, else Storm's default."""
        return self.conf().get(key, STORM_DEFAULTS.get(key))

    def sleep_s(self, kind: str) -> float:
        """Seconds an idle executor of ``kind`` (spout, bolt, backpressure) sleeps per wait once
        its progressive wait strategy reaches level 3."""
        return float(self.setting(f"topology.{kind}.wait.progressive.level3.sleep.millis")) / 1000.0

    def overridden(self, storm_conf: Mapping[str, Any], cpu_budget: float | None = None) -> "OperatingPoint":
        """This point with ``storm_conf`` over its Storm settings (``topology.max.spout.pending``
        included) and another CPU budget if given: what a run with those overrides ran at."""
        conf = dict(storm_conf)
        pending = conf.pop("topology.max.spout.pending", self.max_spout_pending)
        if not conf and pending == self.max_spout_pending and cpu_budget in (None, self.cpu_budget):
            return self
        return dataclasses.replace(self, storm_conf={**self.storm_conf, **conf}, max_spout_pending=pending,
                                   cpu_budget=self.cpu_budget if cpu_budget is None else cpu_budget)

    def sources(self, topology: "Topology") -> "Topology":
        """``topology`` with every spout task asking for this point's source rate
        (:data:`SATURATED_RATE` when saturated) from the start; its phases as declared."""
        from .topology import Topology
        rate = self.source_rate if self.source_rate is not None else SATURATED_RATE
        ops = [dataclasses.replace(op, source_rate=rate * op.parallelism) if op.role == "source" else op
               for op in topology.operators]
        return Topology.build(topology.name, ops, topology.streams, topology.phases)

    def document(self) -> dict:
        """The JSON form every run record carries."""
        return {"name": self.name, "storm_conf": dict(self.storm_conf), "ackers": self.ackers,
                "max_spout_pending": self.max_spout_pending, "source_rate": self.source_rate,
                "cpu_budget": self.cpu_budget, "bandwidth_scaled": self.bandwidth_scaled}

    @classmethod
    def of_conf(cls, conf: Mapping[str, Any], workers: int, cpu_budget: float | None = None) -> "OperatingPoint":
        """The point a job with topology settings ``conf`` (as Nimbus holds them) ran at on
        ``workers`` workers: unset ackers are one per worker, as Storm makes them."""
        ackers = _count_setting(conf, "topology.acker.executors")
        pending = _count_setting(conf, "topology.max.spout.pending")
        keys = (set(STORM_DEFAULTS) | set(CAMPAIGN_CONF)) - {"topology.max.spout.pending"}
        storm_conf = {k: conf[k] for k in sorted(keys) if k in conf and conf[k] != STORM_DEFAULTS.get(k)}
        for key, value in storm_conf.items():   # counts, sizes and sleeps: Storm reads them as numbers, a sleep's
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_INT:
                raise ValueError(f"{key} must be a number 0..{MAX_INT:,}, got {quote(value)}")   # fraction cut
        return cls("measured", storm_conf, ackers=workers if ackers is None else ackers,
                   max_spout_pending=pending or None, cpu_budget=cpu_budget)   # 0 pending: no limit, as in Storm

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> "OperatingPoint":
        return cls(name=str(doc["name"]), storm_conf=dict(doc.get("storm_conf") or {}), ackers=int(doc.get("ackers", 0)),
                   max_spout_pending=doc.get("max_spout_pending"), source_rate=doc.get("source_rate"),
                   cpu_budget=doc.get("cpu_budget"), bandwidth_scaled=bool(doc.get("bandwidth_scaled", False)))


def _count_setting(conf: Mapping[str, Any], key: str) -> int | None:
    """Storm setting ``key`` of ``conf``: None when unset, else an integer 0..:data:`MAX_COUNT`
    (ValueError naming the key otherwise)."""
    value = conf.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{key} must be an integer 0..{MAX_COUNT:,}, got {quote(value)}")
    return value


#: The named operating points of the testbed campaigns (benchmarks/results/index.yaml describes
#: each with the campaigns run at it). ``10ms-sleeps`` is the bundled cost model's point.
OPERATING_POINTS: Mapping[str, OperatingPoint] = MappingProxyType({p.name: p for p in (
    OperatingPoint("10ms-sleeps", CAMPAIGN_CONF, cpu_budget=1.5),
    OperatingPoint("storm-defaults", {}, cpu_budget=1.5),
    OperatingPoint("acking-msp10", CAMPAIGN_CONF, ackers=3, max_spout_pending=10, cpu_budget=1.5),
    OperatingPoint("acking-msp50", CAMPAIGN_CONF, ackers=3, max_spout_pending=50, cpu_budget=1.5),
    OperatingPoint("cpu-1.0", CAMPAIGN_CONF, cpu_budget=1.0),
    OperatingPoint("bandwidth-scaled", CAMPAIGN_CONF, cpu_budget=1.5, bandwidth_scaled=True),
    OperatingPoint("fixed-rate-10ms-sleeps", CAMPAIGN_CONF, source_rate=FIXED_RATE, cpu_budget=1.5),
    OperatingPoint("fixed-rate-storm-defaults", {}, source_rate=FIXED_RATE, cpu_budget=1.5),
)})


def named(name: str) -> OperatingPoint:
    """The operating point called ``name``; ValueError listing the known ones."""
    try:
        return OPERATING_POINTS[name]
    except KeyError:
        raise ValueError(f"unknown operating point {name!r} (known: {', '.join(OPERATING_POINTS)})") from None

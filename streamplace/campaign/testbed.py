"""The testbed measurement campaign: [I]/[T3] Sec. 6 experiments run on the Storm testbed.

Experiments are :func:`streamplace.workloads.runtime.scenarios` (runtime-size linear, diamond and
star micro-benchmarks in the I/O- and CPU-intensive configuration; smart-home and frequent-routes
on a homogeneous and a heterogeneous cluster). Every scheduler of :data:`SCHEDULERS` places each
experiment once (the baselines as the papers ran them: OLS with the papers' limits, I-Scheduler
with theta 1 s and 0); each placement then runs ``reps`` times on the testbed of
:mod:`streamplace.storm.testbed`, one job at a time, the order shuffled anew for every
repetition so that no scheduler's runs sit in a row and drift of the machine spreads over all.

Operating point: the spouts are saturated (every spout task asked for :data:`SATURATED_RATE`
tuples/s; back-pressure holds them to what the placement sustains), so the measured rate is the
placement's sustainable throughput, the figure the performance model predicts. Executor queues
and the network buffers between workers are kept small (:data:`STORM_CONF`) so that
back-pressure, not a queue still filling, sets the rate within the warm-up, and idle executors
sleep rather than spin, so that a node's CPU goes to the work it hosts. The papers' own
runs used Storm 1.x with acking and ``max.spout.pending``, where throughput also depends on
latency; that operating point is not run here (no ackers: 0 acker executors).

Measured per run (the papers' method: tuples executed per bolt task per 10-s period, warm-up
discarded): ``per_bolt_task_10s``; ``throughput`` = tuples executed per second summed over all
tasks (a spout's executed = what it emitted: the model's throughput); end-to-end latency from the
tuples' emit time; inter-node bytes on the wire and by the monitor; each node's CPU (cores used,
share of quota periods throttled: ``node_cpu``). Predicted beside it: the
cost model's throughput and inter-node bytes on the testbed's scaled cluster
(:func:`~streamplace.fit.cases.predicted_figures`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..files import quote
from ..fit.cases import predicted_figures, with_model
from ..fit.scores import repeat_tau
from ..model.performance import CostModel
from ..model import Placement, Problem, Topology
from ..schedulers import make_scheduler
from ..schedulers.papers import ISCHEDULER, ISCHEDULER_NO_OPTIMISER, OLS_RELAX
from ..storm import records
from ..storm.plans import workers_of
from ..storm.run import Job, RunSettings, run_jobs
from ..workloads import runtime

#: (label, scheduler name, parameters): every system of [I]/[T3] Sec. 6 and the project's own.
SCHEDULERS = (
    ("even", "even", {}),
    ("online", "online", dict(OLS_RELAX)),
    ("rstorm", "rstorm", {}),
    ("metis", "metis", {}),
    ("t3", "t3", {}),
    ("ischeduler", "ischeduler", dict(ISCHEDULER)),
    ("ischeduler (theta=0)", "ischeduler", dict(ISCHEDULER_NO_OPTIMISER)),
    ("lf", "lf", {}),
    ("optimal", "optimal", {"time_limit": 10.0}),
)
SATURATED_RATE = 50_000.0  # tuples/s asked of every spout task: far above what 2 cores sustain
#: Storm settings of every campaign run (why and the pilots that measured it:
#: docs/performance-model.md, "Operating point"). Executor receive queues of 1,024 tuples instead
#: of 32,768, so that back-pressure, not queues still filling, sets the rate within the warm-up.
#: Idle and back-pressured executors sleep 1 ms at once instead of parking up to 1,000 times
#: first, which kept every node hosting an idle executor at its CPU quota (spouts already sleep
#: at once by default). Since 2026-11-26, 64-kB socket buffers and Netty write-buffer watermarks
#: of 32/64 kB between workers instead of 5 MB and 8/16 MB, so that a sender waits for a slow
#: receiver instead of piling up tens of MB per connection: with Storm's buffers frequent-routes'
#: tuples were seconds old, its bolts executed 0.7-2x what the spouts sent in the measured window,
#: and two testbeds ranked its placements at tau +0.44 (+0.72, 3.8 % apart, with these); every
#: placement also runs 1.3-2.5x faster on the same CPU. Since the evening of 2026-11-26, those
#: sleeps (spout, bolt and back-pressure wait strategies) last 10 ms instead of 1 ms: an idle or
#: held-back executor woke about 1,000 times a second, and the executor threads of a node
#: executing a few hundred tuples/s used a fifth to a half of its CPU quota
#: (benchmarks/results/HISTORY.md, "Idle executors that wake every millisecond").
STORM_CONF = {
    "topology.executor.receive.buffer.size": 1024,
    "topology.bolt.wait.progressive.level2.count": 0,
    "topology.backpressure.wait.progressive.level2.count": 0,
    "storm.messaging.netty.buffer_size": 65536,
    "storm.messaging.netty.buffer.high.watermark": 65536,
    "storm.messaging.netty.buffer.low.watermark": 32768,
    "topology.spout.wait.progressive.level3.sleep.millis": 10,
    "topology.bolt.wait.progressive.level3.sleep.millis": 10,
    "topology.backpressure.wait.progressive.level3.sleep.millis": 10,
}
QUICK_WORKLOADS = ("linear-io", "diamond-cpu", "smart-home@2high+4low")
#: The testbed's operating point beyond ``STORM_CONF``, recorded with every run
#: (``testbed_version``; runs without it are version 1). Version 2 (2026-11-26): class-data-
#: sharing archives for workers and daemons, daemons on C1 only, Nimbus' metrics store out of the
#: build directory. Not shown to measure the same as version 1 (one campaign of trending-topics
#: measured +22 % in median over version 1's, an ablation in fresh testbeds as much as version 1:
#: benchmarks/results/HISTORY.md, "Testbed versions"), so runs of one cell on two versions are not pooled
#: (:func:`streamplace.reproduce.measured.load_campaigns`).
TESTBED_VERSION = 2


@dataclass(frozen=True)
class Cell:
    """One experiment x scheduler: the placement to run (None: the scheduler found none)."""

    experiment: str    # "<workload>@<cluster>"
    kind: str          # micro-io, micro-cpu or the application's name
    scheduler: str
    problem: Problem
    placement: Placement | None
    reason: str = ""


def experiments(names: Sequence[str] | None = None) -> list[runtime.Scenario]:
    """The runtime scenarios of the papers (none named), or those named ``<workload>``,
    ``<topology>`` or ``<workload>@<cluster>``; a
    :func:`~streamplace.workloads.runtime.calibration_scenarios` run is chosen by its full name
    ``<topology>@<cluster>`` only."""
    papers = runtime.scenarios()
    if not names:
        return papers
    calibration = runtime.calibration_scenarios()
    chosen = [s for s in papers if s.topology.name in names or f"{s.workload}@{s.cluster}" in names
              or f"{s.topology.name}@{s.cluster}" in names]
    chosen += [s for s in calibration if f"{s.topology.name}@{s.cluster}" in names]
    unknown = set(names) - {s.topology.name for s in chosen} - {f"{s.workload}@{s.cluster}" for s in chosen} \
        - {f"{s.topology.name}@{s.cluster}" for s in chosen}
    if unknown:
        known = ", ".join(f"{s.topology.name}@{s.cluster}" for s in papers + calibration)
        raise ValueError(f"unknown experiment {quote(sorted(unknown)[0])} (known: {known})")
    return chosen


def saturated(topology: Topology, rate: float = SATURATED_RATE) -> Topology:
    """The topology with every source asking for ``rate`` tuples/s per task."""
    ops = [dataclasses.replace(op, source_rate=rate * op.parallelism) if op.role == "source" else op
           for op in topology.operators]
    return Topology.build(topology.name, ops, topology.streams)


def saturated_job(name: str, topology: Topology, placement: Placement, duration_s: float) -> Job:
    """A measured testbed job: ``topology`` with :func:`saturated` spouts, under ``placement``,
    with the Storm settings of :data:`STORM_CONF` (small queues, idle executors sleeping) and the
    traffic monitor on."""
    topo = Topology.build(name, saturated(topology).operators, topology.streams)
    return Job(name, topo, placement, workers_of(placement), monitor=True, duration_s=duration_s, conf=dict(STORM_CONF))


def plan(scenarios: Sequence[runtime.Scenario], schedulers=SCHEDULERS) -> list[Cell]:
    cells = []
    for sc in scenarios:
        problem = Problem.from_topology(sc.topology, runtime.named_cluster(sc.cluster))
        for label, name, params in schedulers:
            try:
                result = make_scheduler(name, dict(params)).schedule(problem)
            except ValueError as exc:  # the scheduler's model does not cover this topology
                cells.append(Cell(f"{sc.topology.name}@{sc.cluster}", sc.kind, label, problem, None, str(exc)))
                continue
            cells.append(Cell(f"{sc.topology.name}@{sc.cluster}", sc.kind, label, result.problem, result.placement,
                              "" if result.placement is not None else f"{result.status}: {result.message}"))
    return cells


def job_name(cell: Cell, rep: int) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", f"{cell.experiment}-{cell.scheduler}-r{rep}").strip("-")


def measured(problem: Problem, placement: Placement, result: dict, monitor: Path, settings: RunSettings) -> dict:
    """A run's figures from the monitor's records of its measured windows and the wire counters."""
    topo = problem.topology
    start, end = result["measure_start"], result["measure_end"]
    seconds = end - start
    load = records.load_records(monitor, start, end)
    traffic = records.traffic_records(monitor, start, end)
    bolts, spouts = records.throughput(load, topo, seconds)
    bolt_tasks = sum(op.parallelism for op in topo.operators if topo.upstream(op.name))
    node_of = {label: where["node"] for label, where in result["assignment"].items()}
    wire = sum(result.get("wire", {}).values())
    # cores of each node's executor threads (operator work, emit, queues, idle waits); node_cpu
    # minus this is the rest: transfer and Netty threads, the JVMs, the supervisor
    executor_cpu = load["cpu_seconds"].groupby(load["task"].map(node_of)).sum() / seconds if seconds > 0 and len(load) else {}
    return {
        "throughput": bolts + spouts, "bolt_throughput": bolts, "source_rate": spouts,
        "per_bolt_task_10s": 10.0 * bolts / bolt_tasks if bolt_tasks else 0.0,
        "latency_ms": records.latency_summary(records.read_monitor(monitor, "latency", start, end)),
        "wire_inter_node_bytes_per_s": wire / seconds if seconds > 0 else 0.0,
        "monitor_inter_node_bytes_per_s": records.cross_node_bytes(traffic, node_of) / seconds if seconds > 0 else 0.0,
        "node_cpu": result.get("node_cpu", {}),
        "node_executor_cpu": {node: round(float(v), 6) for node, v in dict(executor_cpu).items()},
        "plan_matches": result["assignment"] == placement.to_mapping(topo.task_labels, problem.cluster),
        "seconds": seconds, "windows": int(round(seconds / settings.window_s)),
    }


def operating_point(settings: RunSettings) -> dict:
    """What every record of a campaign run with ``settings`` carries about how it was measured:
    the testbed's CPU budget and CFS period, its version, and the Storm settings its jobs ran with
    (:data:`STORM_CONF` under ``settings.storm_conf``, merged as the run merges them:
    ``RunSettings.over``). Runs of one cell that differ in these are never pooled
    (:func:`~streamplace.reproduce.measured.load_campaigns`)."""
    bed = settings.testbed
    return {"cpu_budget": bed.budget(), "storm_conf": settings.over(STORM_CONF), "spout_selectivity": True,
            "testbed_version": TESTBED_VERSION, "cpu_period_ms": bed.cpu_period_ms}


def run_order(cells: Sequence[Cell], reps: int, rng: random.Random, first_rep: int = 0) -> list[tuple[int, Cell]]:
    """(repetition, cell) in the order they run: interleaved, every repetition visits every cell
    in a new order drawn from ``rng``. Repetitions ``first_rep`` to ``first_rep + reps - 1`` in
    the order a campaign of ``first_rep + reps`` repetitions would run them (the earlier ones'
    orders are drawn and skipped), so that more repetitions added to a campaign later run in
    orders of their own."""
    order = []
    for rep in range(first_rep + reps):
        shuffled = list(cells)
        rng.shuffle(shuffled)
        if rep >= first_rep:
            order += [(rep, c) for c in shuffled]
    return order


def testbeds(cells: Sequence[Cell], reps: int, rng: random.Random, first_rep: int = 0,
             per_rep: bool = False) -> list[tuple[str, list[tuple[int, Cell]]]]:
    """The testbeds a campaign starts, in order, each with its runs in order: one per cluster
    (named for it) running every repetition of its cells (:func:`run_order`), or with ``per_rep``
    one per cluster and repetition (``<cluster>/rep<N>``), in the same run order."""
    by_cluster: dict[str, list[Cell]] = {}
    for c in cells:
        by_cluster.setdefault(c.problem.cluster.name, []).append(c)
    out = []
    for name, group in by_cluster.items():
        order = run_order(group, reps, rng, first_rep)
        if per_rep:
            out += [(f"{name}/rep{r}", [(rep, c) for rep, c in order if rep == r]) for r in range(first_rep, first_rep + reps)]
        else:
            out.append((name, order))
    return out


def run_campaign(out_dir: Path, scenarios: Sequence[runtime.Scenario], *, reps: int, settings: RunSettings,
                 schedulers=SCHEDULERS, model: CostModel | None = None, seed: int = 0, first_rep: int = 0,
                 testbed_per_rep: bool = False, log: Callable[[str], None] = print) -> list[dict]:
    """Plans every cell, runs each ``reps`` times (:func:`run_order`; repetitions numbered from
    ``first_rep``) and appends one record per run to ``out_dir/runs.jsonl`` as it finishes.

    One testbed per cluster runs all its repetitions, or with ``testbed_per_rep`` a fresh testbed
    each repetition (its runs then also vary by what differs between testbeds, which repetitions
    inside one testbed do not show). Each record names its testbed (``testbed``)."""
    model = model or CostModel()
    out_dir.mkdir(parents=True, exist_ok=True)
    bed = settings.testbed
    cells = plan(scenarios, schedulers)
    skipped = [c for c in cells if c.placement is None]
    for c in skipped:
        log(f"skipped {c.experiment} / {c.scheduler}: {c.reason}")
    runs_file = out_dir / "runs.jsonl"
    out: list[dict] = []
    sessions = testbeds([c for c in cells if c.placement is not None], reps, random.Random(seed), first_rep, testbed_per_rep)
    total = sum(len(order) for _, order in sessions)
    point = operating_point(settings)
    began = time.monotonic()
    for testbed, order in sessions:
        jobs, cell_of = [], {}
        for rep, c in order:
            name = job_name(c, rep)
            jobs.append(saturated_job(name, c.problem.topology, c.placement, settings.duration_s))
            cell_of[name] = (rep, c)
        work = out_dir / "work" / testbed
        monitor = work / "monitor"

        def on_event(event, cell_of=cell_of, monitor=monitor, testbed=testbed):
            if event.get("event") == "testbed":
                log(event["message"])
            if event.get("event") != "result":
                return
            rep, c = cell_of[event["job"]]
            rec = {"experiment": c.experiment, "kind": c.kind, "cluster": c.problem.cluster.name,
                   "scheduler": c.scheduler, "rep": rep, "job": event["job"],
                   **measured(c.problem, c.placement, event, monitor, settings),
                   "workers": workers_of(c.placement), "finished_s": round(time.monotonic() - began, 1),
                   **point, "testbed": testbed,
                   "placement": c.placement.to_mapping(c.problem.topology.task_labels, c.problem.cluster)}
            rec.update(with_model(rec, predicted_figures(c.problem, c.placement, model, bed.budget())))
            out.append(rec)
            with open(runs_file, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            log(f"[{len(out)}/{total}] {c.experiment} {c.scheduler} r{rep}: {rec['bolt_throughput']:,.0f} bolt tuples/s "
                f"(model {rec['predicted_bolt_throughput']:,.0f}), wire {rec['wire_inter_node_bytes_per_s'] / 1e3:,.0f} kB/s, "
                f"{rec['finished_s']:.0f} s")

        run_jobs(order[0][1].problem.cluster, jobs, settings, work, monitor_dir=monitor, on_event=on_event)
    return out


# ---------------------------------------------------------------------------- summaries


def cell_stats(runs: Sequence[dict], key: str = "bolt_throughput") -> dict[tuple[str, str], dict]:
    """(experiment, scheduler) -> mean, sample standard deviation, coefficient of variation, n."""
    values: dict[tuple[str, str], list[float]] = {}
    for r in runs:
        values.setdefault((r["experiment"], r["scheduler"]), []).append(float(r[key]))
    out = {}
    for cell, v in values.items():
        arr = np.array(v)
        mean = float(arr.mean())
        sd = float(arr.std(ddof=1)) if arr.size > 1 else math.nan
        out[cell] = {"mean": mean, "sd": sd, "cv": sd / mean if mean and arr.size > 1 else math.nan, "n": int(arr.size),
                     "min": float(arr.min()), "max": float(arr.max())}
    return out


def busiest_node(runs: Sequence[dict]) -> str:
    """The node most often out of CPU quota over ``runs`` (mean throttled share of its CFS
    periods), as ``node:share``; "-" for runs recorded before node CPU was measured."""
    shares: dict[str, list[float]] = {}
    for r in runs:
        for node, cpu in r.get("node_cpu", {}).items():
            shares.setdefault(node, []).append(cpu["throttled"])
    if not shares:
        return "-"
    node = max(shares, key=lambda n: sum(shares[n]) / len(shares[n]))
    return f"{node}:{sum(shares[node]) / len(shares[node]):.0%}"


def rankings(runs: Sequence[dict], predicted_key: str = "predicted_bolt_throughput") -> dict[str, dict]:
    """Per experiment: schedulers by measured mean bolt throughput and by the model, Kendall's tau."""
    from scipy.stats import kendalltau
    stats = cell_stats(runs)
    pred: dict[tuple[str, str], float] = {}
    for r in runs:
        pred[(r["experiment"], r["scheduler"])] = float(r[predicted_key])
    out = {}
    for exp in sorted({e for e, _ in stats}):
        names = sorted(s for e, s in stats if e == exp)
        m = [stats[(exp, s)]["mean"] for s in names]
        p = [pred[(exp, s)] for s in names]
        tau = kendalltau(m, p).statistic if len(names) > 1 else math.nan
        out[exp] = {"measured": sorted(names, key=lambda s: -stats[(exp, s)]["mean"]),
                    "model": sorted(names, key=lambda s: -pred[(exp, s)]), "kendall_tau": float(tau),
                    "repeat_tau": repeat_tau([r for r in runs if r["experiment"] == exp])}
    return out

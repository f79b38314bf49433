"""The testbed measurement campaign: [I]/[T3] Sec. 6 experiments run on the Storm testbed.

Experiments are :func:`streamplace.workloads.runtime.scenarios` (runtime-size linear, diamond and
star micro-benchmarks in the I/O- and CPU-intensive configuration; smart-home and frequent-routes
on a homogeneous and a heterogeneous cluster). Every scheduler of :data:`SCHEDULERS` places each
experiment once (the baselines as the papers ran them: OLS with the papers' limits, I-Scheduler
with theta 1 s and 0); each placement then runs ``reps`` times on the testbed of
:mod:`streamplace.storm.testbed`, one job at a time, the order shuffled anew for every
repetition so that no scheduler's runs sit in a row and drift of the machine spreads over all.

Operating point (:class:`~streamplace.model.operating_point.OperatingPoint`, default
``10ms-sleeps``, the bundled cost model's): the spouts are saturated (every spout task asked for
:data:`~streamplace.model.operating_point.SATURATED_RATE` tuples/s; back-pressure holds them to
what the placement sustains), so the measured rate is the placement's sustainable throughput, the
figure the CPU-bound model predicts; executor queues and the network buffers between workers are
small, idle executors sleep 10 ms (:data:`~streamplace.model.operating_point.CAMPAIGN_CONF`); no
ackers. Other named points turn acking and ``topology.max.spout.pending`` on, restore Storm's
defaults, change the CPU budget or scale the links' bandwidth with it; every run record carries
its point (``operating_point``).

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
from types import MappingProxyType
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..files import quote
from ..fit.cases import predicted_figures, with_model
from ..fit.scores import repeat_tau
from ..model.calibration import PLUGIN_ACKER_ORDER
from ..model.performance import CostModel
from ..model import Placement, Problem, Topology
from ..model.operating_point import OPERATING_POINTS, SATURATED_RATE, OperatingPoint
from ..model.specs import placement_from_dict
from ..schedulers import make_scheduler
from ..schedulers.papers import ISCHEDULER, ISCHEDULER_NO_OPTIMISER, OLS_RELAX
from ..storm import records
from ..storm.plans import workers_of
from ..storm.run import Job, RunSettings, fallback_conf, run_jobs
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
    ("lns", "lns", {"objective": "throughput", "time_limit": 10.0}),
)
#: placements made by Nimbus itself, not by a plan: label -> the plugin's fallback for the job.
#: No plan file, so the plugin leaves the topology to Storm's own scheduler: ``storm-even``, its
#: EvenScheduler, with as many workers as streamplace's ``even`` placement uses (what
#: ``topology.workers`` would say); ``storm-ras``, its ResourceAwareScheduler with the default
#: strategy, on the operators' declared CPU and memory and the nodes' cores and memory.
NIMBUS_PLACED = MappingProxyType({"storm-even": "even", "storm-ras": "ras"})
QUICK_WORKLOADS = ("linear-io", "diamond-cpu", "smart-home@2high+4low")
#: The testbed's operating point beyond its Storm settings (:data:`~streamplace.model.operating_point.CAMPAIGN_CONF`), recorded with every run
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
    by_nimbus: bool = False   # no plan: Storm's own scheduler places the job (placement None)


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
    return OperatingPoint("rate", source_rate=rate).sources(topology)


def point_job(name: str, topology: Topology, placement: Placement | None, duration_s: float,
              point: OperatingPoint = OPERATING_POINTS["10ms-sleeps"], workers: int | None = None,
              fallback: str = "even") -> Job:
    """A measured testbed job at operating point ``point``: ``topology`` with every spout task
    asking for the point's source rate (:data:`SATURATED_RATE` when saturated), the point's Storm
    settings, the traffic monitor on. ``placement`` None: no plan, Nimbus places the job with
    Storm's ``fallback`` scheduler (``even``: on ``workers`` workers; ``ras``)."""
    topo = dataclasses.replace(point.sources(topology), name=name)
    return Job(name, topo, placement, workers_of(placement) if placement is not None else int(workers or 1),
               monitor=True, duration_s=duration_s, conf={**point.conf(), **fallback_conf(fallback)})


def saturated_job(name: str, topology: Topology, placement: Placement, duration_s: float) -> Job:
    """A measured testbed job at the bundled model's operating point (``10ms-sleeps``):
    saturated spouts, small queues, idle executors sleeping, the traffic monitor on."""
    return point_job(name, topology, placement, duration_s)


def plan(scenarios: Sequence[runtime.Scenario], schedulers=SCHEDULERS, nimbus_placed: Sequence[str] = ()) -> list[Cell]:
    """Every scheduler's placement of every scenario, and a cell without placement (Nimbus
    places it: ``by_nimbus``) for each label of ``nimbus_placed``."""
    cells = []
    for sc in scenarios:
        problem = Problem.from_topology(sc.topology, runtime.named_cluster(sc.cluster))
        for label in nimbus_placed:
            cells.append(Cell(f"{sc.topology.name}@{sc.cluster}", sc.kind, label, problem, None, by_nimbus=True))
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


def measured(problem: Problem, placement: Placement | None, result: dict, monitor: Path, settings: RunSettings) -> dict:
    """A run's figures from the monitor's records of its measured windows and the wire counters.

    ``tasks`` (per task label: tuples executed per second and cores of its executor thread) and
    ``streams`` (per ``"<from>><to>"`` operator pair: tuples per second) are what a calibration
    (:mod:`streamplace.model.calibration`) reads from a run. ``placement`` None (Nimbus placed
    the job): ``plan_matches`` is None."""
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
        "plan_matches": (result["assignment"] == placement.to_mapping(topo.task_labels, problem.cluster)
                         if placement is not None else None),
        "seconds": seconds, "windows": int(round(seconds / settings.window_s)),
        **records.rates(load, traffic, topo, seconds),
    }


def operating_point(settings: RunSettings, point: OperatingPoint = OPERATING_POINTS["10ms-sleeps"]) -> dict:
    """What every record of a campaign run at ``point`` with ``settings`` carries about how it
    was measured: the testbed's CPU budget and CFS period, its version, how the plugin dealt the
    ackers of its plans (``acker_order``), the Storm settings its jobs ran with (the point's,
    under ``settings.storm_conf``, merged as the run merges them: ``RunSettings.over``), its ackers, and the point itself (``operating_point``). Runs of one
    cell that differ in these are never pooled (:func:`~streamplace.reproduce.measured.load_campaigns`)."""
    bed = settings.testbed
    ran = point.overridden(settings.storm_conf, bed.budget())
    return {"cpu_budget": bed.budget(), "storm_conf": settings.over(point.conf()), "spout_selectivity": True,
            "testbed_version": TESTBED_VERSION, "cpu_period_ms": bed.cpu_period_ms, "ackers": settings.ackers,
            "bandwidth_scaled": bed.bandwidth_scaled, "operating_point": ran.document(), "acker_order": PLUGIN_ACKER_ORDER}


def point_settings(point: OperatingPoint, settings: RunSettings) -> RunSettings:
    """``settings`` with what ``point`` fixes: its ackers, CPU budget and link bandwidths."""
    bed = dataclasses.replace(settings.testbed, cpu_budget=point.cpu_budget if point.cpu_budget is not None else settings.testbed.cpu_budget,
                              bandwidth_scaled=point.bandwidth_scaled)
    return dataclasses.replace(settings, ackers=point.ackers, testbed=bed)


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
                 point: OperatingPoint = OPERATING_POINTS["10ms-sleeps"], schedulers=SCHEDULERS,
                 nimbus_placed: Sequence[str] = (), model: CostModel | None = None, seed: int = 0, first_rep: int = 0,
                 testbed_per_rep: bool = False, log: Callable[[str], None] = print) -> list[dict]:
    """Plans every cell, runs each ``reps`` times (:func:`run_order`; repetitions numbered from
    ``first_rep``) at operating point ``point`` and appends one record per run to
    ``out_dir/runs.jsonl`` as it finishes.

    ``point`` fixes the ackers, the CPU budget and the links over ``settings``
    (:func:`point_settings`). Cells of ``nimbus_placed`` (:data:`NIMBUS_PLACED`) run without a
    plan; their record's ``placement`` is the assignment Storm made. One testbed per cluster runs
    all its repetitions, or with ``testbed_per_rep`` a fresh testbed each repetition (its runs then
    also vary by what differs between testbeds, which repetitions inside one testbed do not show).
    Each record names its testbed (``testbed``)."""
    model = model or CostModel()
    settings = point_settings(point, settings)
    out_dir.mkdir(parents=True, exist_ok=True)
    bed = settings.testbed
    cells = plan(scenarios, schedulers, nimbus_placed)
    skipped = [c for c in cells if c.placement is None and not c.by_nimbus]
    for c in skipped:
        log(f"skipped {c.experiment} / {c.scheduler}: {c.reason}")
    # Nimbus-placed jobs get as many workers as the even placement of their experiment uses
    even_workers = {c.experiment: workers_of(c.placement) for c in cells if c.scheduler == "even" and c.placement is not None}
    runs_file = out_dir / "runs.jsonl"
    out: list[dict] = []
    sessions = testbeds([c for c in cells if c.placement is not None or c.by_nimbus], reps, random.Random(seed), first_rep,
                        testbed_per_rep)
    total = sum(len(order) for _, order in sessions)
    recorded = operating_point(settings, point)
    began = time.monotonic()
    for testbed, order in sessions:
        jobs, cell_of = [], {}
        for rep, c in order:
            name = job_name(c, rep)
            jobs.append(point_job(name, c.problem.topology, c.placement, settings.duration_s, point,
                                  workers=even_workers.get(c.experiment, len(c.problem.cluster.nodes)),
                                  fallback=NIMBUS_PLACED[c.scheduler] if c.by_nimbus else "even"))
            cell_of[name] = (rep, c)
        work = out_dir / "work" / testbed
        monitor = work / "monitor"

        def on_event(event, cell_of=cell_of, monitor=monitor, testbed=testbed):
            if event.get("event") == "testbed":
                log(event["message"])
            if event.get("event") != "result":
                return
            rep, c = cell_of[event["job"]]
            topo, cluster = c.problem.topology, c.problem.cluster
            placement = c.placement if c.placement is not None else placement_from_dict(event["assignment"], topo, cluster)
            rec = {"experiment": c.experiment, "kind": c.kind, "cluster": cluster.name,
                   "scheduler": c.scheduler, "rep": rep, "job": event["job"],
                   **measured(c.problem, c.placement, event, monitor, settings),
                   "workers": workers_of(placement), "finished_s": round(time.monotonic() - began, 1),
                   **recorded, "testbed": testbed, "placed_by": "nimbus" if c.by_nimbus else "plan",
                   "placement": placement.to_mapping(topo.task_labels, cluster)}
            rec.update(with_model(rec, predicted_figures(c.problem, placement, model, bed.budget())))
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

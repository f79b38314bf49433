"""``streamplace demo``: the main job on the embedded default (``make demo``; docs/demo.md).

Steps, each with a progress bar and its wall time (``run.json``):

1. **data**: seeded records of every bundled application
   (:mod:`streamplace.workloads.applications`) -> ``DIR/apps/<app>/records.parquet``, beside the
   application's ``topology.yaml`` (its two cluster specs are written in step 4).
2. **traffic** (Spark): the records replayed through the topology's groupings
   (:func:`streamplace.profile.traffic.replay`, 10 s windows) -> ``DIR/apps/<app>/monitoring/``.
3. **profile** (Spark): monitoring records -> ``DIR/apps/<app>/profile/``
   (:func:`streamplace.profile.metrics.build_profile`). Spark runs only for steps 2-3: the
   session (``local[*]`` unless ``--spark-master``) is stopped before scheduling. It starts with
   ``fast_start`` (the JVM's C1 compiler only): the demo's Spark jobs are many and short, and
   this halves steps 2-3 on 2 cores (measured 40 s instead of 70-75 s for the four applications);
   and ``short_jobs`` (no whole-stage code generation; :func:`~streamplace.profile.spark.session_conf`).
4. **applications**: every registered scheduler on the profile-weighted problem (measured
   tuples/s as edge weights; built from the written files exactly as ``streamplace evaluate
   TOPOLOGY CLUSTER PLACEMENT --profile DIR`` builds it) on a homogeneous and a heterogeneous
   cluster, each result evaluated by :func:`~streamplace.evaluate.records.result_record`
   (costs, loads, cohesion/coupling, predicted throughput and latency, solve time).
5. **micro-benchmarks**: the [I]/[T3] Sec. 5 layouts at a few sizes on the papers' two
   clusters, every registered scheduler; the optimum gives the gap-to-optimum plot.
6. **report**: ``results.json`` (every record, placements included), ``results.csv``,
   ``report.html`` + PNGs (:func:`streamplace.report.render.write_report`), ``run.json`` (options,
   step times, profile summaries, skipped runs) and a summary table on the terminal.

Application clusters. The [I]/[T3] Sec. 6 testbed machines (:mod:`streamplace.workloads.runtime`):
high = 4 cores / 4 slots / 4 GiB, low = 2 cores / 2 slots / 2 GiB, 1 Gbit/s. Homogeneous
``8high``: 8 high nodes; heterogeneous ``4high+4low``. The testbed's capacity of slots x 5 tasks
(20 and 10) would let any bundled job sit on one or two nodes, so capacity in tasks is sized to the
application instead: 25 % more than its task count (the slack of
:meth:`~streamplace.workloads.applications.Application.cluster`), split in proportion to cores
(``8high``: ``ceil(1.25 n / 8)`` per node; ``4high+4low``: low ``ceil(1.25 n / 12)``, high twice
that). Cores and bandwidth are the testbed's, so the performance model sees 4 and 2 cores.

Scheduler parameters. ``optimal``: ``time_limit`` (default 10 s; a proven optimum or the best
placement and bound in that time); ``ischeduler``: theta = 1 s ([I] Sec. 6); ``online``: the
papers' parameters plus an explicit ``relax_gamma=true``: rerun without the slot-load cap ``gamma``
when the cap makes it infeasible with unit task loads (the record's ``details.gamma_relaxed`` and
``message`` say so); the rest with their defaults (:data:`streamplace.schedulers.papers.PAPER_PARAMS`). Every scheduler is
built by :func:`~streamplace.schedulers.make_scheduler` with the demo's time limit as its budget,
as the CLI's ``--time-limit`` does.

``throughput`` ([N]) chooses the parallelism as well as the machines, and needs CPU costs per
tuple. Decision: it runs on the applications whose groupings its model admits (no ``global``
/ ``all`` stream: [N] Eq. 6), with its profiling derived from the *measured* CPU of the profile
(``e`` = CPU seconds / tuples executed per operator, :func:`measured_cpu_per_tuple`; MET and R0
the project's defaults). Its record is for its own job: the chosen parallelism (``parallelism``,
``n_tasks``), analytic rates of that job, node capacity = 100 % CPU and task loads = predicted
CPU, so its inter-node cost is not comparable with the fixed-parallelism placements (the summary
table marks it and leaves it out of the best cost); its predicted throughput is. That job's
topology and cluster are written to ``DIR/apps/<app>/throughput-<cluster>/``; ``streamplace
evaluate`` on them reproduces its record except the load keys (``max_utilisation``, ``imbalance``,
``overloaded_nodes``, ``valid``): its task loads depend on the machine type, which a topology spec
cannot say. ``max_batch`` stays 1 ([N] Alg. 2 as written), so the parallelism it reaches on these
8-node clusters is small (smart-home: 5-7 tasks). It is skipped, with
the reason in ``run.json`` and the report, on the micro-benchmarks (no CPU cost to measure) and on
applications with a global grouping (frequent-routes, trending-topics).

Every record holds the :func:`result_record` keys plus ``workload``, ``cluster``,
``application`` or ``layout``, ``n_tasks`` and the files that rebuild its problem
(``topology_file``, ``cluster_file``, ``profile_dir``: paths relative to DIR). ``--quick``: two
applications (page-view and trending-topics: one with and one without ``throughput``), 5,000
records each, micro-benchmarks of 10 and 14 tasks; the same steps.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..files import quote
from ..model.performance import CostModel
from ..evaluate.records import ResultRecord, records_to_csv
from ..model import Cluster, Problem, Topology
from ..model.profiling import Profiling, derive_profiling
from ..model.specs import atomic_write_text, cluster_to_dict, topology_to_dict, write_document
from ..profile.problem import load_problem
from ..schedulers import NoPlacement, available, make_scheduler
from ..schedulers.base import ScheduleResult
from ..schedulers.papers import paper_params
from ..workloads import microbench
from ..workloads.applications import APPLICATIONS, application, write_records
from ..workloads.catalogue import sized_cluster
from ..report.display import BEST, MARKS, OVERLOADED, OWN_JOB, compact, legend, metric
from ..report.page import measured_rows, write_report
from ..report.render import COST_REL_TOL, ordered
from ..storm import StormError
from .autopilot_step import autopilot_summary, run_autopilot_step
from ..storm.measured_run import run_document
from .calibration import Calibration, calibration_for
from .storm_step import run_storm_step, storm_summary


@dataclass(frozen=True)
class Sizes:
    applications: tuple[str, ...]
    records: int | None          # generated records per application (None: the application's default)
    microbench: tuple[int, ...]  # task counts of the micro-benchmarks


FULL = Sizes(tuple(APPLICATIONS), None, (10, 20, 30))
QUICK = Sizes(("page-view", "trending-topics"), 5_000, (10, 14))
WINDOW_SECONDS = 10.0
SLACK = 1.25
STEPS = ("data", "traffic", "profile", "applications", "micro-benchmarks", "storm", "autopilot", "report")


# ---------------------------------------------------------------------------- inputs


def app_clusters(n_tasks: int) -> tuple[Cluster, Cluster]:
    """The homogeneous and heterogeneous testbed clusters sized to a job of ``n_tasks`` (module
    docstring): the catalogue's ``sized`` clusters with the demo's slack."""
    return sized_cluster("homogeneous", n_tasks, SLACK), sized_cluster("heterogeneous", n_tasks, SLACK)


def measured_cpu_per_tuple(topology: Topology, loads: pd.DataFrame) -> dict[str, float]:
    """CPU seconds per executed tuple of every operator, from a profile's task loads
    (``task``, ``executed_per_s``, ``cpu_cores``): sum of CPU over sum of tuples, per operator."""
    ids = {label: t for t, label in enumerate(topology.task_labels)}
    op = topology.operator_of_task[np.array([ids[label] for label in loads["task"]], dtype=np.int64)]
    n_ops = len(topology.operators)
    cpu = np.bincount(op, weights=loads["cpu_cores"].to_numpy(float), minlength=n_ops)
    executed = np.bincount(op, weights=loads["executed_per_s"].to_numpy(float), minlength=n_ops)
    idle = [o.name for o, e in zip(topology.operators, executed) if not e > 0]
    if idle:
        raise ValueError(f"operator {quote(idle[0])} executed no tuple in the profile")
    return {o.name: float(c / e) for o, c, e in zip(topology.operators, cpu, executed)}


def measured_profiling(topology: Topology, cluster: Cluster, loads: pd.DataFrame, source: str) -> Profiling:
    """[N]'s profiling for ``cluster``'s machine types with ``e`` = the measured CPU per tuple."""
    cpu = measured_cpu_per_tuple(topology, loads)
    measured = Topology.build(topology.name, [dataclasses.replace(o, cpu_per_tuple=cpu[o.name]) for o in topology.operators],
                              topology.streams)
    return dataclasses.replace(derive_profiling(measured, cluster), source=source)


@dataclass(frozen=True)
class Instance:
    """One workload on one cluster, with the files that rebuild its problem."""

    context: dict                      # workload, cluster, application|layout, n_tasks
    files: dict                        # topology_file, cluster_file, profile_dir (relative to DIR)
    problem: Problem
    loads: pd.DataFrame | None = None  # measured task loads (applications)

    @property
    def label(self) -> str:
        return f"{self.context['workload']}@{self.context['cluster']}"


def problem_from_files(out_dir: Path, files: dict) -> Problem:
    """The problem ``streamplace evaluate`` builds from these files (measured weights with a profile)."""
    return load_problem(out_dir / files["topology_file"], out_dir / files["cluster_file"],
                        out_dir / files["profile_dir"] if files.get("profile_dir") else None)


def _instance(out_dir: Path, context: dict, topology_file: str, cluster_file: str, profile_dir: str | None = None,
              loads: pd.DataFrame | None = None) -> Instance:
    files = {"topology_file": topology_file, "cluster_file": cluster_file, "profile_dir": profile_dir}
    return Instance(context, files, problem_from_files(out_dir, files), loads)


def microbench_instances(out_dir: Path, sizes: tuple[int, ...]) -> list[Instance]:
    """The [I]/[T3] Sec. 5 micro-benchmarks of ``sizes`` tasks on the papers' two clusters (specs in DIR/microbench)."""
    for preset in microbench.CLUSTER_PRESETS:
        write_document(cluster_to_dict(microbench.cluster(preset)), out_dir / f"microbench/cluster-{preset}.yaml")
    out = []
    for layout in microbench.LAYOUTS:
        for n in sizes:
            topology_file = f"microbench/{layout}-{n}.yaml"
            write_document(topology_to_dict(microbench.microbench(layout, n)), out_dir / topology_file)
            for preset in microbench.CLUSTER_PRESETS:
                context = {"workload": f"{layout}-{n}", "cluster": preset, "layout": layout, "n_tasks": n}
                out.append(_instance(out_dir, context, topology_file, f"microbench/cluster-{preset}.yaml"))
    return out


# ---------------------------------------------------------------------------- the Spark part


@dataclass
class DemoRun:
    """What :func:`run_demo` produced."""

    out_dir: Path
    records: list[ResultRecord] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    steps: dict[str, float] = field(default_factory=dict)
    applications: dict[str, dict] = field(default_factory=dict)
    spark_master: str = ""
    model: CostModel | None = None   # --cost-model (None: the bundled default)
    calibration: Calibration | None = None   # --calibrate: one job's model calibrated on its run
    storm: dict | None = None        # the storm step's run.json
    autopilot: dict | None = None    # the autopilot step's document (autopilot_step)

    def model_for(self, instance: Instance):
        """What predicts ``instance``'s performance: its calibrated model, else ``model``."""
        calibrated = self.calibration is not None and self.calibration.job == instance.label
        return self.calibration.model if calibrated else self.model


class _Steps:
    """One progress bar per step, created up front; a log line with the time when a step ends."""

    def __init__(self, progress: Progress, run: DemoRun, totals: dict[str, int]):
        self.progress, self.run = progress, run
        self.ids = {s: progress.add_task(f"[{i}/{len(STEPS)}] {s}", total=totals[s], start=False)
                    for i, s in enumerate(STEPS, 1)}
        self.current: str | None = None
        self.began = 0.0

    def start(self, step: str) -> None:
        self.current, self.began = step, time.perf_counter()
        self.progress.start_task(self.ids[step])

    def item(self, text: str) -> None:
        number = STEPS.index(self.current) + 1
        self.progress.update(self.ids[self.current], description=f"[{number}/{len(STEPS)}] {self.current}: {text}")

    def advance(self) -> None:
        self.progress.advance(self.ids[self.current])

    def done(self, summary: str = "") -> None:
        seconds = time.perf_counter() - self.began
        self.run.steps[self.current] = seconds
        number = STEPS.index(self.current) + 1
        self.progress.update(self.ids[self.current], description=f"[{number}/{len(STEPS)}] {self.current}",
                             completed=self.progress.tasks[self.ids[self.current]].total)
        self.progress.stop_task(self.ids[self.current])
        self.progress.console.print(f"[{number}/{len(STEPS)}] {self.current}: done in {seconds:.1f} s"
                                    f"{': ' + summary if summary else ''}", markup=False, highlight=False)


def _generate(names: tuple[str, ...], n_records: int | None, out_dir: Path, steps: _Steps, run: DemoRun) -> dict[str, Path]:
    """Step 1: each application's topology and generated records (seed 0); the records' paths."""
    steps.start("data")
    records = {}
    for name in names:
        steps.item(name)
        app = application(name)
        write_document(topology_to_dict(app.topology), out_dir / "apps" / name / "topology.yaml")
        count = n_records or app.default_records
        records[name] = write_records(app.records(count, 0), out_dir / "apps" / name / "records.parquet")
        run.applications[name] = {"records": count, "tasks": app.topology.n_tasks, "description": app.description}
        steps.advance()
    steps.done(", ".join(f"{n} {run.applications[n]['records']:,} records" for n in names))
    return records


def _profile(spark, records: dict[str, Path], out_dir: Path, steps: _Steps, run: DemoRun) -> dict[str, pd.DataFrame]:
    """Steps 2 (already started: it includes the session start) and 3 on ``spark``: each
    application's measured task loads (its profile is in ``DIR/apps/<app>/profile``)."""
    from ..profile import inspect_input
    from ..profile.metrics import build_profile
    from ..profile.traffic import read_application_records, release, replay, write_monitoring

    monitoring = {}
    for name, path in records.items():
        steps.item(f"{name} (Spark {spark.sparkContext.master})")
        app = application(name)
        inp = inspect_input(path, None, (app.time_column,))
        mon = replay(spark, app.topology, read_application_records(spark, inp), logic=app.logic,
                     time_column=app.time_column, window_seconds=WINDOW_SECONDS)
        try:
            monitoring[name] = write_monitoring(mon, out_dir / "apps" / name / "monitoring")
        finally:
            release(mon)
        run.applications[name]["tuples_executed"] = dict(mon.executed)
        steps.advance()
    steps.done(f"{len(records)} applications replayed in {WINDOW_SECONDS:g} s windows on {spark.sparkContext.master}")

    steps.start("profile")
    loads = {}
    for name, (traffic, load) in monitoring.items():
        steps.item(name)
        profile = build_profile(spark, application(name).topology, [str(traffic)], [str(load)],
                                out_dir=out_dir / "apps" / name / "profile")
        run.applications[name]["profile"] = {k: profile.summary[k] for k in ("rows_read", "rows_used", "rows_rejected", "edges")}
        loads[name] = profile.loads
        steps.advance()
    steps.done(", ".join(f"{n} {a['profile']['edges']} edges" for n, a in run.applications.items()))
    run.spark_master = spark.sparkContext.master
    return loads


def application_instances(out_dir: Path, loads: dict[str, pd.DataFrame], run: DemoRun) -> list[Instance]:
    """Each profiled application on its two clusters (the cluster specs are written beside its topology)."""
    instances = []
    for name, measured in loads.items():
        base, n_tasks = f"apps/{name}", application(name).topology.n_tasks
        clusters = app_clusters(n_tasks)
        run.applications[name]["clusters"] = {c.name: {n.machine_type: n.capacity for n in c.nodes} for c in clusters}
        for cluster in clusters:
            write_document(cluster_to_dict(cluster), out_dir / base / f"cluster-{cluster.name}.yaml")
            context = {"workload": name, "cluster": cluster.name, "application": name, "n_tasks": n_tasks}
            instances.append(_instance(out_dir, context, f"{base}/topology.yaml", f"{base}/cluster-{cluster.name}.yaml",
                                       f"{base}/profile", measured))
    return instances


# ---------------------------------------------------------------------------- scheduling


Runner = Callable[[Problem], ScheduleResult]


# The demo's scheduler grid: every registered scheduler with its defaults and the demo's time
# limit as its budget, except the papers' parameters (schedulers.papers; module docstring).


def runner(name: str, instance: Instance, *, time_limit: float, model=None) -> Runner | str:
    """How ``name`` runs on ``instance``, or the reason it is skipped (module docstring);
    ``model``: the predictor of the instance's performance (None: the bundled model), for the
    schedulers that use one."""
    scheduler = make_scheduler(name, paper_params(name), time_limit=time_limit)
    if model is not None:
        scheduler = scheduler.with_predictor(model)
    if scheduler.needs_profiling:
        if instance.loads is None:
            return "no CPU cost per tuple to measure (the micro-benchmarks model traffic only)"
        reason = scheduler.applicable(instance.problem)
        if reason:
            return reason
        try:
            profiling = measured_profiling(instance.problem.topology, instance.problem.cluster, instance.loads,
                                           f"<measured CPU of {instance.files['profile_dir']}>")
        except (NoPlacement, ValueError) as exc:
            return str(exc)
        scheduler = dataclasses.replace(scheduler, profiling=profiling)
    return scheduler.schedule


def _own_job_files(out_dir: Path, instance: Instance, result: ScheduleResult) -> dict:
    """Specs of a job whose parallelism the scheduler chose (throughput), for ``streamplace evaluate``."""
    base = f"apps/{instance.context['application']}/{result.scheduler}-{instance.context['cluster']}"
    write_document(topology_to_dict(result.problem.topology), out_dir / base / "topology.yaml")
    write_document(cluster_to_dict(result.problem.cluster), out_dir / base / "cluster.yaml")
    return {"topology_file": f"{base}/topology.yaml", "cluster_file": f"{base}/cluster.yaml", "profile_dir": None}


def schedule_all(instances: list[Instance], out_dir: Path, steps: _Steps, run: DemoRun, *, time_limit: float) -> None:
    names = available()
    for inst in instances:
        for name in names:
            steps.item(f"{name} on {inst.label}")
            model = run.model_for(inst)
            how = runner(name, inst, time_limit=time_limit, model=model)
            if isinstance(how, str):
                run.skipped.append({"workload": inst.context["workload"], "cluster": inst.context["cluster"],
                                    "scheduler": name, "reason": how})
            else:
                result = how(inst.problem)
                record = ResultRecord.of(result, given=inst.problem, model=model, context=inst.context,
                                         extra=inst.files)
                if record.own_job:   # the scheduler chose another job: its specs, its task count
                    record = dataclasses.replace(record, context={**record.context, "n_tasks": result.problem.topology.n_tasks},
                                                 extra=_own_job_files(out_dir, inst, result))
                run.records.append(record)
            steps.advance()


# ---------------------------------------------------------------------------- summary


SCOREBOARD_ROWS = (("inter_node_cost", min), ("throughput", max), ("seconds", min))   # each with what "best" is


def _comparable(rec: ResultRecord, key: str) -> bool:
    """A value that competes for "best": a placement within capacity, of the given job
    (a scheduler that chose its own parallelism competes on throughput and time only)."""
    return rec.figure(key) is not None and rec.evaluation.valid and not (key == "inter_node_cost" and rec.own_job)


def scoreboard(records: Sequence[ResultRecord]) -> Table:
    """Per workload x cluster, one column per scheduler: inter-node traffic, predicted throughput
    and solve time, the best of each row marked (the product's marks, :mod:`.display`)."""
    names = ordered(rec.scheduler for rec in records)
    table = Table(title=", ".join(metric(key).label for key, _ in SCOREBOARD_ROWS), box=box.SIMPLE_HEAD,
                  caption=legend(MARKS), caption_justify="left")
    for col in ("workload", "cluster", "metric", *names):
        table.add_column(col, justify="left" if col in ("workload", "cluster", "metric") else "right")
    by_instance: dict[tuple, dict[str, ResultRecord]] = {}
    for rec in records:
        by_instance.setdefault((rec.context["workload"], rec.context["cluster"]), {})[rec.scheduler] = rec
    for (workload, cluster), recs in by_instance.items():
        for i, (key, pick) in enumerate(SCOREBOARD_ROWS):
            candidates = [r.figure(key) for r in recs.values() if _comparable(r, key)]
            best = pick(candidates) if candidates else None
            cells = []
            for name in names:
                rec = recs.get(name)
                value = rec.figure(key) if rec else None
                text = compact(value, key)
                if value is not None and best is not None and _comparable(rec, key) and \
                        abs(value - best) <= COST_REL_TOL * max(1.0, abs(best)):
                    text = f"[{BEST.style}]{text}{BEST.symbol}[/]"
                elif rec and value is not None and not rec.evaluation.valid and key != "seconds":
                    text += OVERLOADED.symbol
                if rec and key == "inter_node_cost" and rec.own_job and value is not None:
                    text += OWN_JOB.symbol
                cells.append(text)
            table.add_row(workload if i == 0 else "", cluster if i == 0 else "", metric(key).short, *cells,
                          end_section=i == len(SCOREBOARD_ROWS) - 1)
    return table


def _print_whole(console: Console, table: Table) -> None:
    """Print ``table`` at its natural width when the output is not a terminal (a log, a pipe), so
    no cell is cropped to Rich's default 80 columns; a terminal gets the terminal's width."""
    saved = console.width
    if not console.is_terminal:
        console.width = max(saved, Measurement.get(console, console.options.update(width=10_000), table).maximum)
    try:
        console.print(table)
    finally:
        console.width = saved


def _intro(run: DemoRun, quick: bool, wall: float) -> str:
    apps = "; ".join(f"{name}: {a['records']:,} generated records, {a['tasks']} tasks, profile of "
                     f"{a['profile']['edges']} edges from {a['profile']['rows_used']:,} monitoring rows"
                     for name, a in run.applications.items())
    by_reason: dict[tuple, list[str]] = {}
    for s in run.skipped:
        by_reason.setdefault((s["scheduler"], s["reason"]), []).append(s["workload"])
    skipped = "; ".join(f"{name} on {', '.join(dict.fromkeys(workloads))}: {reason}"
                        for (name, reason), workloads in by_reason.items())
    return "\n\n".join([
        f"The main job{' (--quick sizes)' if quick else ''}: bundled applications generated, replayed on Spark into "
        f"monitoring records and profiled; every registered scheduler on the profile-weighted problem on a homogeneous "
        f"(8high) and a heterogeneous (4high+4low) testbed cluster, then the micro-benchmarks on the papers' clusters. "
        f"{len(run.records)} results in {wall:.0f} s.",
        f"Applications: {apps}.",
        "Inter-node traffic of the applications is in measured tuples/s, and each task's CPU need is the cores the "
        "profile measured for it, checked against every node's cores beside its task capacity. The throughput scheduler chooses its own "
        "parallelism (details in results.json): its inter-node traffic is that of another job; its predicted "
        "throughput compares. Where the optimal solver did not prove the optimum within its time limit (workloads "
        "starred in the gap plot), gaps are measured against its lower bound, which can lie far below the optimum.",
        f"Not run: {skipped}." if skipped else "",
    ])


def _write_outputs(run: DemoRun, out_dir: Path, *, quick: bool, wall: float) -> None:
    documents = [record.to_dict() for record in run.records]
    atomic_write_text(out_dir / "results.json", json.dumps(documents, indent=1) + "\n")
    atomic_write_text(out_dir / "results.csv", records_to_csv(documents))
    storm = run.storm if run.storm and "jobs" in run.storm else None
    write_report(documents, out_dir, title="streamplace demo", intro=_intro(run, quick, wall),
                 measured=measured_rows(storm) if storm else (),
                 autopilot=run.autopilot if run.autopilot and "timeline" in run.autopilot else None)


def _scheduler_seconds(records: Sequence[ResultRecord]) -> dict[str, float]:
    out: dict[str, float] = {}
    for rec in records:
        out[rec.scheduler] = out.get(rec.scheduler, 0.0) + rec.seconds
    return {k: round(v, 3) for k, v in out.items()}


# ---------------------------------------------------------------------------- the job


def run_demo(out_dir: Path, *, quick: bool = False, time_limit: float = 10.0, console: Console | None = None,
             spark=None, master: str | None = None, model: CostModel | None = None, storm: bool = True,
             calibrate: str | Path | None = None) -> DemoRun:
    """The main job into ``out_dir``. ``spark``: the session to use; without it, the session running
    in this process if any (and ``master`` is None or its master), else a new one on ``master``
    (default ``local[*]``), stopped after the profiling steps. ``calibrate``: a run of one of the
    demo's jobs that job's predictions are calibrated on (:mod:`.calibration`)."""
    from ..profile.spark import active_session, resolve_master, spark_session

    if not time_limit > 0:
        raise ValueError(f"the optimal solver's time limit must be > 0 seconds, got {time_limit}")
    console = console or Console()
    if calibrate is not None:
        run_document(calibrate)   # a missing run refused before the long steps
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = QUICK if quick else FULL
    run = DemoRun(out_dir, model=model)
    began = time.perf_counter()
    n_micro = len(microbench.LAYOUTS) * len(microbench.CLUSTER_PRESETS) * len(sizes.microbench)
    n_apps = len(sizes.applications)
    totals = {"data": n_apps, "traffic": n_apps, "profile": n_apps, "applications": n_apps * 2 * len(available()),
              "micro-benchmarks": n_micro * len(available()), "storm": 2 if storm else 0,
              "autopilot": 1 if storm else 0, "report": 1}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        steps = _Steps(progress, run, totals)
        records = _generate(sizes.applications, sizes.records, out_dir, steps, run)
        steps.start("traffic")
        if spark is not None:
            loads = _profile(spark, records, out_dir, steps, run)
        else:
            steps.item(f"starting Spark ({resolve_master(master) if active_session() is None else 'running session'})")
            with spark_session(master, fast_start=True, short_jobs=True) as session:  # C1 only, no whole-stage codegen
                loads = _profile(session, records, out_dir, steps, run)
        instances = application_instances(out_dir, loads, run)
        if calibrate is not None:
            run.calibration = calibration_for(instances, calibrate, model)
            progress.console.print(f"{run.calibration.job}: predictions calibrated on {calibrate}: "
                                   f"{run.calibration.model.describe()}", markup=False, highlight=False)
        steps.start("applications")
        schedule_all(instances, out_dir, steps, run, time_limit=time_limit)
        steps.done(f"{len(instances)} application instances x {len(available())} schedulers")
        steps.start("micro-benchmarks")
        schedule_all(microbench_instances(out_dir, sizes.microbench), out_dir, steps, run, time_limit=time_limit)
        steps.done(f"{n_micro} instances, sizes {', '.join(map(str, sizes.microbench))}")
        if storm:
            steps.start("storm")
            steps.item("the recommended placement and even's on Storm")

            def storm_log(line: str) -> None:
                if line.startswith("storm: measured"):
                    steps.advance()
                else:
                    progress.console.print(line, markup=False, highlight=False)
            try:
                run.storm = run_storm_step(run.records, out_dir, problem_from_files, model=model, log=storm_log)
                steps.done(storm_summary(run.storm))
            except StormError as exc:   # the report of everything else still gets written
                run.storm = {"error": str(exc)}
                steps.done(f"not run: {exc}")
            steps.start("autopilot")
            steps.item("a job whose keys skew mid-run, the autopilot beside it")
            try:
                run.autopilot = run_autopilot_step(out_dir, quick=quick, log=lambda line: progress.console.print(
                    line, markup=False, highlight=False))
                steps.advance()
                steps.done(autopilot_summary(run.autopilot))
            except StormError as exc:
                run.autopilot = {"error": str(exc)}
                steps.done(f"not run: {exc}")
        steps.start("report")
        steps.item("results.json, results.csv, report.html, PNGs")
        _write_outputs(run, out_dir, quick=quick, wall=time.perf_counter() - began)
        steps.advance()
        steps.done()
    wall = time.perf_counter() - began
    atomic_write_text(out_dir / "run.json", json.dumps({
        "quick": quick, "time_limit": time_limit, "spark_master": run.spark_master, "wall_seconds": round(wall, 3),
        "steps": {k: round(v, 3) for k, v in run.steps.items()}, "scheduler_seconds": _scheduler_seconds(run.records),
        "schedulers": available(), "applications": run.applications, "microbench_sizes": list(sizes.microbench),
        "skipped": run.skipped, "storm": run.storm, "autopilot": run.autopilot,
        **({"calibrated": run.calibration.document()} if run.calibration else {}),
    }, indent=1) + "\n")
    _print_whole(console, scoreboard(run.records))
    where = ", ".join(f"{k} {v:.0f} s" for k, v in run.steps.items())
    console.print(f"{len(run.records)} results in {wall:.0f} s ({where}); {len(run.skipped)} runs skipped (reasons in "
                  f"run.json). Wrote {out_dir / 'report.html'}, PNGs, results.csv, results.json, run.json")
    return run

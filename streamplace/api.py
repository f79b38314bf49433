"""The library's public API: every use case of the ``streamplace`` command, as functions
(``import streamplace as sp``). The command line only parses its options, calls one of these and
prints; each is documented with an example.

Specs and problems: every use case takes the job as a :class:`Problem` or as the files a command
names (:class:`JobFiles`: topology, cluster, and optionally a profile, a cost-model file and a
run to calibrate on), which it loads itself:

>>> import streamplace as sp
>>> problem = sp.load_problem("diamond30.yaml", "het.yaml")            # doctest: +SKIP
>>> job = sp.JobFiles("diamond30.yaml", "het.yaml", calibrate="out/run-even")  # doctest: +SKIP
>>> topo = sp.generate(sp.TOPOLOGIES, "microbench", ["layout=diamond", "tasks=30"])[0]  # doctest: +SKIP
>>> cluster = sp.make_cluster(preset="heterogeneous")                  # doctest: +SKIP
>>> sp.write_application("page-view", "out/app", records=5000).records  # doctest: +SKIP

(Two use cases are not named after their command: ``streamplace.export`` and ``streamplace.profile``
are packages, so the functions are :func:`export_placement` and :func:`profile_records`.)

Schedule, evaluate, compare and recommend, reschedule, diff:

>>> result = sp.schedule(problem, "ischeduler", time_limit=5)          # doctest: +SKIP
>>> sp.evaluate_placement(problem, result.placement)["inter_node_cost"]  # doctest: +SKIP
>>> sp.run_scheduler(problem, "metis").record.evaluation.placement     # doctest: +SKIP
>>> sp.compare(problem, ["even", "metis", "optimal"], time_limit=5).verdict  # doctest: +SKIP
'recommended: metis (highest predicted throughput among ...'
>>> records = sp.compare(problem, ["even", "metis"]).records             # doctest: +SKIP
>>> sp.recommend(records, "traffic").index                             # doctest: +SKIP
>>> records[0].evaluation.throughput, records[0].vs_default            # doctest: +SKIP
>>> sp.reschedule(problem, "running.json", max_moves=3).record.extra["diff"]  # doctest: +SKIP
>>> sp.diff_files("even.json", "metis.json", problem).node_moves       # doctest: +SKIP

Predictions at the job's own operating point (calibrated on a run of the job, e.g. under Storm's
even placement):

>>> model = sp.calibrate(problem, "out/run-even")                      # doctest: +SKIP
>>> sp.evaluate_placement(problem, "metis.json", cost_model=model)["throughput"]  # doctest: +SKIP
>>> sp.compare(problem, ["even", "metis", "lns"], model=model).verdict  # doctest: +SKIP
>>> sp.compare(job, ["even", "metis", "lns"]).verdict                  # doctest: +SKIP

Other engines and Storm:

>>> sp.export_placement("metis.json", "heron").document                          # doctest: +SKIP
>>> sp.export_placement("metis.json", "storm-plan", problem, output="plans/").written  # doctest: +SKIP
>>> sp.storm_run(problem, "out/run", sp.RunSettings(duration_s=30), scheduler="metis").run["throughput"]  # doctest: +SKIP

Profiles (Spark), the demo, reproductions, sweeps and their report:

>>> sp.profile_records("t.yaml", ["mon/traffic.jsonl"], ["mon/load.jsonl"], "out/profile").summary  # doctest: +SKIP
>>> sp.replay_traffic("records.parquet", "out/mon", app="page-view")   # doctest: +SKIP
>>> sp.run_demo("out/demo", quick=True)                                # doctest: +SKIP
>>> sp.reproduce_papers(["t3"], "out/t3", quick=True)                         # doctest: +SKIP
>>> sp.sweep("grid.yaml", "out/sweep", report=True).report            # doctest: +SKIP

Spec files load and save with :func:`load_topology`, :func:`load_cluster`, :func:`load_placement`
and :func:`write_document`; every scheduler is built by name through :func:`make_scheduler`
(``available()`` lists them) and returns an immutable :class:`ScheduleResult`. A problem with
the caller's input raises :class:`InputError`, :class:`SpecError` (``FILE: FIELD: problem``),
:class:`ParameterError` or :class:`StormError`: one line each.

The modules behind the heavier use cases (Spark, Storm, the demo, the reports) are imported on
first call, so ``import streamplace.api`` stays cheap.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .autopilot.loop import Settings as AutopilotSettings
from .autopilot.policy import POLICY_THRESHOLDS, Hysteresis
from .evaluate import comparison, scheduled
from .evaluate.comparison import Comparison
from .evaluate.decision import OBJECTIVES, Decision, recommend
from .evaluate.diff import PlanDiff, diff_placements
from .evaluate.diff import diff_files as _diff_files
from .evaluate.records import Evaluation, ResultRecord, evaluation_record, records_to_csv, result_record
from .evaluate.scheduled import Scheduled
from .evaluate.verdict import Judgement, judge
from .interrupt import run_interruptible
from .model import Cluster, Node, Operator, Placement, Problem, Stream, Topology, build_task_graph
from .model.errors import FieldError, InputError, Notice
from .model.keyvalue import parse_bool, parse_pairs, per_scheduler
from .memory import ENV as MEMORY_LIMIT_ENV
from .memory import MemoryLimitError, memory_limit, parse_size
from .model.calibration import CalibratedModel
from .model.operating_point import OPERATING_POINTS
from .model.performance import CostModel, Predictor, load_cost_model, predict
from .model.profiling import DEFAULT_MET, profiling_to_dict
from .files import (OutputError, check_output_dir, check_output_file, dumps_json, guarding, note_input, printable,
                    quote, refuse_overlap)
from .model.specs import (SpecError, atomic_write_text, cluster_to_dict, load_cluster, load_placement, load_topology,
                          read_document, topology_to_dict, write_document)
from .profile import PROFILE_FILES
from .profile.problem import load_problem
from .profile.runs import expand_paths
from .schedulers import ParameterError, ScheduleResult, available, make_scheduler
from .schedulers.base import MAX_TIME_LIMIT
from .storm.errors import StormError
from .workloads import nasiri
from .workloads.applications import APPLICATIONS, application, write_records
from .workloads.catalogue import CLUSTER_GENERATORS, PRESETS, REQUIRED, TOPOLOGIES, describe, generate
from .workloads.catalogue import preset as cluster_preset

#: the papers ``reproduce`` rebuilds (= streamplace.reproduce.PAPERS, which the CLI's --paper
#: choices need without importing the reproductions; tests/reproduce/test_reproduce.py checks the two agree)
REPRODUCE_PAPERS = ("ischeduler", "t3", "metis", "lf", "throughput")


def schedule(job: Problem | JobFiles, scheduler: str, params: dict[str, Any] | None = None, *, seed: int | None = None,
             time_limit: float | None = None, profiling: Any = None) -> ScheduleResult:
    """Run the registered ``scheduler`` on the job (parameters as :func:`make_scheduler` takes
    them). :func:`run_scheduler` also gives the record ``streamplace schedule`` prints."""
    return make_scheduler(scheduler, params, seed=seed, time_limit=time_limit, profiling=profiling).schedule(_problem(job))


#: a run directory to calibrate on, or several of one placement at one operating point
Runs = str | os.PathLike | Sequence[str | os.PathLike]


@dataclass(frozen=True)
class JobFiles:
    """A job as the files a command names: the ``topology`` and ``cluster`` specs, and optionally
    a ``profile`` directory (its measured rates become the task graph's weights), a ``cost_model``
    file and a run to ``calibrate`` the predictions on (:func:`calibrate`). Every use case that
    takes a :class:`Problem` takes one of these instead; those that predict do so with its model
    (the others read the topology and cluster only).

    >>> sp.compare(sp.JobFiles("t.yaml", "c.yaml", calibrate="out/run-even"), ["even", "lns"]).verdict  # doctest: +SKIP
    """

    topology: str | os.PathLike
    cluster: str | os.PathLike
    profile: str | os.PathLike | None = None
    cost_model: str | os.PathLike | None = None
    calibrate: Runs | None = None

    @functools.cached_property
    def problem(self) -> Problem:
        """The problem the files hold (read once)."""
        return load_problem(self.topology, self.cluster, self.profile)

    def title(self) -> str:
        """``<topology> on <cluster>``, by the specs' names."""
        return f"{self.problem.topology.name} on {self.problem.cluster.name}"

    def predictor(self, problem: Problem, on_note: Callable[[str], None] | None = None) -> Predictor | None:
        """The job's predictor (:func:`predictor`); ``on_note`` hears what a calibration run gave."""
        model = predictor(problem, cost_model=load_cost_model(self.cost_model) if self.cost_model else None,
                          calibrate_on=self.calibrate)
        if self.calibrate is not None and on_note is not None:
            runs = self.calibrate if isinstance(self.calibrate, (str, os.PathLike)) else ", ".join(map(str, self.calibrate))
            on_note(f"predictions calibrated on {runs}: {model.describe()}")
        return model


Job = Problem | JobFiles


def _problem(job: Job) -> Problem:
    """The job's problem (a :class:`JobFiles`' loaded; its predictor is not built)."""
    return job.problem if isinstance(job, JobFiles) else job


def _resolved(job: Job, model: Predictor | None = None,
              on_note: Callable[[str], None] | None = None) -> tuple[Problem, Predictor | None]:
    """(problem, model): a :class:`JobFiles`' problem and predictor (a ``model`` given wins), or a
    :class:`Problem` with ``model`` as given."""
    if isinstance(job, JobFiles):
        problem = job.problem
        return problem, model if model is not None else job.predictor(problem, on_note)
    return job, model


def run_scheduler(job: Job, scheduler: str, params: dict | None = None, *, model: Predictor | None = None,
                  on_note: Callable[[str], None] | None = None, **options) -> Scheduled:
    """``scheduler`` run on the job, with the record ``streamplace schedule`` prints
    (:func:`streamplace.evaluate.scheduled.schedule`: ``seed``, ``time_limit``, ``profiling``).

    >>> sp.run_scheduler(sp.JobFiles("t.yaml", "c.yaml"), "metis").document()["inter_node_cost"]  # doctest: +SKIP
    """
    problem, model = _resolved(job, model, on_note)
    return scheduled.schedule(problem, scheduler, params, model=model, on_note=on_note, **options)


def reschedule(job: Job, current: str | os.PathLike | dict, scheduler: str = "lns", params: dict | None = None, *,
               model: Predictor | None = None, on_note: Callable[[str], None] | None = None, **options) -> Scheduled:
    """A new placement for the job running as ``current`` with its move list
    (:func:`streamplace.evaluate.scheduled.reschedule`: ``seed``, ``time_limit``, ``max_moves``,
    ``migration_weight``)."""
    problem, model = _resolved(job, model, on_note)
    return scheduled.reschedule(problem, current, scheduler, params, model=model, on_note=on_note, **options)


def compare(job: Job, schedulers: Sequence[str] | None = None, params: dict[str, dict] | None = None, *,
            model: Predictor | None = None, on_note: Callable[[str], None] | None = None, **options) -> Comparison:
    """Every scheduler in ``schedulers`` (default: all) on the job, and the recommendation
    (:func:`streamplace.evaluate.comparison.compare`: ``seed``, ``time_limit``, ``profiling``,
    ``objective``, ``running``)."""
    problem, model = _resolved(job, model, on_note)
    return comparison.compare(problem, schedulers, params, model=model, on_note=on_note, **options)


def diff_files(first: str | os.PathLike, second: str | os.PathLike, job: Job | None = None) -> PlanDiff:
    """What changes from placement file ``first`` to ``second`` (:func:`streamplace.evaluate.diff.diff_files`);
    with the job the traffic change comes from its task graph."""
    return _diff_files(first, second, _problem(job) if job is not None else None)


def calibrate(problem: Problem, run: Runs, *, cost_model: CostModel | None = None) -> CalibratedModel:
    """The performance model calibrated on ``run`` (a ``storm run`` output directory of
    ``problem``'s job, or one made the same way on a real cluster:
    :mod:`streamplace.storm.measured_run`): it predicts placements of this job at the operating
    point the run had (acking, max spout pending, wait strategies, CPU budget). Several runs of
    one placement at one operating point are averaged, and their spread is kept
    (:func:`streamplace.model.calibration.calibrate_on_runs`)."""
    from .model.calibration import calibrate_on_runs
    from .storm.measured_run import read_run
    paths = [run] if isinstance(run, (str, os.PathLike)) else list(run)
    measured = [read_run(path, problem) for path in paths]   # their own errors name the file and field
    try:
        return calibrate_on_runs(problem, measured, cost_model)
    except ValueError as exc:   # runs the model cannot be calibrated on
        raise InputError(f"--calibrate {' '.join(map(str, paths))}: {exc}") from None


def predictor(problem: Problem, *, cost_model: CostModel | None = None,
              calibrate_on: Runs | None = None) -> Predictor | None:
    """What predicts performance for a command: the model calibrated on ``calibrate_on`` (a run
    directory, or several of one placement) if given, else ``cost_model`` (None: the bundled default)."""
    return calibrate(problem, calibrate_on, cost_model=cost_model) if calibrate_on is not None else cost_model


def run_autopilot(job: Job, monitor: str | os.PathLike, plan_dir: str | os.PathLike, *,
              log: str | os.PathLike | None = None, current: str | os.PathLike | None = None, policy: str = "hysteresis",
              period_s: float | None = None, periods: int | None = None, operating_point: str | None = None,
              receive: str | None = None, on_decision: Callable | None = None,
              on_note: Callable[[str], None] | None = None, **options) -> int:
    """Keeps the job's running topology well placed (:mod:`streamplace.autopilot`): every
    ``period_s`` (default one window) it reads ``monitor``'s windows, calibrates, reschedules and,
    when ``policy`` says so, writes the plan into ``plan_dir``; one decision per period goes to
    ``log`` (default ``plan_dir/<topology>.autopilot.jsonl``), from which a restart resumes.
    ``options``: the loop's settings (fields of :class:`AutopilotSettings`: ``window_s``,
    ``horizon_windows``, ``max_moves``, ``migration_s``, ``payback_s``, ``rewarm_s``,
    ``load_change``, ``time_limit``, ``steady_tolerance``) and the policy's thresholds (fields of
    :class:`Hysteresis`: ``min_gain``, ``confirm``, ``cooldown_s``); each one left out takes its
    default there. ``receive`` (``HOST:PORT``): a records receiver listens there for the windows
    the topology's monitor sends through Storm's metrics path and writes them into ``monitor``,
    while the loop runs; ``on_note`` hears what it reports (drops). Returns the periods run.

    >>> sp.run_autopilot(problem, "monitor/", "plans/", current="even.json", periods=1)    # doctest: +SKIP
    """
    from .autopilot.loop import Autopilot, run
    from .autopilot.policy import POLICIES
    from .model.operating_point import OperatingPoint, named
    problem = _problem(job)
    if policy not in POLICIES:
        raise InputError(f"--policy: expected one of {', '.join(POLICIES)}, got {quote(policy)}")
    thresholds = {name: options.pop(name) for name in POLICY_THRESHOLDS if name in options}
    unknown = sorted(set(options) - ({f.name for f in dataclasses.fields(AutopilotSettings)} - {"point"}))
    if unknown:
        raise TypeError(f"run_autopilot: unknown option {unknown[0]!r}")
    try:
        chosen = POLICIES[policy].from_options(**thresholds)
        point = named(operating_point) if operating_point else OperatingPoint("measured")
        settings = AutopilotSettings(point=point, **options)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    plan_dir = Path(plan_dir)
    log = Path(log) if log is not None else plan_dir / f"{problem.topology.name}.autopilot.jsonl"
    plan = (plan_dir / f"{problem.topology.name}.json").resolve()
    if current is not None and Path(current).resolve() == plan:
        raise InputError("--current: leave it out to start from the plan in --plan-dir (the autopilot replaces that file)")
    if log.resolve() == plan:
        raise InputError("--log: the plan file in --plan-dir is the plugin's; give the decision log another name")
    running = load_placement(current, problem.topology, problem.cluster) if current is not None else None
    with _receiving(receive, Path(monitor), on_note):
        try:
            pilot = Autopilot.resume(problem, Path(monitor), plan_dir, log, running, chosen, settings)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        return run(pilot, period_s=period_s or settings.window_s, periods=periods, on_decision=on_decision)


@contextlib.contextmanager
def _receiving(address: str | None, monitor: Path, on_note):
    """A records receiver on ``address`` (``HOST:PORT``) writing into ``monitor`` while the block runs."""
    if address is None:
        yield
        return
    from .storm.receiver import RecordsReceiver
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise InputError(f"--receive: expected HOST:PORT, got {quote(address)}")
    with RecordsReceiver(monitor, host, int(port), on_note=on_note):
        yield


def evaluate_placement(job: Job, placement: Placement | str | os.PathLike, *,
                       cost_model: Predictor | None = None, on_note: Callable[[str], None] | None = None) -> dict:
    """Every metric of ``placement`` (a :class:`Placement`, or a file: a schedule result or a label
    map), the record ``streamplace evaluate --format json`` prints. Not named ``evaluate``:
    ``streamplace.evaluate`` is the package of the metrics.

    >>> sp.evaluate_placement(problem, "metis.json")["valid"]             # doctest: +SKIP
    True
    """
    problem, cost_model = _resolved(job, cost_model, on_note)
    if not isinstance(placement, Placement):
        placement = load_placement(placement, problem.topology, problem.cluster)
    return evaluation_record(problem, placement, model=cost_model)


@dataclass(frozen=True)
class Exported:
    document: dict                 # the file written (storm-plan: the plan)
    containers: dict[int, str]     # heron: container number -> node (empty for the others)
    written: str | os.PathLike | None = None   # where it was written, as given (storm-plan: DIR/<topology>.json)


EXPORT_TARGETS = ("storm-plan", "heron", "flink")


def export_placement(placement: str | os.PathLike, to: str, job: Job | None = None, *,
                     output: str | os.PathLike | None = None) -> Exported:
    """The placement file ``placement`` in another engine's terms, written to ``output`` if given
    (atomically): ``to="storm-plan"``, the Storm plugin's plan (needs the job; ``output`` is the
    plugin's plan directory, the plan goes in as ``<topology>.json``); ``"heron"``, a packing
    plan; ``"flink"``, parallelism and slot-sharing groups. With the job the placement is
    checked against it and Heron gets the tasks' CPU and memory.

    >>> sp.export_placement("metis.json", "flink").document["operators"]             # doctest: +SKIP
    >>> sp.export_placement("metis.json", "storm-plan", sp.JobFiles("t.yaml", "c.yaml"), output="plans/").written  # doctest: +SKIP
    """
    from .export import flink_job_hints, heron_container_nodes, heron_packing_plan, read_targets
    if to not in EXPORT_TARGETS:
        raise InputError(f"--to: expected one of {', '.join(EXPORT_TARGETS)}, got {quote(to)}")
    problem = _problem(job) if job is not None else None
    if to == "storm-plan":
        if problem is None:
            raise InputError("--to storm-plan needs --topology and --cluster (the plan is checked against them)")
        from .storm.plans import write_plan
        from .storm.source import plan_of
        if output is not None and Path(output).exists() and not Path(output).is_dir():
            raise InputError(f"-o: {output} is a file; --to storm-plan writes into the plugin's plan directory")
        name, document = plan_of(problem, placement)
        return Exported(document, {}, write_plan(Path(output), name, document) if output is not None else None)
    topo = None
    if problem is not None:   # checks every label and node against the job
        load_placement(placement, problem.topology, problem.cluster)
        topo = problem.topology
    try:
        targets = read_targets(read_document(placement), str(placement))
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if to == "heron":
        exported = Exported(heron_packing_plan(targets, topo.name if topo else Path(placement).stem, topo),
                            heron_container_nodes(targets))
    else:
        exported = Exported(flink_job_hints(targets, topo), {})
    if output is None:
        return exported
    write_document(exported.document, output)
    return dataclasses.replace(exported, written=output)


@dataclass(frozen=True)
class StormRun:
    problem: Problem               # the job run (a scheduler may have chosen its parallelism)
    placement: Placement | None    # None: Storm's own EvenScheduler
    run: dict                      # run.json


def storm_settings(operating_point: str | None = None, **settings):
    """The run settings of :func:`storm_run` (``RunSettings``; ``storm_conf`` as ``KEY=VALUE``
    strings, the testbed's ``worker_heap_mb`` and ``cpu_budget`` as keywords). A named
    ``operating_point`` (:data:`OPERATING_POINTS`) sets the sources (saturated or its rate), the
    ackers, max spout pending and its Storm settings (``storm_conf`` over them), and the testbed's
    CPU budget (unless ``cpu_budget`` is given) and links.

    >>> sp.storm_settings(duration_s=30, storm_conf=["topology.max.spout.pending=1000"])  # doctest: +SKIP
    >>> sp.storm_settings(duration_s=30, mode="cluster", operating_point="acking-msp10")  # doctest: +SKIP
    """
    from .model.operating_point import named
    from .storm.run import RunSettings, parse_storm_conf
    from .storm.testbed import TestbedSettings
    testbed = {k: settings.pop(k) for k in ("worker_heap_mb", "cpu_budget") if k in settings}
    testbed = {k: v for k, v in testbed.items() if v is not None}
    conf = parse_storm_conf(settings.pop("storm_conf", ()))
    point = None
    if operating_point is not None:
        try:
            point = named(operating_point)
        except ValueError as exc:
            raise InputError(f"--operating-point: {exc}") from None
        if settings.get("mode", "embedded") != "cluster":
            raise InputError("--operating-point goes with --mode cluster: a point is a testbed's (its CPU budget and "
                             "links), and embedded Storm halts when back-pressure crosses its in-process workers")
        if settings.get("ackers"):
            raise InputError(f"--ackers: set by --operating-point {operating_point} ({point.ackers}); leave one out")
        point = point.overridden(conf, testbed.get("cpu_budget"))   # what the run really runs at, recorded so
        conf = {**point.conf(), **conf}
        settings["ackers"] = point.ackers
        testbed.setdefault("cpu_budget", point.cpu_budget)
        testbed["bandwidth_scaled"] = point.bandwidth_scaled
    return RunSettings(**settings, testbed=TestbedSettings(**testbed), storm_conf=conf, operating_point=point)


def storm_run(job: Job, out_dir: str | os.PathLike, settings=None, *, plan: str | os.PathLike | None = None,
              scheduler: str | None = None, params: dict | None = None, seed: int | None = None,
              time_limit: float | None = None, profiling: Any = None, workers: int | None = None, fmt: str = "jsonl",
              force: bool = False, on_event: Callable[[dict], None] | None = None,
              on_note: Callable[[str], None] | None = None, autopilot: dict | None = None,
              faults: Sequence | None = None) -> StormRun:
    """Runs the job on Apache Storm under a plan file, a scheduler's placement, or (neither)
    Storm's own scheduler, measures it and writes ``out_dir`` (``run.json`` with the provenance
    under ``source``, the monitor's traffic and load records, ``plan.json``, ``storm.log``).
    ``autopilot`` (keywords of :func:`run_autopilot`: ``policy``, ``min_gain``, ``confirm``,
    ``max_moves``, ``cooldown_s``, ``migration_s``, ``payback_s``, ``rewarm_s``, ``load_change``, ``time_limit``, ``horizon_windows``, ``period_s``,
    and ``after_s``: seconds after the job's workers run before the loop's first period) runs the
    autopilot beside the job: ``autopilot.jsonl`` and ``plans`` in ``run.json``.
    ``faults`` (:class:`~streamplace.storm.faults.Fault`, testbed only) are injected while the job
    runs: ``faults.jsonl`` and ``faults`` in ``run.json``."""
    from .storm.run import Beside, measure
    from .storm.source import plan_for_run
    if plan is not None and scheduler is not None:
        raise InputError("give exactly one of --plan, --scheduler or --storm-default")
    if workers is not None and (plan is not None or scheduler is not None):
        raise InputError("--workers goes with --storm-default (a plan fixes its workers)")
    settings = settings if settings is not None else storm_settings()
    if settings.storm_scheduler != "even" and (plan is not None or scheduler is not None):
        raise InputError("--storm-scheduler goes with --storm-default (a plan's job is placed by the plan)")
    problem = _problem(job)
    problem, placement, source = plan_for_run(problem, plan, scheduler, params, seed=seed, time_limit=time_limit,
                                              profiling=profiling, on_note=on_note)
    beside = _beside(problem, placement, settings, autopilot) if autopilot is not None else None
    if faults:
        from .storm.faults import Faults
        if settings.mode != "cluster":
            raise InputError("faults need the testbed (--mode cluster)")
        beside = Faults(beside or Beside(), list(faults))
    run = measure(problem, placement, Path(out_dir), settings, workers=workers, fmt=fmt, source=source,
                  force=force, on_event=on_event, beside=beside)
    return StormRun(problem, placement, run)


def _beside(problem: Problem, placement, settings, options: dict):
    """The autopilot beside a storm run, its windows the run's."""
    from .autopilot.loop import BesideRun, Settings
    from .autopilot.policy import POLICIES
    from .model.operating_point import OperatingPoint
    options = dict(options)
    name = options.pop("policy", "hysteresis")
    if name not in POLICIES:
        raise InputError(f"--autopilot-policy: expected one of {', '.join(POLICIES)}, got {quote(name)}")
    policy = POLICIES[name].from_options(**{k: options.pop(k) for k in POLICY_THRESHOLDS if k in options})
    period = options.pop("period_s", None) or settings.window_s
    after = options.pop("after_s", 0.0)
    try:
        budget = settings.testbed.budget() if settings.mode == "cluster" else None   # the testbed's scaled nodes
        ap = Settings(window_s=settings.window_s, point=settings.operating_point or OperatingPoint("measured", cpu_budget=budget),
                      **options)
        beside = BesideRun(problem, placement, policy, ap, period, after)
    except (TypeError, ValueError) as exc:
        raise InputError(f"--autopilot: {exc}") from None
    if placement is None:
        raise InputError("--autopilot needs a placement to start from (--plan or --scheduler), not --storm-default")
    return beside


def make_cluster(*, preset: str | None = None, generator: str | None = None, args: Sequence[str] = (),
                 topology: str | os.PathLike | None = None) -> Cluster:
    """A cluster preset (:data:`PRESETS`), or one a catalogue generator builds from ``KEY=VALUE``
    ``args``, sized to the job in the ``topology`` file if given (``streamplace workload cluster``).

    >>> sp.make_cluster(generator="sized", args=["nodes=4"], topology="t.yaml").n_nodes  # doctest: +SKIP
    """
    if (preset is None) == (generator is None):
        raise InputError("give exactly one of --preset and --generator")
    if preset is not None:
        if args:
            raise InputError(f"--preset {preset}: takes no arguments, got {' '.join(args)}")
        return cluster_preset(preset)
    graph = build_task_graph(load_topology(topology)) if topology else None
    return generate(CLUSTER_GENERATORS, generator, args, graph=graph)


@dataclass(frozen=True)
class ApplicationFiles:
    application: Any     # the bundled application (its name, time column, topology)
    topology: Path
    cluster: Path
    records: Path


def write_application(name: str, out_dir: str | os.PathLike, *, records: int | None = None, seed: int = 0,
                      fmt: str = "parquet") -> ApplicationFiles:
    """A bundled application's workload in ``out_dir``: ``topology.yaml``, ``cluster.yaml`` and
    ``records`` generated records (default: the application's count) as ``records.<fmt>``.
    Nothing is written when the records would not fit in memory.

    >>> sp.write_application("page-view", "out/app", records=5000).records  # doctest: +SKIP
    """
    app = application(name)
    try:
        frame = app.records(records or app.default_records, seed)   # estimated first: nothing written if refused
    except ValueError as exc:
        raise InputError(f"--records: {exc}") from None
    out = Path(out_dir)
    write_document(topology_to_dict(app.topology), out / "topology.yaml")
    write_document(cluster_to_dict(app.cluster()), out / "cluster.yaml")
    return ApplicationFiles(app, out / "topology.yaml", out / "cluster.yaml", write_records(frame, out / f"records.{fmt}"))


def import_storm_ui(source: str, *, window: str | None = None, output: str | os.PathLike | None = None):
    """A topology from the Storm UI (a ``.../api/v1/topology/<id>`` URL or a directory of saved
    responses): ``.topology``, ``.notes``, ``.window_s``; written as a topology spec to ``output``
    if given.

    >>> sp.import_storm_ui("saved-ui/", output="topology.yaml").topology.n_tasks  # doctest: +SKIP
    """
    from .storm.ui import import_storm_ui as read
    imported = read(source, window=window)
    if output is not None:
        write_document(topology_to_dict(imported.topology), output)
    return imported


def profile_records(topology: str, traffic: Sequence[str], load: Sequence[str], out_dir: str, **options):
    """Monitoring records (paths or globs) of the job ``topology`` -> a profile directory, on
    Spark (:func:`~.profile.runs.profile_records`: ``start``, ``end``, ``half_life``, ``weight``,
    ``fmt``, ``spark_master``). Returns the build result (``.summary``)."""
    from .profile.runs import profile_records as run
    return run(topology, traffic, load, out_dir, **options)


def replay_traffic(records: str, out_dir: str, **options):
    """Application records replayed through a job's groupings -> monitoring records in
    ``out_dir`` (:func:`~.profile.runs.replay_records`: ``app``, ``topology``, ``placement``, ...).
    Returns ``(monitoring, paths)``."""
    from .profile.runs import replay_records
    return replay_records(records, out_dir, **options)


def _cost_model(model: CostModel | str | os.PathLike | None) -> CostModel | None:
    """A cost model, or one read from its file."""
    return load_cost_model(model) if isinstance(model, (str, os.PathLike)) else model


def run_demo(out_dir: str | os.PathLike, *, quick: bool = False, time_limit: float = 10.0, console=None,
             master: str | None = None, model: CostModel | str | os.PathLike | None = None,
             calibrate: str | os.PathLike | None = None):
    """The main job: applications generated, replayed and profiled on Spark, scheduled by every
    scheduler, plus the micro-benchmarks; the report in ``out_dir``. ``model``: a cost model or
    its file (default: the bundled one). ``calibrate``: a run of one of the demo's jobs (e.g. a
    ``storm run`` of ``DIR/apps/page-view/topology.yaml`` on its ``cluster-4high+4low.yaml``), on
    which that job's predictions are calibrated (:mod:`streamplace.demo.calibration`)."""
    from .demo.run import run_demo as demo
    from .profile.spark import SparkUnavailable
    try:
        return demo(Path(out_dir), quick=quick, time_limit=time_limit, console=console, master=master,
                    model=_cost_model(model), calibrate=calibrate)
    except SparkUnavailable as exc:
        raise InputError(str(exc)) from None


def reproduce_papers(papers: Sequence[str], out_dir: str | os.PathLike, *, quick: bool = False, time_limit: float = 10.0,
              console=None, model: CostModel | str | os.PathLike | None = None, testbed: Sequence[str] = ()):
    """The papers' comparisons (:data:`REPRODUCE_PAPERS`) rebuilt from our implementations into
    ``out_dir``; ``testbed``: testbed campaigns (directories or runs.jsonl) to score against too;
    ``model``: a cost model or its file."""
    from .reproduce import reproduce as run
    from .reproduce.measured import load_campaigns
    runs = load_campaigns(testbed) if testbed else None
    return run(tuple(papers), Path(out_dir), quick=quick, time_limit=time_limit, console=console, model=_cost_model(model),
               testbed_runs=runs)


def sweep(grid: str | os.PathLike, out_dir: str | os.PathLike, *, spark_master: str | None = None,
          batch_size: int | None = None, retry_failed: bool = False, report: bool = False,
          on_start: Callable[[int], None] | None = None, on_progress: Callable | None = None):
    """The GRID file's scenarios (workloads x clusters x schedulers x seeds) evaluated on Spark
    into ``out_dir`` (resumable); ``on_start(n)`` hears the number of scenarios; ``report``: also
    the report of every result there (:func:`sweep_report`, its path in the summary's ``report``).
    Returns the summary."""
    from .campaign.sweep import SweepLocked, load_grid, run_sweep
    from .profile.spark import SparkUnavailable
    scenarios = load_grid(grid)
    if on_start:
        on_start(len(scenarios))
    try:
        summary = run_sweep(scenarios, out_dir, spark_master=spark_master, batch_size=batch_size,
                            retry_failed=retry_failed, on_progress=on_progress)
    except (SparkUnavailable, SweepLocked) as exc:
        raise InputError(str(exc)) from None
    return dataclasses.replace(summary, report=str(sweep_report(out_dir))) if report else summary


def sweep_report(out_dir: str | os.PathLike) -> Path:
    """The report of a sweep's results (``report.html`` and PNG plots in ``out_dir``)."""
    from .campaign.sweep import write_sweep_report
    return write_sweep_report(out_dir)


def report_page(records: Sequence[dict], out_dir: str | os.PathLike, **options) -> Path:
    """The HTML report (tables, plots, the decision per job) of result records into ``out_dir``
    (:func:`streamplace.report.page.write_report`)."""
    from .report.page import write_report
    return write_report(records, out_dir, **options)


def summary_table(records, keys, **options):
    """The results table the CLI, the demo and the reports print (``report.display``)."""
    from .report.display import summary_table as table
    return table(records, keys, **options)


def format_value(value) -> str:
    """A value as every table shows it (``report.display``)."""
    from .report.display import format_value as fmt
    return fmt(value)


def metric(key: str):
    """Name, unit and description of a record key (``report.display``)."""
    from .report.display import metric as describe_metric
    return describe_metric(key)


def nasiri_workload(layout: str, compute: str = "mixed", *, preset: str | None = None, met: float = DEFAULT_MET):
    """``(topology, profiling)``: an [N] micro-benchmark and its profiling spec ([N] Table 3)."""
    return nasiri.topology(layout, compute), nasiri.profiling(layout, compute, preset=preset, met=met)


NASIRI_CLUSTER_PRESETS = tuple(nasiri.CLUSTER_PRESETS)


__all__ = ["APPLICATIONS", "AutopilotSettings", "Hysteresis", "run_autopilot", "CLUSTER_GENERATORS", "CalibratedModel", "Cluster", "Comparison", "CostModel", "DEFAULT_MET", "Decision", "Evaluation",
           "Exported", "FieldError", "InputError", "MAX_TIME_LIMIT", "MEMORY_LIMIT_ENV", "MemoryLimitError", "NASIRI_CLUSTER_PRESETS",
           "OPERATING_POINTS", "OutputError", "check_output_dir", "check_output_file", "dumps_json", "guarding", "memory_limit", "note_input", "PROFILE_FILES", "printable", "quote", "refuse_overlap",
           "Node", "Notice", "OBJECTIVES", "Operator", "ParameterError", "Placement", "PlanDiff", "PRESETS", "Problem",
           "Judgement", "REPRODUCE_PAPERS", "REQUIRED", "ResultRecord", "ScheduleResult", "Scheduled", "SpecError", "StormError", "StormRun",
           "Stream", "TOPOLOGIES", "Topology", "application", "atomic_write_text", "available", "build_task_graph",
           "calibrate", "cluster_preset", "cluster_to_dict", "compare", "describe", "diff_files", "diff_placements",
           "evaluate_placement", "expand_paths", "export_placement", "format_value", "generate", "import_storm_ui", "judge",
           "load_cluster", "load_cost_model", "load_placement", "load_problem", "load_topology", "make_scheduler",
           "metric", "nasiri_workload", "parse_bool", "parse_pairs", "parse_size", "per_scheduler", "predict",
           "profile_records", "profiling_to_dict", "read_document", "recommend", "records_to_csv", "replay_traffic", "report_page",
           "predictor", "Predictor", "reproduce_papers", "reschedule", "result_record", "run_demo", "run_interruptible", "run_scheduler", "schedule",
           "storm_run", "storm_settings", "summary_table", "sweep", "sweep_report", "topology_to_dict",
           "write_document", "write_records", "ApplicationFiles", "EXPORT_TARGETS", "Job", "JobFiles", "make_cluster",
           "write_application"]

"""``streamplace storm run``: a placement on Storm, embedded or on the testbed, measured.

Mode ``embedded``: one JVM (``org.streamplace.storm.LocalRunner``) starts a LocalCluster with one
supervisor per cluster node (its slots as ports, scheduler meta ``node`` = the node's name) and
the plan plugin as Nimbus' scheduler. Every worker runs inside that JVM: good for checking
plans, task ids and the monitor, not for performance. LocalCluster can, rarely, stop its own
JVM when a worker is killed while one of its threads waits (exit 20, Storm's halt code; it
failed one CI run): the jobs it had not finished then run once more in a new JVM, with a note,
and the first JVM's log is kept as ``storm-halted.log``.

Mode ``cluster``: the multi-process testbed (:mod:`.testbed`): ZooKeeper, Nimbus and one
supervisor per node, each node in its own network namespace with shaped bandwidth and a CPU
quota; ``org.streamplace.storm.ClusterRunner`` submits to it as a client. The testbed's wire
counters give the bytes that crossed between nodes in the measured window.

Either runner submits the spec topology with its plan and reports progress and what Storm
assigned as JSON Lines; the traffic monitor's records of the measured windows become
``traffic``/``load`` records in the ``profile`` schema and the run's figures.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
import contextlib
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..model import Cluster, Placement, Problem, Topology
from ..interrupt import temporary
from ..files import atomic_write_text, check_output_dir, parse_document, quote, replace_dir, stage_dir
from ..model.calibration import PLUGIN_ACKER_ORDER
from ..model.keyvalue import split_pair
from ..model.operating_point import OperatingPoint
from ..model.specs import topology_to_dict
from . import jobfile, jvm, records
from .errors import StormError
from .plans import plan_document, workers_of, write_plan
from .testbed import TestbedSettings, supervisor_capacity, worker_childopts

PLAN_APPLIED = "streamplace: plan applied"
MODES = ("embedded", "cluster")
#: how the monitor's windows leave the workers: files in the monitor directory (one machine or a
#: shared directory), or Storm's metrics path to a receiver (any cluster; ``receiver.py``)
MONITOR_VIA = ("files", "metrics")
#: Storm's schedulers for a job without a plan: its EvenScheduler, or its ResourceAwareScheduler
STORM_SCHEDULERS = ("even", "ras")
#: the Nimbus plugin's setting (Nimbus' or a topology's): which of STORM_SCHEDULERS a topology without a plan gets
FALLBACK_KEY = "streamplace.fallback.scheduler"


def fallback_conf(scheduler: str) -> dict:
    """The topology settings that hand a job without a plan to Storm's ``scheduler`` (one of
    :data:`STORM_SCHEDULERS`; ``even`` is the plugin's default and needs none)."""
    if scheduler not in STORM_SCHEDULERS:
        raise StormError(f"--storm-scheduler: must be one of {', '.join(STORM_SCHEDULERS)}, got {quote(scheduler)}")
    return {} if scheduler == "even" else {FALLBACK_KEY: scheduler}
STORM_HALT = 20   # Storm's Utils.exitProcess code when one of its timer or event threads fails
#: topology settings a run sets itself, with the option that sets them (``--storm-conf`` refuses them)
RESERVED_CONF = {"topology.workers": "the plan (or --workers with --storm-default)", "topology.acker.executors": "--ackers",
                 "topology.disable.loadaware.messaging": "--load-aware", "topology.auto.task.hooks": "the traffic monitor"}


def parse_storm_conf(pairs: Sequence[str]) -> dict:
    """``--storm-conf KEY=VALUE`` pairs; VALUE is read as YAML, as Storm reads its own settings
    (``0`` a number, ``true`` a boolean, ``[a, b]`` a list, anything else a string)."""
    conf = {}
    for pair in pairs:
        key, text = split_pair(pair) or ("", "")
        if not key or any(c.isspace() for c in key) or not text:
            raise StormError(f"--storm-conf: expected KEY=VALUE (a Storm setting and its value), got {quote(pair)}")
        conf[key] = parse_document(text, f"--storm-conf {quote(key)}", "yaml")   # the reader layer's rules
    return conf


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """How a run is measured. Windows are the monitor's; the measurement is whole windows."""

    duration_s: float = 60.0
    warmup_s: float = 20.0
    window_s: float = 10.0
    ackers: int = 0
    load_aware: bool = False
    heap_mb: int = 1024
    seed: int = 0
    mode: str = "embedded"
    testbed: TestbedSettings = field(default_factory=TestbedSettings)  # mode cluster: JVM sizes, CPU budget
    #: Storm topology settings for every job (``--storm-conf``), over the run's own and Storm's defaults
    storm_conf: dict = field(default_factory=dict)
    #: the named operating point the run is at (``--operating-point``: its sources, ackers, Storm
    #: settings under ``storm_conf``, CPU budget and links); None: the topology's own rates
    operating_point: OperatingPoint | None = None
    #: one of MONITOR_VIA
    monitor_via: str = "files"
    #: Storm's scheduler for a job without a plan (the plugin's fallback): one of STORM_SCHEDULERS
    storm_scheduler: str = "even"
    #: more options for the runner's JVM (embedded: the one JVM Storm runs in), after streamplace's
    #: own: e.g. ``-XX:DumpLoadedClassList`` (``storm/conf/cds/regenerate.py``)
    runner_jvm_opts: tuple[str, ...] = ()

    def __post_init__(self):
        for name in ("duration_s", "warmup_s", "window_s"):
            value = getattr(self, name)
            if not (value >= 0 and value < 1e6):
                raise StormError(f"--{name[:-2].replace('_', '-')}: must be a number of seconds in [0, 1e6), got {value}")
        if not self.window_s >= 0.1:
            raise StormError(f"--window: must be >= 0.1 s, got {self.window_s}")
        if self.ackers < 0 or self.heap_mb < 128:
            raise StormError("--ackers must be >= 0 and --heap-mb >= 128")
        if self.mode not in MODES:
            raise StormError(f"--mode: must be one of {', '.join(MODES)}, got {quote(self.mode)}")
        fallback_conf(self.storm_scheduler)   # refuses an unknown one
        if self.monitor_via not in MONITOR_VIA:
            raise StormError(f"--monitor-via: must be one of {', '.join(MONITOR_VIA)}, got {quote(self.monitor_via)}")
        for key in self.storm_conf:
            owner = "streamplace's own settings" if key.startswith("streamplace.") else RESERVED_CONF.get(key)
            if owner:
                raise StormError(f"--storm-conf {key}: set by {owner}, not by --storm-conf")
        object.__setattr__(self, "storm_conf", dict(self.storm_conf))

    def over(self, conf: dict) -> dict:
        """The Storm settings a job whose own are ``conf`` runs with: ``storm_conf`` wins."""
        return {**conf, **self.storm_conf}


@dataclass(frozen=True)
class Job:
    """One topology to submit. ``placement`` None: no plan, Storm's EvenScheduler places it
    (``plan`` writes that document as the plan file instead, as a user's hand-made file would be)."""

    name: str
    topology: Topology
    placement: Placement | None
    workers: int
    monitor: bool = False
    duration_s: float = 0.0
    conf: dict = field(default_factory=dict)
    plan: dict | None = None
    group: int | None = None


def cpu_by_task(problem: Problem, placement: Placement | None) -> dict[str, float]:
    """Per-task CPU seconds per tuple where ``cpu_per_tuple`` is a table by machine type: the
    entry of the machine type of the node the plan puts the task on."""
    topo, cluster = problem.topology, problem.cluster
    out: dict[str, float] = {}
    if placement is None:
        return out
    for op in topo.operators:
        if isinstance(op.cpu_per_tuple, dict):
            for t in topo.tasks_of(op.name):
                node = cluster.nodes[int(placement.node[t])]
                if node.machine_type not in op.cpu_per_tuple:
                    raise StormError(f"operator {op.name}: cpu_per_tuple has no entry for machine type "
                                     f"{node.machine_type!r} of node {node.name}")
                out[topo.task_labels[t]] = float(op.cpu_per_tuple[node.machine_type])
    return out


def run_jobs(cluster: Cluster, jobs: Sequence[Job], settings: RunSettings, work_dir: Path, *,
             monitor_dir: Path | None = None,
             on_event: Callable[[dict], None] | None = None, testbed=None, retry_halted: bool = True) -> dict[str, dict]:
    """Runs ``jobs`` on Storm (``settings.mode``); returns each job's result (by name) as Storm reported it.

    Jobs run one after another (each submitted, assigned, measured, killed); consecutive jobs with
    the same ``group`` run at once. ``work_dir`` receives the plans, the job file and the logs. On
    the testbed each measured result also has ``wire``: data bytes per (sender, receiver) node
    pair counted on the wire during the measured window, and ``node_cpu``: per node, the cores its
    cgroup used and the share of CFS periods in which it ran out of quota. ``testbed``: a running
    :class:`~.testbed.Testbed` of ``cluster`` to run on (its plan directory is used; it stays up),
    instead of one brought up and torn down for these jobs. ``retry_halted``: when embedded Storm
    halts itself (:class:`StormHalted`), run the unfinished jobs once more in a new JVM; False
    raises it instead (a loop beside the job could not follow it into the new JVM).
    """
    java = jvm.java()
    cp = jvm.classpath()
    work_dir = Path(work_dir).resolve()   # Storm's daemons and workers run in other directories
    monitor_dir = Path(monitor_dir).resolve() if monitor_dir is not None else None
    via_metrics = settings.monitor_via == "metrics" and monitor_dir is not None
    work_dir.mkdir(parents=True, exist_ok=True)
    plan_dir = testbed.plan_dir if testbed is not None else work_dir / "plans"
    plan_dir.mkdir(exist_ok=True)
    job_entries = []
    for job in jobs:
        topo_file = work_dir / f"topology-{job.name}.json"
        atomic_write_text(topo_file, json.dumps(topology_to_dict(job.topology)))
        if job.plan is not None:
            write_plan(plan_dir, job.name, job.plan)
        elif job.placement is not None:
            write_plan(plan_dir, job.name, plan_document(job.topology, cluster, job.placement))
        conf = {"streamplace.seed": settings.seed, **settings.over(job.conf), **fallback_conf(settings.storm_scheduler)}
        if settings.mode == "cluster":
            conf.setdefault("topology.worker.childopts", worker_childopts(settings.testbed.worker_heap_mb))
            # each worker's log pump: a JVM of its own, kept cheap to start (C1 only) on a small machine
            conf.setdefault("topology.worker.logwriter.childopts", "-Xmx64m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        job_entries.append({
            "name": job.name, "topology": str(topo_file), "workers": job.workers, "ackers": settings.ackers,
            "load_aware": settings.load_aware, "window_s": settings.window_s,
            "monitor_dir": str(monitor_dir) if job.monitor and monitor_dir and not via_metrics else None,
            "monitor_url": None,   # set once the receiver listens
            "warmup_s": settings.warmup_s if job.duration_s > 0 else 0, "duration_s": job.duration_s,
            "conf": conf, "group": job.group})
    tmp = work_dir / "tmp"
    tmp.mkdir(exist_ok=True)
    most_workers = max((job.workers for job in jobs), default=1)
    document = {"plan_dir": str(plan_dir), "jobs": job_entries,
                "cluster": [{"node": n.name, "slots": int(n.slots), "supervisor_conf": supervisor_capacity(n)} for n in cluster.nodes],
                # testbed workers are two JVMs each, all starting at once: ~10 s of a core apiece
                "start_timeout_s": 120 + (15 * most_workers if settings.mode == "cluster" else 0)}
    if settings.mode == "embedded":
        with _records_path(document, jobs, monitor_dir if via_metrics else None, "127.0.0.1", on_event) as path:
            try:
                return path(_drive(java, cp, "LocalRunner", document, settings, jobs, work_dir, on_event, None))
            except StormHalted as halted:   # a LocalCluster race, rare: give the unfinished jobs one more JVM
                if not retry_halted:
                    raise
                rest = [job for job in jobs if job.name not in halted.results]
                if on_event:
                    on_event({"event": "note", "message": f"{halted}; running the {len(rest)} unfinished jobs again, once"})
                (work_dir / "storm.log").replace(work_dir / "storm-halted.log")
                document["jobs"] = [entry for entry in job_entries if entry["name"] not in halted.results]
                return path({**halted.results,
                             **_drive(java, cp, "LocalRunner", document, settings, rest, work_dir, on_event, None)})
    from .testbed import Testbed, network
    with (contextlib.nullcontext(testbed) if testbed is not None else
          Testbed(cluster, work_dir / "testbed", plan_dir, settings.testbed,
                  log=lambda message: on_event and on_event({"event": "testbed", "message": message}))) as bed, \
            _records_path(document, jobs, monitor_dir if via_metrics else None, network.HOST_IP, on_event) as path:
        document.update(nimbus=bed.nimbus, cluster=bed.job_cluster(), storm_jar=str(jvm.jar(jvm.HARNESS_JAR)))
        return path(_drive(java, cp, "ClusterRunner", document, settings, jobs, work_dir, on_event, bed))


@contextmanager
def _records_path(document: dict, jobs: Sequence[Job], monitor_dir: Path | None, host: str, on_event):
    """With ``monitor_dir``: a records receiver on ``host`` writing into it, and every monitored
    job's windows sent there through Storm's metrics path. Yields what adds the receiver's figures
    to the results (``records``: how the windows came, how many, how many were reported dropped)."""
    if monitor_dir is None:
        yield lambda results: results
        return
    from .receiver import RecordsReceiver

    def note(message: str) -> None:
        if on_event:
            on_event({"event": "note", "message": f"records receiver: {message}"})
    with RecordsReceiver(monitor_dir, host, 0, on_note=note) as receiver:
        for entry, job in zip(document["jobs"], jobs):
            if job.monitor:
                entry["monitor_url"] = receiver.url

        def with_figures(results: dict) -> dict:
            figures = {"via": "metrics", **receiver.stats()}
            return {name: {**result, "records": figures} for name, result in results.items()}
        yield with_figures


def _drive(java, cp, runner, document, settings, jobs, work_dir, on_event, bed) -> dict[str, dict]:
    """Runs the job file with ``runner`` and follows its events; on the testbed (``bed``) applies the
    CPU quotas while workers run and reads the wire and CPU counters at the measured window's edges."""
    job_file = work_dir / "job.json"
    jobfile.write(job_file, document)   # checked against the schema the runner checks it with
    # embedded: the C1 compiler only, as the testbed's workers run (worker_childopts): the one JVM
    # starts a LocalCluster and dozens of in-process workers; measured on the plans-on-Storm test
    # (10 schedulers' plans, 5 groups), 50 CPU s against 65 with C2 for the same wall time. Both
    # runners map the runners' class archive (jvm.RUNNER_ARCHIVE)
    cmd = [java, f"-Xmx{settings.heap_mb}m", "-XX:+UseSerialGC", *([] if bed else ["-XX:TieredStopAtLevel=1"]),
           *jvm.archive_opts(jvm.module_dir() / jvm.RUNNER_ARCHIVE), *settings.runner_jvm_opts,
           f"-Djava.io.tmpdir={work_dir / 'tmp'}",
           f"-Dstreamplace.log.file={work_dir / 'storm.log'}", f"-Dlog4j.configurationFile={jvm.log_config()}",
           *([f"-Dstorm.jar={document['storm_jar']}", "-Djava.net.preferIPv4Stack=true"] if bed else []),
           "-cp", cp, f"org.streamplace.storm.{runner}", str(job_file)]
    what = "the embedded Storm run" if bed is None else "the Storm testbed run"
    budget = 300 + sum(settings.warmup_s + j.duration_s + 60 + (15 * j.workers if bed else 0) for j in jobs)
    results: dict[str, dict] = {}
    pending: list[str] = []   # jobs of the group being measured
    windows: dict[str, _MeasuredWindow] = {}
    with jvm.child(cmd, work_dir / "runner.stderr") as proc:
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        deadline = time.monotonic() + budget
        peak = 0.0
        while True:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                line = None
                peak = max(peak, jvm.peak_rss_mb(proc.pid) or 0.0)
                if time.monotonic() > deadline:
                    raise StormError(f"{what} took over {budget:.0f} s; stopped (see {work_dir / 'storm.log'})")
                continue
            if line is _EOF:
                break
            event = _parse(line)
            if event is None:
                continue
            kind = event.get("event")
            if bed is not None and kind == "running":
                pending.append(event["job"])
                bed.limit_cpu(True)
            elif bed is not None and kind == "measuring":
                window = _MeasuredWindow(bed, event["start"], event["end"])
                windows.update((name, window) for name in pending)
                pending = []
            elif bed is not None and kind == "killed":
                bed.limit_cpu(False)   # the next job's workers start at full speed
            if kind == "result":
                event["jvm_peak_rss_mb"] = peak
                if event["job"] in windows:
                    event.update(windows[event["job"]].figures())
                results[event["job"]] = event
            if on_event:
                on_event(event)
        code = proc.wait()
    failure = _failure(code, results, len(jobs), work_dir, embedded=bed is None, what=what)
    if failure is not None:
        raise failure
    return results


def _failure(code: int, results: dict[str, dict], n_jobs: int, work_dir: Path, *, embedded: bool,
             what: str) -> StormError | None:
    """What a runner that exited with ``code`` after ``results`` of ``n_jobs`` jobs failed of, from
    its stderr and Storm's log in ``work_dir``: None if it did not fail; :class:`StormHalted` when
    embedded Storm stopped itself, by a halt or by its reassignment race
    (:data:`LOCAL_REASSIGNMENT_RACES`); else a :class:`StormError` with the root cause."""
    if code == STORM_HALT and embedded and len(results) < n_jobs:
        return StormHalted(f"embedded Storm halted itself (exit {code}: {_halt_reason(work_dir / 'storm.log')})", results)
    if code == 0 and len(results) == n_jobs:
        return None
    err = (work_dir / "runner.stderr").read_text(errors="replace").splitlines()
    last = _java_failure(err) or _java_failure(_log_lines(work_dir / "storm.log")) or "no message"
    if code == 2 and last.startswith("streamplace: "):   # the runner refused the job: its message says why
        return StormError(last.removeprefix("streamplace: "))
    if embedded and any(where in last for where in LOCAL_REASSIGNMENT_RACES):
        return StormHalted(f"embedded Storm failed in its reassignment race (exit {code}: {last})", results)
    return StormError(f"{what} failed (exit {code}): {last.removeprefix('streamplace: ')} "
                      f"(log: {work_dir / 'storm.log'})")


#: embedded Storm's own races after a reassignment, named by where the JVM's root cause was thrown:
#: a worker hands a tuple to a task that has just moved away and finds no queue for it (a
#: NullPointerException in ``WorkerState.transferLocalBatch``: a changed worker kept its port, which
#: :func:`~.plans.on_fresh_ports` avoids), or a queue no executor reads fills and the in-JVM
#: transport is asked for back-pressure status (``messaging.local.Context$LocalServer.
#: sendBackPressureStatus``: "Local Server connection should not send BackPressure status"; the
#: demo's ``EMBEDDED_CONF`` gives queues room for it). Reported as :class:`StormHalted`, as a halt is.
LOCAL_REASSIGNMENT_RACES = ("WorkerState.transferLocalBatch", "org.apache.storm.messaging.local.Context")


class StormHalted(StormError):
    """The embedded cluster stopped its own JVM (:data:`STORM_HALT`); ``results`` holds the jobs it finished."""

    def __init__(self, message: str, results: dict[str, dict]):
        super().__init__(message)
        self.results = results


def _halt_reason(log: Path) -> str:
    """The error Storm logged just before ``Halting process`` (the thread, the message, the exception)."""
    lines = _log_lines(log)
    if not lines:
        return "no log"
    halt = next((i for i in range(len(lines) - 1, -1, -1) if " ERROR " in lines[i] and "Halting process" in lines[i]),
                len(lines))
    error = next((i for i in range(halt - 1, -1, -1) if " ERROR " in lines[i]), None)
    if error is None:
        return "no error logged before it"
    cause = lines[error + 1].strip() if error + 1 < len(lines) and not lines[error + 1][:2].isdigit() else ""
    return " ".join(lines[error].split(" ERROR ", 1)[1].split()) + (f": {cause}" if cause else "")


def _log_lines(log: Path) -> list[str]:
    try:
        return log.read_text(errors="replace").splitlines()
    except OSError:
        return []


_FRAME = re.compile(r"\s+(at |\.\.\. \d+ more)")


def _java_failure(lines: list[str]) -> str | None:
    """What a dead JVM said last, as one line: our runner's own message, else the root cause of the
    first Java stack trace with the first frame outside the JDK (where it happened)."""
    own = [ln.strip() for ln in lines if ln.startswith("streamplace: ")]
    if own:
        return own[-1]
    start = next((i for i, ln in enumerate(lines) if re.match(r"(Exception in thread .*)?[\w.$]+(Exception|Error)\b", ln)),
                 None)
    if start is None:
        return next((ln.strip() for ln in reversed(lines) if ln.strip() and not _FRAME.match(ln)), None)
    trace = [lines[start]]
    for ln in lines[start + 1:]:
        if not (_FRAME.match(ln) or ln.startswith("Caused by:")):
            break
        trace.append(ln)
    root = max((i for i, ln in enumerate(trace) if not _FRAME.match(ln)))
    frame = next((ln.strip()[3:] for ln in trace[root + 1:] if ln.strip().startswith("at ")
                  and not ln.strip().startswith(("at java.", "at jdk.", "at sun."))), None)
    cause = trace[root].removeprefix("Caused by: ").strip()
    return f"{cause} (at {frame})" if frame else cause


class _MeasuredWindow:
    """Reads the testbed's wire counters and its nodes' CPU counters at ``start`` and ``end``
    (epoch seconds) in a thread."""

    def __init__(self, bed, start: float, end: float):
        self._figures: dict[str, dict] = {}
        self._thread = threading.Thread(target=self._read, args=(bed, start, end), daemon=True)
        self._thread.start()

    def _read(self, bed, start, end):
        from .testbed.cgroups import node_cpu
        from .testbed.network import wire_data_bytes
        time.sleep(max(0.0, start - time.time()))
        before, cpu_before = bed.counters(), bed.cpu_readings()
        time.sleep(max(0.0, end - time.time()))
        after, cpu_after = bed.counters(), bed.cpu_readings()
        self._figures["wire"] = {f"{a}->{b}": n for (a, b), n in wire_data_bytes(before, after).items()}
        self._figures["node_cpu"] = {node: node_cpu(cpu_before[node], cpu_after[node], end - start) for node in cpu_after}

    def figures(self) -> dict[str, dict]:
        """``wire``: data bytes per ``"sender->receiver"`` node pair in the window; ``node_cpu``:
        per node, the cores used and the throttled share of CFS periods (waits for the window's end)."""
        self._thread.join(timeout=30)
        if self._thread.is_alive() or not self._figures:
            raise StormError("the testbed's wire and CPU counters could not be read at the end of the measured window")
        return dict(self._figures)


_EOF = object()


def _pump(stream, lines: queue.Queue) -> None:
    for raw in iter(stream.readline, b""):
        lines.put(raw.decode(errors="replace"))
    lines.put(_EOF)


def _parse(line: str) -> dict | None:
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) else None


def measure(problem: Problem, placement: Placement | None, out_dir: Path, settings: RunSettings, *,
            workers: int | None = None, fmt: str = "jsonl", source: dict | None = None, force: bool = False,
            on_event: Callable[[dict], None] | None = None, beside: "Beside | None" = None) -> dict:
    """Runs ``placement`` (None: Storm's EvenScheduler with ``workers`` workers) and writes ``out_dir``:
    ``run.json``, ``traffic.<fmt>``, ``load.<fmt>``, ``plan.json``, the monitor's raw files
    (``monitor/``, warm-up included) and ``storm.log``. The directory appears whole or not at all.
    ``beside`` runs while the job runs (from its workers running to its result): it reads the
    monitor's directory and may rewrite the job's plan (the autopilot); what it adds to
    ``run.json`` comes from :meth:`Beside.summary`."""
    topo = problem.topology
    if settings.duration_s < settings.window_s:
        raise StormError(f"--duration ({settings.duration_s:g} s) must cover at least one window (--window {settings.window_s:g} s)")
    if beside is not None and placement is None:
        raise StormError("--autopilot needs a placement to start from (a plan or a scheduler), not Storm's own")
    check_output_dir(out_dir)   # never over an input (the run's own topology, cluster, plan), --force included
    if out_dir.exists() and any(out_dir.iterdir()) and not force:
        raise StormError(f"{out_dir}: output directory exists and is not empty (use --force to replace it)")
    if settings.operating_point is not None:   # the point's sources: saturated, or its fixed rate
        problem = Problem.from_topology(settings.operating_point.sources(topo), problem.cluster)
    if workers is None:
        workers = workers_of(placement) if placement is not None else int(problem.cluster.slots.sum())
    stage = stage_dir(out_dir)
    work = Path(tempfile.mkdtemp(prefix="streamplace-storm-"))
    started = time.monotonic()
    with temporary(stage), temporary(work):   # removed also when Ctrl-C abandons this thread
        return _measure(problem, placement, out_dir, settings, workers, fmt, source, on_event, stage, work, started, beside)


class Beside:
    """What runs beside a measured job (:func:`measure`'s ``beside``)."""

    def start(self, monitor: Path, plan_dir: Path, out_dir: Path) -> None:
        """The job's workers run: ``monitor`` fills with windows, ``plan_dir`` holds its plan."""

    def stop(self) -> None:
        """The job's result is in (or the run failed): stop, and leave everything written whole."""

    def summary(self, run: dict) -> dict:
        """Keys to add to ``run.json`` (``run``: the rest of it)."""
        return {}


def _measure(problem, placement, out_dir, settings, workers, fmt, source, on_event, stage, work, started, beside) -> dict:
    name = problem.topology.name
    started_beside = []
    submitted = {}

    def events(event: dict) -> None:
        kind = event.get("event")
        if kind == "submitted" and isinstance(event.get("t"), (int, float)):
            submitted["submitted_at"] = float(event["t"])
        if beside is not None and kind == "running" and not started_beside:
            shutil.copyfile(work / "plans" / f"{name}.json", stage / "plan.json")   # the plan the job starts with
            beside.start(stage / "monitor", work / "plans", stage)
            started_beside.append(beside)
        elif kind == "result" and started_beside:
            started_beside.pop().stop()
        if on_event:
            on_event(event)
    try:
        job = Job(name, problem.topology, placement, workers, monitor=True, duration_s=settings.duration_s,
                  conf={"streamplace.cpu_per_tuple": cpu_by_task(problem, placement)})
        # with a loop beside it the job is not restarted in a new JVM on a halt: the loop would go on
        # believing its plan runs while the new JVM runs the start placement again
        result = run_jobs(problem.cluster, [job], settings, work, monitor_dir=stage / "monitor", on_event=events,
                          retry_halted=beside is None)[name]
        shutil.copyfile(work / "storm.log", stage / "storm.log")
        if placement is not None and not (stage / "plan.json").exists():
            shutil.copyfile(work / "plans" / f"{name}.json", stage / "plan.json")
        run = summarise(problem, placement, result, stage, settings, fmt)
        if run["monitor_missing_windows"] and on_event:
            on_event({"event": "note", "message": f"the monitor's records miss {run['monitor_missing_windows']} of "
                      f"{run['windows'] * problem.topology.n_tasks} task-windows (a restarted executor's open window, "
                      "or records that never arrived): the measured figures count what arrived"})
        run.update({"source": source or {}, "wall_s": round(time.monotonic() - started, 2), **submitted})
        if beside is not None:
            run.update(beside.summary(run))
        atomic_write_text(stage / "run.json", json.dumps(run, indent=2) + "\n")
        replace_dir(stage, out_dir)
        return run
    finally:
        while started_beside:
            started_beside.pop().stop()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(stage, ignore_errors=True)


def _wire_figures(wire: dict | None, seconds: float) -> dict:
    """The testbed's measured network figures (nothing in embedded mode, which has no wire)."""
    if wire is None:
        return {}
    total = sum(wire.values())
    return {"measured_inter_node_bytes": total,
            "measured_inter_node_bytes_per_s": total / seconds if seconds > 0 else 0.0,
            "measured_bytes_by_node_pair": dict(sorted(wire.items()))}


def _predicted(problem: Problem, assignment: dict, measured_rate: float, settings: RunSettings) -> dict:
    """The default cost model on the placement Storm ran (on the testbed: the cluster as it is
    scaled there): predicted throughput, and the inter-node bytes it predicts at the measured rate."""
    from ..fit.cases import predicted_figures
    from ..model.performance import CostModel
    from ..model.specs import placement_from_dict
    try:
        ran = placement_from_dict({"placement": assignment}, problem.topology, problem.cluster, "Storm's assignment")
    except ValueError:
        return {}
    budget = settings.testbed.budget() if settings.mode == "cluster" else float("inf")
    figures = predicted_figures(problem, ran, CostModel(), budget)
    unit = figures["predicted_unit_throughput"]
    return {"predicted_throughput": figures["predicted_throughput"],
            "predicted_inter_node_bytes_per_s": figures["predicted_unit_inter_node_bytes"] * measured_rate / unit if unit else 0.0}


def summarise(problem: Problem, placement: Placement | None, result: dict, out_dir: Path,
              settings: RunSettings, fmt: str) -> dict:
    """``run.json``: what Storm did (assignment, status) and what the monitor measured."""
    topo, cluster = problem.topology, problem.cluster
    start, end = result["measure_start"], result["measure_end"]
    monitor = out_dir / "monitor"
    traffic = records.traffic_records(monitor, start, end)
    load = records.load_records(monitor, start, end)
    latency = records.read_monitor(monitor, "latency", start, end)
    seconds = end - start
    bolts, spouts = records.throughput(load, topo, seconds)
    assignment = result["assignment"]
    plan = placement.to_mapping(topo.task_labels, cluster) if placement is not None else None
    node_of = {label: where["node"] for label, where in assignment.items()}
    budget = settings.testbed.budget() if settings.mode == "cluster" else float(os.cpu_count() or 1)
    # the named point the run was asked for, else the one its settings (as Nimbus holds them) make
    point = (settings.operating_point or OperatingPoint.of_conf(result.get("topology_conf", {}), len({(w["node"], w["worker"])
             for w in assignment.values()}), budget)).document()
    return {
        "topology": topo.name, "cluster": cluster.name, "mode": settings.mode,
        "storm_version": result["storm_version"],
        "plan_applied": str(result.get("scheduler_status") or "").startswith(PLAN_APPLIED),
        "scheduler_status": result.get("scheduler_status"),
        "spout_acked": result.get("spout_acked"), "spout_failed": result.get("spout_failed"),
        "spout_trees": records.spout_trees(records.read_monitor(monitor, "load", start, end), topo),
        "plan_matches": None if plan is None else plan == assignment,
        "workers": result["workers"],
        # the model's quantity (``evaluate``'s predicted throughput): tuples executed by every
        # task, a spout's executed being what it emitted
        "throughput": bolts + spouts, "bolt_throughput": bolts, "source_rate": spouts,
        "cpu_budget": budget, "acker_order": PLUGIN_ACKER_ORDER,
        **({"cpu_period_ms": settings.testbed.cpu_period_ms} if settings.mode == "cluster" else {}),
        "latency_ms": records.latency_summary(latency),
        "duration_s": seconds, "warmup_s": settings.warmup_s, "window_s": settings.window_s,
        "windows": int(round(seconds / settings.window_s)),
        "monitor_missing_windows": records.missing_windows(load, topo, int(round(seconds / settings.window_s))),
        "monitor_cross_node_bytes_per_s": records.cross_node_bytes(traffic, node_of) / seconds if seconds > 0 else 0.0,
        **_wire_figures(result.get("wire"), seconds),
        **({"measured_node_cpu": result["node_cpu"]} if "node_cpu" in result else {}),
        **_predicted(problem, assignment, bolts + spouts, settings),
        "timeline": records.timeline(records.read_monitor(monitor, "load", 0.0, float("inf"))),
        "traffic_file": records.write_records(traffic, out_dir / "traffic", fmt).name,
        "load_file": records.write_records(load, out_dir / "load", fmt).name,
        "traffic_rows": len(traffic), "load_rows": len(load),
        "records": result.get("records", {"via": "files"}),
        "settings": {**asdict(replace(settings, operating_point=None)), "operating_point": point["name"]},
        "operating_point": point,
        "topology_conf": result.get("topology_conf", {}),   # the job's Storm settings, as Nimbus stored them
        "jvm_peak_rss_mb": round(result.get("jvm_peak_rss_mb") or 0.0, 1),
        "assignment": assignment,
        "system_executors": result.get("system_executors", {}),
        "storm_tasks": result.get("storm_tasks", {}),
    }

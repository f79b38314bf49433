"""Scenario sweeps on Spark (docs/pipeline.md, sweeps): workloads x clusters x schedulers x seeds.

A grid file (YAML or JSON, read with the safe loaders) lists the axes::

    workloads:                       # generator name: arguments (a list = one value each), or a topology file
      - microbench: {layout: [linear, star], tasks: [10, 20]}
      - lf: {config: ascent}
      - topologies/wordcount.yaml    # relative paths are relative to the grid file
    clusters:                        # a preset name, a cluster file, or a generator
      - heterogeneous
      - capacities: {6: 3, 4: 3, 2: 4}
      - synthetic: {nodes: [10, 20], slack: 0.2}   # sized to each workload's total load
    schedulers:                      # name: parameter grid (a mapping, or a list of single-key mappings)
      even: {}
      ischeduler: {theta: [0, 1]}
    seeds: [0, 1]                    # the schedulers' seed (default [0])
    time_limit: 30                   # optional: seconds, the budget of every scheduler that takes one
                                     # (as the CLI's --time-limit; a scheduler's own grid value wins)

The grid is validated up front (generator and argument names, value types and choices, scheduler
names, parameter values through ``make_scheduler``, files through the spec loaders), every problem
as one :class:`SpecError` line. It expands to scenarios in grid order; a scenario is a plain dict
whose ``scenario_id`` is a hash of its canonical JSON (generator arguments with defaults filled,
file contents rather than paths, integral floats written as integers), so the same scenario has the
same id in every grid and from every working directory.

:func:`run_sweep` skips the ids already recorded in ``DIR/parts/*.parquet``, and runs the rest in
batches: each batch is one Spark job, ``sc.parallelize(batch, numSlices=len(batch)).map(run_scenario)``
(one task per scenario, so Spark balances them over the executors), and its records become one new
Parquet part written under a temporary name and renamed, so an interruption loses at most the batch
in flight and never leaves half a part. ``DIR/results.csv`` is rewritten from all parts at the end
(also after an interruption). :func:`run_scenario` (top level, plain dicts in and out, so it pickles)
builds the problem, schedules and evaluates it with :func:`~streamplace.evaluate.records.result_record`
and returns one flat record: the scenario columns, the metric keys, ``status``, ``error`` (None, or
one line: the exception, or ``STATUS: why`` for a result without a placement), ``seconds`` (the scheduler's time) and
``scenario_seconds`` (building, scheduling and evaluating). Python workers keep a few built problems
in memory, so the schedulers and seeds of one workload and cluster do not rebuild it.

Rerun with ``retry_failed`` to run again the scenarios recorded with an exception (``status`` error;
results without a placement are answers, not failures); readers keep the newest record of each id. Workers
need the ``streamplace`` package; topology and cluster files are read on the driver and shipped with
the scenarios, but file paths among scheduler parameters (``throughput``'s ``profiling``) are opened
by the workers, so on a cluster they must exist on every machine.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import threading
import time
import uuid
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..evaluate.records import METRIC_KEYS, result_record
from ..model import Cluster, Problem, build_task_graph
from ..model.errors import Notice
from ..model.specs import (SpecError, atomic_write_bytes, atomic_write_text, cluster_from_dict, cluster_to_dict,
                           load_cluster, load_topology, read_document, topology_from_dict, topology_to_dict)
from ..profile.spark import spark_session
from ..schedulers import REGISTRY, ParameterError, available, make_scheduler
from ..files import quote
from ..schedulers.base import MAX_SEED, MAX_TIME_LIMIT
from ..schedulers.status import has_placement
from ..workloads.catalogue import CLUSTER_GENERATORS, PRESETS, REQUIRED, Arg, Generator, TOPOLOGIES

MAX_SCENARIOS = 1_000_000
PARTS = "parts"
RESULTS_CSV = "results.csv"
LOCK = ".sweep.lock"


def capacities_label(caps: dict[str, int]) -> str:
    """``cap-6x3+4x3+2x4`` for ``{6: 3, 4: 3, 2: 4}``."""
    return "cap-" + "+".join(f"{c}x{n}" for c, n in caps.items())


def canonical(value) -> str:
    """Canonical JSON: sorted keys, no spaces, integral floats as integers."""
    def norm(v):
        if isinstance(v, float) and math.isfinite(v) and v.is_integer():
            return int(v)
        if isinstance(v, dict):
            return {str(k): norm(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        return v
    return json.dumps(norm(value), sort_keys=True, separators=(",", ":"))


def _without(spec: dict, key: str) -> dict:
    return {k: v for k, v in spec.items() if k != key}


def scenario_id(scenario: dict) -> str:
    """Hash of what defines the scenario (specs without file paths, scheduler, params, seed, and the
    grid's time limit if it sets one)."""
    payload = {"workload": _without(scenario["workload_spec"], "file"), "cluster": _without(scenario["cluster_spec"], "file"),
               "scheduler": scenario["scheduler"], "params": scenario["params"], "seed": scenario["seed"],
               **({"time_limit": scenario["time_limit"]} if "time_limit" in scenario else {})}
    return hashlib.sha256(canonical(payload).encode()).hexdigest()[:16]


class _Grid:
    """Validation helpers bound to one grid file (every failure is one SpecError line)."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, problem: str):
        raise SpecError(self.path, where, problem)

    def values(self, raw, where: str) -> list:
        """A scalar is one value, a non-empty list is several."""
        if isinstance(raw, list):
            if not raw:
                self.fail(where, "an empty list gives no scenario")
            return raw
        return [raw]

    def check(self, value, arg: Arg, where: str):
        if arg.default is None and value is None:
            return None
        ok = {bool: isinstance(value, bool),
              int: isinstance(value, int) and not isinstance(value, bool),
              float: isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value),
              str: isinstance(value, str)}[arg.kind]
        if not ok:
            self.fail(where, f"must be {'a' if arg.kind is not int else 'an'} {arg.kind.__name__}, got {quote(value)}")
        if arg.choices and value not in arg.choices:
            self.fail(where, f"unknown value {quote(value)} (expected one of {', '.join(map(str, arg.choices))})")
        return float(value) if arg.kind is float else value

    def single(self, item, where: str, what: str) -> tuple[str, Any]:
        if not isinstance(item, dict) or len(item) != 1:
            self.fail(where, f"expected {what}, got {quote(item)}")
        return next(iter(item.items()))

    def expand_args(self, gen: Generator, raw, where: str) -> list[dict]:
        """Every combination of ``raw``'s argument values, defaults filled in."""
        raw = {} if raw is None else raw
        if not isinstance(raw, dict):
            self.fail(where, f"arguments must be a mapping, got {quote(raw)}")
        for key in raw:
            if key not in gen.args:
                self.fail(f"{where}.{key}", f"unknown argument (expected {', '.join(gen.args)})")
        axes = []
        for key, arg in gen.args.items():
            if key not in raw:
                if arg.default is REQUIRED:
                    self.fail(f"{where}.{key}", "missing")
                axes.append([arg.default])
                continue
            vals = self.values(raw[key], f"{where}.{key}")
            axes.append([self.check(v, arg, f"{where}.{key}" + (f"[{j}]" if isinstance(raw[key], list) else ""))
                         for j, v in enumerate(vals)])
        return [dict(zip(gen.args, combo)) for combo in itertools.product(*axes)]

    def file(self, value, where: str) -> Path:
        if not isinstance(value, str) or not value:
            self.fail(where, f"expected a file path, got {quote(value)}")
        path = Path(value)
        return path if path.is_absolute() else self.path.parent / path

    def workloads(self, doc) -> list[tuple[str, str, dict]]:
        """(label, layout, spec) per workload."""
        out = []
        for i, item in enumerate(self.list(doc, "workloads")):
            where = f"workloads[{i}]"
            if isinstance(item, str):
                path = self.file(item, where)
                topo = load_topology(path)
                out.append((item, path.stem, {"file": str(path), "document": topology_to_dict(topo)}))
                continue
            name, raw = self.single(item, where, f"a topology file or one generator ({', '.join(TOPOLOGIES)}) with its arguments")
            if name not in TOPOLOGIES:
                self.fail(f"{where}.{name}", f"unknown workload generator (expected one of {', '.join(TOPOLOGIES)})")
            gen = TOPOLOGIES[name]
            out += [(gen.label(a), gen.layout(a), {"generator": name, "args": a})
                    for a in self.expand_args(gen, raw, f"{where}.{name}")]
        return out

    def clusters(self, doc) -> list[tuple[str, dict]]:
        """(label, spec) per cluster."""
        out = []
        for i, item in enumerate(self.list(doc, "clusters")):
            where = f"clusters[{i}]"
            if isinstance(item, str):
                if item in PRESETS:
                    out.append((item, {"preset": item}))
                    continue
                path = self.file(item, where)
                if not path.exists():
                    self.fail(where, f"no cluster preset {quote(item)} (presets: {', '.join(PRESETS)}) and no file {path}")
                out.append((item, {"file": str(path), "document": cluster_to_dict(load_cluster(path))}))
                continue
            name, raw = self.single(item, where, "a preset, a cluster file, capacities or one generator "
                                                 f"({', '.join(CLUSTER_GENERATORS)}) with its arguments")
            if name == "capacities":
                out += [self.capacities(spec, f"{where}.capacities" + (f"[{j}]" if isinstance(raw, list) else ""))
                        for j, spec in enumerate(self.values(raw, f"{where}.capacities"))]
                continue
            if name not in CLUSTER_GENERATORS:
                self.fail(f"{where}.{name}", f"unknown cluster generator (expected capacities, {', '.join(CLUSTER_GENERATORS)})")
            gen = CLUSTER_GENERATORS[name]
            out += [(gen.label(a), {"generator": name, "args": a}) for a in self.expand_args(gen, raw, f"{where}.{name}")]
        return out

    def capacities(self, spec, where: str) -> tuple[str, dict]:
        if not isinstance(spec, dict) or not spec:
            self.fail(where, f"expected a mapping capacity -> node count, e.g. {{6: 3, 4: 3}}, got {quote(spec)}")
        caps = {}
        for cap, count in spec.items():
            try:
                value = float(cap)
            except (TypeError, ValueError):
                value = -1.0
            if not (math.isfinite(value) and value > 0):
                self.fail(f"{where}.{cap}", "a capacity must be a number > 0")
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                self.fail(f"{where}.{cap}", f"node count must be an integer >= 1, got {quote(count)}")
            caps[f"{value:g}"] = count
        return capacities_label(caps), {"capacities": caps}

    def schedulers(self, doc) -> list[tuple[str, dict]]:
        """(name, params) per scheduler variant."""
        raw = doc.get("schedulers")
        if isinstance(raw, dict):
            items = [(f"schedulers.{name}", name, params) for name, params in raw.items()]
        elif isinstance(raw, list):
            items = []
            for i, item in enumerate(raw):
                if isinstance(item, str):
                    items.append((f"schedulers[{i}]", item, {}))
                else:
                    name, params = self.single(item, f"schedulers[{i}]", "a scheduler name or {name: {parameter: values}}")
                    items.append((f"schedulers[{i}].{name}", name, params))
        else:
            self.fail("schedulers", f"required: a mapping or list of schedulers ({', '.join(available())})")
        if not items:
            self.fail("schedulers", "an empty list gives no scenario")
        out = []
        for where, name, params in items:
            if name not in REGISTRY:
                self.fail(where, f"unknown scheduler (available: {', '.join(available())})")
            params = {} if params is None else params
            if not isinstance(params, dict):
                self.fail(where, f"parameters must be a mapping parameter -> value or list of values, got {quote(params)}")
            if "seed" in params:
                self.fail(f"{where}.seed", "seeds are set for the whole grid by the top-level seeds")
            keys = list(params)
            for combo in itertools.product(*(self.values(params[k], f"{where}.{k}") for k in keys)):
                variant = dict(zip(keys, combo))
                try:
                    make_scheduler(name, variant)
                except ParameterError as exc:
                    self.fail(where, str(exc))
                out.append((name, variant))
        return out

    def time_limit(self, doc) -> float | None:
        value = doc.get("time_limit")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not 0 <= value <= MAX_TIME_LIMIT):
            self.fail("time_limit", f"must be a number of seconds between 0 and {MAX_TIME_LIMIT:g}, got {quote(value)}")
        return value

    def seeds(self, doc) -> list[int]:
        seeds = self.values(doc.get("seeds", [0]), "seeds")
        for j, s in enumerate(seeds):
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= MAX_SEED:
                self.fail(f"seeds[{j}]", f"must be an integer between 0 and {MAX_SEED}, got {quote(s)}")
        return seeds

    def list(self, doc, key: str) -> list:
        if key not in doc:
            self.fail(key, "required")
        value = doc[key]
        if not isinstance(value, list) or not value:
            self.fail(key, f"must be a non-empty list, got {quote(value)}")
        return value


GRID_KEYS = ("workloads", "clusters", "schedulers", "seeds", "time_limit", "description")


def variant(name: str, params: dict) -> str:
    """``ischeduler[theta=0]``: the scheduler with its grid parameters, as the report names it."""
    return f"{name}[{','.join(f'{k}={v}' for k, v in sorted(params.items()))}]" if params else name


def expand_grid(doc: Any, path: str | Path = "<grid>") -> list[dict]:
    """The scenarios of a parsed grid document, in grid order, each id once."""
    path = Path(path)
    grid = _Grid(path)
    if not isinstance(doc, dict):
        grid.fail("", f"a grid must be a mapping with {', '.join(GRID_KEYS[:4])}, got {type(doc).__name__}")
    for key in doc:
        if key not in GRID_KEYS:
            grid.fail(str(key), f"unknown field (expected one of {', '.join(GRID_KEYS)})")
    workloads, clusters = grid.workloads(doc), grid.clusters(doc)
    schedulers, seeds, time_limit = grid.schedulers(doc), grid.seeds(doc), grid.time_limit(doc)
    count = len(workloads) * len(clusters) * len(schedulers) * len(seeds)
    if count > MAX_SCENARIOS:
        grid.fail("", f"the grid has {count:,} scenarios (limit {MAX_SCENARIOS:,})")
    scenarios: dict[str, dict] = {}
    for (w_label, layout, w_spec), (c_label, c_spec), (name, params), seed in itertools.product(
            workloads, clusters, schedulers, seeds):
        sc = {"workload": w_label, "layout": layout, "workload_spec": w_spec, "cluster": c_label, "cluster_spec": c_spec,
              "scheduler": name, "variant": variant(name, params), "params": params, "seed": seed,
              **({} if time_limit is None else {"time_limit": time_limit})}
        scenarios.setdefault(scenario_id(sc), {"scenario_id": scenario_id(sc), **sc})
    return list(scenarios.values())


def load_grid(path: str | Path) -> list[dict]:
    """Read and validate a grid file (YAML or JSON) into its scenarios."""
    return expand_grid(read_document(path), path)


# ---------------------------------------------------------------------- one scenario (on the executors)
def _build_cluster(spec: dict, graph) -> Cluster:
    if "preset" in spec:
        return PRESETS[spec["preset"]](spec["preset"])
    if "capacities" in spec:
        caps = spec["capacities"]
        return Cluster.from_capacities({float(c): n for c, n in caps.items()}, name=capacities_label(caps))
    if "document" in spec:
        return cluster_from_dict(spec["document"], spec["file"])
    return CLUSTER_GENERATORS[spec["generator"]].build(**spec["args"], graph=graph)


@lru_cache(maxsize=4)
def _problem(key: str) -> Problem:
    """The problem of a (workload, cluster) pair, kept per Python worker across its tasks."""
    w_spec, c_spec = json.loads(key)
    if "document" in w_spec:
        topo, graph = topology_from_dict(w_spec["document"], w_spec["file"]), None
    else:
        topo, graph = TOPOLOGIES[w_spec["generator"]].build(**w_spec["args"])
    graph = graph if graph is not None else build_task_graph(topo)
    return Problem.from_topology(topo, _build_cluster(c_spec, graph), graph=graph)


def one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _plain(value):
    """Python scalars for Arrow; lists and dicts as JSON."""
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(value)
    return value.item() if hasattr(value, "item") else value


SCENARIO_COLUMNS = ("scenario_id", "workload", "layout", "cluster", "scheduler", "variant", "seed")


def run_scenario(scenario: dict) -> dict:
    """Build, schedule and evaluate one scenario -> one flat record (never raises for a bad scenario)."""
    start = time.perf_counter()
    row = {k: scenario[k] for k in SCENARIO_COLUMNS}
    row.update(params=canonical(scenario["params"]), workload_spec=canonical(_without(scenario["workload_spec"], "document")),
               cluster_spec=canonical(_without(scenario["cluster_spec"], "document")))
    try:
        problem = _problem(json.dumps([scenario["workload_spec"], scenario["cluster_spec"]], sort_keys=True))
        row.update(n_tasks=problem.n_tasks, n_nodes=problem.cluster.n_nodes)
        sched = make_scheduler(scenario["scheduler"], scenario["params"], seed=scenario["seed"],
                               time_limit=scenario.get("time_limit"))
        if scenario.get("time_limit") is not None and sched.budget_param:   # the budget it ran with
            row["params"] = canonical({**scenario["params"], sched.budget_param: getattr(sched, sched.budget_param)})
        record = result_record(sched.schedule(problem), include_placement=False)
        row.update({k: _plain(record.get(k)) for k in ("status", "message", "seconds", "lower_bound", "valid", *METRIC_KEYS)})
        row["error"] = None if has_placement(record["status"]) else f"{record['status']}: {record['message']}"
    except Exception as exc:  # recorded, so one bad scenario never stops the sweep
        row.update(status="error", error=one_line(exc))
    row["scenario_seconds"] = time.perf_counter() - start
    return row


# ---------------------------------------------------------------------- results on disk
_TYPES = {"seed": pa.int64(), "n_tasks": pa.int64(), "n_nodes": pa.int64(), "nodes_used": pa.int64(), "valid": pa.bool_(),
          "bottleneck": pa.string(), "overloaded_nodes": pa.string()}
COLUMNS = (*SCENARIO_COLUMNS, "params", "n_tasks", "n_nodes", "status", "error", "message", "seconds", "lower_bound",
           "valid", *METRIC_KEYS, "scenario_seconds", "workload_spec", "cluster_spec")
_FLOATS = {"seconds", "lower_bound", "scenario_seconds", *METRIC_KEYS}
SCHEMA = pa.schema([(c, _TYPES.get(c, pa.float64() if c in _FLOATS else pa.string())) for c in COLUMNS])


def _part_paths(out_dir: Path) -> list[Path]:
    """The parts :func:`write_part` wrote (``part-NNNNNN-<hex>.parquet``), in order; a file of
    another name there is not one of them."""
    parts = [p for p in (out_dir / PARTS).glob("part-*.parquet") if _PART_NAME.fullmatch(p.name)]
    return sorted(parts, key=lambda p: (int(p.name.split("-")[1]), p.name))


_PART_NAME = re.compile(r"part-\d+-[0-9a-f]+\.parquet")


def write_part(records: list[dict], out_dir: Path) -> Path:
    """``DIR/parts/part-NNNNNN-<random>.parquet``, written to a hidden temporary name and renamed."""
    existing = _part_paths(out_dir)
    index = int(existing[-1].name.split("-")[1]) + 1 if existing else 0
    path = out_dir / PARTS / f"part-{index:06d}-{uuid.uuid4().hex[:8]}.parquet"
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(records, schema=SCHEMA), sink)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())
    return path


def read_results(out_dir: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """All records in ``DIR``'s parts, the newest of each ``scenario_id`` (parts in write order)."""
    paths = _part_paths(Path(out_dir))
    if not paths:
        return pd.DataFrame(columns=list(columns or COLUMNS))
    nullable = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}.get  # integers stay integers beside nulls
    frames = [pq.read_table(p, columns=columns).to_pandas(types_mapper=nullable) for p in paths]
    frame = pd.concat(frames, ignore_index=True)
    return frame.drop_duplicates("scenario_id", keep="last").reset_index(drop=True)


def write_csv(out_dir: str | Path) -> Path:
    """``DIR/results.csv`` from all parts (atomically)."""
    path = Path(out_dir) / RESULTS_CSV
    atomic_write_text(path, read_results(out_dir).to_csv(index=False))
    return path


def result_records(out_dir: str | Path) -> list[dict]:
    """The results as dicts (missing values None), ``scheduler`` = the variant, for :mod:`.report`."""
    frame = read_results(out_dir)
    records = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return [{**rec, "scheduler": rec["variant"]} for rec in records]


def write_sweep_report(out_dir: str | Path, *, title: str = "streamplace sweep") -> Path:
    from ..report.page import write_report
    records = result_records(out_dir)
    return write_report(records, out_dir, title=title, intro=f"{len(records)} scenarios from {Path(out_dir) / PARTS}.")


# ---------------------------------------------------------------------- the sweep (driver)
@dataclass(frozen=True)
class SweepProgress:
    done: int          # scenarios of the grid with a record (skipped ones included, running batch's finished tasks)
    total: int         # scenarios in the grid
    batches_done: int  # batches written as parts
    batches: int       # batches this run
    failed: int      # scenarios of this run recorded with an exception


@dataclass(frozen=True)
class SweepSummary:
    total: int
    skipped: int
    ran: int
    failed: int
    no_placement: int   # results that are answers without a placement (infeasible, no_solution, ...)
    parts: list[str]
    errors: list[str]   # up to three "variant on workload@cluster: error" lines
    seconds: float
    csv: str
    report: str | None = None   # report.html, when asked for

    def describe(self) -> str:
        return (f"{self.total} scenarios: {self.skipped} already done, {self.ran} run in {self.seconds:.1f} s "
                f"({self.failed} failed, {self.no_placement} without a placement), {len(self.parts)} new parts; wrote {self.csv}")


class _BatchWatch:
    """Reports the finished tasks of the running Spark job group every ``interval`` seconds."""

    def __init__(self, sc, group: str, report: Callable[[int], None], interval: float = 0.25):
        self.sc, self.group, self.report, self.interval = sc, group, report, interval
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _finished(self) -> int:
        tracker = self.sc.statusTracker()
        done = 0
        for job in tracker.getJobIdsForGroup(self.group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info else ():
                stage_info = tracker.getStageInfo(stage)
                done += stage_info.numCompletedTasks if stage_info else 0
        return done

    def _run(self):
        while not self.stop.wait(self.interval):
            try:
                self.report(self._finished())
            except Exception:  # progress only: the job itself reports real failures
                return

    def __enter__(self):
        self.sc.setJobGroup(self.group, "streamplace sweep batch")
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def pending_scenarios(scenarios: list[dict], out_dir: str | Path, *, retry_failed: bool = False) -> list[dict]:
    """The scenarios without a record in ``out_dir`` (with ``retry_failed``: or with an ``error`` status)."""
    recorded = read_results(out_dir, columns=["scenario_id", "status"])
    keep = recorded[recorded["status"] != "error"] if retry_failed else recorded
    done_ids = set(keep["scenario_id"])
    return [s for s in scenarios if s["scenario_id"] not in done_ids]


@dataclass
class _Tally:
    done: int
    total: int
    failed: int = 0
    no_placement: int = 0
    parts: list = field(default_factory=list)
    errors: list = field(default_factory=list)

    def add(self, records: list[dict], part: Path) -> None:
        self.parts.append(str(part))
        self.done += len(records)
        for rec in records:
            self.failed += rec["status"] == "error"
            self.no_placement += rec["status"] != "error" and not has_placement(rec["status"])
            if rec["status"] == "error" and len(self.errors) < 3:
                self.errors.append(f"{rec['variant']} on {rec['workload']}@{rec['cluster']}: {rec['error']}")


def run_sweep(scenarios: list[dict], out_dir: str | Path, *, spark_master: str | None = None,
              batch_size: int | None = None, retry_failed: bool = False,
              on_progress: Callable[[SweepProgress], None] | None = None) -> SweepSummary:
    """Run the scenarios not yet recorded in ``out_dir`` on Spark, one Parquet part per batch.

    Spark starts only when something is pending; ``spark_session`` semantics apply (an active
    session in this process is used; ``spark_master`` None = ``$STREAMPLACE_SPARK_MASTER`` or local)."""
    out_dir = Path(out_dir)
    (out_dir / PARTS).mkdir(parents=True, exist_ok=True)
    with sweep_lock(out_dir):
        return _run_locked(scenarios, out_dir, spark_master, batch_size, retry_failed, on_progress)


class SweepLocked(RuntimeError):
    """Another live process is sweeping into the same directory."""


class PartSetAside(Notice):
    """An unreadable part was renamed ``*.corrupt`` and its scenarios will run again."""


@contextmanager
def sweep_lock(out_dir: Path):
    """``DIR/.sweep.lock`` holding this process's id, for the duration of a sweep. A lock whose process
    is gone (killed, crashed) is stale and taken over; a live one raises :class:`SweepLocked`."""
    from ..interrupt import temporary
    lock = out_dir / LOCK
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            owner = _lock_owner(lock)
            if owner is not None and _alive(owner):
                raise SweepLocked(f"{out_dir}: another sweep (process {owner}) is writing here; wait for it to "
                                  f"finish or stop it") from None
            lock.unlink(missing_ok=True)  # stale: its process is gone
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{os.getpid()}\n")
        break
    else:
        raise SweepLocked(f"{out_dir}: cannot take the lock {lock}")
    try:
        with temporary(lock):  # removed on Ctrl-C as well
            yield lock
    finally:
        lock.unlink(missing_ok=True)


def _lock_owner(lock: Path) -> int | None:
    try:
        return int(lock.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None  # unreadable or half-written: treated as stale


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):   # OverflowError: no process has such an id
        return False
    except PermissionError:
        return True
    return True


def set_aside_corrupt_parts(out_dir: Path) -> list[Path]:
    """Rename every part that does not read back (half-written, truncated, not Parquet) to
    ``*.parquet.corrupt`` with a warning; its scenarios then count as not done and run again."""
    moved = []
    for part in _part_paths(out_dir):
        try:
            pq.read_table(part, columns=["scenario_id", "status"])
        except Exception as exc:  # pyarrow raises several types for a bad file
            aside = part.with_name(part.name + ".corrupt")
            part.rename(aside)
            moved.append(aside)
            warnings.warn(f"{part}: unreadable ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                          f"set aside as {aside.name}, its scenarios run again", PartSetAside, stacklevel=2)
    return moved


def _run_locked(scenarios, out_dir: Path, spark_master, batch_size, retry_failed, on_progress) -> SweepSummary:
    start = time.perf_counter()
    for stale in (out_dir / PARTS).glob(".part-*.tmp"):  # left by a killed process (never a finished part)
        stale.unlink(missing_ok=True)
    set_aside_corrupt_parts(out_dir)
    pending = pending_scenarios(scenarios, out_dir, retry_failed=retry_failed)
    skipped = len(scenarios) - len(pending)
    tally = _Tally(done=skipped, total=len(scenarios))
    try:
        if pending:
            # C1 only: the JVM only ships batches to the Python workers that schedule; measured on
            # 2 cores (two runs each), 16 scenarios 8.1-8.5 s against 8.9-9.7 s, 480 scenarios
            # 14.8-15.1 s against 16.4-16.5 s, with 40 % less CPU
            with spark_session(spark_master, fast_start=True) as spark:
                _run_batches(spark.sparkContext, pending, out_dir, tally, batch_size, on_progress)
        elif on_progress:
            on_progress(SweepProgress(done=tally.done, total=tally.total, batches_done=0, batches=0, failed=0))
    finally:
        csv = write_csv(out_dir)
    return SweepSummary(total=tally.total, skipped=skipped, ran=tally.done - skipped,
                        failed=tally.failed, no_placement=tally.no_placement, parts=tally.parts, errors=tally.errors,
                        seconds=time.perf_counter() - start, csv=str(csv))


def _run_batches(sc, pending: list[dict], out_dir: Path, tally: _Tally, batch_size: int | None, on_progress) -> None:
    size = batch_size or max(1, 8 * sc.defaultParallelism)
    batches = [pending[i:i + size] for i in range(0, len(pending), size)]

    def report(batches_done: int, running: int = 0):
        if on_progress:
            on_progress(SweepProgress(done=tally.done + running, total=tally.total, batches_done=batches_done,
                                      batches=len(batches), failed=tally.failed))

    report(0)
    for b, batch in enumerate(batches, 1):
        group = f"streamplace-sweep-{uuid.uuid4().hex[:8]}"
        slices = min(len(batch), 2 * sc.defaultParallelism)  # a few scenarios per task: Spark's per-task cost is ~10-50 ms
        with _BatchWatch(sc, group, lambda n, b=b, per=len(batch) / slices: report(b - 1, int(n * per))):
            records = sc.parallelize(batch, numSlices=slices).map(run_scenario).collect()
        tally.add(records, write_part(records, out_dir))
        report(b)

"""A measured run of a job, read for calibration (``--calibrate RUN``).

``RUN`` is a ``streamplace storm run`` output directory, or a directory made the same way from a
real cluster: a ``run.json`` with at least

- ``assignment``: ``{task label: {"node": name, "worker": index}}`` (where Storm ran each task);
- ``duration_s``: the seconds the records cover;
- ``load_file`` and ``traffic_file``: the monitor's load and traffic records of that interval
  (``profile``'s record schema; JSON lines, CSV or Parquet), beside ``run.json``;
- ``topology_conf``: the topology's Storm settings as Nimbus holds them (the UI's
  ``/api/v1/topology/<id>`` ``configuration``); what it does not say is Storm's default;

and optionally ``cpu_budget`` (the cores a testbed gave the whole cluster; absent: the cluster as
its spec says), ``measured_node_cpu`` (``{node: {"cores": ...}}``, the cores each node used: the
fixed costs are calibrated on it) and ``latency_ms`` (``{"mean": ...}``).
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..files import check_total_size, quote, read_document
from ..model import Problem
from ..model.calibration import PLUGIN_ACKER_ORDER, MeasuredRun, offered_rate, rate_maps
from ..model.operating_point import OperatingPoint
from ..model.specs import MAX_NUMBER, SpecError, placement_from_dict
from ..profile import tumbling_windows, window_text
from . import records

def _read_records(path: Path, doc_path: Path, key: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """The records of ``path``, with ``columns``; SpecError naming the file on anything else."""
    suffix = path.suffix.lower()
    check_total_size([path], path.parent, what="monitoring records", in_memory="parquet" if suffix == ".parquet" else "json")
    try:
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
        elif suffix == ".csv":
            frame = pd.read_csv(path)
        else:
            frame = pd.read_json(path, lines=True, dtype=False)
    except (ValueError, OSError, pd.errors.EmptyDataError) as exc:
        raise SpecError(path, key, f"not readable as monitoring records ({quote(str(exc))})") from None
    except (AttributeError, TypeError):   # pandas on a line that is JSON but not an object
        raise SpecError(path, key, "not readable as monitoring records (a line is not a JSON object)") from None
    if not len(frame):
        raise SpecError(path, key, "no records")
    records.check_records(frame, path, columns, "load" if key == "load_file" else "traffic")
    return frame


def _labels(frame: pd.DataFrame, columns: tuple[str, ...], path: Path, topo) -> None:
    """Every task label in ``columns`` is one of ``topo``'s."""
    known = set(topo.task_labels)
    for column in columns:
        unknown = sorted(set(frame[column].astype(str)) - known)
        if unknown:
            raise SpecError(path, column, f"task {quote(unknown[0])} is not a task of {quote(topo.name)}: "
                                          "the run is of another job")


def _counted_once(frames: list[tuple[Path, pd.DataFrame]]) -> None:
    """No record counted twice, the rule ``profile`` applies: :class:`SpecError` naming the file
    on a record that repeats another in every field (a copied line) or on windows that overlap
    (a 60-s record beside the six 10-s ones of the same minute). Windows are checked where every
    record gives its length (``window_seconds``)."""
    for path, frame in frames:
        text = frame.astype(str)   # as text: a list field (latency buckets) is unhashable
        later = text.duplicated().to_numpy()
        if later.any():
            again = int(later.argmax())
            first = int((text == text.iloc[again]).all(axis=1).to_numpy().argmax())
            row = frame.iloc[again]
            window = (window_text(float(row["window_start"]), float(row["window_seconds"])) if "window_seconds" in frame.columns
                      else f"starting at {float(row['window_start']):.15g}")
            raise SpecError(path, "", f"record {again + 1} repeats record {first + 1} in every field (window {window}): "
                                      "copies would be counted twice; remove them (records of one window with "
                                      "different counts are added up)")
    if all("window_seconds" in frame.columns for _, frame in frames):
        tumbling_windows(pd.concat([pd.DataFrame({"ws": frame["window_start"].astype(float), "wl": frame["window_seconds"].astype(float),
                                                  "_source": str(path)}) for path, frame in frames], ignore_index=True),
                         needs="a calibration")


def _streams_only(traffic: pd.DataFrame, path: Path, topo) -> None:
    """Every traffic record is of a stream of ``topo`` (from a task of its sender to one of its
    receiver): the rates a calibration reads per stream would take in any other pair unseen."""
    streams = {(s.src, s.dst) for s in topo.streams}
    op = {label: topo.operators[topo.operator_of_task[t]].name for t, label in enumerate(topo.task_labels)}
    pairs = list(zip(traffic["src_task"].astype(str).map(op), traffic["dst_task"].astype(str).map(op)))
    bad = next((i for i, pair in enumerate(pairs) if pair not in streams), None)
    if bad is not None:
        src, dst = traffic["src_task"].iloc[bad], traffic["dst_task"].iloc[bad]
        raise SpecError(path, "dst_task", f"record {bad + 1}: {src} -> {dst} is no stream of {quote(topo.name)} "
                                          f"({pairs[bad][0]} does not send to {pairs[bad][1]})")


def _number(value, doc_path: Path, field: str, what: str, positive: bool = False) -> float:
    """``value`` of run.json's ``field``: a finite number >= 0 (> 0 if ``positive``) and at most
    10^12, the specs' bound; :class:`SpecError` saying it must be ``what`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not (value > 0 if positive else value >= 0) or value > MAX_NUMBER:
        raise SpecError(doc_path, field, f"must be {what} (at most {MAX_NUMBER:g}), got {quote(value)}")
    return float(value)


def run_document(path: str | os.PathLike) -> dict:
    """The ``run.json`` of run directory ``path``; :class:`SpecError` naming it when it is missing
    or not a mapping."""
    run_dir = Path(path)
    doc_path = run_dir / "run.json"
    if not doc_path.is_file():
        raise SpecError(run_dir, "run.json", "no run.json here: --calibrate takes a `streamplace storm run` output directory")
    doc = read_document(doc_path)
    if not isinstance(doc, dict):
        raise SpecError(doc_path, "run.json", "must be a mapping")
    return doc


def read_run(path: str | os.PathLike, problem: Problem) -> MeasuredRun:
    """The run in directory ``path`` of ``problem``'s job; :class:`SpecError` naming the file and
    field on anything missing, malformed or of another job."""
    run_dir = Path(path)
    doc_path = run_dir / "run.json"
    doc = run_document(run_dir)
    for key in ("assignment", "duration_s", "load_file", "traffic_file"):
        if key not in doc:
            raise SpecError(doc_path, key, "missing (a calibration needs where each task ran, the seconds measured and the "
                                           "monitor's load and traffic records)")
    seconds = _number(doc["duration_s"], doc_path, "duration_s", "a number of seconds > 0", positive=True)
    assignment = doc["assignment"]
    if not isinstance(assignment, dict) or not all(isinstance(w, dict) and {"node", "worker"} <= set(w) for w in assignment.values()):
        raise SpecError(doc_path, "assignment", "must map each task label to {node, worker}")
    topo = problem.topology
    placement = placement_from_dict({"placement": assignment}, topo, problem.cluster, doc_path)
    frames, files = {}, {}
    for key, columns in (("load_file", ("window_start", "task", "executed", "cpu_seconds")),
                         ("traffic_file", ("window_start", "src_task", "dst_task", "tuples"))):
        name = str(doc[key])
        files[key] = file = run_dir / name
        if Path(name).is_absolute() or ".." in Path(name).parts or not file.is_file():
            raise SpecError(doc_path, key, f"{quote(name)} is not a file beside run.json")
        frames[key] = _read_records(file, doc_path, key, columns)
        _labels(frames[key], columns[1:2] if key == "load_file" else columns[1:3], file, topo)
    _counted_once([(files[key], frame) for key, frame in frames.items()])
    load, traffic = frames["load_file"], frames["traffic_file"]
    _streams_only(traffic, files["traffic_file"], topo)
    bolts, spouts = records.throughput(load, topo, float(seconds))
    if bolts + spouts <= 0:
        raise SpecError(files["load_file"], "executed", "no task executed a tuple: nothing to calibrate on")
    rates = records.rates(load, traffic, topo, float(seconds))
    conf = doc.get("topology_conf") or {}
    if not isinstance(conf, dict):
        raise SpecError(doc_path, "topology_conf", "must be a mapping of Storm settings")
    budget = doc.get("cpu_budget")
    if budget is not None:
        budget = _number(budget, doc_path, "cpu_budget", "a number of cores > 0", positive=True)
    named = doc.get("operating_point") if isinstance(doc.get("operating_point"), dict) else {}
    try:
        point = OperatingPoint.of_conf(conf, int(np.unique(placement.slot_ids(problem.cluster)).size), budget)
        point = dataclasses.replace(point, bandwidth_scaled=bool(named.get("bandwidth_scaled", False)))
        for kind in ("spout", "bolt"):
            if not point.sleep_s(kind) >= 0:
                raise ValueError(f"topology.{kind}.wait.progressive.level3.sleep.millis must be >= 0")
    except (ValueError, TypeError) as exc:
        raise SpecError(doc_path, "topology_conf", str(exc)) from None
    try:   # what the spouts asked for: a named point's rate (None: saturated), else the topology's own
        asked = dataclasses.replace(point, name=str(named.get("name", "measured")), source_rate=named.get("source_rate"))
    except (ValueError, TypeError) as exc:
        raise SpecError(doc_path, "operating_point", str(exc)) from None
    offered = offered_rate(asked, topo)
    tasks, streams = rate_maps(rates)
    latency_doc = doc.get("latency_ms") or {}
    if not isinstance(latency_doc, dict):
        raise SpecError(doc_path, "latency_ms", f"must be a mapping such as {{mean: ...}}, got {quote(latency_doc)}")
    latency = latency_doc.get("mean")
    if latency is not None:
        latency = _number(latency, doc_path, "latency_ms.mean", "a number of milliseconds >= 0")
    node_cpu = doc.get("measured_node_cpu") or {}
    if not isinstance(node_cpu, dict):
        raise SpecError(doc_path, "measured_node_cpu", "must map each node to {cores: ...}")
    node_cores = {}
    for node, cpu in node_cpu.items():
        if node not in problem.cluster.index:
            raise SpecError(doc_path, f"measured_node_cpu.{node}", f"unknown node {quote(node)}")
        if not isinstance(cpu, dict) or "cores" not in cpu:
            raise SpecError(doc_path, f"measured_node_cpu.{node}", f"must be {{cores: ...}}, got {quote(cpu)}")
        node_cores[node] = _number(cpu["cores"], doc_path, f"measured_node_cpu.{node}.cores", "a number of cores >= 0")
    try:   # MeasuredRun checks acker_order (the one field of the document it checks itself)
        return MeasuredRun(point, placement, bolts, spouts, tasks, streams, latency, budget, offered, node_cores,
                           doc.get("acker_order", PLUGIN_ACKER_ORDER))
    except ValueError as exc:
        raise SpecError(doc_path, "acker_order", str(exc)) from None

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
its spec says) and ``latency_ms`` (``{"mean": ...}``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..files import check_total_size, quote, read_document
from ..model import Problem
from ..model.calibration import MeasuredRun
from ..model.operating_point import OperatingPoint
from ..model.specs import SpecError, placement_from_dict
from . import records

def _read_records(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    check_total_size([path], path.parent, what="monitoring records", in_memory="parquet" if suffix == ".parquet" else "json")
    if suffix == ".parquet":
        return pd.read_parquet(path)
    if suffix == ".csv":
        return pd.read_csv(path)
    return pd.read_json(path, lines=True, dtype=False)


def read_run(path: str | os.PathLike, problem: Problem) -> MeasuredRun:
    """The run in directory ``path`` of ``problem``'s job; :class:`SpecError` naming the file and
    field on anything missing or of another job."""
    run_dir = Path(path)
    doc_path = run_dir / "run.json"
    if not doc_path.is_file():
        raise SpecError(run_dir, "run.json", "no run.json here: --calibrate takes a `streamplace storm run` output directory")
    doc = read_document(doc_path)
    if not isinstance(doc, dict):
        raise SpecError(doc_path, "run.json", "must be a mapping")
    for key in ("assignment", "duration_s", "load_file", "traffic_file"):
        if key not in doc:
            raise SpecError(doc_path, key, "missing (a calibration needs where each task ran, the seconds measured and the "
                                           "monitor's load and traffic records)")
    seconds = doc["duration_s"]
    if not isinstance(seconds, (int, float)) or not seconds > 0:
        raise SpecError(doc_path, "duration_s", f"must be a number of seconds > 0, got {quote(seconds)}")
    topo = problem.topology
    placement = placement_from_dict({"placement": doc["assignment"]}, topo, problem.cluster, doc_path)
    frames = {}
    for key in ("load_file", "traffic_file"):
        file = run_dir / str(doc[key])
        if not file.is_file():
            raise SpecError(doc_path, key, f"{quote(str(doc[key]))} is not a file beside run.json")
        frames[key] = _read_records(file)
    load, traffic = frames["load_file"], frames["traffic_file"]
    unknown = sorted(set(load.get("task", pd.Series(dtype=str))) - set(topo.task_labels))
    if unknown:
        raise SpecError(run_dir / str(doc["load_file"]), "task",
                        f"task {quote(unknown[0])} is not a task of {quote(topo.name)}: the run is of another job")
    bolts, spouts = records.throughput(load, topo, float(seconds))
    rates = records.rates(load, traffic, topo, float(seconds))
    conf = doc.get("topology_conf") or {}
    if not isinstance(conf, dict):
        raise SpecError(doc_path, "topology_conf", "must be a mapping of Storm settings")
    budget = doc.get("cpu_budget")
    if budget is not None and not (isinstance(budget, (int, float)) and budget > 0):
        raise SpecError(doc_path, "cpu_budget", f"must be a number of cores > 0, got {quote(budget)}")
    workers = len({(w["node"], w["worker"]) for w in doc["assignment"].values()})
    point = OperatingPoint.of_conf(conf, workers, budget)
    tasks = {label: (t["executed_per_s"], t["cpu_cores"]) for label, t in rates["tasks"].items()}
    streams = {tuple(pair.split(">", 1)): s["tuples_per_s"] for pair, s in rates["streams"].items()}
    latency = (doc.get("latency_ms") or {}).get("mean") if isinstance(doc.get("latency_ms"), dict) else None
    return MeasuredRun(point, placement, bolts, spouts, tasks, streams, latency, budget)

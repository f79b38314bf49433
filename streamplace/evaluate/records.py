"""Flat records of results and evaluations: the JSON/CSV contract of the CLI and reports."""

from __future__ import annotations

import csv
import io
import json
import math

from ..model import Placement, Problem
from ..schedulers.base import ScheduleResult
from . import metrics
from ..model import performance

METRIC_KEYS = ("inter_node_cost", "inter_worker_cost", "intra_worker_traffic", "total_traffic", "nodes_used",
               "max_utilisation", "imbalance", "overloaded_nodes", "network_distance", "cohesion", "coupling",
               "throughput", "bottleneck", "latency_ms")


def evaluation_record(problem: Problem, placement: Placement, *, include_placement: bool = True,
                      model: performance.CostModel | None = None) -> dict:
    """Metric keys of ``placement``; the performance keys under ``model`` (default: the bundled one)."""
    record = metrics.summary(problem, placement)
    record["cohesion"] = metrics.cohesion(problem, placement)
    record["coupling"] = metrics.coupling(problem, placement)
    record.update(performance.predict(problem, placement, model or performance.CostModel()).summary())
    record["valid"] = not problem.violations(placement)
    _undefined_to_none(record)
    if include_placement:
        record["placement"] = placement.to_mapping(problem.topology.task_labels, problem.cluster)
    return record


def result_record(result: ScheduleResult, *, include_placement: bool = True,
                  model: performance.CostModel | None = None) -> dict:
    """``scheduler``, ``status``, metric keys, ``lower_bound``, ``seconds``, ``placement``..."""
    record = {"scheduler": result.scheduler, "status": result.status, "seconds": result.seconds,
              "lower_bound": result.lower_bound, "message": result.message, "params": result.params}
    if result.placement is not None:
        record.update(evaluation_record(result.problem, result.placement, include_placement=include_placement, model=model))
    else:
        record.update({k: None for k in METRIC_KEYS})
        record["valid"] = False
        if include_placement:
            record["placement"] = None
    details = {k: v for k, v in result.details.items() if _jsonable(v)}
    if details:
        record["details"] = details
    return record


def _undefined_to_none(record: dict) -> None:
    """A metric that is not a finite number (utilisation of a node of capacity 0) is undefined: None
    (JSON null, CSV empty, table "-"), never NaN or Infinity in any output."""
    for key, value in record.items():
        if isinstance(value, float) and not math.isfinite(value):
            record[key] = None


def _jsonable(value) -> bool:
    return isinstance(value, (str, int, float, bool, type(None), list, dict))


def records_to_csv(records: list[dict]) -> str:
    """CSV of flat records: nested values (lists, dicts) as JSON; placements left out."""
    keys: list[str] = []
    for rec in records:
        keys += [k for k in rec if k not in keys and k not in ("placement", "details", "params")]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore")
    writer.writeheader()
    for rec in records:
        writer.writerow({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in rec.items()})
    return buf.getvalue()

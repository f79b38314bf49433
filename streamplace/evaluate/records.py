"""Flat records of results and evaluations: the JSON/CSV contract of the CLI and reports."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from dataclasses import dataclass, field

from ..model import Placement, Problem
from ..schedulers.base import REGISTRY, ScheduleResult
from . import metrics
from ..model import performance

METRIC_KEYS = ("inter_node_cost", "inter_worker_cost", "intra_worker_traffic", "total_traffic", "nodes_used",
               "max_utilisation", "imbalance", "overloaded_nodes", "network_distance", "cohesion", "coupling",
               "throughput", "bottleneck", "latency_ms")


@dataclass(frozen=True)
class Evaluation:
    """What :mod:`.metrics` and the performance model say of one placement: the metric keys of
    every JSON/CSV output (:data:`METRIC_KEYS`, same names), ``valid`` (every node within
    capacity) and the placement by task label (``None`` when left out of the output)."""

    inter_node_cost: float | None
    inter_worker_cost: float | None
    intra_worker_traffic: float | None
    total_traffic: float | None
    nodes_used: int | None
    max_utilisation: float | None
    imbalance: float | None
    overloaded_nodes: list | None
    network_distance: float | None
    cohesion: float | None
    coupling: float | None
    throughput: float | None
    bottleneck: str | None
    latency_ms: float | None
    valid: bool
    placement: dict | None = None

    @classmethod
    def of(cls, problem: Problem, placement: Placement, *, include_placement: bool = True,
           model: performance.Predictor | None = None) -> "Evaluation":
        """Metric keys of ``placement``; the performance keys under ``model`` (default: the bundled
        cost model; a calibrated model predicts at the operating point of the run it was calibrated on)."""
        values = metrics.summary(problem, placement)
        values["cohesion"] = metrics.cohesion(problem, placement)
        values["coupling"] = metrics.coupling(problem, placement)
        model = model or performance.CostModel()
        values.update(model.summary(problem, placement) if model.covers(problem)
                      else dict.fromkeys(("throughput", "bottleneck", "latency_ms")))
        values = {key: _defined(values[key]) for key in METRIC_KEYS}
        return cls(**values, valid=not problem.violations(placement),
                   placement=placement.to_mapping(problem.topology.task_labels, problem.cluster) if include_placement else None)

    @classmethod
    def none(cls) -> "Evaluation":
        """A result without a placement: every metric undefined, not valid."""
        return cls(**dict.fromkeys(METRIC_KEYS), valid=False)


@dataclass(frozen=True)
class ResultRecord:
    """One scheduler's result on one job: the typed record every output is made from (the CLI's
    schedule/compare/reschedule, the demo, the sweeps, the reproductions, the reports).

    ``context`` holds what the producer says of the job before the result keys (``workload``,
    ``cluster``, ``n_tasks`` ...), ``extra`` what follows them (``topology_file`` ...), both in
    the order they are written. ``parallelism`` is set when the scheduler chooses the
    parallelism (its class declares :attr:`~streamplace.schedulers.base.Scheduler.chooses_parallelism`)
    and chose another job than the one given: its placement is then of that job, not comparable
    with the others (:attr:`own_job`). ``recommended``, ``reason`` and ``vs_default`` (the change
    against Storm's default scheduler, :func:`streamplace.evaluate.decision.versus`) are the
    decision's (:func:`streamplace.evaluate.decision.annotate`). :meth:`to_dict` and
    :meth:`from_dict` are the one place a record becomes JSON and back.
    """

    scheduler: str
    status: str
    seconds: float | None
    lower_bound: float | None
    message: str
    params: dict
    evaluation: Evaluation
    details: dict = field(default_factory=dict)
    context: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    parallelism: dict | None = None
    include_placement: bool = True
    recommended: bool | None = None
    reason: str | None = None
    vs_default: dict | None = None

    @property
    def own_job(self) -> bool:
        """Whether the placement is of a job the scheduler chose itself (another job, not compared)."""
        return self.parallelism is not None

    def figure(self, key: str):
        """The value of a result key (``seconds``, ``lower_bound`` ...) or a metric key
        (:data:`METRIC_KEYS`) by its JSON name, for tables that pick columns by name."""
        if key in METRIC_KEYS:
            return getattr(self.evaluation, key)
        if key in _RESULT_KEYS:
            return getattr(self, key)
        raise KeyError(f"{key} is neither a result key ({', '.join(_RESULT_KEYS)}) nor a metric key")

    @classmethod
    def of(cls, result: ScheduleResult, *, given: Problem | None = None, include_placement: bool = True,
           model: performance.Predictor | None = None, context: dict | None = None,
           extra: dict | None = None) -> "ResultRecord":
        """The record of ``result``; ``given``: the problem the scheduler was asked to place (for
        a scheduler that chooses the parallelism: whether it chose another job)."""
        evaluation = Evaluation.none() if result.placement is None else \
            Evaluation.of(result.problem, result.placement, include_placement=include_placement, model=model)
        parallelism = None
        if given is not None and result.ok and _declares(result.scheduler, "chooses_parallelism") \
                and result.problem.topology != given.topology:
            parallelism = {op.name: op.parallelism for op in result.problem.topology.operators}
        return cls(scheduler=result.scheduler, status=str(result.status), seconds=result.seconds,
                   lower_bound=result.lower_bound, message=result.message, params=result.params,
                   evaluation=evaluation, details={k: v for k, v in result.details.items() if _jsonable(v)},
                   context=dict(context or {}), extra=dict(extra or {}), parallelism=parallelism,
                   include_placement=include_placement)

    def to_dict(self, *, vs_key: str = "vs_default") -> dict:
        """The JSON form: ``context`` keys (``parallelism`` after them, when set), the result keys,
        the metric keys, ``valid``, ``placement``, ``details`` (if any), ``extra`` keys, then the
        decision's keys (the change against the default under ``vs_key``)."""
        out = dict(self.context)
        if self.parallelism is not None:
            out["parallelism"] = self.parallelism
        out.update(scheduler=self.scheduler, status=self.status, seconds=self.seconds, lower_bound=self.lower_bound,
                   message=self.message, params=self.params)
        evaluation = dataclasses.asdict(self.evaluation)
        placement = evaluation.pop("placement")
        out.update(evaluation)
        if self.include_placement:
            out["placement"] = placement
        if self.details:
            out["details"] = self.details
        out.update(self.extra)
        if self.vs_default is not None:
            out[vs_key] = self.vs_default
        if self.recommended is not None:
            out["recommended"] = self.recommended
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_dict(cls, record: dict, *, vs_key: str = "vs_default") -> "ResultRecord":
        """The record a :meth:`to_dict` wrote (missing result or metric keys read as None)."""
        front = list(record).index("scheduler") if "scheduler" in record else len(record)
        context = {k: v for k, v in list(record.items())[:front] if k != "parallelism"}
        known = {*_RESULT_KEYS, *METRIC_KEYS, "valid", "placement", "details", "parallelism", vs_key, "recommended",
                 "reason"}
        extra = {k: v for k, v in list(record.items())[front:] if k not in known}
        evaluation = Evaluation(**{k: record.get(k) for k in METRIC_KEYS}, valid=record.get("valid") is True,
                                placement=record.get("placement"))
        return cls(scheduler=record.get("scheduler", ""), status=record.get("status", ""), seconds=record.get("seconds"),
                   lower_bound=record.get("lower_bound"), message=record.get("message", ""),
                   params=record.get("params", {}), evaluation=evaluation, details=record.get("details", {}),
                   context=context, extra=extra, parallelism=record.get("parallelism"),
                   include_placement="placement" in record, recommended=record.get("recommended"),
                   reason=record.get("reason"), vs_default=record.get(vs_key))


_RESULT_KEYS = ("scheduler", "status", "seconds", "lower_bound", "message", "params")


def _declares(name: str, capability: str) -> bool:
    """Whether registered scheduler ``name``'s class declares ``capability`` (False for a name
    that is not registered, such as a report's label)."""
    cls = REGISTRY.get(name)
    return bool(cls is not None and getattr(cls, capability))


def own_job(record: "ResultRecord | dict") -> bool:
    """Whether ``record``'s placement is of a job its scheduler chose itself (:attr:`ResultRecord.own_job`)."""
    return (record if isinstance(record, ResultRecord) else ResultRecord.from_dict(record)).own_job


def evaluation_record(problem: Problem, placement: Placement, *, include_placement: bool = True,
                      model: performance.Predictor | None = None) -> dict:
    """The JSON form of :meth:`Evaluation.of` (``streamplace evaluate``)."""
    evaluation = dataclasses.asdict(Evaluation.of(problem, placement, include_placement=include_placement, model=model))
    if not include_placement:
        del evaluation["placement"]
    return evaluation


def result_record(result: ScheduleResult, *, include_placement: bool = True,
                  model: performance.Predictor | None = None, given: Problem | None = None) -> dict:
    """The JSON form of :meth:`ResultRecord.of`: ``scheduler``, ``status``, ``seconds``,
    ``lower_bound``, ``message``, ``params``, the metric keys, ``valid``, ``placement``, ``details``."""
    return ResultRecord.of(result, include_placement=include_placement, model=model, given=given).to_dict()


def _defined(value):
    """A metric that is not a finite number (utilisation of a node of capacity 0) is undefined:
    None (JSON null, CSV empty, table "-"), never NaN or Infinity in any output."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


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

"""Which placement to use, and what it buys over Storm's default.

The rule (one home: ``compare``, the reports and the demo's Storm step all call
:func:`recommend`):

* candidates: records with a placement of the job as given (not one whose scheduler chose its own
  parallelism: that is another job) that respects every node's capacity (``valid``);
* ``objective="throughput"`` (default): the highest predicted throughput; ties by less inter-node
  traffic, then by lower latency, then by record order; ``"traffic"``: the least inter-node
  traffic, ties by throughput; ``"latency"``: the lowest predicted latency, ties by throughput;
* an overloaded placement is never recommended, whatever it promises.

:func:`versus` gives a record's change against the reference (Storm's default scheduler):
``traffic_pct`` = inter-node traffic saved (positive: less traffic), ``throughput_pct`` =
throughput gained, ``latency_pct`` = latency change (negative: faster), each in % of the
reference and None where the reference's value is 0 or unknown. :func:`disagreement` says in one
sentence why the least-traffic placement is not the recommended one when they differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..files import quote
from .records import ResultRecord

OBJECTIVES = ("throughput", "traffic", "latency")


@dataclass(frozen=True)
class Decision:
    index: int | None   # the recommended record's position, None if no record qualifies
    reason: str


def _number(record: ResultRecord, key: str) -> float | None:
    value = getattr(record.evaluation, key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def eligible(record: ResultRecord) -> bool:
    """A placement of the job as given (:attr:`ResultRecord.own_job`: not one whose scheduler
    chose another job) that respects capacity."""
    return record.evaluation.valid and record.evaluation.placement is not None and not record.own_job


def _key(record: ResultRecord, objective: str) -> tuple:
    inf = float("inf")
    throughput = _number(record, "throughput") or 0.0
    traffic = _number(record, "inter_node_cost")
    latency = _number(record, "latency_ms")
    traffic, latency = (inf if traffic is None else traffic), (inf if latency is None else latency)
    if objective == "traffic":
        return traffic, -throughput, latency
    if objective == "latency":
        return latency, -throughput, traffic
    return -throughput, traffic, latency


def recommend(records: Sequence[ResultRecord], objective: str = "throughput") -> Decision:
    """The record to use under ``objective`` (module docstring), with the reason in words."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {quote(objective)}")
    candidates = [i for i, r in enumerate(records) if eligible(r)]
    if not candidates:
        return Decision(None, "no placement respects every node's capacity")
    best = min(candidates, key=lambda i: (_key(records[i], objective), i))
    what = {"throughput": "highest predicted throughput", "traffic": "least inter-node traffic",
            "latency": "lowest predicted latency"}[objective]
    ties = {"throughput": "ties by inter-node traffic", "traffic": "ties by predicted throughput",
            "latency": "ties by predicted throughput"}[objective]
    left_out = len(records) - len(candidates)
    tail = f"; {left_out} left out (over capacity, no placement, or another job)" if left_out else ""
    return Decision(best, f"{what} among {len(candidates)} placements within capacity ({ties}){tail}")


def annotate(records: Sequence[ResultRecord], reference: ResultRecord | None,
             objective: str = "throughput") -> tuple[Decision, list[ResultRecord]]:
    """The decision on ``records`` (one job's) and the records marked with it (new records, the
    given ones are immutable): ``recommended`` on every record, ``reason`` on the recommended
    one, and ``vs_default``, the change against ``reference`` (:func:`versus`), on every record
    with a placement of the job as given (none without a reference)."""
    decision = recommend(records, objective)
    marked = [replace(record, recommended=i == decision.index,
                      reason=decision.reason if i == decision.index else record.reason,
                      vs_default=versus(record, reference)
                      if reference is not None and record.evaluation.placement is not None and not record.own_job
                      else record.vs_default)
              for i, record in enumerate(records)]
    return decision, marked


def _pct(value: float | None, reference: float | None, *, saved: bool = False) -> float | None:
    if value is None or reference is None or reference == 0:
        return None
    return (reference - value) / reference * 100.0 if saved else (value / reference - 1.0) * 100.0


def versus(record: ResultRecord, reference: ResultRecord) -> dict:
    """``{traffic_pct, throughput_pct, latency_pct}`` of ``record`` against ``reference`` (None if unknown)."""
    return {"traffic_pct": _pct(_number(record, "inter_node_cost"), _number(reference, "inter_node_cost"), saved=True),
            "throughput_pct": _pct(_number(record, "throughput"), _number(reference, "throughput")),
            "latency_pct": _pct(_number(record, "latency_ms"), _number(reference, "latency_ms"))}


def disagreement(records: Sequence[ResultRecord], chosen: int, n_tasks: int, n_nodes: int | None) -> str | None:
    """Why the placement with the least inter-node traffic is not ``chosen``, or None if it is."""
    candidates = [i for i, r in enumerate(records) if eligible(r)]
    least = min(candidates, key=lambda i: (_key(records[i], "traffic"), i), default=None)
    if least is None or least == chosen or _key(records[least], "traffic")[0] == _key(records[chosen], "traffic")[0]:
        return None
    low, pick = records[least], records[chosen]
    used = low.evaluation.nodes_used
    of = f" of {n_nodes}" if n_nodes else ""
    where = f"packs {n_tasks} tasks on {used}{of} nodes" if used else "sends the least traffic"
    limit = f": {low.evaluation.bottleneck} limits it" if low.evaluation.bottleneck else ""
    return (f"{low.scheduler} sends the least inter-node traffic ({low.evaluation.inter_node_cost:g}) but {where}{limit}, "
            f"so its predicted throughput ({_number(low, 'throughput') or 0:,.0f}/s) is below "
            f"{pick.scheduler}'s ({_number(pick, 'throughput') or 0:,.0f}/s)")

"""The recommendation for one job against Storm's default, and its verdict in one sentence: the
one home of what ``streamplace compare`` prints and of the per-job step of the reports
(``report.choice.decide``).

:func:`judge` applies the decision rule (:func:`.decision.annotate`: the recommended record, and
every record's change against the default, :attr:`ResultRecord.vs_default`) and says why the least-traffic
placement was not chosen (:func:`.decision.disagreement`). :func:`verdict` words it:

``recommended: metis (highest predicted throughput ...); against even: traffic saved +9 %,
throughput -27 %, latency -9 %``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..schedulers import storm_default
from .decision import Decision, annotate, disagreement, recommend
from .records import ResultRecord


@dataclass(frozen=True)
class Judgement:
    """One job's records marked by the decision rule, the decision, and why the least-traffic
    placement is not the recommended one (None if it is, or if nothing is recommended)."""

    records: tuple[ResultRecord, ...]
    decision: Decision
    why: str | None


def default_reference(records: Sequence[ResultRecord]) -> ResultRecord | None:
    """The record of Storm's default scheduler with a placement of the job as given, if listed."""
    default = storm_default()
    return next((r for r in records if r.scheduler == default and r.evaluation.placement is not None
                 and not r.own_job), None)


def judge(records: Sequence[ResultRecord], reference: ResultRecord | None, objective: str, *,
          n_tasks: int | None = None, n_nodes: int | None = None) -> Judgement:
    """``records`` (one job's) marked as :func:`.decision.annotate` does, with the decision and
    the sentence on why the least-traffic placement is not the recommended one.
    ``n_tasks``/``n_nodes`` size the job (default: from the recommended record's placement and
    its context's ``n_nodes``)."""
    decision, marked = annotate(records, reference, objective)
    if decision.index is None:
        return Judgement(tuple(marked), decision, None)
    chosen = marked[decision.index]
    n_tasks = len(chosen.evaluation.placement) if n_tasks is None else n_tasks
    n_nodes = chosen.context.get("n_nodes") if n_nodes is None else n_nodes
    return Judgement(tuple(marked), decision, disagreement(marked, decision.index, n_tasks, n_nodes))


def verdict(judged: Judgement, reference: ResultRecord, objective: str) -> str:
    """The recommendation in one line: the chosen scheduler and the rule, its gains against the
    default, why not the least-traffic placement, and whether the default, when it was not among
    the judged records, would have done better."""
    default = storm_default()
    decision = judged.decision
    if decision.index is None:
        return f"recommended: none ({decision.reason})"
    best = judged.records[decision.index]
    gain = best.vs_default or {}
    parts = [f"{label} {value:+.0f} %" for label, value in (("traffic saved", gain.get("traffic_pct")),
             ("throughput", gain.get("throughput_pct")), ("latency", gain.get("latency_pct"))) if value is not None]
    unlisted = default_reference(judged.records) is None and recommend([best, reference], objective).index == 1
    against = (f"{default} itself, Storm's default, is the best here" if best.scheduler == default
               else f"against {default}: {', '.join(parts) or 'n/a'}")
    return (f"recommended: {best.scheduler} ({decision.reason}); {against}"
            + (f". {judged.why}" if judged.why else "")
            + (f". {default} (not listed) would do better on {objective}" if unlisted else ""))

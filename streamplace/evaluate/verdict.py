"""The recommendation for one job against Storm's default, and its verdict in one sentence: the
one home of what ``streamplace compare`` prints and of the per-job step of the reports
(``report.choice.decide``).

:func:`judge` applies the decision rule (:func:`.decision.annotate`: the recommended record, and
every record's change against the default under ``key``) and says why the least-traffic
placement was not chosen (:func:`.decision.disagreement`). :func:`verdict` words it:

``recommended: metis (highest predicted throughput ...); against even: traffic saved +9 %,
throughput -27 %, latency -9 %``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..schedulers import storm_default
from .decision import Decision, annotate, disagreement, recommend
from .records import own_job


def default_reference(records: Sequence[dict]) -> dict | None:
    """The record of Storm's default scheduler with a placement of the job as given, if listed."""
    default = storm_default()
    return next((r for r in records if r.get("scheduler") == default and r.get("placement") is not None
                 and not own_job(r)), None)


def judge(records: list[dict], reference: dict | None, objective: str, *, key: str, n_tasks: int | None = None,
          n_nodes: int | None = None) -> tuple[Decision, str | None]:
    """Marks ``records`` (one job's) as :func:`.decision.annotate` does and returns the decision
    with the sentence on why the least-traffic placement is not the recommended one (None if it
    is, or if nothing is recommended). ``n_tasks``/``n_nodes`` size the job (default: from the
    recommended record's placement and ``n_nodes``)."""
    decision = annotate(records, reference, objective, key=key)
    if decision.index is None:
        return decision, None
    chosen = records[decision.index]
    n_tasks = len(chosen["placement"]) if n_tasks is None else n_tasks
    n_nodes = chosen.get("n_nodes") if n_nodes is None else n_nodes
    return decision, disagreement(records, decision.index, n_tasks, n_nodes)


def verdict(records: list[dict], reference: dict, decision: Decision, why: str | None, objective: str, *,
            key: str) -> str:
    """The recommendation in one line: the chosen scheduler and the rule, its gains against the
    default (``key``), why not the least-traffic placement, and whether the default, when it was
    not among ``records``, would have done better."""
    default = storm_default()
    if decision.index is None:
        return f"recommended: none ({decision.reason})"
    best = records[decision.index]
    gain = best.get(key, {})
    parts = [f"{label} {value:+.0f} %" for label, value in (("traffic saved", gain.get("traffic_pct")),
             ("throughput", gain.get("throughput_pct")), ("latency", gain.get("latency_pct"))) if value is not None]
    unlisted = reference not in records and recommend([best, reference], objective).index == 1
    against = (f"{default} itself, Storm's default, is the best here" if best["scheduler"] == default
               else f"against {default}: {', '.join(parts) or 'n/a'}")
    return (f"recommended: {best['scheduler']} ({decision.reason}); {against}"
            + (f". {why}" if why else "")
            + (f". {default} (not listed) would do better on {objective}" if unlisted else ""))

"""Shared pieces of ``streamplace reproduce``: the run context, records, and paper checks.

A :class:`Run` holds the options of one invocation, the Rich progress display and a cache of
scheduling records, so an experiment two papers share (the [I]/[T3] micro-benchmarks and their
optimum, the Sec. 6 baselines) is computed once per run. A :class:`Check` sets one published
statement beside our figure with a verdict; :func:`gain_check` makes the usual kind (a ratio
between two schedulers). Verdicts:

* ``agree``: same direction and within :data:`TOLERANCE_PP` percentage points (or exactly equal
  for exact quantities such as an optimum);
* ``direction``: same direction (who wins), magnitude further off;
* ``disagree``: opposite direction, or a different exact value;
* ``not_comparable``: not comparable (e.g. CPLEX on a 64-core server against our solver, or a
  quantity the paper does not give); ``not_run``: the run did not compute it (``--quick`` sizes,
  or a scheduler that is not available).

Every statement carries the ``tolerance`` its verdict used (the paper's own run-to-run spread
where it reports one, [F] Table I; else :data:`TOLERANCE_PP`; ``exact`` for exact quantities),
which ``reading`` of ours is primary, and a ``why`` for every verdict but ``agree``
(:meth:`Check.statement`, written to ``statements.json``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

from ..files import quote
from ..model import performance
from ..evaluate.records import result_record
from ..model import Problem
from ..schedulers import available, make_scheduler
from ..schedulers.base import Scheduler
from ..schedulers.papers import OLS_RELAX
from ..report.render import Section

TOLERANCE_PP = 10.0   # percentage points within which a gain "agrees"
SIMILAR_PCT = 10.0    # "similar" in a paper: ours within +-10 %
VERDICTS = ("agree", "direction", "disagree", "not_comparable", "not_run")
NEEDS_WHY = ("direction", "disagree", "not_comparable")
PAPER_CODES = {"ischeduler": "I", "t3": "T3", "metis": "F", "lf": "LF", "throughput": "N"}
NOT_RUN_WHY = "not computed in this run (--quick sizes, or a scheduler that is not available)"


def tolerance_text(paper, tolerance: float = TOLERANCE_PP) -> str:
    """The tolerance a gain verdict used, as printed on its row."""
    if paper == 0:
        return f"similar = ours within +-{SIMILAR_PCT:g} %"
    if isinstance(paper, tuple):
        return f"+-{tolerance:g} pp around the range"
    return f"+-{tolerance:g} pp"


@dataclass(frozen=True)
class Check:
    """One published statement beside our number."""

    paper: str
    experiment: str
    claim: str
    source: str
    reported: str
    ours: str
    verdict: str
    why: str = ""
    alt: str = ""          # a second reading of ours (e.g. the saturated throughput of a testbed claim)
    alt_verdict: str = ""
    tolerance: str = f"+-{TOLERANCE_PP:g} pp"
    reading: str = ""      # what the primary figure ("ours") is
    alt_reading: str = ""  # what the second figure ("alt") is (default: the paper's alt_label)

    def __post_init__(self):
        for v in (self.verdict, self.alt_verdict or "not_comparable"):
            if v not in VERDICTS:
                raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {quote(v)}")
        if self.verdict in NEEDS_WHY and not self.why.strip():
            raise ValueError(f"{self.paper}: {quote(self.claim)}: a {quote(self.verdict)} verdict needs a why")

    def as_dict(self) -> dict:
        return asdict(self)

    def statement(self, alt_label: str = "") -> dict:
        """The statement as one ``statements.json`` object (keys of issue 17)."""
        why = self.why or (NOT_RUN_WHY if self.verdict == "not_run" else "")
        out = {"paper": PAPER_CODES.get(self.paper, self.paper), "claim": self.claim, "source": self.source,
               "published": self.reported, "ours": self.ours, "verdict": self.verdict, "tolerance": self.tolerance,
               "reading": self.reading or "the only reading", "why": why}
        if self.alt:
            out["second_reading"] = {"reading": self.alt_reading or alt_label, "ours": self.alt,
                                     "verdict": self.alt_verdict}
        return out


@dataclass
class PaperResult:
    """What one paper's reproduction produced."""

    paper: str
    title: str
    records: list[dict] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Run:
    """Options, progress and the record cache of one ``reproduce`` invocation."""

    def __init__(self, *, quick: bool = False, time_limit: float = 10.0, progress=None, model=None):
        self.quick = quick
        self.time_limit = time_limit
        self.progress = progress
        self.model = model or performance.CostModel()   # --cost-model, else the bundled default
        self._cache: dict[tuple, tuple[dict, object]] = {}

    def task(self, description: str, total: int):
        """A progress task (``None`` without a display)."""
        return self.progress.add_task(description, total=total) if self.progress is not None else None

    def advance(self, task, description: str | None = None) -> None:
        if self.progress is not None and task is not None:
            if description is not None:
                self.progress.update(task, description=description)
            self.progress.advance(task)

    def has(self, name: str) -> bool:
        return name in available()

    def optimal(self) -> Scheduler:
        return make_scheduler("optimal", time_limit=self.time_limit)

    def record(self, key: tuple, problem: Problem, scheduler: Scheduler | Callable[[Problem], object], context: dict,
               *, model: performance.CostModel | None = None) -> dict:
        """The record of ``scheduler`` on ``problem`` with ``context`` keys first (cached by ``key``).

        The performance keys (``throughput``, ``bottleneck``, ``latency_ms``) come from the run's
        cost model; with ``model`` from that one instead, ``cost_model`` says so, and
        ``latency_light_ms`` is the latency at the workload's nominal (unit) offered load.
        """
        if key not in self._cache:
            result = scheduler.schedule(problem) if isinstance(scheduler, Scheduler) else scheduler(problem)
            rec = result_record(result, model=self.model)
            if model is not None and result.placement is not None:
                rec.update(predicted(result.problem, result.placement, model))
            self._cache[key] = (rec, result)
        rec, _ = self._cache[key]
        return {**context, **rec, "scheduler": context.get("scheduler", rec["scheduler"])}

    def result(self, key: tuple):
        """The :class:`ScheduleResult` behind a cached record."""
        return self._cache[key][1]


def predicted(problem: Problem, placement, model: performance.CostModel) -> dict:
    """Performance keys of ``placement`` under ``model`` (see :meth:`Run.record`)."""
    out = performance.predict(problem, placement, model).summary()
    out["latency_light_ms"] = performance.predict(problem, placement, model, offered_scale=1.0).latency_ms
    out["cost_model"] = "testbed"
    return out


OLS_RELAX_WHY = ("OLS ran with relax_gamma=true: with unit task loads its slot-load limit gamma x E / W caps a slot "
                 "at floor(1.1 E / W) tasks, below the ceil(E / W) some slot needs, so the greedy has no slot for the "
                 "last tasks; the papers' OLS used measured, non-uniform CPU loads ([I]/[T3] Sec. 6, [F] Sec. IV-A2), "
                 "which they do not publish.")


def ols(params: dict | None = None) -> Scheduler:
    """Aniello's online scheduler as ``reproduce`` runs it: the papers' limits, plus an explicit
    ``relax_gamma=true`` (:data:`OLS_RELAX`) that every record shows (``details.gamma_relaxed``
    and the message) and every statement on a relaxed run names (:data:`OLS_RELAX_WHY`). The
    papers never report OLS infeasible, so the alternative, an infeasible baseline, would leave
    their statements without a comparison."""
    return make_scheduler("online", {**(params or {}), **OLS_RELAX})


def relaxed(rec: dict | None) -> bool:
    """Whether the record's OLS run dropped its slot-load limit."""
    return bool(rec and rec.get("details", {}).get("gamma_relaxed"))


# ---------------------------------------------------------------------------- verdicts


def pct(ratio: float) -> float:
    """A ratio as a percentage gain: 1.25 -> 25.0."""
    return 100.0 * (ratio - 1.0)


def gain_verdict(ours: float | None, paper: float, *, tolerance: float = TOLERANCE_PP) -> str:
    """Verdict for a gain in percent (``paper`` 0 means "similar": ours within +-SIMILAR_PCT)."""
    if ours is None or not math.isfinite(ours):
        return "not_run"
    if paper == 0:
        return "agree" if abs(ours) <= SIMILAR_PCT else ("direction" if abs(ours) <= 2 * SIMILAR_PCT else "disagree")
    if (ours > 0) != (paper > 0) or ours == 0:
        return "disagree"
    return "agree" if abs(ours - paper) <= tolerance else "direction"


def range_verdict(ours: Iterable[float | None], low: float, high: float, *, tolerance: float = TOLERANCE_PP) -> str:
    """Verdict for "gains between low and high percent" over several workloads."""
    values = [v for v in ours if v is not None and math.isfinite(v)]
    if not values:
        return "not_run"
    if any(v <= 0 for v in values):
        return "disagree"
    inside = all(low - tolerance <= v <= high + tolerance for v in values)
    return "agree" if inside else "direction"


def exact_verdict(ours, paper) -> str:
    if ours is None:
        return "not_run"
    return "agree" if ours == paper else "disagree"


def ratio(a: float | None, b: float | None) -> float | None:
    """``a / b`` (None if either is missing or b is 0)."""
    if a is None or b is None or not b:
        return None
    return a / b


def tally(checks: Iterable[Check], attr: str = "verdict") -> dict[str, int]:
    """How many checks got each verdict (``attr="alt_verdict"``: the second reading), zeros left out."""
    out = {v: 0 for v in VERDICTS}
    for c in checks:
        if getattr(c, attr):
            out[getattr(c, attr)] += 1
    return {k: v for k, v in out.items() if v}


def verdict_text(checks: Iterable[Check], attr: str = "verdict") -> str:
    """``"agree 3, disagree 1"``."""
    return ", ".join(f"{k} {n}" for k, n in tally(checks, attr).items()) or "none"

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
* ``n/a``: not comparable (e.g. CPLEX on a 64-core server against our solver); ``not run``: the
  run did not compute it (``--quick`` sizes, or a scheduler that is not available).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

from ...evaluate import performance
from ...evaluate.records import result_record
from ...model import Problem
from ...schedulers import available, make_scheduler
from ...schedulers.base import Scheduler
from ..report import Section

TOLERANCE_PP = 10.0   # percentage points within which a gain "agrees"
SIMILAR_PCT = 10.0    # "similar" in a paper: ours within +-10 %
VERDICTS = ("agree", "direction", "disagree", "n/a", "not run")


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
    alt: str = ""          # a second reading of ours (the latency view of a throughput claim)
    alt_verdict: str = ""

    def __post_init__(self):
        for v in (self.verdict, self.alt_verdict or "n/a"):
            if v not in VERDICTS:
                raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {v!r}")

    def as_dict(self) -> dict:
        return asdict(self)


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

    def __init__(self, *, quick: bool = False, time_limit: float = 10.0, progress=None):
        self.quick = quick
        self.time_limit = time_limit
        self.progress = progress
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
        return make_scheduler("optimal", {"time_limit": self.time_limit})

    def record(self, key: tuple, problem: Problem, scheduler: Scheduler | Callable[[Problem], object], context: dict,
               *, model: performance.CostModel | None = None) -> dict:
        """The record of ``scheduler`` on ``problem`` with ``context`` keys first (cached by ``key``).

        With ``model`` the performance keys (``throughput``, ``bottleneck``, ``latency_ms``) come
        from that cost model instead of the default one, ``cost_model`` says so, and
        ``latency_light_ms`` is the latency at the workload's nominal (unit) offered load.
        """
        if key not in self._cache:
            result = scheduler.schedule(problem) if isinstance(scheduler, Scheduler) else scheduler(problem)
            rec = result_record(result)
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


def online_with_fallback(params: dict | None = None) -> Callable[[Problem], object]:
    """Aniello's online scheduler; if its slot-load limit ``gamma`` makes it infeasible, rerun
    without the limit (``gamma=None``). With unit task loads, ``gamma x E / W`` caps a slot at
    ``floor(1.1 E / W)`` tasks, which is below the ``ceil(E / W)`` some slot needs whenever E/W is
    not close to an integer from below: the greedy then has nowhere to put the last tasks. The
    papers measured CPU loads, which are not uniform, so their OLS always found slots."""
    def run(problem: Problem):
        result = make_scheduler("online", params or {}).schedule(problem)
        if result.status == "infeasible":
            relaxed = make_scheduler("online", {**(params or {}), "gamma": None}).schedule(problem)
            if relaxed.ok:
                return dataclasses.replace(relaxed, message=f"gamma relaxed to None ({result.message})")
        return result
    return run


# ---------------------------------------------------------------------------- verdicts


def pct(ratio: float) -> float:
    """A ratio as a percentage gain: 1.25 -> 25.0."""
    return 100.0 * (ratio - 1.0)


def fmt_pct(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:+.0f} %"


def gain_verdict(ours: float | None, paper: float, *, tolerance: float = TOLERANCE_PP) -> str:
    """Verdict for a gain in percent (``paper`` 0 means "similar": ours within +-SIMILAR_PCT)."""
    if ours is None or not math.isfinite(ours):
        return "not run"
    if paper == 0:
        return "agree" if abs(ours) <= SIMILAR_PCT else ("direction" if abs(ours) <= 2 * SIMILAR_PCT else "disagree")
    if (ours > 0) != (paper > 0) or ours == 0:
        return "disagree"
    return "agree" if abs(ours - paper) <= tolerance else "direction"


def range_verdict(ours: Iterable[float | None], low: float, high: float, *, tolerance: float = TOLERANCE_PP) -> str:
    """Verdict for "gains between low and high percent" over several workloads."""
    values = [v for v in ours if v is not None and math.isfinite(v)]
    if not values:
        return "not run"
    if any(v <= 0 for v in values):
        return "disagree"
    inside = all(low - tolerance <= v <= high + tolerance for v in values)
    return "agree" if inside else "direction"


def exact_verdict(ours, paper) -> str:
    if ours is None:
        return "not run"
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

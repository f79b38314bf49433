"""The calibrated model scored across operating points, as the campaign's analysis plan fixes it
(``benchmarks/results/PLAN-operating-points.md``).

Per operating point and experiment: the model is calibrated on the runs of ``even`` alone
(:func:`~streamplace.model.calibration.mean_run` of them) and predicts every placement run there.

* **error:** median over the other placements of |predicted - measured mean| / measured mean
  (bolt tuples/s, what the campaign's records call ``bolt_throughput``);
* **tau:** Kendall's tau-b between predicted and measured means over all placements;
* **regret:** 1 - measured mean of the placement with the highest prediction / best measured mean;
* **lns within noise:** lns' measured mean is at least every peer's (:data:`PEERS`: the published
  schedulers and Storm's own, run by Nimbus; ``PLAN-ras-peers.md``), less twice the larger
  run-to-run spread (max - min) of the two.

The bundled, uncalibrated model's error and tau are given beside them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Problem
from ..model.calibration import calibrate, mean_run, run_from_record
from ..model.performance import CostModel, predict
from ..model.cluster import scaled_cluster

#: the placements of the papers' schedulers (what lns is held against); even, Storm's own
#: placements, optimal and lns are not "published schedulers" here
PUBLISHED = ("online", "rstorm", "metis", "t3", "ischeduler", "ischeduler (theta=0)", "lf")
#: what lns must match within noise: the published schedulers, and Storm's own, run by Nimbus
PEERS = PUBLISHED + ("storm-even", "storm-ras")
CALIBRATION = "even"


@dataclass(frozen=True)
class Row:
    scheduler: str
    measured: float     # mean bolt tuples/s over its runs
    spread: float       # max - min over its runs
    runs: int
    predicted: float    # calibrated prediction, bolt tuples/s
    bound: str
    uncalibrated: float  # the bundled model's prediction on the testbed's cluster


@dataclass(frozen=True)
class PointScore:
    point: str
    experiment: str
    rows: tuple[Row, ...]
    error: float
    tau: float
    regret: float
    recommended: str
    lns_ok: bool | None          # None: lns not run
    lns_behind: tuple[str, ...]  # peers (PEERS) lns trails beyond noise
    uncalibrated_error: float
    uncalibrated_tau: float


def _tau(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import kendalltau
    return float(kendalltau(a, b).statistic) if len(a) > 1 else math.nan


def score(records: Sequence[dict], problem_of: Callable[[dict], Problem], model: CostModel | None = None) -> PointScore:
    """The scores of one operating point and experiment (module docstring) from its run records."""
    model = model or CostModel()
    points = {r["operating_point"]["name"] for r in records}
    experiments = {r["experiment"] for r in records}
    if len(points) != 1 or len(experiments) != 1:
        raise ValueError(f"one operating point and experiment at a time, got {sorted(points)} x {sorted(experiments)}")
    problem = problem_of(records[0])
    by_scheduler: dict[str, list[dict]] = {}
    for r in records:
        by_scheduler.setdefault(r["scheduler"], []).append(r)
    if CALIBRATION not in by_scheduler:
        raise ValueError(f"no run of {CALIBRATION} to calibrate on")
    calibrated = calibrate(problem, mean_run([run_from_record(r, problem) for r in by_scheduler[CALIBRATION]]), model)
    testbed = Problem.from_topology(problem.topology, scaled_cluster(problem.cluster, float(records[0]["cpu_budget"]),
                                                                      bandwidth_scaled=bool(records[0].get("bandwidth_scaled"))))
    rows = []
    for name, runs in sorted(by_scheduler.items()):
        values = np.array([r["bolt_throughput"] for r in runs], dtype=float)
        placement = run_from_record(runs[0], problem).placement
        pred = calibrated.predict(placement)
        base = predict(testbed, placement, model)
        rows.append(Row(name, float(values.mean()), float(values.max() - values.min()), len(runs), pred.bolt_throughput,
                        pred.bound, float(base.max_scale * base.in_rate[~problem.topology.source_task_mask].sum())))
    held_out = [r for r in rows if r.scheduler != CALIBRATION]
    error = float(np.median([abs(r.predicted - r.measured) / r.measured for r in held_out])) if held_out else math.nan
    base_error = float(np.median([abs(r.uncalibrated - r.measured) / r.measured for r in held_out])) if held_out else math.nan
    best = max(r.measured for r in rows)
    chosen = max(rows, key=lambda r: r.predicted)
    lns = next((r for r in rows if r.scheduler == "lns"), None)
    behind = tuple(r.scheduler for r in rows if lns is not None and r.scheduler in PEERS
                   and lns.measured < r.measured - 2 * max(lns.spread, r.spread))
    return PointScore(records[0]["operating_point"]["name"], records[0]["experiment"], tuple(rows), error,
                      _tau([r.predicted for r in rows], [r.measured for r in rows]), 1 - chosen.measured / best,
                      chosen.scheduler, None if lns is None else not behind, behind, base_error,
                      _tau([r.uncalibrated for r in rows], [r.measured for r in rows]))


def passes(s: PointScore) -> bool:
    """The plan's three targets: error at most 15 %, tau at least 0.8, regret at most 5 %."""
    return s.error <= 0.15 and s.tau >= 0.8 and s.regret <= 0.05

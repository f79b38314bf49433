"""The calibrated model scored across operating points, as the campaign's analysis plan fixes it
(``benchmarks/results/PLAN-operating-points.md``).

Per operating point and experiment: the model is calibrated on the runs of ``even`` alone
(:func:`~streamplace.model.calibration.calibrate_on_runs`: on their mean) and predicts every placement run there.

* **error:** median over the other placements of |predicted - measured mean| / measured mean
  (bolt tuples/s, what the campaign's records call ``bolt_throughput``);
* **tau:** Kendall's tau-b between predicted and measured means over all placements;
* **regret:** 1 - measured mean of the placement with the highest prediction / best measured mean;
* **lns within noise:** lns' measured mean is at least every peer's (:data:`PEERS`: the published
  schedulers and Storm's own, run by Nimbus; ``PLAN-ras-peers.md``), less twice the larger
  run-to-run spread (max - min) of the two.

The bundled, uncalibrated model's error and tau are given beside them, and two figures of the
testbed's own noise, which say how well its runs can rank the placements at all
(``benchmarks/results/PLAN-more-runs.md``):

* **split-half tau:** Kendall's tau-b between the placements' means over their even-numbered runs
  and over their odd-numbered runs (in repetition order): how well the testbed reproduces its own
  ranking;
* **tau ceiling:** the mean tau-b between the placements' measured means and those means
  re-measured with the same number of runs, each run's log throughput drawn around its
  placement's mean with the run-to-run variance that can reorder placements
  (:func:`perfect_model_taus`): what a model that knew every placement's throughput would score
  on average, and its 5th percentile. An estimate: measured means spread further apart than the
  true ones (by the very noise it draws), and the variance is one figure for all placements.

At a point whose sources ask for a fixed rate every placement sustains, :func:`score_latency`
scores the mean end-to-end latency the same way (``PLAN-fixed-rate-latency.md``): calibrated on
``even``'s runs, the other placements' predicted mean latency against their measured mean (the
mean of the runs' ``latency_ms.mean``), Kendall's tau-b, and the pairs of placements measured
apart beyond noise (means further apart than twice the larger spread) that the prediction
orders the same way; beside them, the error of the constant guess that every placement has
``even``'s measured latency (what a model that cannot tell placements apart scores).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Problem
from ..model.calibration import calibrate_on_runs, run_from_record
from ..model.performance import CostModel, predict
from ..model.cluster import scaled_cluster
from ..model.operating_point import OperatingPoint

#: the placements of the papers' schedulers (what lns is held against); even, Storm's own
#: placements, optimal and lns are not "published schedulers" here
PUBLISHED = ("online", "rstorm", "metis", "t3", "ischeduler", "ischeduler (theta=0)", "lf")
#: what lns must match within noise: the published schedulers, and Storm's own, run by Nimbus
PEERS = PUBLISHED + ("storm-even", "storm-ras")
CALIBRATION = "even"
#: the plans' error target: median absolute error over the placements other than even
TARGET_ERROR = 0.15


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
    split_half_tau: float        # the testbed against itself (module docstring)
    tau_ceiling: float           # what a model knowing every placement's throughput scores on average
    tau_ceiling_p5: float        # ... and in 95 % of draws at least (the plan's test of a model's tau)


def _median_error(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """Median of |predicted - measured| / measured (NaN with nothing to score)."""
    return float(np.median([abs(p - m) / m for p, m in zip(predicted, measured)])) if len(measured) else math.nan


def _tau(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import kendalltau
    return float(kendalltau(a, b).statistic) if len(a) > 1 else math.nan


def _by_repetition(runs: dict[str, list[dict]]) -> list[list[float]]:
    """Each placement's bolt throughput per run, in repetition order (``rep``) where every
    placement ran in the same repetitions, else in record order."""
    reps = {tuple(sorted(r.get("rep", -1) for r in rs)) for rs in runs.values()}
    ordered = len(reps) == 1 and -1 not in next(iter(reps))
    return [[r["bolt_throughput"] for r in (sorted(rs, key=lambda r: r["rep"]) if ordered else rs)] for rs in runs.values()]


def split_half_tau(runs: Sequence[Sequence[float]]) -> float:
    """Kendall's tau-b between each placement's mean over its runs 0, 2, 4 ... and over its runs
    1, 3, 5 ... (``runs``: per placement, its runs' figures in order); placements with one run
    are left out; NaN with fewer than two placements left."""
    halves = [(np.mean(r[0::2]), np.mean(r[1::2])) for r in runs if len(r) >= 2]
    return _tau([a for a, _ in halves], [b for _, b in halves]) if len(halves) > 1 else math.nan


def perfect_model_taus(runs: Sequence[Sequence[float]], draws: int = 4000, seed: int = 0,
                       per_placement: int | None = None) -> np.ndarray:
    """``draws`` Kendall tau-b scores, against the mean of as many runs, of a model that predicts
    every placement's own mean: between the placements' mean log figures ``m`` and draws of
    ``m_i + N(0, s2 / n_i)`` (``runs``: per placement, its runs' figures; ``n_i`` its runs, or
    ``per_placement``: what that many runs would buy). Logs: the testbed's noise grows with the
    level (a run's spread is a share of its throughput).

    ``s2`` is the run-to-run variance that can reorder placements. Where every placement ran once
    in each of the same repetitions (``runs[i][k]``: placement ``i`` in repetition ``k``, as the
    campaigns interleave them), it is the residual variance of the additive model placement +
    repetition: a drift that moves every placement of one repetition alike (the machine's state)
    changes no ranking of means, so it is left out. Otherwise the within-placement variance pooled
    over placements with two or more runs. Empty with fewer than two placements, no placement run
    twice or every mean alike; all 1.0 when no run differs from its placement's mean."""
    logs = [np.log(np.asarray(r, dtype=float)) for r in runs if len(r)]
    if len(logs) < 2:
        return np.empty(0)
    if len({len(x) for x in logs}) == 1 and len(logs[0]) > 1:
        table = np.array(logs)
        resid = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0, keepdims=True) + table.mean()
        s2 = float((resid ** 2).sum()) / ((table.shape[0] - 1) * (table.shape[1] - 1))
    else:
        dof = sum(len(x) - 1 for x in logs)
        if dof == 0:
            return np.empty(0)
        s2 = sum(float(((x - x.mean()) ** 2).sum()) for x in logs) / dof
    means = np.array([x.mean() for x in logs])
    n = np.array([per_placement or len(x) for x in logs], dtype=float)
    i, j = np.triu_indices(len(logs), k=1)
    truth = np.sign(means[i] - means[j])
    ties = float((truth == 0).sum())
    if ties == len(i):
        return np.empty(0)
    drawn = means + np.random.default_rng(seed).standard_normal((draws, len(logs))) * np.sqrt(s2 / n)
    seen = np.sign(drawn[:, i] - drawn[:, j])
    tied = (seen == 0).sum(axis=1)
    return (seen * truth).sum(axis=1) / np.sqrt((len(i) - ties) * (len(i) - tied))


def tau_ceiling(runs: Sequence[Sequence[float]], quantile: float | None = None, **options) -> float:
    """The mean (or ``quantile``) of :func:`perfect_model_taus` (``options`` are its own); NaN where
    it draws nothing."""
    return _summary(perfect_model_taus(runs, **options), quantile)


def _summary(taus: np.ndarray, quantile: float | None = None) -> float:
    if not len(taus):
        return math.nan
    return float(taus.mean() if quantile is None else np.quantile(taus, quantile))


def _calibrated(records: Sequence[dict], problem_of: Callable[[dict], Problem], model: CostModel):
    """(problem, runs by placement, the model calibrated on even's runs, the problem on the
    testbed's cluster) of one operating point and experiment."""
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
    calibrated = calibrate_on_runs(problem, [run_from_record(r, problem) for r in by_scheduler[CALIBRATION]], model)
    testbed = Problem.from_topology(problem.topology, scaled_cluster(problem.cluster, float(records[0]["cpu_budget"]),
                                                                      bandwidth_scaled=bool(records[0].get("bandwidth_scaled"))))
    return problem, by_scheduler, calibrated, testbed


def score(records: Sequence[dict], problem_of: Callable[[dict], Problem], model: CostModel | None = None) -> PointScore:
    """The scores of one operating point and experiment (module docstring) from its run records."""
    model = model or CostModel()
    problem, by_scheduler, calibrated, testbed = _calibrated(records, problem_of, model)
    rows = []
    for name, runs in sorted(by_scheduler.items()):
        values = np.array([r["bolt_throughput"] for r in runs], dtype=float)
        placement = run_from_record(runs[0], problem).placement
        pred = calibrated.predict(placement)
        base = predict(testbed, placement, model)
        rows.append(Row(name, float(values.mean()), float(values.max() - values.min()), len(runs), pred.bolt_throughput,
                        pred.bound, float(base.max_scale * base.in_rate[~problem.topology.source_task_mask].sum())))
    held_out = [r for r in rows if r.scheduler != CALIBRATION]
    measured = [r.measured for r in held_out]
    error = _median_error([r.predicted for r in held_out], measured)
    base_error = _median_error([r.uncalibrated for r in held_out], measured)
    best = max(r.measured for r in rows)
    chosen = max(rows, key=lambda r: r.predicted)
    lns = next((r for r in rows if r.scheduler == "lns"), None)
    behind = tuple(r.scheduler for r in rows if lns is not None and r.scheduler in PEERS
                   and lns.measured < r.measured - 2 * max(lns.spread, r.spread))
    figures = _by_repetition({row.scheduler: by_scheduler[row.scheduler] for row in rows})
    taus = perfect_model_taus(figures)   # drawn once for the mean and the 5th percentile
    return PointScore(records[0]["operating_point"]["name"], records[0]["experiment"], tuple(rows), error,
                      _tau([r.predicted for r in rows], [r.measured for r in rows]), 1 - chosen.measured / best,
                      chosen.scheduler, None if lns is None else not behind, behind, base_error,
                      _tau([r.uncalibrated for r in rows], [r.measured for r in rows]),
                      split_half_tau(figures), _summary(taus), _summary(taus, 0.05))


def per_experiment(records: Sequence[dict], scorer: Callable = score,
                   problem_of: Callable[[dict], Problem] | None = None) -> list:
    """``scorer`` (:func:`score` or :func:`score_latency`) on the records of each experiment of one
    campaign file, in the experiments' order; ``problem_of`` default: :func:`~.runs.run_problems`."""
    from .runs import run_problems
    problem_of = problem_of or run_problems()
    return [scorer([r for r in records if r["experiment"] == experiment], problem_of)
            for experiment in sorted({r["experiment"] for r in records})]


def passes(s: PointScore) -> bool:
    """The plan's three targets: error at most 15 %, tau at least 0.8, regret at most 5 %."""
    return s.error <= TARGET_ERROR and s.tau >= 0.8 and s.regret <= 0.05


@dataclass(frozen=True)
class LatencyRow:
    scheduler: str
    measured: float       # mean over its runs of each run's mean end-to-end latency, ms
    spread: float         # max - min over its runs
    runs: int
    held_back: int        # runs whose spouts emitted under 90 % of what they asked
    predicted: float      # calibrated, at the sources' rate, ms
    uncalibrated: float   # the bundled model at the same offered load, on the testbed's cluster, ms


@dataclass(frozen=True)
class LatencyScore:
    point: str
    experiment: str
    rows: tuple[LatencyRow, ...]
    error: float
    tau: float
    pairs_apart: int
    pairs_ordered: int
    uncalibrated_error: float
    uncalibrated_tau: float
    constant_error: float   # every placement predicted at even's measured mean

    @property
    def passes(self) -> bool:
        """The plan's rule: error at most :data:`TARGET_ERROR`, no run held back."""
        return self.error <= TARGET_ERROR and not any(r.held_back for r in self.rows)


def score_latency(records: Sequence[dict], problem_of: Callable[[dict], Problem],
                  model: CostModel | None = None) -> LatencyScore:
    """The latency scores of one fixed-rate operating point and experiment (module docstring)."""
    model = model or CostModel()

    def at_the_rate(record: dict) -> Problem:   # the experiment with its spouts asking what the point asks
        p = problem_of(record)
        return Problem.from_topology(OperatingPoint.from_document(record["operating_point"]).sources(p.topology), p.cluster)
    problem, by_scheduler, calibrated, testbed = _calibrated(records, at_the_rate, model)
    if not calibrated.at_offered_rate:
        raise ValueError(f"{records[0]['operating_point']['name']}: even's runs did not run at their sources' own rate "
                         "with acking off: no latency at a fixed rate to score")
    rows = []
    for name, runs in sorted(by_scheduler.items()):
        values = np.array([r["latency_ms"]["mean"] for r in runs], dtype=float)
        measured = [run_from_record(r, problem) for r in runs]
        placement = measured[0].placement
        held = sum(m.held_back for m in measured)
        rows.append(LatencyRow(name, float(values.mean()), float(values.max() - values.min()), len(runs), held,
                               calibrated.latency_at_rate_ms(placement),
                               float(predict(testbed, placement, model, offered_scale=1.0).latency_ms)))
    held_out = [r for r in rows if r.scheduler != CALIBRATION]
    constant = next(r.measured for r in rows if r.scheduler == CALIBRATION)

    def median_error(values):
        return _median_error(values, [r.measured for r in held_out])
    apart = ordered = 0
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if abs(a.measured - b.measured) > 2 * max(a.spread, b.spread):
                apart += 1
                ordered += (a.predicted - b.predicted) * (a.measured - b.measured) > 0
    return LatencyScore(records[0]["operating_point"]["name"], records[0]["experiment"], tuple(rows),
                        median_error([r.predicted for r in held_out]), _tau([r.predicted for r in rows], [r.measured for r in rows]),
                        apart, ordered, median_error([r.uncalibrated for r in held_out]),
                        _tau([r.uncalibrated for r in rows], [r.measured for r in rows]),
                        median_error([constant] * len(held_out)))

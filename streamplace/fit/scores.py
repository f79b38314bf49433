"""How well a cost model answers to measured runs: what the targets ask for (the median absolute
relative error of throughput, Kendall's tau between the predicted and the measured ranking of
the schedulers in each experiment), and the ceilings the measurements themselves set (one
repetition against another, one campaign against another)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..model.performance import CostModel, predict
from .cases import Case, predictions


def distinguishable(a: Case, b: Case) -> bool:
    """Whether two cells' measured means differ by more than twice the standard error of their
    difference (cells of one run have no spread and are never distinguishable)."""
    if a.runs < 2 or b.runs < 2:
        return False
    return abs(a.measured - b.measured) > 2.0 * math.sqrt(a.sd ** 2 / a.runs + b.sd ** 2 / b.runs)


def scores(model: CostModel, cases: Sequence[Case]) -> dict:
    """Median absolute relative error of throughput, Kendall's tau per experiment (mean too), and
    ``pairs_agree``/``pairs``: of the pairs of placements of one experiment whose measured
    throughputs are :func:`distinguishable`, how many the model orders the same way. (Tau counts
    every pair, also those whose measured order is within the run-to-run noise.)"""
    return scores_of(cases, predictions(model, cases))


def scores_of(cases: Sequence[Case], pred: np.ndarray) -> dict:
    """:func:`scores` of the predicted bolt throughputs ``pred``, one per case."""
    from scipy.stats import kendalltau
    meas = np.array([c.measured for c in cases])
    rel = np.abs(pred - meas) / meas
    taus = {}
    pairs = agree = 0
    for exp in sorted({c.experiment for c in cases}):
        idx = [i for i, c in enumerate(cases) if c.experiment == exp]
        if len(idx) > 1:
            taus[exp] = float(kendalltau(meas[idx], pred[idx]).statistic)
        for k, i in enumerate(idx):
            for j in idx[k + 1:]:
                if distinguishable(cases[i], cases[j]):
                    pairs += 1
                    agree += (meas[i] - meas[j]) * (pred[i] - pred[j]) > 0
    finite = [t for t in taus.values() if math.isfinite(t)]
    return {"median_abs_error": float(np.median(rel)), "kendall_tau": taus,
            "mean_kendall_tau": float(np.mean(finite)) if finite else math.nan, "cases": len(cases),
            "pairs": pairs, "pairs_agree": int(agree)}


def cross_validate(cases: Sequence[Case], fit_one: Callable[[Sequence[Case]], CostModel]) -> dict:
    """Leave one experiment out: each experiment's cases predicted by the model ``fit_one`` fits
    to the other experiments' cases, scored as :func:`scores` does. How a way of fitting does on
    an experiment it never saw, judged on training runs alone, so that choosing between ways of
    fitting never looks at the held-out runs."""
    pred = np.empty(len(cases))
    for exp in sorted({c.experiment for c in cases}):
        idx = [i for i, c in enumerate(cases) if c.experiment == exp]
        model = fit_one([c for c in cases if c.experiment != exp])
        pred[idx] = predictions(model, [cases[i] for i in idx])
    return scores_of(cases, pred)


def bias(cases: Sequence[Case], pred: np.ndarray) -> dict[str, float]:
    """Scheduler -> median signed relative error of its predicted bolt throughput ``pred`` (one
    per case) over its cases: the placements of one scheduler that the model over- (positive)
    or under-predicts across experiments, which the scores per experiment do not show."""
    errors: dict[str, list[float]] = {}
    for c, p in zip(cases, pred):
        errors.setdefault(c.scheduler, []).append(float(p) / c.measured - 1.0)
    return {s: float(np.median(v)) for s, v in sorted(errors.items())}


def cpu_gap(cases: Sequence[Case], model: CostModel, at_quota: float = 0.97) -> dict[str, float]:
    """Experiment -> median, over the nodes that used at least ``at_quota`` of their cores, of
    (cores used - the model's demand at the measured rate) / cores: the share of a saturated
    node's CPU that the model does not account for. The model predicts throughput as the rate at
    which the busiest node's demand meets its cores, so a gap of ``g`` on the bottleneck node
    over-predicts throughput by about ``g / (1 - g - fixed share)``. The demand is
    :func:`~streamplace.model.performance.predict`'s, at unit load scaled to the measured bolt
    throughput, plus its fixed costs (capped as it caps them). Cases without node CPU are left
    out; experiments with no node at quota too."""
    gaps: dict[str, list[float]] = {}
    for c in cases:
        if not c.node_cores:
            continue
        perf = predict(c.problem, c.placement, model, routed=c.routes)
        bolts = float(perf.in_rate[~c.problem.topology.source_task_mask].sum())
        speed = model.speeds(c.problem.cluster)
        for j, n in enumerate(c.problem.cluster.nodes):
            used = c.node_cores.get(n.name)
            if used is None or used < at_quota * n.cores or bolts <= 0:
                continue
            fixed = n.cores - perf.cpu_capacity[j] / speed[j]
            demand = perf.cpu_demand[j] * c.measured / bolts / speed[j] + fixed
            gaps.setdefault(c.experiment, []).append((used - demand) / n.cores)
    return {e: float(np.median(v)) for e, v in sorted(gaps.items())}


def across(first: Sequence[Case], second: Sequence[Case]) -> dict | None:
    """:func:`scores` of the placements ``second`` measured, predicted by what ``first`` measured
    of the same placements (experiment and scheduler): how far one campaign lands from another
    run of the same cells, the most a model fitted to one could score on the other. None when
    they share no placement."""
    measured = {(c.experiment, c.scheduler): c.measured for c in first}
    common = [c for c in second if (c.experiment, c.scheduler) in measured]
    if not common:
        return None
    return scores_of(common, np.array([measured[(c.experiment, c.scheduler)] for c in common]))


#: How a missing :func:`repeat_tau` is shown.
NO_REPEAT_TAU = "n/a, fewer than two repetitions"


def repeat_tau(runs: Sequence[dict]) -> float:
    """How far one repetition's ranking of the schedulers predicts another's: Kendall's tau
    between the bolt throughputs of repetitions ``i`` and ``j`` over the schedulers that ran both,
    the mean over every pair of repetitions of the runs' one experiment (nan: fewer than two
    repetitions of two schedulers). Repetition ``i`` of a scheduler is its ``i``-th run in record
    order (campaigns pooled one after another keep every run apart). The run-to-run noise caps
    what any model's tau against the measured means can show: where this is near 0, the
    schedulers are within noise of each other."""
    from itertools import combinations
    from scipy.stats import kendalltau
    by_rep: dict[int, dict[str, float]] = {}
    seen: dict[str, int] = {}
    for r in runs:
        i = seen[r["scheduler"]] = seen.get(r["scheduler"], -1) + 1
        by_rep.setdefault(i, {})[r["scheduler"]] = float(r["bolt_throughput"])
    taus = []
    for i, j in combinations(sorted(by_rep), 2):
        both = sorted(set(by_rep[i]) & set(by_rep[j]))
        if len(both) > 1:
            taus.append(kendalltau([by_rep[i][s] for s in both], [by_rep[j][s] for s in both]).statistic)
    return float(np.mean(taus)) if taus else math.nan

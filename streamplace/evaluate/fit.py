"""Fitting the cost model to measured runs: the constants that make predicted throughput answer
to what the Storm testbed measured (:mod:`streamplace.campaign.testbed`).

A *case* is one placement of one experiment with the mean throughput measured over its runs.
Its prediction is :func:`~streamplace.model.performance.predict` on the cluster as the
testbed ran it (each node's cores times the testbed's CPU scale). The fit chooses the constants
named in ``params`` to minimise the squared error of log throughput (a relative error, so that
a slow and a fast experiment weigh the same), by Nelder-Mead over the logarithms of the
constants (so they stay positive). :func:`scores` gives what the targets ask for: Kendall's tau
between the predicted and the measured ranking of the schedulers in each experiment, and the
median absolute relative error of the throughput.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Cluster, Placement, Problem
from ..model.specs import placement_from_dict
from ..model.performance import CostModel, cpu_per_tuple, predict, routed_flows, stream_hops, worker_connections

#: the constants fitted by default: the engine's per-tuple cost, serialisation across workers, the
#: fixed CPU of a worker process, of a node hosting workers, of an executor and of a connection
#: between workers (the structures the analytic model lacked or guessed)
FITTED = ("task_cpu_per_tuple", "ser_cpu_per_tuple", "worker_cpu", "node_cpu", "executor_cpu", "connection_cpu")
#: where a constant that is 0 in the starting model starts the search (a scale, not a guess)
START_AT = {"task_cpu_per_tuple": 1e-6, "ser_cpu_per_tuple": 1e-6, "ser_cpu_per_byte": 1e-9, "worker_cpu": 0.01, "node_cpu": 0.01,
            "executor_cpu": 0.001, "connection_cpu": 0.001, "default_cpu_per_tuple": 1e-6, "header_bytes": 1.0}


@dataclass(frozen=True)
class Case:
    """One measured placement: ``measured`` = mean bolt tuples executed per second over ``runs`` runs."""

    experiment: str
    scheduler: str
    problem: Problem        # on the cluster as the testbed ran it
    placement: Placement
    measured: float
    runs: int
    sd: float = math.nan    # sample standard deviation of the runs (nan: one run)
    #: node -> mean cores its cgroup used over the runs that measured it (None: none did)
    node_cores: Mapping[str, float] | None = None


def cpu_scale(cluster: Cluster, budget: float) -> float:
    """The Storm testbed's one factor on every node's cores: ``min(1, budget / total cores)``, so
    the nodes keep their relative speeds and together get ``budget`` cores at most."""
    total = float(sum(n.cores for n in cluster.nodes))
    return min(1.0, budget / total) if total > 0 else 1.0


def scaled_cluster(cluster: Cluster, cpu_budget: float) -> Cluster:
    """The cluster as the testbed runs it: each node's cores times :func:`cpu_scale`."""
    scale = cpu_scale(cluster, cpu_budget)
    return Cluster.build(cluster.name, [dataclasses.replace(n, cores=n.cores * scale) for n in cluster.nodes])


def cases_from_runs(runs: Sequence[dict], problem_of: Callable[[dict], Problem], cpu_budget: float) -> list[Case]:
    """Group campaign records by (experiment, scheduler); ``problem_of(record)`` is the problem
    the record's experiment ran (e.g. :func:`streamplace.campaign.testbed.run_problems`)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in runs:
        groups.setdefault((r["experiment"], r["scheduler"]), []).append(r)
    out = []
    for (exp, sched), rs in sorted(groups.items()):
        base = problem_of(rs[0])
        problem = Problem.from_topology(base.topology, scaled_cluster(base.cluster, float(rs[0].get("cpu_budget", cpu_budget))))
        placement = placement_from_dict({"placement": rs[0]["placement"]}, base.topology, base.cluster, f"{exp}/{sched}")
        values = np.array([r["bolt_throughput"] for r in rs], dtype=float)
        with_cpu = [r["node_cpu"] for r in rs if r.get("node_cpu")]
        cores = {n: float(np.mean([c[n]["cores"] for c in with_cpu])) for n in with_cpu[0]} if with_cpu else None
        out.append(Case(exp, sched, problem, placement, float(values.mean()), len(rs),
                        float(values.std(ddof=1)) if len(rs) > 1 else math.nan, cores))
    return out


def cpu_terms(case: Case, model: CostModel) -> tuple[np.ndarray, np.ndarray]:
    """What the model says each node of ``case`` spends at its measured rate: ``(known, terms)``.

    ``known`` = cores of the operators' own work and of serialisation per byte (constants not
    fitted here); ``terms`` = one row per node: tuples executed per second, tuples per second
    crossing a worker (each side counts once), workers, 1 if it hosts any, tasks, and connections
    between workers that end on it (:func:`~streamplace.model.performance.worker_connections`);
    their coefficients are :data:`FITTED` in that order. The
    measured rate is the model's unit-load flows scaled to the measured bolt throughput.
    """
    problem, placement = case.problem, case.placement
    topo, cluster = problem.topology, problem.cluster
    in_rate, flows = routed_flows(topo, placement.slot_ids(cluster))
    bolts = float(in_rate[~topo.source_task_mask].sum())
    scale = case.measured / bolts if bolts > 0 else 0.0
    node, n = placement.node, cluster.n_nodes
    own = cpu_per_tuple(topo, cluster, model)[topo.operator_of_task, node]
    known = np.bincount(node, weights=own * in_rate, minlength=n)
    tuples = np.bincount(node, weights=in_rate, minlength=n)
    crossing = np.zeros(n)
    for h in stream_hops(topo, placement, cluster, flows, model):
        rate = np.where(h.same_worker, 0.0, h.rate)
        for end in (h.src, h.dst):
            crossing += np.bincount(node[end], weights=rate, minlength=n)
            known += np.bincount(node[end], weights=rate * (h.ser_cpu - model.ser_cpu_per_tuple), minlength=n)
    workers = placement.workers_used(cluster).astype(float)
    speed = model.speeds(cluster)   # per-tuple CPU is in reference seconds, fixed CPU in cores
    tasks = np.bincount(node, minlength=n).astype(float)
    terms = np.column_stack([scale * tuples / speed, scale * crossing / speed, workers, (workers > 0).astype(float), tasks,
                             worker_connections(topo, placement, cluster)])
    return scale * known / speed, terms


def fit_cpu(cases: Sequence[Case], start: CostModel, params: Sequence[str] = FITTED) -> tuple[CostModel, dict]:
    """``params`` (some of :data:`FITTED`; the others keep ``start``'s values) from the cores each
    node used (``Case.node_cores``): non-negative least squares of measured cores minus
    :func:`cpu_terms`' known part on its terms, over every node that hosts workers in every case
    that measured its nodes. Each node of each placement is a data point, so the constants rest on
    several hundred points rather than one throughput per placement; throughput then follows from
    the fitted demand as always."""
    from scipy.optimize import nnls
    unknown = sorted(set(params) - set(FITTED))
    if unknown:
        raise ValueError(f"the node-CPU fit chooses among {', '.join(FITTED)}; not {unknown[0]!r}")
    cols = [FITTED.index(p) for p in params]
    held = np.array([0.0 if p in params else getattr(start, p) for p in FITTED])
    rows, ys = [], []
    for c in cases:
        if not c.node_cores:
            continue
        known, terms = cpu_terms(c, start)
        known = known + terms @ held
        for j, n in enumerate(c.problem.cluster.nodes):
            if terms[j, 2] > 0 and n.name in c.node_cores:
                rows.append(terms[j, cols])
                ys.append(c.node_cores[n.name] - known[j])
    if not rows:
        raise ValueError("no case has measured node CPU (runs recorded before node CPU was measured)")
    x, y = np.array(rows), np.array(ys)
    coef, _ = nnls(x, y)
    fitted = dataclasses.replace(start, **dict(zip(params, (float(v) for v in coef))))
    resid = y - x @ coef
    return fitted, {"params": list(params), "points": len(y), "rms_cores": float(np.sqrt(np.mean(resid ** 2))),
                    "r2": float(1 - np.sum(resid ** 2) / np.sum((y - y.mean()) ** 2)) if len(y) > 1 else math.nan}


def fit_cap(cases: Sequence[Case], model: CostModel) -> tuple[CostModel, dict]:
    """``model`` with ``fixed_cpu_cap`` chosen for ``cases``' measured throughput: the cap in
    [0.05, 1] that minimises the squared error of log bolt throughput (bounded Brent search; a
    prediction of 0 counts as 1 tuple/s). The node-CPU fit cannot choose it: the cores a node
    used say what its fixed costs take on average over busy and idle nodes, while the cap is about
    the saturated node that sets the throughput."""
    from scipy.optimize import minimize_scalar
    measured = np.log(np.array([c.measured for c in cases]))

    def loss(cap: float) -> float:
        pred = predictions(dataclasses.replace(model, fixed_cpu_cap=float(cap)), cases)
        return float(np.sum((np.log(np.maximum(pred, 1.0)) - measured) ** 2))
    res = minimize_scalar(loss, bounds=(0.05, 1.0), method="bounded", options={"xatol": 1e-3})
    uncapped = loss(1.0)
    cap = round(float(res.x), 3) if res.fun < uncapped else 1.0
    return dataclasses.replace(model, fixed_cpu_cap=cap), {"capped_loss": loss(cap), "uncapped_loss": uncapped}


def predicted_figures(problem: Problem, placement: Placement, model: CostModel, cpu_budget: float) -> dict:
    """The model's throughput, bottleneck and unit-load figures of ``placement`` as the testbed
    runs it (on :func:`scaled_cluster`); ``predicted_unit_*`` are at the topology's nominal rates."""
    perf = predict(Problem.from_topology(problem.topology, scaled_cluster(problem.cluster, cpu_budget)), placement, model)
    return {"predicted_throughput": perf.throughput, "predicted_bolt_throughput": bolt_throughput(problem, perf),
            "predicted_bottleneck": perf.bottleneck, "predicted_unit_throughput": float(perf.in_rate.sum()),
            "predicted_unit_inter_node_bytes": float(perf.nic_out.sum())}


def bolt_throughput(problem: Problem, perf) -> float:
    """Tuples executed per second by the non-source tasks at the sustainable scale: what [I]/[T3]
    count (per bolt task), and what a saturated Storm run measures (its spouts stall while the
    bolts drain the back-pressured queues, so their emit counts say little)."""
    bolts = ~problem.topology.source_task_mask
    return float(perf.max_scale * perf.in_rate[bolts].sum()) if np.isfinite(perf.max_scale) else math.inf


def predictions(model: CostModel, cases: Sequence[Case]) -> np.ndarray:
    """Predicted bolt throughput of every case (:func:`bolt_throughput`)."""
    return np.array([bolt_throughput(c.problem, predict(c.problem, c.placement, model)) for c in cases])


def fit(cases: Sequence[Case], start: CostModel, params: Sequence[str] = FITTED, *,
        max_iter: int = 400, restarts: int = 5) -> tuple[CostModel, dict]:
    """The model with ``params`` fitted to ``cases`` (others as in ``start``) and the fit's facts."""
    from scipy.optimize import minimize
    measured = np.log(np.array([c.measured for c in cases]))
    x0 = x_start = np.log(np.array([getattr(start, p) or START_AT.get(p, 1e-6) for p in params]))

    def model_at(x) -> CostModel:
        return dataclasses.replace(start, **{p: float(math.exp(v)) for p, v in zip(params, x)})

    def loss(x) -> float:
        pred = predictions(model_at(x), cases)
        if not np.all(np.isfinite(pred)) or np.any(pred <= 0):
            return 1e6
        return float(np.sum((np.log(pred) - measured) ** 2))

    iterations = 0
    for _ in range(restarts):   # Nelder-Mead restarted from its own answer escapes a collapsed simplex
        res = minimize(loss, x0, method="Nelder-Mead", options={"maxiter": max_iter, "xatol": 1e-4, "fatol": 1e-9})
        iterations += int(res.nit)
        if np.allclose(res.x, x0, atol=1e-4):
            break
        x0 = res.x
    # a constant driven 10^3 below its starting scale is 0 (the logarithm never reaches it)
    x = np.array([v if math.exp(v) >= 1e-3 * math.exp(s) else -math.inf for v, s in zip(res.x, x_start)])
    return model_at(x), {"params": list(params), "loss": loss(x), "iterations": iterations,
                         "converged": bool(res.success), "cases": len(cases)}


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
        perf = predict(c.problem, c.placement, model)
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

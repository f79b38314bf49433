"""The fits: the cost-model constants that make the model answer to what the testbed measured.

Two ways of choosing the constants :data:`FITTED`. :func:`fit_cpu` (the bundled model's):
non-negative least squares of the cores each node's cgroup used against the model's terms of
that node (:func:`cpu_terms`), every node of every placement a data point; then
:func:`fit_cap` chooses ``fixed_cpu_cap`` for the training throughput. :func:`fit`: the
constants that minimise the squared error of log throughput (a relative error, so that a slow
and a fast experiment weigh the same), by Nelder-Mead over their logarithms (so they stay
positive).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from ..files import quote
from ..model.performance import CostModel, cpu_per_tuple, stream_hops
from .cases import Case, predictions


#: the constants fitted by default: the engine's per-tuple cost, serialisation across workers, the
#: fixed CPU of a worker process, of a node hosting workers, of an executor and of a connection
#: between workers (the structures the analytic model lacked or guessed)
FITTED = ("task_cpu_per_tuple", "ser_cpu_per_tuple", "worker_cpu", "node_cpu", "executor_cpu", "connection_cpu")


#: where a constant that is 0 in the starting model starts the search (a scale, not a guess)
START_AT = {"task_cpu_per_tuple": 1e-6, "ser_cpu_per_tuple": 1e-6, "ser_cpu_per_byte": 1e-9, "worker_cpu": 0.01, "node_cpu": 0.01,
            "executor_cpu": 0.001, "connection_cpu": 0.001, "default_cpu_per_tuple": 1e-6, "header_bytes": 1.0}


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
    routed = case.routes
    in_rate = routed.in_rate
    bolts = float(in_rate[~topo.source_task_mask].sum())
    scale = case.measured / bolts if bolts > 0 else 0.0
    node, n = placement.node, cluster.n_nodes
    own = cpu_per_tuple(topo, cluster, model)[topo.operator_of_task, node]
    known = np.bincount(node, weights=own * in_rate, minlength=n)
    tuples = np.bincount(node, weights=in_rate, minlength=n)
    crossing = np.zeros(n)
    for h in stream_hops(routed, model):
        rate = np.where(h.same_worker, 0.0, h.rate)
        for end in (h.src, h.dst):
            crossing += np.bincount(node[end], weights=rate, minlength=n)
            known += np.bincount(node[end], weights=rate * (h.ser_cpu - model.ser_cpu_per_tuple), minlength=n)
    workers = routed.workers.astype(float)
    speed = model.speeds(cluster)   # per-tuple CPU is in reference seconds, fixed CPU in cores
    tasks = routed.tasks.astype(float)
    terms = np.column_stack([scale * tuples / speed, scale * crossing / speed, workers, (workers > 0).astype(float), tasks,
                             routed.connections])
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
        raise ValueError(f"the node-CPU fit chooses among {', '.join(FITTED)}; not {quote(unknown[0])}")
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

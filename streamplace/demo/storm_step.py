"""The demo's last step: Storm's even placement run on Storm, the model calibrated on that run,
then the placement the calibrated model recommends run beside it.

Instance: of the applications on the heterogeneous cluster (the demo's records, rebuilt from their
files), the one whose recommended plan uses the fewest workers (ties: the first). Every testbed
worker is two JVMs that start on the machine's 2 cores: frequent-routes' 16-worker plan took
44-78 s per job to start, and after 10 s of warm-up its runs had not settled, so the demo runs
the smallest instance. First Storm's even scheduler with the recommended plan's number of workers
(what a user who sets ``topology.workers`` to that number gets, and what a running job has);
then the model is calibrated on that run (:mod:`streamplace.model.calibration`) and predicts
every placement of the instance within capacity; the one it predicts fastest runs next. Both runs
on one testbed (:mod:`streamplace.storm.testbed`), brought up once, spouts saturated (the bundled model's
operating point, ``10ms-sleeps``), :data:`WARMUP_S` s of warm-up and :data:`MEASURE_S` s measured;
where the testbed cannot run (not root, no namespaces or cgroups, another testbed run) on embedded
Storm instead, saying why, at the topology's own rates: LocalCluster halts when back-pressure
crosses its in-process workers, and embedded figures check the plan and the pipeline, not
performance. ``DIR/storm/run.json`` holds per job the measured throughput and inter-node bytes
(wire and monitor) beside the calibrated prediction and the bundled model's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import time
from pathlib import Path
from collections.abc import Sequence

from ..model.calibration import CalibratedModel, MeasuredRun, calibrate, offered_spout_rate, rate_maps
from ..model.operating_point import OPERATING_POINTS, OperatingPoint
from ..model.performance import CostModel
from ..model import Problem
from ..model.specs import atomic_write_text, placement_from_dict
from ..schedulers import make_scheduler, storm_default
from ..storm import StormError
from ..storm.plans import workers_of
from ..storm.run import Job, RunSettings, run_jobs
from ..storm.testbed import Testbed, holder, preflight
from ..evaluate.decision import recommend
from ..evaluate.records import ResultRecord
from ..fit.cases import predicted_figures
from ..campaign.testbed import measured, saturated, saturated_job

#: seconds of warm-up and measured per job: the campaigns' (after 10 s many-worker placements were
#: still ramping up). Measured 2026-11-30 (benchmarks/results/2026-11-30-demo-step, four steps
#: each, interleaved): the calibrated prediction of the recommended placement was off by a median
#: 19.8 % after 10 s + 10 s (even's run, the calibration's, not yet settled) and 6.4 % after 20 s + 20 s
WARMUP_S = 20.0
MEASURE_S = 20.0
WINDOW_S = 5.0


def recommended(records: Sequence[ResultRecord]) -> ResultRecord | None:
    """The record to run beside Storm's default: the recommended one among the others
    (:func:`~streamplace.evaluate.decision.recommend`)."""
    others = [r for r in records if r.scheduler != storm_default()]
    index = recommend(others).index
    return None if index is None else others[index]


def instance_to_run(records: Sequence[ResultRecord]) -> tuple[dict, ResultRecord]:
    """(the instance's context: ``workload``, ``cluster`` ..., its recommended record): the
    application instance on the heterogeneous cluster (on any cluster where none is) whose
    recommended plan has the fewest workers (module docstring)."""
    instances: dict[tuple, list[ResultRecord]] = {}
    for r in records:
        if r.context.get("application"):
            instances.setdefault((r.context["workload"], r.context["cluster"]), []).append(r)
    pool = [recs for (_, cluster), recs in instances.items() if "low" in cluster] or list(instances.values())
    candidates = [(recs[0].context, best) for recs in pool if (best := recommended(recs)) is not None]
    if not candidates:
        names = ", ".join(f"{w} on {c}" for w, c in instances)
        raise StormError(f"no placement within capacity to run on Storm ({names})")
    return min(candidates, key=lambda pair: len({(p["node"], p["worker"])
                                                 for p in pair[1].evaluation.placement.values()}))


def testbed_or_reason() -> tuple[str, str]:
    """(mode, why): the testbed if this machine can run it, else embedded and the reason."""
    try:
        preflight()
    except StormError as exc:
        return "embedded", str(exc)
    pid = holder()
    if pid is not None:
        return "embedded", f"the Storm testbed is busy with another run (pid {pid})"
    return "cluster", ""


def step_point(mode: str, settings: RunSettings) -> OperatingPoint:
    """The operating point the demo's Storm jobs run at: the bundled model's on the testbed
    (saturated spouts, the campaign's settings, the testbed's CPU budget), Storm's defaults at the
    topology's rates on embedded Storm."""
    if mode == "cluster":
        return dataclasses.replace(OPERATING_POINTS["10ms-sleeps"], cpu_budget=settings.testbed.budget())
    return OperatingPoint("embedded", {})


def run_storm_step(records: Sequence[ResultRecord], out_dir: Path, problem_from_files, *, model: CostModel | None = None,
                   log=print, warmup_s: float | None = None, measure_s: float | None = None) -> dict:
    """Runs Storm's even placement of the instance :func:`instance_to_run` picks, calibrates the
    model on that run, then runs the placement the calibrated model recommends among the
    instance's placements within capacity; writes and returns ``DIR/storm/run.json``. Each job
    has ``warmup_s`` of warm-up and ``measure_s`` measured (default :data:`WARMUP_S`,
    :data:`MEASURE_S`)."""
    model = model or CostModel()
    warmup_s = WARMUP_S if warmup_s is None else warmup_s
    measure_s = MEASURE_S if measure_s is None else measure_s
    first, best = instance_to_run(records)
    problem = problem_from_files(out_dir, best.extra)
    mode, why = testbed_or_reason()
    plan = placement_from_dict({"placement": best.evaluation.placement}, problem.topology, problem.cluster, "demo record")
    default = storm_default()   # Storm's own placement, with as many workers as the plan uses
    even = make_scheduler(default, {"workers": workers_of(plan)}).schedule(problem).placement
    if why:
        log(f"storm: {why}; running embedded Storm instead (functional, not a "
            "performance measurement)")
    settings = RunSettings(mode=mode, warmup_s=warmup_s, duration_s=measure_s, window_s=WINDOW_S)
    bed = settings.testbed
    point = step_point(mode, settings)
    work = out_dir / "storm" / "work"
    shutil.rmtree(work, ignore_errors=True)
    if mode == "cluster":   # saturated; embedded Storm halts on back-pressure between its in-process workers
        problem = Problem.from_topology(saturated(problem.topology), problem.cluster)
    began = time.monotonic()

    # both jobs on one testbed: it comes up once
    with Testbed(problem.cluster, work / "testbed", work / "plans", bed) if mode == "cluster" \
            else contextlib.nullcontext() as testbed:

        def run(name: str, placement) -> dict:
            job_name = f"{first['workload']}-{name}"
            job = (saturated_job(job_name, problem.topology, placement, measure_s) if mode == "cluster" else
                   Job(job_name, problem.topology, placement, workers_of(placement), monitor=True, duration_s=measure_s))
            result = run_jobs(problem.cluster, [job], settings, work / name, monitor_dir=work / name / "monitor",
                              on_event=lambda e: e.get("event") == "result" and log(f"storm: measured {e['job']}"),
                              testbed=testbed)[job_name]
            return {"scheduler": name, "workers": workers_of(placement),
                    **measured(problem, placement, result, work / name / "monitor", settings),
                    **predicted_figures(problem, placement, model, bed.budget())}

        baseline = run(default, even)
        calibrated = calibrate(problem, MeasuredRun(
            point, even, baseline["bolt_throughput"], baseline["source_rate"],
            *rate_maps(baseline),
            baseline["latency_ms"].get("mean"), bed.budget() if mode == "cluster" else None,
            None if mode == "cluster" else offered_spout_rate(problem.topology),
            {node: float(cpu["cores"]) for node, cpu in baseline.get("node_cpu", {}).items()}), model)
        name, placement, prediction = recalibrated_choice(records, first, problem, calibrated, default)
        log(f"storm: calibrated on {default}'s run, {name} is predicted at {prediction.throughput:,.0f} tuples/s")
        chosen = run(name, placement)
    for rec, predicted_by in ((baseline, calibrated.predict(even)), (chosen, prediction)):
        rec.update(calibrated_throughput=predicted_by.throughput, calibrated_bound=predicted_by.bound)
    out = {"workload": first["workload"], "cluster": first["cluster"], "mode": mode, "why_not_testbed": why or None,
           "warmup_s": warmup_s, "measured_s": measure_s, "wall_s": round(time.monotonic() - began, 1),
           "operating_point": point.document(), "calibrated_on": default, "jobs": [chosen, baseline]}
    atomic_write_text(out_dir / "storm" / "run.json", json.dumps(out, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return out


def recalibrated_choice(records: Sequence[ResultRecord], context: dict, problem: Problem, calibrated: CalibratedModel,
                        default: str):
    """(scheduler, placement, prediction) of the instance's placement within capacity, of the
    same job, other than ``default``'s, with the highest calibrated throughput (ties: the
    records' order)."""
    best = None
    for r in records:
        if (r.context.get("workload"), r.context.get("cluster")) != (context["workload"], context["cluster"]) \
                or r.scheduler == default or not r.evaluation.valid or r.evaluation.placement is None or r.own_job:
            continue
        placement = placement_from_dict({"placement": r.evaluation.placement}, problem.topology, problem.cluster, r.scheduler)
        prediction = calibrated.predict(placement)
        if best is None or prediction.throughput > best[2].throughput:
            best = (r.scheduler, placement, prediction)
    if best is None:
        raise StormError(f"no placement within capacity of {context['workload']} to run on Storm")
    return best


def storm_summary(run: dict) -> str:
    """One line: mode, then per job measured beside predicted throughput."""
    key, counted = (("wire_inter_node_bytes_per_s", "on the wire") if run["mode"] == "cluster"
                    else ("monitor_inter_node_bytes_per_s", "by the monitor"))
    jobs = "; ".join(f"{j['scheduler']} {j['throughput']:,.0f} tuples/s measured, {j['calibrated_throughput']:,.0f} predicted "
                     f"calibrated on {run['calibrated_on']}'s run ({j['predicted_throughput']:,.0f} uncalibrated), "
                     f"{j[key] / 1e3:,.0f} kB/s between nodes {counted}" for j in run["jobs"])
    where = "testbed" if run["mode"] == "cluster" else "embedded Storm (no testbed)"
    return f"{run['workload']} on {run['cluster']}, {where}: {jobs}"

"""The demo's autopilot step: a job whose keys skew while it runs, started under Storm's even
placement with the autopilot (our policy, :class:`~streamplace.autopilot.policy.Hysteresis`)
beside it.

On the testbed the job is :func:`~streamplace.workloads.runtime.shift` on ``1high+2low`` at the
bundled model's operating point (``10ms-sleeps``: saturated spouts, the campaign's settings),
its keys turning Zipf :data:`SHIFT_AT` s after submission. Where the testbed cannot run, embedded
Storm runs a smaller job of the same shape (one spout, four counters on three one-core nodes, the
keys skewing at 20 s) at its own rate and the campaign's Storm settings (but Storm's own receive
queue: :data:`EMBEDDED_CONF`), saying why (and
``--quick`` always does): embedded figures show the loop working (no plan while the load is
even, a plan after the skew, Storm running it), not performance.
``DIR/autopilot/`` holds the run (``run.json`` with its ``timeline`` and ``plans``,
``autopilot.jsonl``); :func:`run_autopilot_step` returns what the report plots.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from types import MappingProxyType

import numpy as np

from ..autopilot.loop import BesideRun, Settings
from ..autopilot.policy import Hysteresis
from ..model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from ..model.operating_point import CAMPAIGN_CONF, STORM_DEFAULTS, OperatingPoint
from ..model.topology import Phase
from ..schedulers import make_scheduler
from ..storm.run import RunSettings, StormHalted, measure
from ..workloads import runtime
from .storm_step import step_point, testbed_or_reason

#: (testbed, embedded): seconds after submission at which the keys skew, seconds measured after
#: the warm-up, the monitor window (= the autopilot's period)
SHIFT_AT = {"cluster": 45.0, "embedded": 20.0}
MEASURE_S = {"cluster": 95.0, "embedded": 40.0}
WARMUP_S = {"cluster": 10.0, "embedded": 4.0}
WINDOW_S = {"cluster": 5.0, "embedded": 2.0}
#: our policy, its cool-down shortened to 30 s so that a plan after the shift fits the demo's short
#: run. Embedded, the small job's one-move answer to the skew is predicted +14-17 % before the 6.3 %
#: migration cost, so 7.7-10.5 % after it (one run of 2026-11-29): at the default 10 % threshold
#: the step would show it or not by noise. Embedded figures show the loop working, not
#: performance, so there the threshold is 5 % (the default before 2026-11-29)
POLICY = {"cluster": Hysteresis(cooldown_s=30.0), "embedded": Hysteresis(cooldown_s=30.0, min_gain=0.05)}
#: how far a starved search may stretch its time limit; embedded, the run is too short for a
#: search stretched on a busy machine (a test run beside it)
SEARCH_STRETCH = {"cluster": Settings.search_stretch, "embedded": 1.0}

#: embedded Storm's settings: the campaign's, but Storm's own receive queue (32,768 tuples, not
#: 1,024). Embedded Storm ends its JVM on any back-pressure between its in-process workers
#: (``messaging.local.Context``'s receiver throws on it), and a plan fills queues no executor
#: reads yet: a restarted worker's while its executors start, and a stopped worker's, whose
#: receiver stays registered, with what senders send to a moved task's old port until their next
#: refresh (``task.refresh.poll.secs``, 10 s). This job at 1,000 tuples/s, a plan on fresh ports
#: moving a task away from the spout's unchanged worker 8 s into the run: with 1,024 the JVM
#: ended in each of 3 runs, with 32,768 in none of 2 (2026-11-30, by hand; three of these five
#: runs also had a 1-s task refresh, tried and not kept)
EMBEDDED_CONF = MappingProxyType({**CAMPAIGN_CONF, "topology.executor.receive.buffer.size": STORM_DEFAULTS["topology.executor.receive.buffer.size"]})


def embedded_job(at: float) -> Problem:
    """The embedded job: ``s`` (1 task) -> fields over 8 keys -> ``k`` (4 counters), two counters
    on each of two one-core nodes; from ``at`` on Zipf keys send 56 % of the tuples to ``k[3]``."""
    topo = Topology.build("shift-embedded", [Operator("s", 1, role="source", source_rate=1000.0, cpu_per_tuple=2e-5),
                                             Operator("k", 4, role="sink", cpu_per_tuple=2e-4)],
                          [Stream("s", "k", "fields", key="w", num_keys=8)],
                          [Phase(at, streams={("s", "k"): {"key_distribution": "zipf", "zipf_s": 1.5}})])
    return Problem.from_topology(topo, Cluster.build("three", [Node(f"h{i}", 4, cores=1, slots=2) for i in range(3)]))


def run_autopilot_step(out_dir: Path, *, quick: bool = False, log=print) -> dict:
    """Runs the step into ``out_dir/autopilot`` and returns the report's document: ``mode``,
    ``why_not_testbed``, ``shift_at``, ``timeline`` and ``plans`` (times in seconds after
    submission), ``policy``, ``decisions``. ``quick``: the embedded job (about a minute, where
    the testbed's takes about three)."""
    mode, why = ("embedded", "--quick runs the embedded job") if quick else testbed_or_reason()
    if why:
        log(f"autopilot: {why}; running embedded Storm instead (the loop, not a performance measurement)")
    at = SHIFT_AT[mode]
    settings = RunSettings(mode=mode, warmup_s=WARMUP_S[mode], duration_s=MEASURE_S[mode], window_s=WINDOW_S[mode])
    if mode == "cluster":
        point = step_point(mode, settings)
        settings = dataclasses.replace(settings, storm_conf=point.conf(), ackers=point.ackers, operating_point=point)
        problem = Problem.from_topology(point.sources(runtime.shift(at)), runtime.named_cluster("1high+2low"))
        start = make_scheduler("even").schedule(problem).placement
    else:   # the campaign's Storm settings, as on the testbed: idle executors sleep instead of spinning
        point = OperatingPoint("measured", EMBEDDED_CONF)   # (Storm's default spin: 47 CPU s over the run, these: 27)
        settings = dataclasses.replace(settings, storm_conf=point.conf())
        problem = embedded_job(at)
        start = Placement(node=np.array([0, 1, 1, 2, 2]), worker=np.zeros(5, int))
    policy = POLICY[mode]
    target = out_dir / "autopilot"

    def run_once() -> dict:
        beside = BesideRun(problem, start, policy, Settings(window_s=WINDOW_S[mode], horizon_windows=3 if mode == "cluster" else 2,
                                                            time_limit=1.0, point=point, search_stretch=SEARCH_STRETCH[mode]),
                           period_s=WINDOW_S[mode])
        shutil.rmtree(target, ignore_errors=True)
        return measure(problem, start, target, settings, beside=beside)

    try:
        run = run_once()
    except StormHalted as exc:   # embedded Storm's own race when the plan moves a task: once more, from the start
        log(f"autopilot: embedded Storm failed as the plan moved tasks ({exc}); running the step once more")
        run = run_once()
    t0 = run["submitted_at"]
    decisions = (target / "autopilot.jsonl").read_text().splitlines()
    return {"mode": mode, "why_not_testbed": why or None, "workload": problem.topology.name,
            "cluster": problem.cluster.name, "shift_at": at, "policy": policy.name, "decisions": len(decisions),
            "timeline": [{"t": round(w["t"] - t0, 1), "throughput": w["throughput"]} for w in run["timeline"]],
            "plans": [{"t": round(p["t"] - t0, 1), "matched": p["matched"]} for p in run.get("plans", [])]}


def autopilot_summary(doc: dict) -> str:
    """One line: where it ran, the shift, and each plan the autopilot applied."""
    where = "testbed" if doc["mode"] == "cluster" else "embedded Storm (no testbed)"
    plans = ", ".join(f"t={p['t']:.0f} s" + (" (Storm ran it)" if p["matched"] else "") for p in doc["plans"]) or "none"
    return (f"{doc['workload']} on {doc['cluster']}, {where}: keys skew at t={doc['shift_at']:.0f} s; "
            f"{doc['decisions']} periods, plans applied: {plans}")

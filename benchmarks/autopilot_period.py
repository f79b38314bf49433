"""Time of one autopilot period (read the windows, profile, calibrate, reschedule, decide, log) on
synthetic monitor windows of the [I]/[T3] diamond micro-benchmark at 100, 1,000 and 10,000 tasks
on a heterogeneous cluster sized for it; the running placement is Storm's even one. Prints per size
the median and the spread of ``--repeat`` periods, and the part of it lns was given
(``--time-limit``). The issue's target: at most 5 s per period at 1,000 tasks on this machine.

    .venv/bin/python benchmarks/autopilot_period.py --sizes 100 1000 10000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from streamplace.autopilot.loop import Autopilot, Settings
from streamplace.autopilot.policy import Hysteresis
from streamplace.model import Problem
from streamplace.model.graph import stream_flows
from streamplace.schedulers import make_scheduler
from streamplace.workloads.catalogue import sized_cluster
from streamplace.workloads.microbench import microbench

WINDOW = 10.0


def windows(monitor: Path, problem: Problem, starts) -> None:
    """Load and traffic records of every task at the topology's own rates."""
    topo = problem.topology
    in_rate, flows = stream_flows(topo)
    monitor.mkdir(parents=True, exist_ok=True)
    with open(monitor / "load-bench-6700-1.jsonl", "w") as load, open(monitor / "traffic-bench-6700-1.jsonl", "w") as traffic:
        for w in starts:
            for t, label in enumerate(topo.task_labels):
                load.write(json.dumps({"window_start": w, "window_seconds": WINDOW, "task": label,
                                       "executed": float(in_rate[t]) * WINDOW, "cpu_seconds": 1e-5 * float(in_rate[t]) * WINDOW}) + "\n")
            for _, src, dst, rate in flows:
                for a, b, r in zip(src.tolist(), dst.tolist(), rate.tolist()):
                    if r > 0:
                        traffic.write(json.dumps({"window_start": w, "window_seconds": WINDOW, "src_task": topo.task_labels[a],
                                                  "dst_task": topo.task_labels[b], "tuples": r * WINDOW, "bytes": 100 * r * WINDOW}) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=2.0, help="seconds of lns per period (the command's default)")
    args = ap.parse_args()
    print(f"{'tasks':>6} {'median s':>9} {'min s':>7} {'max s':>7} {'lns budget s':>12} {'periods':>7}")
    for n in args.sizes:
        problem = Problem.from_topology(microbench("diamond", n), sized_cluster("heterogeneous", n))
        even = make_scheduler("even").schedule(problem).placement
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            windows(root / "monitor", problem, [0.0, 10.0, 20.0])
            pilot = Autopilot(problem, root / "monitor", root / "plans", root / "log.jsonl", even,
                              Hysteresis(confirm=10**6), Settings(window_s=WINDOW, time_limit=args.time_limit))
            times = []
            for _ in range(args.repeat):
                began = time.perf_counter()
                pilot.step(30.0)
                times.append(time.perf_counter() - began)
        print(f"{n:6d} {statistics.median(times):9.2f} {min(times):7.2f} {max(times):7.2f} {args.time_limit:12.1f} {len(times):7d}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

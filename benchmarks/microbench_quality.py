"""Micro-benchmark quality: each scheduler's inter-node cost beside the optimum, with run times.

All 72 uniform micro-benchmarks ([I] Sec. 5: linear, diamond, star x 10..32 tasks x homogeneous and
heterogeneous cluster). The optimum comes from ``make_scheduler("optimal", {"time_limit": T})``;
gap = cost / optimum - 1 (against the best placement it found when the optimum is not proven).
Schedulers: ischeduler (theta = 1 s), t3, metis, online, rstorm, even -- those registered.
A cost marked ``!`` belongs to a placement that overloads a node (even ignores capacity).

Targets: ischeduler (theta = 1 s) never more than 5 % above the optimum and every run under 1 s
([I] Sec. 5 reports at most 148 vs 146 and 90 vs 86).

    python benchmarks/microbench_quality.py [--theta 1] [--time-limit 10] [--schedulers a,b] [--markdown]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from streamplace.evaluate.metrics import inter_node_cost
from streamplace.schedulers import available, make_scheduler
from streamplace.workloads import microbench

CANDIDATES = ("ischeduler", "t3", "metis", "online", "rstorm", "even")
GAP_TARGET, SECONDS_TARGET = 0.05, 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--theta", type=float, default=1.0, help="ischeduler's theta (seconds)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="the optimal solver's time limit")
    parser.add_argument("--schedulers", default=",".join(s for s in CANDIDATES if s in available()))
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args()
    names = [s for s in args.schedulers.split(",") if s]
    schedulers = {s: make_scheduler(s, {"theta": args.theta} if s == "ischeduler" else {}) for s in names}
    optimal = make_scheduler("optimal", {"time_limit": args.time_limit})
    sep = " | " if args.markdown else "  "
    header = ["instance", "optimum", *(f"{s} (s)" for s in names)]
    widths = [26, 12, *(max(16, len(h)) for h in header[2:])]
    print(sep.join(f"{h:>{w}}" for h, w in zip(header, widths)))
    if args.markdown:
        print("|".join(["---"] * len(header)))
    gaps = {s: [] for s in names}
    seconds = {s: [] for s in names}
    proven = 0
    start = time.perf_counter()
    for inst in microbench.instances():
        p = inst.problem
        best = optimal.schedule(p)
        opt = inter_node_cost(p, best.placement)
        proven += best.status == "optimal"
        cells = [inst.name, f"{opt:g}{'' if best.status == 'optimal' else '?'} ({best.seconds:.1f})"]
        for s, scheduler in schedulers.items():
            res = scheduler.schedule(p)
            seconds[s].append(res.seconds)
            if res.placement is None:
                gaps[s].append(np.inf)
                cells.append(f"{res.status} ({res.seconds:.2f})")
                continue
            cost = inter_node_cost(p, res.placement)
            gaps[s].append(cost / opt - 1 if opt > 0 else (0.0 if cost == 0 else np.inf))
            overload = "!" if res.placement.overloaded_nodes(p.loads, p.cluster).size else ""
            cells.append(f"{cost:g}{overload} ({res.seconds:.2f})")
        print(sep.join(f"{c:>{w}}" for c, w in zip(cells, widths)), flush=True)
    print(f"\noptimum proven for {proven}/72 instances (time limit {args.time_limit:g} s); "
          f"total {time.perf_counter() - start:.0f} s\n")
    summary = ["scheduler", "worst gap", "mean gap", "at optimum", "slowest s", "mean s"]
    print(sep.join(f"{h:>12}" for h in summary))
    if args.markdown:
        print("|".join(["---"] * len(summary)))
    for s in names:
        g, t = np.array(gaps[s]), np.array(seconds[s])
        print(sep.join(f"{c:>12}" for c in [s, f"{100 * g.max():.1f} %", f"{100 * g.mean():.2f} %",
                                             f"{int((g <= 1e-9).sum())}/72", f"{t.max():.2f}", f"{t.mean():.3f}"]))
    if "ischeduler" in names:
        g, t = max(gaps["ischeduler"]), max(seconds["ischeduler"])
        met = g <= GAP_TARGET and t < SECONDS_TARGET
        print(f"\nischeduler (theta = {args.theta:g} s) target {'met' if met else 'MISSED'}: worst gap "
              f"{100 * g:.1f} % (target <= {100 * GAP_TARGET:g} %), slowest run {t:.2f} s (target < {SECONDS_TARGET:g} s)")


if __name__ == "__main__":
    main()

"""Optimal inter-node cost, status and solve time for all 72 uniform micro-benchmarks.

Target (issue 2): every instance proven optimal, each within 10 s on a 2-core machine.
For scale: [T3] reports CPLEX needing 1,114,257 s (64 cores) for linear/32 heterogeneous.

    python benchmarks/optimal_microbench.py [--time-limit 10] [--markdown]
"""

from __future__ import annotations

import argparse
import time

from streamplace.evaluate.metrics import inter_node_cost
from streamplace.schedulers import make_scheduler
from streamplace.workloads import microbench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    solver = make_scheduler("optimal", {"time_limit": args.time_limit})
    sep = " | " if args.markdown else "  "
    header = ["layout", "cluster", "tasks", "optimum", "bound", "status", "seconds"]
    print(sep.join(f"{h:>13}" for h in header))
    if args.markdown:
        print("|".join(["---"] * len(header)))
    rows = []
    start = time.perf_counter()
    for inst in microbench.instances():
        res = solver.schedule(inst.problem)
        cost = inter_node_cost(inst.problem, res.placement) if res.placement is not None else float("nan")
        rows.append((res.status, res.seconds))
        cells = [inst.layout, inst.cluster, inst.n_tasks, f"{cost:g}", f"{res.lower_bound:g}" if res.lower_bound is not None else "-",
                 res.status, f"{res.seconds:.2f}"]
        print(sep.join(f"{c:>13}" for c in cells), flush=True)
    proven = sum(s == "optimal" for s, _ in rows)
    worst = max(t for _, t in rows)
    print(f"\n{proven}/{len(rows)} proven optimal; slowest {worst:.2f} s; "
          f"mean {sum(t for _, t in rows) / len(rows):.2f} s; total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()

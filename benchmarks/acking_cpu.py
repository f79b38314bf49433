"""Where a node's CPU goes with acking on (streamplace.fit.messaging): for every runs.jsonl given
(a campaign of benchmarks/storm_testbed.py), the cores each node used outside its executor threads
regressed on the node's workers and on the messages crossing a worker boundary there (data tuples
and Storm's ack messages, per second, both ends), over every node of every run, and over the nodes
throttled in under half of the CFS periods; and the share of the nodes' cores that executor
threads used. A reading of the data, not part of any model.

    .venv/bin/python benchmarks/acking_cpu.py benchmarks/results/2026-11-28-linear-cpu/*.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from streamplace.fit import runs as fit_runs
from streamplace.fit.messaging import executor_shares, node_rows, regress
from streamplace.reproduce.measured import load_runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="runs.jsonl files of testbed campaigns")
    args = ap.parse_args()
    problem_of = fit_runs.run_problems()
    print(f"{'file':40} {'nodes':>5} {'base':>7} {'/worker':>8} {'us/msg':>7} {'R2':>5}   unthrottled: "
          f"{'nodes':>5} {'us/msg':>7} {'R2':>5}   executor share (median, range)")
    for path in args.runs:
        records = load_runs(path)
        rows = node_rows(records, problem_of)
        if len(rows) < 4:
            print(f"{path.name:40} too few nodes with node CPU recorded ({len(rows)})")
            continue
        every = regress(rows)
        calm = [r for r in rows if r.throttled < 0.5]
        if len(calm) >= 4:
            fit = regress(calm)
            quiet = f"{fit.n:5d} {fit.per_message * 1e6:7.2f} {fit.r2:5.2f}"
        else:
            quiet = f"{len(calm):5d} {'-':>7} {'-':>5}"
        shares = executor_shares(rows)
        print(f"{path.name:40} {every.n:5d} {every.base:7.4f} {every.per_worker:8.4f} {every.per_message * 1e6:7.2f} "
              f"{every.r2:5.2f}   {'':12} {quiet}   {np.median(shares):.2f} ({min(shares):.2f}-{max(shares):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Latency at a fixed rate, predicted and measured (streamplace.fit.operating_points.score_latency):
for every runs.jsonl given (a campaign of benchmarks/storm_testbed.py at a fixed-rate
--operating-point), per experiment: each placement's measured mean end-to-end latency (mean of its
runs, spread, runs, runs whose spouts fell behind) beside the model calibrated on even's runs and
the bundled uncalibrated model at the same offered load; then the median error over the other
placements, Kendall's tau-b and the pairs measured apart beyond noise that the prediction orders
the same way, and the error of the constant guess "every placement has even's latency". The
analysis and its rules: benchmarks/results/PLAN-fixed-rate-latency.md (the constant guess was
added after the campaign, by a review: it is reported, not a rule).

    .venv/bin/python benchmarks/fixed_rate_latency.py benchmarks/results/2026-11-28-fixed-rate-latency/*.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from streamplace.fit import runs as fit_runs
from streamplace.fit.operating_points import per_experiment, score_latency
from streamplace.reproduce.measured import load_runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="runs.jsonl files, one fixed-rate operating point each")
    args = ap.parse_args()
    problem_of = fit_runs.run_problems()
    table = []
    for path in args.runs:
        for s in per_experiment(load_runs(path), score_latency, problem_of):
            table.append(s)
            print(f"\n== {s.point} / {s.experiment}: mean end-to-end latency, ms")
            print(f"{'placement':22} {'measured':>9} {'spread':>7} {'n':>2} {'behind':>6} {'calibrated':>10} {'bundled':>8}")
            for r in sorted(s.rows, key=lambda r: r.measured):
                print(f"{r.scheduler:22} {r.measured:9.2f} {r.spread:7.2f} {r.runs:2d} {r.held_back:6d} {r.predicted:10.2f} "
                      f"{r.uncalibrated:8.2f}")
    print(f"\n{'operating point':26} {'experiment':24} {'error':>7} {'tau':>6} {'apart, ordered':>15} {'pass':>5}  "
          f"{'bundled error':>13} {'bundled tau':>11} {'constant error':>14}  runs behind")
    for s in table:
        print(f"{s.point:26} {s.experiment:24} {s.error:7.1%} {s.tau:+6.2f} {f'{s.pairs_apart}, {s.pairs_ordered}':>15} "
              f"{'yes' if s.passes else 'no':>5}  {s.uncalibrated_error:13.1%} {s.uncalibrated_tau:+11.2f} "
              f"{s.constant_error:14.1%}  {sum(r.held_back for r in s.rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

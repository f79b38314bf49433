"""The calibrated model scored across operating points (streamplace.fit.operating_points): for every
runs.jsonl given (a campaign of benchmarks/storm_testbed.py at one --operating-point), per
experiment: each placement's measured bolt throughput (mean, spread, runs) beside the model
calibrated on even's runs and the bundled uncalibrated model, then the median error over the
held-out placements, Kendall's tau-b, the regret of the recommendation and whether lns is within
noise of every published scheduler; beside them the testbed's own noise: the split-half tau (its
even-numbered runs' ranking against its odd-numbered runs') and the tau ceiling (what a model
that knew every placement's throughput would score against as many runs: on average and in 95 %
of draws). Points the analysis plan holds out of every fit are marked.

    .venv/bin/python benchmarks/operating_points.py benchmarks/results/2026-11-27-operating-points/*/runs.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from streamplace.fit import runs as fit_runs
from streamplace.fit.operating_points import passes, per_experiment, score
from streamplace.model.specs import SpecError
from streamplace.reproduce.measured import load_runs

#: held out of every fit by the analysis plan (benchmarks/results/PLAN-operating-points.md)
HELD_OUT = ("acking-msp50", "cpu-1.0", "bandwidth-scaled")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="runs.jsonl files, one operating point each")
    args = ap.parse_args()
    try:   # every file read before any figure: a bad one is one line, exit 2
        runs = [load_runs(path) for path in args.runs]
        for path, loaded in zip(args.runs, runs):
            if not loaded:
                raise SpecError(path, "", "holds no run records")
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problem_of = fit_runs.run_problems()
    table = []
    for loaded in runs:
        for s in per_experiment(loaded, score, problem_of):
            table.append(s)
            print(f"\n== {s.point} / {s.experiment}{'  (held out of every fit)' if s.point in HELD_OUT else ''}")
            print(f"{'placement':22} {'measured':>10} {'spread':>8} {'n':>2} {'calibrated':>11} {'bound':>13} {'bundled':>10}")
            for r in sorted(s.rows, key=lambda r: -r.measured):
                print(f"{r.scheduler:22} {r.measured:10,.0f} {r.spread:8,.0f} {r.runs:2d} {r.predicted:11,.0f} {r.bound:>13} "
                      f"{r.uncalibrated:10,.0f}")
    print(f"\n{'operating point':18} {'experiment':24} {'error':>7} {'tau':>6} {'regret':>7} {'pass':>5}  {'lns':>4}  "
          f"{'bundled error':>13} {'bundled tau':>11} {'split-half':>10} {'ceiling':>7} {'p5':>6}  recommended")
    for s in table:
        lns = "-" if s.lns_ok is None else ("ok" if s.lns_ok else "no")
        print(f"{s.point + (' *' if s.point in HELD_OUT else ''):18} {s.experiment:24} {s.error:7.1%} {s.tau:+6.2f} "
              f"{s.regret:7.1%} {'yes' if passes(s) else 'no':>5}  {lns:>4}  {s.uncalibrated_error:13.1%} "
              f"{s.uncalibrated_tau:+11.2f} {s.split_half_tau:+10.2f} {s.tau_ceiling:+7.2f} {s.tau_ceiling_p5:+6.2f}  "
              f"{s.recommended}" + (f" (lns behind {', '.join(s.lns_behind)})" if s.lns_behind else ""))
    print("\n* held out of every fit (reported apart by the analysis plan)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

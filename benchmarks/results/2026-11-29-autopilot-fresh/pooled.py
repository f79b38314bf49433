"""PLAN-autopilot-shift-9's criterion (b): ours' phase-2 rate over the two campaigns with the
current loop (2026-11-29-autopilot-budget and this one) against their `calibrated-lns` static runs.

    .venv/bin/python benchmarks/results/2026-11-29-autopilot-fresh/pooled.py
"""

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))   # benchmarks/, for the campaign script's analysis

from autopilot_shift import analyse, load  # noqa: E402

ours, best = [], []
for folder in ("2026-11-29-autopilot-budget", "2026-11-29-autopilot-fresh"):
    a = analyse(load(HERE.parent / folder / "runs.jsonl"))
    here, static = [r["phase2"] for r in a["policies"]["hysteresis"]], a["static"]["calibrated-lns"]["runs"]
    ours, best = ours + here, best + static
    print(f"{folder}: ours {', '.join(f'{x:,.0f}' for x in here)}; calibrated-lns {', '.join(f'{x:,.0f}' for x in static)}")
ratio = statistics.fmean(ours) / statistics.fmean(best)
print(f"pooled: ours {statistics.fmean(ours):,.0f} ({len(ours)} runs), calibrated-lns {statistics.fmean(best):,.0f} "
      f"({len(best)} runs): {ratio:.1%} -> criterion (b) {'met' if ratio >= 0.9 else 'missed'}")

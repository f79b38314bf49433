"""The autopilot's plans on fresh ports against plans that keep a changed worker on its port, on
the Storm testbed (needs root), as benchmarks/results/PLAN-autopilot-ports.md fixes it: the demo's
testbed autopilot step (the `shift` job on 1high+2low, keys turning Zipf at 45 s) measured 130 s,
six runs interleaved.

    .venv/bin/python benchmarks/autopilot_ports.py -o out/autopilot-ports
    .venv/bin/python benchmarks/autopilot_ports.py -o out/autopilot-ports --summary-only
    .venv/bin/python benchmarks/autopilot_ports.py -o out/autopilot-ports-4 --start-workers 4   # the amendment's set

Appends one record per run to DIR/runs.jsonl (the step's document, and per plan the workers
whose tasks changed and the ports they kept) and prints per variant the plans' recovery and dip
(``autopilot_shift.migration_cost``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from streamplace.autopilot import loop
from streamplace.demo import autopilot_step
from streamplace.storm.plans import on_fresh_ports, workers_on

sys.path.insert(0, str(Path(__file__).resolve().parent))
from autopilot_shift import migration_cost  # noqa: E402  (a script beside this one)

ORDER = ("reuse", "fresh", "fresh", "reuse", "reuse", "fresh")
MEASURED_S = 130.0


def kept_ports(current, applied) -> tuple[int, int]:
    """(workers of ``applied`` whose tasks change, those of them on an index a worker of ``current`` holds)."""
    changed = kept = 0
    for n in np.unique(applied.node):
        now, after = workers_on(current, n), workers_on(applied, n)
        for w, tasks in after.items():
            if tasks not in now.values():
                changed += 1
                kept += w in now
    return changed, kept


def run_one(variant: str, out: Path, start_workers: int | None = None) -> dict:
    seen = []
    make = autopilot_step.make_scheduler

    def start_with(name, params=None):   # the step's start: Storm's even placement, with start_workers
        return make(name, {**(params or {}), **({"workers": start_workers} if start_workers else {})})

    def relabel(current, new, cluster):
        applied = on_fresh_ports(current, new, cluster) if variant == "fresh" else new
        seen.append(kept_ports(current, applied))
        return applied

    loop.on_fresh_ports, measured = relabel, autopilot_step.MEASURE_S["cluster"]
    autopilot_step.MEASURE_S["cluster"], autopilot_step.make_scheduler = MEASURED_S, start_with
    began = time.time()
    try:
        doc = autopilot_step.run_autopilot_step(out, log=lambda line: print(f"  {line}", flush=True))
    finally:
        loop.on_fresh_ports, autopilot_step.MEASURE_S["cluster"] = on_fresh_ports, measured
        autopilot_step.make_scheduler = make
    return {"variant": variant, "start_workers": start_workers, "started": began, "wall_s": round(time.time() - began, 1), **doc,
            "changed_workers": [c for c, _ in seen], "kept_ports": [k for _, k in seen]}


def summary(records: list[dict]) -> None:
    print(f"{'run':>3s} {'variant':7s} {'mode':8s} {'plans':>5s}  per plan: t s, changed workers, kept ports, matched, "
          "recovery s, dip tuples")
    first = {"fresh": [], "reuse": []}
    for i, r in enumerate(records, 1):
        series = [(w["t"], w["throughput"]) for w in r["timeline"]]
        end = series[-1][0] + 5.0 if series else 0.0
        cells = []
        for k, p in enumerate(r["plans"]):
            nxt = r["plans"][k + 1]["t"] if k + 1 < len(r["plans"]) else end
            m = migration_cost(series, p["t"], nxt)
            rec = "-" if m["recovery_s"] is None else f"{m['recovery_s']:.0f}"
            cells.append(f"{p['t']:.0f}: {r['changed_workers'][k]}, {r['kept_ports'][k]}, {p['matched']}, {rec}, "
                         f"{m['dip_tuples']:,.0f}")
            if k == 0:
                first[r["variant"]].append((m["dip_tuples"], m["recovery_s"], r["kept_ports"][k]))
        print(f"{i:3d} {r['variant']:7s} {r['mode']:8s} {len(r['plans']):5d}  {'; '.join(cells) or 'no plan'}")
    print("\nfirst plan of each run: dip tuples (median, range), recovery s, changed workers kept on their port")
    for variant, rows in first.items():
        if rows:
            dips = [d for d, _, _ in rows]
            print(f"  {variant:6s} {statistics.median(dips):10,.0f} ({min(dips):,.0f}-{max(dips):,.0f})  "
                  f"recovery {[None if s is None else round(s) for _, s, _ in rows]}  kept {[k for _, _, k in rows]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--start-workers", type=int, help="start under Storm's even placement with this many workers "
                    "(the plan's amendment: a free port on every node); default: as the demo, every slot")
    args = ap.parse_args()
    records_file = args.out / "runs.jsonl"
    if not args.summary_only:
        args.out.mkdir(parents=True, exist_ok=True)
        done = len(records_file.read_text().splitlines()) if records_file.exists() else 0
        for i, variant in enumerate(ORDER[done:], done + 1):
            print(f"run {i} of {len(ORDER)}: {variant}", flush=True)
            record = run_one(variant, args.out / "runs" / f"{i:02d}-{variant}", args.start_workers)
            with records_file.open("a") as f:
                f.write(json.dumps(record) + "\n")
    summary([json.loads(line) for line in records_file.read_text().splitlines()])
    return 0


if __name__ == "__main__":
    sys.exit(main())

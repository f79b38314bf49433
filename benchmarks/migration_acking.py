"""What a migration costs with acking on the Storm testbed (needs root), as
benchmarks/results/PLAN-migration-acking.md fixes it: the `shift` job at `acking-msp50`, static
under even and migrating under the every-period policy, in the order static, migrating,
migrating, static; with --replays also the trees a replaying spout would read again, as
benchmarks/results/PLAN-migration-replays.md fixes it (from the monitor's spout counts).

    .venv/bin/python benchmarks/migration_acking.py -o out/migration-acking        # 4 runs, ~12 min
    .venv/bin/python benchmarks/migration_acking.py -o out/migration-acking --summary-only
    .venv/bin/python benchmarks/migration_acking.py -o out/migration-replays --replays

Appends one record per run to DIR/runs.jsonl and keeps each run's directory under DIR/runs/;
prints per run Storm's acked and failed tuple trees, the plans applied and each migration's dip.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import streamplace as sp
from autopilot_shift import migration_cost   # the shift campaign's definitions of a migration's dip and recovery
from streamplace.model import Problem
from streamplace.workloads import runtime

WINDOW = 5.0
ORDER = [("static", 1), ("migrating", 1), ("migrating", 2), ("static", 2)]
AUTOPILOT = {"policy": "every-period", "max_moves": 4, "time_limit": 2.0, "horizon_windows": 3,
             "period_s": WINDOW}


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def run_all(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    runs_file = out / "runs.jsonl"
    done = {(r["kind"], r["rep"]) for r in _lines(runs_file)}
    problem = Problem.from_topology(runtime.shift(40.0), runtime.named_cluster("1high+2low"))
    settings = sp.storm_settings(mode="cluster", operating_point="acking-msp50", duration_s=150.0, warmup_s=10.0,
                                 window_s=WINDOW)
    for i, (kind, rep) in enumerate(ORDER, 1):
        if (kind, rep) in done:
            continue
        print(f"[{i}/{len(ORDER)}] {kind} r{rep}", flush=True)
        run_dir = out / "runs" / f"{kind}-r{rep}"
        result = sp.storm_run(problem, run_dir, settings, scheduler="even", force=True,
                              autopilot=AUTOPILOT if kind == "migrating" else None)
        keep = ("throughput", "submitted_at", "timeline", "plans", "spout_acked", "spout_failed", "latency_ms",
                "spout_trees")
        rec = {"kind": kind, "rep": rep, **{k: result.run.get(k) for k in keep}}
        with open(runs_file, "a") as fh:
            fh.write(json.dumps(rec) + "\n")
        print("    " + line(rec), flush=True)


def migrations(rec: dict) -> list[dict]:
    """Each applied plan's dip and recovery, by the shift campaign's definitions."""
    t0 = rec["submitted_at"]
    series = [(w["t"] - t0, w["throughput"]) for w in rec["timeline"]]
    plans = [p["t"] - t0 for p in rec.get("plans") or []]
    end = series[-1][0] + WINDOW if series else 0.0
    out = []
    for k, ta in enumerate(plans):
        cost = migration_cost(series, ta, plans[k + 1] if k + 1 < len(plans) else end)
        out.append({"t": round(ta), "recovery_s": None if cost["recovery_s"] is None else round(cost["recovery_s"]),
                    "dip_tuples": round(cost["dip_tuples"])})
    return out


def line(rec: dict) -> str:
    plans = rec.get("plans") or []
    return (f"{rec['kind']} r{rec['rep']}: throughput {rec['throughput']:,.0f} tuples/s, spout acked "
            f"{rec['spout_acked']:,}, failed {rec['spout_failed']:,}; {len(plans)} plans; migrations "
            + ("; ".join(f"t={m['t']} s: recovery {m['recovery_s']} s, dip {m['dip_tuples']:,}" for m in migrations(rec))
               or "none"))


#: PLAN-migration-replays.md: 4 spout tasks x max spout pending 50
REPLAY_BOUND = 4 * 50


def replays(runs: list[dict]) -> list[str]:
    """Per run the trees never reported complete (what a replaying spout reads again) and the
    failed ones; per migrating run the replays per applied plan beyond the static runs' mean,
    against the plan's bound."""
    out = []
    for rec in runs:
        t = rec["spout_trees"]
        out.append(f"{rec['kind']} r{rec['rep']}: emitted {t['emitted']:,}, acked {t['acked']:,}, failed {t['failed']:,}; "
                   f"not acked {t['emitted'] - t['acked']:,}")
    static = [r["spout_trees"]["emitted"] - r["spout_trees"]["acked"] for r in runs if r["kind"] == "static"]
    for rec in runs:
        if rec["kind"] == "migrating" and rec.get("plans") and static:
            t = rec["spout_trees"]
            per_plan = (t["emitted"] - t["acked"] - statistics.fmean(static)) / len(rec["plans"])
            out.append(f"migrating r{rec['rep']}: {per_plan:,.0f} trees replayed per migration beyond the static runs' "
                       f"mean of {statistics.fmean(static):,.0f} ({len(rec['plans'])} plans); bound {REPLAY_BOUND}: "
                       + ("holds" if per_plan <= REPLAY_BOUND else "exceeded"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--summary-only", action="store_true", help="print the figures of DIR/runs.jsonl, run nothing")
    ap.add_argument("--replays", action="store_true", help="also print the replay figures (runs with spout_trees)")
    args = ap.parse_args()
    if not args.summary_only:
        run_all(args.out)
    runs = _lines(args.out / "runs.jsonl")
    if not runs:
        print(f"{args.out / 'runs.jsonl'}: no runs", file=sys.stderr)
        return 2
    for rec in runs:
        print(line(rec))
    static = [r["spout_failed"] for r in runs if r["kind"] == "static"]
    for rec in runs:
        if rec["kind"] == "migrating" and rec.get("plans") and static:
            extra = (rec["spout_failed"] - statistics.fmean(static)) / len(rec["plans"])
            print(f"migrating r{rec['rep']}: {extra:,.0f} failed tuple trees per applied plan beyond the static runs' "
                  f"mean of {statistics.fmean(static):,.0f}")
    if args.replays:
        for text in replays(runs):
            print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

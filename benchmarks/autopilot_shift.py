"""The autopilot through a workload shift on the Storm testbed (needs root), as
benchmarks/results/PLAN-autopilot-shift.md fixes it: the `shift` job (uniform keys, then Zipf
from 120 s on) under each policy from Storm's even placement, and the second phase's static
placements (even, and lns on the model calibrated on even's run), interleaved.

    .venv/bin/python benchmarks/autopilot_shift.py -o out/autopilot-shift          # 10 runs, ~1 hour
    .venv/bin/python benchmarks/autopilot_shift.py -o out/autopilot-shift --stable         # + the 10-minute stable run
    .venv/bin/python benchmarks/autopilot_shift.py -o out/autopilot-shift --summary-only

The second campaign (benchmarks/results/PLAN-autopilot-shift-2.md) ran on a cluster where even
is beatable before the shift, let a reschedule move 8 tasks, and measured even on the first
phase on its own (two static runs, ``--phase1-even``), which its first rule compares with:

    .venv/bin/python benchmarks/autopilot_shift.py -o DIR --cluster 2high+2low --max-moves 8 --phase1-even --stable

Its amendment ran our policy again after a change to the loop, reusing that campaign's static runs
(they involve no autopilot): ``--policies hysteresis --statics-from DIR2``.

The third (benchmarks/results/PLAN-autopilot-shift-3.md) lets the autopilot join the job a minute
after its workers run, as an operator starts it beside a running job, and shifts the keys later so
that the first phase's steady window follows the first plan's migration:

    .venv/bin/python benchmarks/autopilot_shift.py -o DIR --cluster 2high+2low --max-moves 20 --phase1-even \
        --shift-at 240 --autopilot-after 60 --phase1-from 160 --stable

The fourth (benchmarks/results/PLAN-autopilot-shift-4.md) runs the loop with one migration cost per
plan (19 s of the running rate, repaid within 300 s) instead of 1 % per task moved, joins 90 s after
the workers run, and shifts at 280 s:

    .venv/bin/python benchmarks/autopilot_shift.py -o DIR --cluster 2high+2low --max-moves 20 --phase1-even \
        --shift-at 280 --autopilot-after 90 --phase1-from 200 --stable

Appends one record per run to DIR/runs.jsonl (run.json's figures, the timeline, the autopilot's
decisions, the per-window spout and count rates) and keeps each run's directory under DIR/runs/;
prints the plan's table: per policy the steady rates of both phases, the first apply, the
reschedules and the migration figures, and the static placements' rates.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import streamplace as sp
from streamplace.autopilot.loop import Settings
from streamplace.autopilot.policy import Hysteresis
from streamplace.model import Problem
from streamplace.workloads import runtime

SHIFT_AT = 120.0     # the first two campaigns' shift; the third's is later (Design.shift_at)
PHASE1_FROM = 60.0   # the first two campaigns' first-phase steady window: [60 s, shift)
PHASE2_AFTER = 80.0  # the second phase's steady window: [shift + 80 s, end)
WINDOW = 5.0
WARMUP = 10.0
POLICY_AFTER_SHIFT = 150.0   # a policy run's measured time after the shift (270 s with the shift at 120)
STATIC_MEASURED = 120.0
STABLE_MEASURED = 600.0
#: ours with the library's min gain (5 % before the fifth plan's amendment, 10 % since: Hysteresis)
POLICIES = {"hysteresis": {"policy": "hysteresis", "min_gain": Hysteresis.min_gain, "confirm": 2, "cooldown_s": 60.0},
            "every-period": {"policy": "every-period"}, "greedy": {"policy": "greedy"}}
AUTOPILOT = {"max_moves": 4, "time_limit": 2.0, "horizon_windows": 3}
POINT = "10ms-sleeps"


@dataclass(frozen=True)
class Design:
    """What differs between the campaigns: the testbed cluster, the moves a reschedule may make,
    whether even runs the first phase on its own (kind ``static-phase1``), the policies run, and
    (the third campaign) the shift's time, the seconds after the job's workers run when the
    autopilot joins it, and the start of the first phase's steady window."""

    cluster: str = "1high+2low"
    max_moves: int = 4
    phase1_even: bool = False
    policies: tuple[str, ...] = tuple(POLICIES)
    shift_at: float = SHIFT_AT
    autopilot_after: float = 0.0
    phase1_from: float = PHASE1_FROM

    def autopilot(self, policy: str) -> dict:
        return {**POLICIES[policy], **AUTOPILOT, "max_moves": self.max_moves, "period_s": WINDOW,
                "after_s": self.autopilot_after}

    def policy_measured(self) -> float:
        return self.shift_at + POLICY_AFTER_SHIFT


def settings(measured: float):
    return sp.storm_settings(mode="cluster", operating_point=POINT, duration_s=measured, warmup_s=WARMUP,
                             window_s=WINDOW)


def record(kind: str, name: str, rep: int, run: dict, run_dir: Path, design: Design) -> dict:
    """What the analysis reads of one run."""
    per_window = defaultdict(lambda: defaultdict(float))
    for line in (run_dir / "load.jsonl").read_text().splitlines():
        r = json.loads(line)
        per_window[r["window_start"]][r["task"].split("[")[0]] += r["executed"]
    log = [json.loads(x) for x in (run_dir / "autopilot.jsonl").read_text().splitlines()] \
        if (run_dir / "autopilot.jsonl").is_file() else []
    keep = ("throughput", "bolt_throughput", "source_rate", "submitted_at", "timeline", "plans", "assignment",
            "operating_point", "cpu_budget", "latency_ms", "window_s", "warmup_s", "duration_s")
    return {"kind": kind, "name": name, "rep": rep, "cluster": design.cluster, "max_moves": design.max_moves,
            "shift_at": design.shift_at, "autopilot_after_s": design.autopilot_after, "phase1_from": design.phase1_from,
            "migration_s": Settings.migration_s, "payback_s": Settings.payback_s,
            **{k: run.get(k) for k in keep},
            "executed": {str(w): dict(ops) for w, ops in sorted(per_window.items())},
            "autopilot": log}


def plan_order(design: Design, seed: int = 0) -> list[tuple[str, str, int]]:
    rest = [("policy", p, r) for p in design.policies for r in (1, 2)] + [("static", "even", 2)] + \
           [("static", "calibrated-lns", r) for r in (1, 2)] + \
           ([("static-phase1", "even", r) for r in (1, 2)] if design.phase1_even else [])
    random.Random(seed).shuffle(rest)
    return [("static", "even", 1)] + rest


def run_all(out: Path, design: Design) -> None:
    out.mkdir(parents=True, exist_ok=True)
    runs_file = out / "runs.jsonl"
    done = {(r["kind"], r["name"], r["rep"]) for r in load(runs_file)}
    topo = runtime.shift(design.shift_at)
    cluster = runtime.named_cluster(design.cluster)
    first = first_phase(design)
    phased = Problem.from_topology(topo, cluster)
    second = Problem.from_topology(topo.at(design.shift_at), cluster)
    lns_plan = out / "calibrated-lns.json"
    order = plan_order(design)
    for i, (kind, name, rep) in enumerate(order, 1):
        if (kind, name, rep) in done:
            continue
        run_dir = out / "runs" / f"{kind}-{name}-r{rep}"
        print(f"[{i}/{len(order)}] {kind} {name} r{rep}", flush=True)
        if kind == "policy":
            result = sp.storm_run(phased, run_dir, settings(design.policy_measured()), scheduler="even", force=True,
                                  autopilot=design.autopilot(name))
        elif kind == "static-phase1":
            result = sp.storm_run(first, run_dir, settings(STATIC_MEASURED), scheduler="even", force=True)
        elif name == "even":
            result = sp.storm_run(second, run_dir, settings(STATIC_MEASURED), scheduler="even", force=True)
        else:
            result = sp.storm_run(second, run_dir, settings(STATIC_MEASURED), plan=lns_plan, force=True)
        rec = record(kind, name, rep, result.run, run_dir, design)
        with open(runs_file, "a") as fh:
            fh.write(json.dumps(rec) + "\n")
        print(f"    throughput {rec['throughput']:,.0f} tuples/s, {len([d for d in rec['autopilot'] if d['decision'] == 'apply'])} "
              f"plans applied", flush=True)
        if (kind, name, rep) == ("static", "even", 1):
            model = sp.calibrate(second, run_dir)
            lns = sp.make_scheduler("lns", {"objective": "throughput", "seed": 0}, time_limit=10.0)
            chosen = lns.with_predictor(model).schedule(second).placement
            sp.write_document({"placement": chosen.to_mapping(second.topology.task_labels, cluster)}, lns_plan)
            print(f"    calibrated-lns predicted {model.predict(chosen).throughput:,.0f} tuples/s", flush=True)


def first_phase(design: Design) -> Problem:
    """The job without its shift (uniform keys throughout) on the design's cluster."""
    return Problem.from_topology(runtime.shift(design.shift_at).without_phases(), runtime.named_cluster(design.cluster))


def run_stable(out: Path, design: Design) -> None:
    """The plan's amendment: the first phase alone (no shift) for 10 minutes under our policy."""
    runs_file = out / "runs.jsonl"
    if any(r["kind"] == "stable" for r in load(runs_file)):
        return
    problem = first_phase(design)
    run_dir = out / "runs" / "stable-hysteresis-r1"
    print("[stable] hysteresis r1, 600 s", flush=True)
    result = sp.storm_run(problem, run_dir, settings(STABLE_MEASURED), scheduler="even", force=True,
                          autopilot=design.autopilot("hysteresis"))
    rec = record("stable", "hysteresis", 1, result.run, run_dir, design)
    with open(runs_file, "a") as fh:
        fh.write(json.dumps(rec) + "\n")


def copy_statics(source: Path, runs_file: Path) -> None:
    """The static runs of ``source`` into ``runs_file`` (once: not when it already holds one)."""
    if any(r["kind"].startswith("static") for r in load(runs_file)):
        return
    statics = [r for r in load(source) if r["kind"].startswith("static")]
    if not statics:
        sys.exit(f"{source}: no static run")
    runs_file.parent.mkdir(parents=True, exist_ok=True)
    with open(runs_file, "a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in statics)


def load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.is_file() else []


def rates(rec: dict) -> list[tuple[float, float]]:
    """(window start - submission, throughput) for every window of the run, a missing one as 0."""
    t0, w = rec["submitted_at"], rec["window_s"]
    have = {round((x["t"] - t0) / w): x["throughput"] for x in rec["timeline"]}
    return [(k * w, have.get(k, 0.0)) for k in range(min(have), max(have) + 1)]


def mean_in(series, lo: float, hi: float, w: float = WINDOW) -> float:
    vals = [r for t, r in series if t >= lo and t + w <= hi]
    return statistics.fmean(vals) if vals else float("nan")


def migration_cost(series, ta: float, nxt: float) -> dict:
    """The plan's migration figures for a plan applied at ``ta`` (the next one at ``nxt``) in
    ``series`` ((t, rate) per window): ``pre`` the mean of the 3 windows before, ``post`` the
    mean 30-60 s after, ``recovery_s`` until a window reaches 90 % of ``post``, ``dip_tuples``
    the tuples below min(pre, post) until then."""
    pre = statistics.fmean([r for t, r in series if ta - 3 * WINDOW <= t < ta] or [float("nan")])
    post = mean_in(series, ta + 30, min(ta + 60, nxt))
    after = [(t, r) for t, r in series if t >= ta]
    rec_t = next((t for t, r in after if r >= 0.9 * post), None)
    dip = sum(max(0.0, min(pre, post) - r) * WINDOW for t, r in after if rec_t is None or t < rec_t)
    return {"pre": pre, "post": post, "recovery_s": None if rec_t is None else rec_t + WINDOW - ta, "dip_tuples": dip}


def analyse(runs: list[dict]) -> dict:
    static, phase1_even = defaultdict(list), []
    for rec in runs:
        if rec["kind"] == "static":
            static[rec["name"]].append(rec["throughput"])
        elif rec["kind"] == "static-phase1":
            phase1_even.append(rec["throughput"])
    best = max(static, key=lambda n: statistics.fmean(static[n])) if static else None
    best_mean = statistics.fmean(static[best]) if best else float("nan")
    out = {"static": {n: {"runs": v, "mean": statistics.fmean(v)} for n, v in static.items()}, "best_static": best,
           "phase1_even": {"runs": phase1_even, "mean": statistics.fmean(phase1_even)} if phase1_even else None,
           "policies": defaultdict(list),
           "stable": [{"applies_s": [round(d["t"] - r["submitted_at"]) for d in r["autopilot"] if d["decision"] == "apply"],
                       "periods": len(r["autopilot"]), "throughput": r["throughput"]}
                      for r in runs if r["kind"] == "stable"]}
    for rec in runs:
        if rec["kind"] != "policy":
            continue
        series, t0 = rates(rec), rec["submitted_at"]
        shift, phase1_from = rec.get("shift_at", SHIFT_AT), rec.get("phase1_from", PHASE1_FROM)   # absent: the first two designs
        end = series[-1][0] + WINDOW
        applies = [d for d in rec["autopilot"] if d["decision"] == "apply"]
        first = (rec["autopilot"].index(applies[0]) + 1) if applies else None
        first_t = applies[0]["t"] - t0 if applies else None
        even_rate = mean_in(series, WARMUP + WINDOW, first_t) if first_t is not None else mean_in(series, phase1_from, shift)
        migrations = []
        for k, d in enumerate(applies):
            ta = d["t"] - t0
            nxt = applies[k + 1]["t"] - t0 if k + 1 < len(applies) else end
            migrations.append({"t": ta, "moves": d["moves"], **migration_cost(series, ta, nxt)})
        executed = rec["executed"]
        lost = sum(w.get("spout", 0) - w.get("count", 0) for w in executed.values())
        out["policies"][rec["name"]].append({
            "rep": rec["rep"], "phase1": mean_in(series, phase1_from, shift), "phase2": mean_in(series, shift + PHASE2_AFTER, end),
            "even_rate": even_rate, "first_apply_period": first, "reschedules": len(applies),
            "migrations": migrations, "lost_tuples": lost, "best_static_mean": best_mean})
    return out


def _seconds(value) -> str:
    return "-" if value is None else f"{value:.0f}"


def medians(a: dict) -> dict:
    """The plan's rule 4: median and range over every applied plan of recovery and dip, and per
    policy the mean reschedules and phase rates."""
    out = {}
    for name, rows in a["policies"].items():
        migrations = [m for r in rows for m in r["migrations"]]
        recovered = [m["recovery_s"] for m in migrations if m["recovery_s"] is not None]
        dips = [m["dip_tuples"] for m in migrations]
        out[name] = {"reschedules": statistics.fmean(r["reschedules"] for r in rows),
                     "phase2": statistics.fmean(r["phase2"] for r in rows),
                     "phase2_spread": max(r["phase2"] for r in rows) - min(r["phase2"] for r in rows),
                     "recovery_median": statistics.median(recovered) if recovered else None,
                     "recovery_range": (min(recovered), max(recovered)) if recovered else None,
                     "not_recovered": len(migrations) - len(recovered),
                     "dip_median": statistics.median(dips) if dips else None,
                     "dip_range": (min(dips), max(dips)) if dips else None,
                     "lost_mean": statistics.fmean(r["lost_tuples"] for r in rows)}
    return out


def _runs(s: dict) -> str:
    return f"mean {s['mean']:10,.0f}  runs {', '.join(f'{x:,.0f}' for x in s['runs'])}"


def print_table(a: dict) -> None:
    if a["phase1_even"]:
        print(f"even on the first phase alone (throughput, all tasks, tuples/s): {_runs(a['phase1_even'])}\n")
    print("static placements of the second phase (throughput, all tasks, tuples/s):")
    for name, s in a["static"].items():
        print(f"  {name:15s} {_runs(s)}" + ("   <- best" if name == a["best_static"] else ""))
    print(f"\n{'policy':13s} {'rep':>3s} {'even':>9s} {'phase 1':>9s} {'first':>5s} {'phase 2':>9s} {'/best':>6s} "
          f"{'plans':>5s} {'lost':>9s}  migrations (t s: moves, recovery s, dip tuples)")
    for name, rows in a["policies"].items():
        for r in sorted(rows, key=lambda r: r["rep"]):
            mig = "; ".join(f"{m['t']:.0f}: {m['moves']}, {_seconds(m['recovery_s'])}, {m['dip_tuples']:,.0f}"
                            for m in r["migrations"])
            print(f"{name:13s} {r['rep']:3d} {r['even_rate']:9,.0f} {r['phase1']:9,.0f} "
                  f"{r['first_apply_period'] if r['first_apply_period'] else '-':>5} {r['phase2']:9,.0f} "
                  f"{r['phase2'] / r['best_static_mean']:6.1%} {r['reschedules']:5d} {r['lost_tuples']:9,.0f}  {mig}")
    print(f"\n{'policy':13s} {'plans':>6s} {'phase 2':>9s} {'spread':>7s} {'recovery s (median, range, never)':>34s} "
          f"{'dip tuples (median, range)':>30s} {'lost':>9s}")
    per_policy = medians(a)
    for name, m in per_policy.items():
        rec = (f"{_seconds(m['recovery_median'])}, {_seconds(m['recovery_range'][0])}-{_seconds(m['recovery_range'][1])}"
               if m["recovery_range"] else "-") + f", {m['not_recovered']}"
        dip = f"{m['dip_median']:,.0f}, {m['dip_range'][0]:,.0f}-{m['dip_range'][1]:,.0f}" if m["dip_range"] else "-"
        print(f"{name:13s} {m['reschedules']:6.1f} {m['phase2']:9,.0f} {m['phase2_spread']:7,.0f} {rec:>34s} {dip:>30s} "
              f"{m['lost_mean']:9,.0f}")
    if a["phase1_even"]:
        print_rules(a, per_policy)
    for s in a["stable"]:
        print(f"\nstable run (no shift, hysteresis, {s['periods']} periods): plans applied at "
              f"{', '.join(f'{t} s' for t in s['applies_s']) or 'none'}; throughput {s['throughput']:,.0f} tuples/s")


def print_rules(a: dict, per_policy: dict) -> None:
    """The second plan's rules 1-3, judged: per run, the first apply by period 5 with a first-phase
    rate above even's on its own, and a second-phase rate at 90 % of the best static or more;
    per policy, ours the fewest reschedules at a second-phase rate no lower than each other
    policy's less its spread (``per_policy``: :func:`medians`)."""
    even1, best = a["phase1_even"]["mean"], a["static"][a["best_static"]]["mean"]
    print(f"\nrules (even alone on phase 1: {even1:,.0f}; best static of phase 2: {best:,.0f}):")
    for name, rows in a["policies"].items():
        for r in sorted(rows, key=lambda r: r["rep"]):
            one = r["first_apply_period"] is not None and r["first_apply_period"] <= 5 and r["phase1"] > even1
            two = r["phase2"] >= 0.9 * best
            print(f"  {name:13s} r{r['rep']}: 1 {'met' if one else 'missed'} (first {r['first_apply_period']}, "
                  f"phase 1 {r['phase1'] / even1 - 1:+.1%} on even), 2 {'met' if two else 'missed'} "
                  f"({r['phase2'] / best:.1%} of best)")
    if "hysteresis" in per_policy:
        ours = per_policy["hysteresis"]
        for name, o in per_policy.items():
            if name != "hysteresis":
                fewer, rate = ours["reschedules"] < o["reschedules"], ours["phase2"] >= o["phase2"] - o["phase2_spread"]
                print(f"  3 vs {name}: {'met' if fewer and rate else 'missed'} (plans {ours['reschedules']:.1f} vs "
                      f"{o['reschedules']:.1f}; phase 2 {ours['phase2']:,.0f} vs {o['phase2']:,.0f} - {o['phase2_spread']:,.0f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--summary-only", action="store_true", help="print the table of DIR/runs.jsonl, run nothing")
    ap.add_argument("--stable", action="store_true", help="run the 10-minute stable run (after the campaign's runs)")
    ap.add_argument("--cluster", default=Design.cluster, help="testbed cluster (default: %(default)s)")
    ap.add_argument("--max-moves", type=int, default=Design.max_moves, help="tasks a reschedule may move (default: %(default)s)")
    ap.add_argument("--phase1-even", action="store_true", help="also run even on the first phase alone, twice")
    ap.add_argument("--policies", default=",".join(POLICIES), help="the policies to run, comma-separated (default: all)")
    ap.add_argument("--shift-at", type=float, default=Design.shift_at, help="seconds after submission the keys turn to Zipf (default: %(default)s)")
    ap.add_argument("--autopilot-after", type=float, default=Design.autopilot_after,
                    help="seconds after the job's workers run when the autopilot joins it (default: %(default)s)")
    ap.add_argument("--phase1-from", type=float, default=Design.phase1_from,
                    help="start of the first phase's steady window, seconds after submission (default: %(default)s)")
    ap.add_argument("--statics-from", type=Path, metavar="DIR",
                    help="take the static runs from DIR/runs.jsonl (an earlier campaign of the same design) instead of running them")
    args = ap.parse_args()
    policies = tuple(args.policies.split(","))
    if not set(policies) <= set(POLICIES):
        ap.error(f"--policies: expected some of {', '.join(POLICIES)}, got {args.policies}")
    if not 0 <= args.phase1_from < args.shift_at or args.autopilot_after < 0:
        ap.error("expected 0 <= --phase1-from < --shift-at and --autopilot-after >= 0")
    design = Design(args.cluster, args.max_moves, args.phase1_even, policies, args.shift_at, args.autopilot_after, args.phase1_from)
    if args.statics_from and not args.summary_only:
        copy_statics(args.statics_from / "runs.jsonl", args.out / "runs.jsonl")
    if not args.summary_only:
        run_all(args.out, design)
        if args.stable:
            run_stable(args.out, design)
    runs = load(args.out / "runs.jsonl")
    if not runs:
        print(f"{args.out / 'runs.jsonl'}: no runs", file=sys.stderr)
        return 2
    print_table(analyse(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Measurement campaign on the Storm testbed: every scheduler's placement of the [I]/[T3] Sec. 6
experiments, run on a real multi-process Storm cluster (needs root: network namespaces, tc, cgroups).

    .venv/bin/python benchmarks/storm_testbed.py --quick -o out/campaign          # 3 experiments
    .venv/bin/python benchmarks/storm_testbed.py --reps 3 -o out/campaign-full    # all 10

Writes DIR/runs.jsonl (one record per run, appended as runs finish: see
streamplace.campaign.testbed) and DIR/summary.json, and prints per experiment the measured
bolt throughput per scheduler (tuples executed per second by non-source tasks; mean, sd,
coefficient of variation, runs) beside the cost model's prediction, the two rankings with Kendall's
tau and the pairs measured apart beyond noise that the model orders right, measured against
predicted inter-node bytes, and the node most often out of CPU quota beside the model's bottleneck.
``--summary-only`` prints the tables of an existing DIR/runs.jsonl without running anything.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from streamplace.campaign import testbed as campaign
from streamplace.report.display import format_tau
from streamplace.reproduce.measured import load_runs
from streamplace.fit import runs as fit_runs
from streamplace.fit.cases import cases_from_runs
from streamplace.fit.scores import NO_REPEAT_TAU, scores
from streamplace.model.operating_point import OPERATING_POINTS
from streamplace.model.performance import CostModel, load_cost_model
from streamplace.model.specs import SpecError, atomic_write_text
from streamplace.storm import StormError
from streamplace.storm.run import RunSettings, parse_storm_conf
from streamplace.storm.testbed import TestbedSettings
from streamplace.workloads import runtime


def summary(runs: list[dict], model: CostModel) -> dict:
    stats = campaign.cell_stats(runs)
    ranks = campaign.rankings(runs)
    pred = {(r["experiment"], r["scheduler"]): r for r in runs}
    wire = campaign.cell_stats(runs, "wire_inter_node_bytes_per_s")
    predicted_wire = campaign.cell_stats(runs, "predicted_inter_node_bytes_per_s")
    cases = cases_from_runs(runs, fit_runs.run_problems(), TestbedSettings().budget())
    out = {}
    for exp, rank in ranks.items():
        rows = []
        for s in rank["measured"]:
            st = stats[(exp, s)]
            cell = [r for r in runs if (r["experiment"], r["scheduler"]) == (exp, s)]
            rows.append({"scheduler": s, **st, "predicted": pred[(exp, s)]["predicted_bolt_throughput"],
                         "wire_bytes_per_s": wire[(exp, s)]["mean"], "predicted_bytes_per_s": predicted_wire[(exp, s)]["mean"],
                         "busiest_node": campaign.busiest_node(cell), "model_bottleneck": pred[(exp, s)]["predicted_bottleneck"]})
        sc = scores(model, [c for c in cases if c.experiment == exp])
        out[exp] = {"rows": rows, **rank, "pairs": sc["pairs"], "pairs_agree": sc["pairs_agree"]}
    cvs = [st["cv"] for st in stats.values() if math.isfinite(st["cv"])]
    return {"experiments": out, "runs": len(runs), "median_cv": float(sorted(cvs)[len(cvs) // 2]) if cvs else None,
            "stalled": [fit_runs.run_label(r) for r in runs if fit_runs.stalled(r)]}


def print_summary(s: dict) -> None:
    for exp, e in s["experiments"].items():
        print(f"\n== {exp}   Kendall tau (measured vs model ranking) = {format_tau(e['kendall_tau'])} "
              f"(one repetition's ranking vs another's: {format_tau(e['repeat_tau'], NO_REPEAT_TAU)}); "
              f"pairs measured apart beyond noise that the model orders right: {e['pairs_agree']}/{e['pairs']}")
        print(f"{'scheduler':22} {'bolt t/s':>13} {'sd':>9} {'cv':>6} {'n':>3} {'model t/s':>12} "
              f"{'wire kB/s':>10} {'model kB/s':>10}  {'throttled most':>14}  model bottleneck")
        for r in e["rows"]:
            cv = f"{r['cv']:.1%}" if math.isfinite(r["cv"]) else "-"
            sd = f"{r['sd']:,.0f}" if math.isfinite(r["sd"]) else "-"
            print(f"{r['scheduler']:22} {r['mean']:13,.0f} {sd:>9} {cv:>6} {r['n']:3d} {r['predicted']:12,.0f} "
                  f"{r['wire_bytes_per_s'] / 1e3:10,.1f} {r['predicted_bytes_per_s'] / 1e3:10,.1f}  {r['busiest_node']:>14}  "
                  f"{r['model_bottleneck']}")
        print("measured ranking:", " > ".join(e["measured"]))
        print("model ranking:   ", " > ".join(e["model"]))
    print(f"\n{s['runs']} runs; median coefficient of variation of a cell: "
          f"{s['median_cv']:.1%}" if s["median_cv"] is not None else f"\n{s['runs']} runs")
    if s["stalled"]:
        print(f"{len(s['stalled'])} runs executed no bolt tuple in the measured window (workers still starting; in the "
              f"tables above, left out by fit_cost_model.py): {', '.join(s['stalled'])}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", type=Path, default=Path("out/campaign"))
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(campaign.QUICK_WORKLOADS)}")
    ap.add_argument("--experiments", nargs="*", help="<workload> or <workload>@<cluster> (default: the ten of the papers); the calibration "
                         "runs by full name: " + ", ".join(f"{s.topology.name}@{s.cluster}" for s in runtime.calibration_scenarios()))
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--first-rep", type=int, default=0,
                    help="number the repetitions from this one, in the orders a campaign with that many more would run "
                         "them: more runs of an earlier campaign's placements, to pool with its runs.jsonl (default 0)")
    ap.add_argument("--warmup", type=float, default=20.0,
                    help="seconds from every worker running to the measured window (default 20: placements with many "
                         "workers were still ramping up 10 s in)")
    ap.add_argument("--duration", type=float, default=20.0, help="seconds measured (whole --window periods)")
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--testbed-per-rep", action="store_true",
                    help="a fresh testbed for every repetition (default: one testbed per cluster runs all of them)")
    ap.add_argument("--cpu-period-ms", type=float, default=TestbedSettings.cpu_period_ms,
                    help=f"CFS period of the nodes' CPU quotas (default {TestbedSettings.cpu_period_ms:g})")
    ap.add_argument("--storm-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Storm topology setting for every job, over the campaign's own (repeatable; VALUE read as "
                         "YAML); recorded in each run's storm_conf, and runs of one cell with different settings are "
                         "never pooled")
    ap.add_argument("--operating-point", default="10ms-sleeps", choices=list(OPERATING_POINTS),
                    help="the named operating point every job runs at (Storm settings, ackers and max spout pending, "
                         "CPU budget, link bandwidth; default 10ms-sleeps, the bundled model's)")
    ap.add_argument("--schedulers", nargs="*", default=None,
                    help="only these placements (labels of campaign.SCHEDULERS and campaign.NIMBUS_PLACED; default all)")
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--cost-model", type=Path, default=None,
                    help="predictions from this cost model file (default: the bundled model), recomputed for every run")
    args = ap.parse_args()
    runs_file = args.output / "runs.jsonl"
    if not args.summary_only:
        if runs_file.exists():
            print(f"{runs_file} exists: choose another -o, or --summary-only", file=sys.stderr)
            return 2
        if args.reps < 1 or args.first_rep < 0:
            print("error: --reps must be >= 1 and --first-rep >= 0", file=sys.stderr)
            return 2
        names = list(campaign.QUICK_WORKLOADS) if args.quick else args.experiments
        began = time.monotonic()
        try:
            settings = RunSettings(duration_s=args.duration, warmup_s=args.warmup, window_s=args.window, mode="cluster",
                                   testbed=TestbedSettings(cpu_period_ms=args.cpu_period_ms),
                                   storm_conf=parse_storm_conf(args.storm_conf))
            chosen = set(args.schedulers) if args.schedulers is not None else None
            known = {label for label, _, _ in campaign.SCHEDULERS} | set(campaign.NIMBUS_PLACED)
            if chosen is not None and chosen - known:
                raise ValueError(f"--schedulers: unknown {sorted(chosen - known)[0]!r} (known: {', '.join(sorted(known))})")
            campaign.run_campaign(args.output, campaign.experiments(names), reps=args.reps, settings=settings,
                                  point=OPERATING_POINTS[args.operating_point],
                                  schedulers=[s for s in campaign.SCHEDULERS if chosen is None or s[0] in chosen],
                                  nimbus_placed=[s for s in campaign.NIMBUS_PLACED if chosen is None or s in chosen],
                                  model=CostModel(), first_rep=args.first_rep, testbed_per_rep=args.testbed_per_rep)
        except (StormError, ValueError) as exc:   # testbed preflight or start, unknown experiment
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"campaign wall time: {time.monotonic() - began:.0f} s")
    if not runs_file.is_file():
        print(f"{runs_file}: no campaign runs here (run without --summary-only first)", file=sys.stderr)
        return 2
    try:
        runs = load_runs(runs_file)
        model = load_cost_model(args.cost_model) if args.cost_model else CostModel()
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    runs = fit_runs.repredict(runs, model, TestbedSettings().budget())
    s = summary(runs, model)
    atomic_write_text(args.output / "summary.json", json.dumps(s, indent=1) + "\n")
    print_summary(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())

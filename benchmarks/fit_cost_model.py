"""Fit the cost model to a testbed campaign and validate it on runs it never saw.

    .venv/bin/python benchmarks/fit_cost_model.py out/campaign -o fitted.json

Training set: the micro-benchmark runs (experiments ``*-io@*``, ``*-cpu@*``) and the calibration
runs (``streamplace.workloads.runtime.calibration_scenarios``); validation set: the papers'
application runs (smart-home, frequent-routes), which the fit never sees
(``streamplace.fit.runs.held_out``). Prints, for the
analytic model (the constants before this fit) and the fitted one, on both sets: the median
absolute error of predicted throughput and Kendall's tau between predicted and measured
scheduler rankings per experiment (targets on held-out runs: tau >= 0.8, error <= 15 %).
Runs that measured each node's CPU (``node_cpu``) also get a second fit, of the same constants to
the cores every node used (:func:`streamplace.fit.solve.fit_cpu`), then of the cap on the
fixed costs to the training throughput (:func:`streamplace.fit.solve.fit_cap`; ``--no-cap``
leaves it at 1), scored the same way; ``--method`` says which one to write. ``--cv`` also
scores that one leave-one-experiment-out on the training runs
(:func:`streamplace.fit.scores.cross_validate`): the figure to choose a way of fitting by,
since choosing by the validation runs would make them training data. Runs whose bolts executed
no tuple in the measured window are left out, and named. Writes the fitted model, its constants
to 3 significant digits (the scores written and printed last are of those), as a
``--cost-model`` file with its provenance.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from datetime import date
from pathlib import Path

from streamplace.report.display import format_tau, format_taus
from streamplace.reproduce.measured import load_campaigns
from streamplace.fit.build import document, fit_by_cpu, fit_model, split
from streamplace.fit.cases import predictions
from streamplace.fit.runs import run_label, run_problems
from streamplace.fit.scores import NO_REPEAT_TAU, bias, cpu_gap, cross_validate, repeat_tau, scores
from streamplace.fit.solve import FITTED, fit
from streamplace.model.performance import CostModel, load_cost_model
from streamplace.model.specs import SpecError, atomic_write_text

ANALYTIC = load_cost_model(Path(__file__).resolve().parents[1] / "docs/cost-models/analytic.json")  # before the testbed


def show(label: str, s: dict) -> None:
    print(f"  {label:10} median |error| {s['median_abs_error']:7.1%}   mean tau {format_tau(s['mean_kendall_tau'])}   "
          f"({format_taus(s['kendall_tau'])})   "
          f"ordered as measured: {s['pairs_agree']}/{s['pairs']} pairs apart beyond noise")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("campaign", type=Path, nargs="+",
                    help="campaign directory (runs.jsonl) or runs.jsonl; several are pooled")
    ap.add_argument("-o", "--output", type=Path, required=True, help="fitted cost model file to write")
    ap.add_argument("--params", nargs="*", default=list(FITTED), help="constants both fits choose (the others keep the analytic values; "
                         "default: all of them)")
    ap.add_argument("--method", choices=("throughput", "cpu"), default="throughput",
                    help="which fit to write: 'throughput' (constants that make predicted throughput match, the "
                         "default) or 'cpu' (constants that make each node's CPU demand match the cores its cgroup "
                         "used; needs runs with node_cpu). Both are printed when the runs allow.")
    ap.add_argument("--compare", type=Path, action="append", default=[], metavar="FILE",
                    help="also score this cost model file on both sets (repeatable), e.g. the bundled model before a refit")
    ap.add_argument("--no-cap", dest="cap", action="store_false",
                    help="leave the node-CPU fit's fixed costs uncapped (fixed_cpu_cap 1) instead of fitting the cap "
                         "to the training throughput")
    ap.add_argument("--cv", action="store_true",
                    help="also score the fit --method writes leave-one-experiment-out on the training runs (refits "
                         "once per training experiment: minutes each for the throughput fit, seconds for the "
                         "node-CPU fit)")
    args = ap.parse_args()
    # fixed_cpu_cap is fitted by fit_cap after the node-CPU fit (--no-cap), not by --params
    constants = {f.name for f in dataclasses.fields(CostModel)} - {"machine_speed", "latency_load", "fixed_cpu_cap"}
    if bad := [p for p in args.params if p not in constants]:
        print(f"error: --params: {bad[0]!r} is not a fitted constant of the cost model (one of {', '.join(sorted(constants))})",
              file=sys.stderr)
        return 2
    by_cpu_too = set(args.params) <= set(FITTED)   # the node-CPU fit's terms cover FITTED only
    if args.method == "cpu" and not by_cpu_too:
        print(f"error: --params: the node-CPU fit (--method cpu) chooses among {', '.join(FITTED)}", file=sys.stderr)
        return 2
    try:
        runs = load_campaigns(args.campaign)
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    data = split(runs, run_problems())
    if data.stalled:
        print(f"left out {len(data.stalled)} runs whose bolts executed no tuple in the measured window (workers still starting): "
              + ", ".join(map(run_label, data.stalled)))
    train, valid = data.train, data.valid
    print(f"training: {len(train)} placements ({len(data.train_runs)} runs), experiments "
          f"{sorted({c.experiment for c in train})}")
    print(f"validation: {len(valid)} placements ({len(data.valid_runs)} runs), experiments "
          f"{sorted({c.experiment for c in valid})}")
    try:
        others = {str(f): load_cost_model(f) for f in args.compare}
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.method == "cpu" and not any(c.node_cores for c in train):
        print(f"error: {', '.join(map(str, args.campaign))}: --method cpu needs training runs with node_cpu (recorded since 2026-11-25)",
              file=sys.stderr)
        return 2

    written = [*args.params, "fixed_cpu_cap"]   # the constants a fit may change

    def fit_by_cpu_here(cases):
        return fit_by_cpu(cases, ANALYTIC, args.params, cap=args.cap)

    model, info = fit(train, ANALYTIC, args.params)
    print(f"fitted to throughput: {', '.join(f'{p} = {getattr(model, p):.4g}' for p in args.params)} "
          f"(loss {info['loss']:.4f}, {info['iterations']} iterations)")
    fits = {"fitted": (model, info)}
    if by_cpu_too and any(c.node_cores for c in train):
        by_cpu, cpu_info = fit_by_cpu_here(train)
        print(f"fitted to node CPU: {', '.join(f'{p} = {getattr(by_cpu, p):.4g}' for p in written)} "
              f"({cpu_info['points']} node measurements, rms {cpu_info['rms_cores']:.4f} cores, R^2 {cpu_info['r2']:.3f})")
        fits["fitted cpu"] = (by_cpu, cpu_info)
    if args.cv:   # the fit --method writes: the throughput fit's refits take minutes each, the node-CPU fit's seconds
        print("leave one training experiment out (each predicted by the fit to the others)")
        if args.method == "throughput":
            show("fitted", cross_validate(train, lambda cs: fit(cs, ANALYTIC, args.params)[0]))
        else:
            show("fitted cpu", cross_validate(train, lambda cs: fit_by_cpu_here(cs)[0]))
    for name, cases, set_runs in (("training", train, data.train_runs), ("validation", valid, data.valid_runs)):
        if not cases:
            continue
        print(name)
        noise = {e: repeat_tau([r for r in set_runs if r["experiment"] == e]) for e in sorted({c.experiment for c in cases})}
        print(f"  {'run-to-run':10} tau of one repetition's ranking against another's, the ceiling noise sets: "
              + format_taus(noise, NO_REPEAT_TAU))
        show("analytic", scores(ANALYTIC, cases))
        for label, other in others.items():
            show(label, scores(other, cases))
        for label, (fitted, _) in fits.items():
            show(label, scores(fitted, cases))
    model, facts = fit_model(data, ANALYTIC, method=args.method, params=args.params, cap=args.cap,
                             fitted=fits["fitted cpu" if args.method == "cpu" else "fitted"])
    print(f"writing, to 3 significant digits: {', '.join(f'{p} = {getattr(model, p):g}' for p in written)}")
    for name in ("training", "validation"):
        if facts[name] is not None:
            show(name, facts[name])
    everything = train + valid
    print("  median signed error per scheduler over every experiment (+: over-predicted): "
          + ", ".join(f"{s} {e:+.0%}" for s, e in bias(everything, predictions(model, everything)).items()))
    for name, cases in (("training", train), ("validation", valid)):
        if gaps := cpu_gap(cases, model):
            print(f"  {name}: share of the cores of nodes at their quota that the model does not account for "
                  f"(median per experiment): " + ", ".join(f"{e} {g:+.0%}" for e, g in gaps.items()))
    doc = document(model, facts, fitted_on=[str(c) for c in args.campaign], date=date.today().isoformat())
    atomic_write_text(args.output, json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

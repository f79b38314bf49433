"""Fit the cost model to a testbed campaign and validate it on runs it never saw.

    .venv/bin/python benchmarks/fit_cost_model.py out/campaign -o fitted.json

Training set: the micro-benchmark runs (experiments ``*-io@*``, ``*-cpu@*``); validation set:
the application runs (smart-home, frequent-routes), which the fit never sees. Prints, for the
analytic model (the constants before this fit) and the fitted one, on both sets: the median
absolute error of predicted throughput and Kendall's tau between predicted and measured
scheduler rankings per experiment (targets on held-out runs: tau >= 0.8, error <= 15 %).
Writes the fitted model as a ``--cost-model`` file with its provenance.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

from streamplace.bench import campaign
from streamplace.evaluate.fit import FITTED, cases_from_runs, fit, scores
from streamplace.model.performance import load_cost_model

ANALYTIC = load_cost_model(Path(__file__).resolve().parents[1] / "docs/cost-models/analytic.json")  # before the testbed


def show(label: str, s: dict) -> None:
    taus = ", ".join(f"{e} {t:+.2f}" for e, t in s["kendall_tau"].items())
    print(f"  {label:10} median |error| {s['median_abs_error']:7.1%}   mean tau {s['mean_kendall_tau']:+.2f}   ({taus})   "
          f"ordered as measured: {s['pairs_agree']}/{s['pairs']} pairs apart beyond noise")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("campaign", type=Path, help="campaign directory (runs.jsonl) or runs.jsonl")
    ap.add_argument("-o", "--output", type=Path, required=True, help="fitted cost model file to write")
    ap.add_argument("--params", nargs="*", default=list(FITTED))
    ap.add_argument("--compare", type=Path, action="append", default=[], metavar="FILE",
                    help="also score this cost model file on both sets (repeatable), e.g. the bundled model before a refit")
    args = ap.parse_args()
    from streamplace.bench.reproduce.measured import load_runs
    from streamplace.model.specs import SpecError
    try:
        runs = load_runs(args.campaign)
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    train_runs = [r for r in runs if r["kind"].startswith("micro-")]
    valid_runs = [r for r in runs if not r["kind"].startswith("micro-")]
    probs = campaign.problems()
    budget = 1.5
    train, valid = cases_from_runs(train_runs, probs, budget), cases_from_runs(valid_runs, probs, budget)
    print(f"training: {len(train)} placements ({len(train_runs)} runs), experiments "
          f"{sorted({c.experiment for c in train})}")
    print(f"validation: {len(valid)} placements ({len(valid_runs)} runs), experiments "
          f"{sorted({c.experiment for c in valid})}")
    try:
        others = {str(f): load_cost_model(f) for f in args.compare}
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    model, info = fit(train, ANALYTIC, args.params)
    print(f"fitted {', '.join(f'{p} = {getattr(model, p):.4g}' for p in args.params)} "
          f"(loss {info['loss']:.4f}, {info['iterations']} iterations)")
    for name, cases in (("training", train), ("validation", valid)):
        if not cases:
            continue
        print(name)
        show("analytic", scores(ANALYTIC, cases))
        for label, other in others.items():
            show(label, scores(other, cases))
        show("fitted", scores(model, cases))
    doc = {"cost_model": model.to_dict(),
           "provenance": {"fitted_on": str(args.campaign), "date": date.today().isoformat(), "params": list(args.params),
                          "training_experiments": sorted({c.experiment for c in train}),
                          "validation_experiments": sorted({c.experiment for c in valid}),
                          "training": scores(model, train), "validation": scores(model, valid) if valid else None,
                          "analytic_validation": scores(ANALYTIC, valid) if valid else None, **info}}
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

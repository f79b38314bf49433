"""How far one campaign lands from another run of the same placements: the ceiling of any model.

    .venv/bin/python benchmarks/testbed_noise.py CAMPAIGN.jsonl CAMPAIGN.jsonl ...

Each testbed's runs form a group: a campaign file, or in a file recorded with
``--testbed-per-rep`` each of its testbeds (the ``testbed`` field). For every ordered pair of
groups that measured some placements in common (the same experiment and scheduler), prints the
scores a model would get on the second group if it predicted exactly what the first measured
(:func:`streamplace.fit.scores.across`: median absolute throughput error, Kendall's tau per
experiment, placements measured apart beyond noise that come out in the same order), then the
median over the pairs. Within one group, the repetitions' own spread is what
``storm_testbed.py --summary-only`` prints as the coefficient of variation; this is what a
separate testbed adds to it. Beside each pair, the cost model's scores on the same placements
(``--cost-model FILE``, default the bundled one). Groups on different testbed versions are
compared too (the version is printed): a check of how far a change of the testbed moved the
figures.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from pathlib import Path

from streamplace.campaign import testbed as campaign
from streamplace.report.display import format_tau, format_taus
from streamplace.reproduce.measured import load_campaigns, load_runs
from streamplace.fit import runs as fit_runs
from streamplace.fit.cases import cases_from_runs
from streamplace.fit.scores import across, scores
from streamplace.model.performance import CostModel, load_cost_model
from streamplace.model.specs import SpecError


def groups(paths: list[Path]) -> dict[str, list[dict]]:
    """Group name (``FILE`` or ``FILE:TESTBED``) -> its runs, stalled runs left out. The files are
    checked together first (:func:`load_campaigns`: no run given twice, one placement per
    experiment and scheduler; testbed versions may differ)."""
    labels: dict[str, Path] = {}
    for path in paths:
        label = path.name if path.is_dir() else path.stem if path.stem != "runs" else path.parent.name
        if label in labels:
            raise SpecError(path, "", f"named like {labels[label]}: give each campaign once, from directories of their own")
        labels[label] = path
    load_campaigns(paths, mixed_operating_points=True)
    out: dict[str, list[dict]] = {}
    for label, path in labels.items():
        for r in load_runs(path):
            if not fit_runs.stalled(r):
                name = label + (f":{r['testbed']}" if "/" in str(r.get("testbed", "")) else "")
                out.setdefault(name, []).append(r)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("campaign", type=Path, nargs="+", help="runs.jsonl files of benchmarks/storm_testbed.py")
    ap.add_argument("--cost-model", type=Path, default=None, help="the model scored beside (default: the bundled one)")
    args = ap.parse_args()
    try:
        by_group = groups(args.campaign)
        model = load_cost_model(args.cost_model) if args.cost_model else CostModel()
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problem_of = fit_runs.run_problems()
    cases = {g: cases_from_runs(rs, problem_of, 1.5) for g, rs in by_group.items()}
    version = {g: "/".join(str(v) for v in sorted({r.get("testbed_version", 1) for r in rs})) for g, rs in by_group.items()}
    totals = {"campaign": ([], [], [0, 0]), "model": ([], [], [0, 0])}
    for a, b in itertools.permutations(cases, 2):
        s = across(cases[a], cases[b])
        if s is None:
            continue
        shared = {(c.experiment, c.scheduler) for c in cases[a]}
        m = scores(model, [c for c in cases[b] if (c.experiment, c.scheduler) in shared])
        print(f"{b} (version {version[b]}) predicted by {a} (version {version[a]}), {s['cases']} placements:")
        for who, sc in (("campaign", s), ("model", m)):
            errors, taus, pairs = totals[who]
            errors.append(sc["median_abs_error"])
            taus += [t for t in sc["kendall_tau"].values() if t == t]
            pairs[0] += sc["pairs_agree"]
            pairs[1] += sc["pairs"]
            per_exp = format_taus(sc["kendall_tau"])
            print(f"  {'by ' + a if who == 'campaign' else 'by the model':>40}: median error {sc['median_abs_error']:6.1%}, "
                  f"pairs apart in the same order {sc['pairs_agree']}/{sc['pairs']}, tau {per_exp}")
    if not totals["campaign"][0]:
        print("no two groups measured a placement in common", file=sys.stderr)
        return 2
    for who, (errors, taus, pairs) in totals.items():
        print(f"{'another campaign' if who == 'campaign' else 'the model'} as the predictor, over {len(errors)} ordered "
              f"pairs of groups: median error {statistics.median(errors):.1%} (range {min(errors):.1%}-{max(errors):.1%}), "
              f"mean tau {format_tau(statistics.mean(taus))} over {len(taus)} experiment comparisons, pairs apart in the same "
              f"order {pairs[0]}/{pairs[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

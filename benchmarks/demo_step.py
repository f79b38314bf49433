"""The demo's Storm step, repeated: the calibrated prediction of the placement it recommends
against that placement's measured throughput (the target: within 15 %).

    .venv/bin/python benchmarks/demo_step.py out/demo --reps 4 --variant 10+10 --variant 20+20 -o out/demo-step.jsonl

Without ``--variant``, the demo's own (``storm_step.WARMUP_S`` + ``MEASURE_S``).

DEMO_DIR is the output of a ``streamplace demo`` run: its ``results.json`` and the files its
records name are read, never written. Each repetition runs the whole step as the demo does
(``streamplace.demo.storm_step.run_storm_step``: a fresh testbed, Storm's even placement, the model
calibrated on that run, then the placement the calibrated model recommends) in a temporary copy of
DEMO_DIR, for every variant in turn (``WARMUP+MEASURED`` seconds), variants interleaved. Appends
one line per step to ``-o`` (the step's ``run.json`` with ``variant`` and ``rep``) as it finishes,
and prints each step's figures, then per variant the signed errors and the median absolute error.
Needs the testbed (root); where it cannot run, the step runs on embedded Storm, which says nothing
of performance, so the script refuses.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from streamplace.demo.run import problem_from_files
from streamplace.demo.storm_step import MEASURE_S, WARMUP_S, run_storm_step, testbed_or_reason
from streamplace.evaluate.records import ResultRecord


def variant(text: str) -> tuple[float, float]:
    """``"10+10"`` -> (10.0, 10.0): seconds of warm-up and measured."""
    try:
        warmup, measured = (float(x) for x in text.split("+"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WARMUP+MEASURED seconds, e.g. 10+10, got {text!r}") from None
    if warmup < 0 or measured <= 0:
        raise argparse.ArgumentTypeError(f"warm-up must be >= 0 and measured > 0 s, got {text!r}")
    return warmup, measured


def recommended_error(run: dict) -> float:
    """(predicted - measured) / measured of the recommended job (the first; the second is even's)."""
    chosen = run["jobs"][0]
    return chosen["calibrated_throughput"] / chosen["throughput"] - 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("demo_dir", type=Path, help="a `streamplace demo` output directory (read only)")
    ap.add_argument("--reps", type=int, default=4, help="repetitions of every variant (default 4)")
    ap.add_argument("--variant", type=variant, action="append", metavar="WARMUP+MEASURED",
                    help=f"seconds of warm-up and measured per job (repeatable; default: the demo's "
                         f"{WARMUP_S:g}+{MEASURE_S:g})")
    ap.add_argument("-o", "--out", type=Path, required=True, help="JSON lines file to append each step to")
    args = ap.parse_args()
    variants = args.variant or [(WARMUP_S, MEASURE_S)]
    results_file = args.demo_dir / "results.json"
    if not results_file.is_file():
        print(f"error: {results_file}: not found (DEMO_DIR must be a `streamplace demo` output directory)", file=sys.stderr)
        return 2
    if args.reps < 1:
        print("error: --reps must be >= 1", file=sys.stderr)
        return 2
    mode, why = testbed_or_reason()
    if mode != "cluster":
        print(f"error: the testbed cannot run here ({why}); embedded figures say nothing of performance", file=sys.stderr)
        return 2
    records = [ResultRecord.from_dict(r) for r in json.loads(results_file.read_text())]
    errors: dict[tuple[float, float], list[float]] = {v: [] for v in variants}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for rep in range(args.reps):
        for warmup, measured in variants:
            with tempfile.TemporaryDirectory(prefix="demo-step-") as tmp:
                copy = Path(tmp) / "demo"
                shutil.copytree(args.demo_dir, copy, ignore=shutil.ignore_patterns("storm", "autopilot", "*.png", "*.html"))
                run = run_storm_step(records, copy, problem_from_files, warmup_s=warmup, measure_s=measured,
                                     log=lambda line: None)
            if run["mode"] != "cluster":
                print(f"error: the step ran on embedded Storm ({run['why_not_testbed']})", file=sys.stderr)
                return 2
            error = recommended_error(run)
            errors[(warmup, measured)].append(error)
            with args.out.open("a") as f:
                f.write(json.dumps({"variant": f"{warmup:g}+{measured:g}", "rep": rep, **run}) + "\n")
            chosen, even = run["jobs"]
            print(f"rep {rep} {warmup:g}+{measured:g} s: even {even['throughput']:,.0f} measured; "
                  f"{chosen['scheduler']} {chosen['throughput']:,.0f} measured, {chosen['calibrated_throughput']:,.0f} "
                  f"predicted ({error:+.1%}); {run['wall_s']:.0f} s", flush=True)
    for (warmup, measured), errs in errors.items():
        within = sum(abs(e) <= 0.15 for e in errs)
        print(f"{warmup:g}+{measured:g} s: errors {', '.join(f'{e:+.1%}' for e in errs)}; median |error| "
              f"{statistics.median(abs(e) for e in errs):.1%}; {within} of {len(errs)} within 15 %")
    return 0


if __name__ == "__main__":
    sys.exit(main())

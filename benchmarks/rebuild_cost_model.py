"""Rebuild the bundled cost model from the campaign index, or check that it rebuilds.

    .venv/bin/python benchmarks/rebuild_cost_model.py            # rewrite docs/cost-models/testbed-fit.json
    .venv/bin/python benchmarks/rebuild_cost_model.py --check    # compare only; exit 1 if it differs
    .venv/bin/python benchmarks/rebuild_cost_model.py --index-table   # the README's table of campaigns

Reads ``benchmarks/results/index.yaml``: the model file it marks ``bundled`` (or ``--model
NAME``), the campaign files listed for it, its method, fitted constants, starting model and
date; fits again with :func:`streamplace.fit.build.rebuild` (the code path of
``benchmarks/fit_cost_model.py``) and writes the file (``-o`` elsewhere). ``--check`` compares
the rebuilt constants with the shipped ones at the precision the file stores them (3 significant
digits) and the provenance's figures to 1e-9, and prints what differs. A few seconds: the
node-CPU fit is a least-squares solve and the cap a one-dimensional search.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from streamplace.reproduce.measured import load_campaigns
from streamplace.fit.build import bundled, read_index, rebuild
from streamplace.fit.runs import run_problems
from streamplace.model.specs import SpecError, atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "benchmarks" / "results" / "index.yaml"
MODELS = ROOT / "docs" / "cost-models"


def differences(rebuilt, shipped, path: str = "") -> list[str]:
    """Where two model documents differ: numbers beyond a relative 1e-9, anything else unequal."""
    if isinstance(rebuilt, dict) and isinstance(shipped, dict):
        out = [f"{path}{k}: only in {'the rebuilt' if k in rebuilt else 'the shipped'} file"
               for k in sorted(rebuilt.keys() ^ shipped.keys())]
        for k in sorted(rebuilt.keys() & shipped.keys()):
            out += differences(rebuilt[k], shipped[k], f"{path}{k}.")
        return out
    if isinstance(rebuilt, list) and isinstance(shipped, list) and len(rebuilt) == len(shipped):
        return [d for i, (a, b) in enumerate(zip(rebuilt, shipped)) for d in differences(a, b, f"{path}{i}.")]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (rebuilt, shipped))
    if numbers and (math.isclose(rebuilt, shipped, rel_tol=1e-9) or (math.isnan(rebuilt) and math.isnan(shipped))):
        return []
    return [] if rebuilt == shipped else [f"{path.rstrip('.')}: rebuilt {rebuilt!r}, shipped {shipped!r}"]


def index_table(index: dict) -> str:
    """The campaigns of the index as a Markdown table."""
    rows = ["| campaign | operating point | role | runs | experiments | cost model files |",
            "| --- | --- | --- | --- | --- | --- |"]
    for c in index["campaigns"]:
        experiments = sorted({e for f in c["files"] for e in f.get("experiments", {})})
        rows.append(f"| [{c['folder']}]({c['folder']}/) | {c.get('operating_point', '-')} | {c['role']} | {c['runs'] or '-'} | "
                    f"{len(experiments) or '-'} | {', '.join(c['cost_models']) or '-'} |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="model file in docs/cost-models/ to rebuild (default: the one the index marks bundled)")
    ap.add_argument("--check", action="store_true", help="compare with the shipped file instead of writing it")
    ap.add_argument("-o", "--output", type=Path, help="write here instead of docs/cost-models/MODEL")
    ap.add_argument("--index-table", action="store_true", help="print the index's campaigns as a Markdown table and stop")
    args = ap.parse_args()
    try:
        index = read_index(INDEX)
        if args.index_table:
            print(index_table(index))
            return 0
        name = args.model or bundled(index)
        doc = rebuild(INDEX, name, load_campaigns, run_problems())
    except (SpecError, ValueError) as exc:
        print(f"streamplace: {exc}", file=sys.stderr)
        return 2
    shipped = MODELS / name
    if args.check:
        diff = differences(doc, json.loads(shipped.read_text()))
        for line in diff:
            print(line)
        print(f"{shipped.relative_to(ROOT)}: {'rebuilds as shipped' if not diff else f'{len(diff)} differences'}")
        return 1 if diff else 0
    out = args.output or shipped
    atomic_write_text(out, json.dumps(doc, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

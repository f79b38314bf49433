"""Cohesion and coupling of ``lf`` vs ``even`` on the ten [LF] synthetic configurations.

[LF] Sec. 4.2 (Fig. 6, distances 1 within a worker and 40 otherwise) reports L/F's cohesion
higher than even's by 3900 % (linear), 71.78 % (ascent), 71.02 % (descent), 32.03 %
(symmetry, "diamond" in the text) and 59.45 % (star), the same coupling everywhere, and the
same ratios at high parallelism. ``--assignment round_robin`` runs Alg. 5's literal
``i mod r`` instead of our least-loaded assignment (star coupling then differs).
Even's placement counts the topology's tasks only (Storm would add acker executors to its
round robin; the paper's figures are reproduced without them).

    python benchmarks/lf_cohesion.py [--assignment least_loaded|round_robin] [--markdown]
"""

from __future__ import annotations

import argparse

from streamplace.reproduce.lf import gain
from streamplace.reproduce.reported import LF
from streamplace.evaluate.metrics import cohesion, coupling
from streamplace.schedulers import make_scheduler
from streamplace.schedulers.lf import ASSIGNMENTS
from streamplace.workloads import lf

PAPER_COHESION_GAIN = LF["cohesion/lf-vs-even"].value
PAPER_COUPLING_GAIN = LF["coupling/lf-vs-even"].value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", choices=ASSIGNMENTS, default="least_loaded")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    even, lfs = make_scheduler("even"), make_scheduler("lf", {"assignment": args.assignment})
    sep = " | " if args.markdown else "  "
    header = ["config", "cluster", "tasks", "coh even", "coh lf", "coh +%", "paper +%",
              "coup even", "coup lf", "coup +%", "paper +%", "pipelines", "lf s"]
    print(sep.join(f"{h:>10}" for h in header))
    if args.markdown:
        print("|".join(["---"] * len(header)))
    for inst in lf.instances():
        p = inst.problem
        e, f = even.schedule(p), lfs.schedule(p)
        ce, cf = cohesion(p, e.placement), cohesion(p, f.placement)
        ue, uf = coupling(p, e.placement), coupling(p, f.placement)
        cells = [inst.layout, inst.cluster, inst.n_tasks, f"{ce:.4g}", f"{cf:.4g}", f"{gain(cf, ce):.2f}",
                 f"{PAPER_COHESION_GAIN[inst.layout]:.2f}", f"{ue:.4g}", f"{uf:.4g}", f"{gain(uf, ue):.2f}",
                 f"{PAPER_COUPLING_GAIN:.2f}", len(f.details["pipelines"]), f"{f.seconds:.4f}"]
        print(sep.join(f"{c:>10}" for c in cells), flush=True)


if __name__ == "__main__":
    main()

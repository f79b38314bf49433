"""[N] Table 4 scenarios: ``throughput``'s instance counts beside the paper's, and its predicted
throughput against ``even`` with the same parallelism.

For each cluster (small 2/2/2, medium 10/10/10, large 20/70/90 machines of types 1/2/3) and
each micro-benchmark layout, the scheduler picks the parallelism; ``L/M/H`` are the instances
of low/mid/high-compute operators, beside [N] Table 4. Storm's ``even`` scheduler then places
the same execution graph. Both placements are rated with the scheduler's own CPU model ([N]
Eq. 5-6: the largest input rate no machine exceeds 100 % at; throughput = tuples/s processed
by all tasks, the paper's definition) and [N] Eq. 7-8's weighted utilisation at that rate, and
with the project's performance model (``evaluate/performance.py``: no MET, plus
serialisation and network; throughput in the same unit). [N] Fig. 10 reports throughput gains
over even of 26-49 % (small), 36-48 % (medium) and 27-31 % (large).

    python benchmarks/throughput_scenarios.py [--max-batch N] [--met PERCENT] [--markdown]

``--max-batch 1`` (default) is Alg. 2 as written; ``--max-batch 200`` takes several instances
at once when one does not fit, as [N]'s published simulator does.
"""

from __future__ import annotations

import argparse

from streamplace.evaluate import performance
from streamplace.model import Problem
from streamplace.model.profiling import DEFAULT_MET
from streamplace.schedulers import make_scheduler
from streamplace.schedulers.throughput import predict
from streamplace.workloads import nasiri

PAPER_TABLE4 = {  # instances (L, M, H) per scenario and layout
    ("nasiri-small", "linear"): (3, 3, 7), ("nasiri-small", "diamond"): (12, 5, 7), ("nasiri-small", "star"): (9, 10, 5),
    ("nasiri-medium", "linear"): (41, 42, 35), ("nasiri-medium", "diamond"): (67, 15, 46),
    ("nasiri-medium", "star"): (45, 34, 25),
    ("nasiri-large", "linear"): (201, 156, 341), ("nasiri-large", "diamond"): (397, 208, 91),
    ("nasiri-large", "star"): (327, 156, 206),
}
PAPER_GAIN = {"nasiri-small": "26-49", "nasiri-medium": "36-48", "nasiri-large": "27-31"}
KINDS = ("lowCompute", "midCompute", "highCompute")


def gain(new: float, old: float) -> float:
    return 100.0 * (new - old) / old


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-batch", type=int, default=1)
    parser.add_argument("--met", type=float, default=DEFAULT_MET, help="MET of every task, percent")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    sep = " | " if args.markdown else "  "
    header = ["cluster", "layout", "L/M/H ours", "L/M/H paper", "rate", "thr tput", "even tput", "gain %",
              "paper %", "wU thr", "wU even", "perf thr", "perf even", "perf %", "iter", "ms"]
    print(sep.join(f"{h:>11}" for h in header))
    if args.markdown:
        print("|".join(["---"] * len(header)))
    for preset in nasiri.CLUSTER_PRESETS:
        for layout in nasiri.LAYOUTS:
            prof = nasiri.profiling(layout, met=args.met)
            problem = Problem.from_topology(nasiri.topology(layout), nasiri.cluster(preset))
            res = make_scheduler("throughput", {"profiling": prof, "max_batch": args.max_batch}).schedule(problem)
            chosen = res.problem
            even = make_scheduler("even").schedule(chosen).placement
            ours, theirs = predict(chosen, res.placement, prof), predict(chosen, even, prof)
            perf_ours = performance.predict(chosen, res.placement).throughput
            perf_even = performance.predict(chosen, even).throughput
            kinds = [prof.row_of(op.name) for op in chosen.topology.operators]
            lmh = [sum(op.parallelism for op, k in zip(chosen.topology.operators, kinds) if k == kind) for kind in KINDS]
            cells = [preset.removeprefix("nasiri-"), layout, "/".join(map(str, lmh)),
                     "/".join(map(str, PAPER_TABLE4[preset, layout])), f"{res.details['max_rate']:.0f}",
                     f"{ours.throughput:.0f}", f"{theirs.throughput:.0f}", f"{gain(ours.throughput, theirs.throughput):.1f}",
                     PAPER_GAIN[preset], f"{ours.weighted_utilisation:.1f}", f"{theirs.weighted_utilisation:.1f}",
                     f"{perf_ours:.0f}", f"{perf_even:.0f}", f"{gain(perf_ours, perf_even):.1f}",
                     res.details["iterations"], f"{1e3 * res.seconds:.0f}"]
            print(sep.join(f"{c:>11}" for c in cells), flush=True)


if __name__ == "__main__":
    main()

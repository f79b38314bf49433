"""[N] Table 4 scenarios: ``throughput``'s instance counts beside the paper's, and its predicted
throughput against ``even`` with the same parallelism.

For each cluster (small 2/2/2, medium 10/10/10, large 20/70/90 machines of types 1/2/3) and
each micro-benchmark layout, the scheduler picks the parallelism; ``L/M/H`` are the instances
of low/mid/high-compute operators, beside [N] Table 4. Storm's ``even`` scheduler then places
the same execution graph. Both placements are rated with the scheduler's own CPU model ([N]
Eq. 5-6: the largest input rate no machine exceeds 100 % at; throughput = tuples/s processed
by all tasks, the paper's definition) and [N] Eq. 7-8's weighted utilisation at that rate, and
with the project's performance model (``model/performance.py``: no MET, plus
serialisation and network; throughput in the same unit). [N] Fig. 10 reports throughput gains
over even of 26-49 % (small), 36-48 % (medium) and 27-31 % (large).

    python benchmarks/throughput_scenarios.py [--max-batch N] [--met PERCENT] [--markdown]

``--max-batch 1`` (default) is Alg. 2 as written; ``--max-batch 200`` takes several instances
at once when one does not fit, as [N]'s published simulator does.
"""

from __future__ import annotations

import argparse

from streamplace.reproduce.reported import THROUGHPUT
from streamplace.reproduce.throughput import scenario
from streamplace.model import performance
from streamplace.model.profiling import DEFAULT_MET
from streamplace.workloads import nasiri

PAPER_TABLE4 = THROUGHPUT["table4/instances"].value  # instances (L, M, H) per scenario and layout
PAPER_GAIN = {k: f"{lo}-{hi}" for k, (lo, hi) in THROUGHPUT["fig10/throughput-gain"].value.items()}


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
            sc = scenario(preset, layout, max_batch=args.max_batch, met=args.met)
            res, chosen = sc.result, sc.result.problem
            perf_ours = performance.predict(chosen, res.placement).throughput
            perf_even = performance.predict(chosen, sc.even.placement).throughput
            cells = [preset.removeprefix("nasiri-"), layout, "/".join(map(str, sc.instances)),
                     "/".join(map(str, PAPER_TABLE4[preset, layout])), f"{res.details['max_rate']:.0f}",
                     f"{sc.ours.throughput:.0f}", f"{sc.theirs.throughput:.0f}", f"{sc.gain_pct:.1f}",
                     PAPER_GAIN[preset], f"{sc.ours.weighted_utilisation:.1f}", f"{sc.theirs.weighted_utilisation:.1f}",
                     f"{perf_ours:.0f}", f"{perf_even:.0f}", f"{100.0 * (perf_ours - perf_even) / perf_even:.1f}",
                     res.details["iterations"], f"{1e3 * res.seconds:.0f}"]
            print(sep.join(f"{c:>11}" for c in cells), flush=True)


if __name__ == "__main__":
    main()

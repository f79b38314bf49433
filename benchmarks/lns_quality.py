"""lns against every other scheduler: inter-node traffic per instance, and the time it took.

Parts (``--parts``, default all):

* ``micro``: the 72 micro-benchmarks ([I] Sec. 5) with lns at ``--micro-limit`` (1 s) against the
  optimum ``optimal`` proves in 10 s: how many lns places at the optimum.
* ``apps``: the demo's applications on its two clusters (``bench.demo.app_clusters``);
  ``fischer``: [F]'s four topologies on 10-80 iMacs; ``random``: synthetic non-uniform graphs of
  50-500 tasks (``workloads.synthetic``, 10 tasks per node). lns at ``--time-limit`` (10 s) against
  even, online (relaxed gamma), rstorm, metis, t3, ischeduler (theta 1 s) and optimal (10 s): the
  change against the best of them per instance (negative: lns sends less), mean and worst, and
  where lns is above that best.
* ``large``: 10^5 tasks on 10^3 nodes and 10^6 on 10^4 with lns at ``--large-limit`` (60 s)
  against metis on the same graph.
* ``throughput``: lns with ``objective=throughput`` at ``--time-limit`` against the highest
  predicted throughput (default cost model) of every other scheduler (the above and lf) among
  their placements within capacity, on the runtime-size micro-benchmarks (I/O and CPU, 2 high +
  4 low nodes), [LF]'s synthetic chains (both clusters) and the demo's applications.

Costs are deterministic for a seed except where a time limit cuts a search; the times are one run
each on whatever the machine is doing: read them as orders of magnitude.

    python benchmarks/lns_quality.py [--parts micro,apps,fischer,random,large,throughput] [--jsonl FILE]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from streamplace.demo.run import app_clusters
from streamplace.evaluate.metrics import inter_node_cost
from streamplace.model import Problem
from streamplace.schedulers import make_scheduler
from streamplace.model.performance import predict
from streamplace.workloads import fischer, lf, microbench, runtime
from streamplace.workloads.applications import APPLICATIONS, application
from streamplace.schedulers.papers import paper_params
from streamplace.workloads.synthetic import synthetic_problem

OTHERS = tuple((name, paper_params(name)) for name in ("even", "online", "rstorm", "metis", "t3", "ischeduler")) + \
    (("optimal", {"time_limit": 10.0}),)
PARTS = ("micro", "apps", "fischer", "random", "large", "throughput")


def run(name: str, params: dict, problem: Problem) -> tuple[float | None, float, str]:
    """(inter-node traffic or None if no placement within capacity, seconds, status)."""
    start = time.perf_counter()
    result = make_scheduler(name, params).schedule(problem)
    seconds = time.perf_counter() - start
    ok = result.placement is not None and not result.placement.violations(problem.graph.loads, problem.cluster)
    return (inter_node_cost(problem, result.placement) if ok else None), seconds, result.status


def micro(args, emit) -> None:
    at_optimum, total, worst = 0, 0, 0.0
    for inst in microbench.instances():
        best, _, status = run("optimal", {"time_limit": 10.0}, inst.problem)
        ours, seconds, _ = run("lns", {"time_limit": args.micro_limit}, inst.problem)
        gap = ours / best - 1 if best else 0.0
        total += 1
        at_optimum += abs(ours - best) <= 1e-9 * max(1.0, best)
        worst = max(worst, gap)
        emit({"part": "micro", "instance": inst.name, "optimum": best, "proven": status == "optimal", "lns": ours,
              "lns_s": seconds})
    print(f"micro: lns at {args.micro_limit:g} s at the optimum on {at_optimum} of {total}; worst gap {worst:+.1%}")


def compared(part: str, instances, args, emit) -> None:
    changes, above = [], []
    for label, problem in instances:
        costs = {name: run(name, params, problem)[0] for name, params in OTHERS}
        ours, seconds, status = run("lns", {"time_limit": args.time_limit}, problem)
        valid = [c for c in costs.values() if c is not None]
        best = min(valid) if valid else None
        change = None if best in (None, 0) or ours is None else ours / best - 1
        if change is not None:
            changes.append(change)
            if change > 1e-9:
                above.append(f"{label} ({change:+.1%})")
        emit({"part": part, "instance": label, "tasks": problem.n_tasks, "nodes": problem.cluster.n_nodes,
              "others": costs, "lns": ours, "lns_status": status, "lns_s": seconds, "change_vs_best": change})
        print(f"  {label:>34}  best other {best if best is not None else '-':>10}  lns {ours if ours is not None else '-':>10}"
              f"  {'' if change is None else f'{change:+.2%}'}  ({seconds:.1f} s, {status})", flush=True)
    if changes:
        print(f"{part}: {len(changes)} instances; lns vs the best other: mean {np.mean(changes):+.2%}, "
              f"best {min(changes):+.2%}, worst {max(changes):+.2%}; above the best on {len(above)}"
              + (f": {', '.join(above)}" if above else ""))


def apps():
    for name in APPLICATIONS:
        topo = application(name).topology
        for cluster in app_clusters(topo.n_tasks):
            yield f"{name}@{cluster.name}", Problem.from_topology(topo, cluster)


def fischer_instances():
    for inst in fischer.instances():
        yield f"{inst.layout}@{inst.cluster}", inst.problem


def random_graphs():
    for n in (50, 100, 200, 300, 500):
        for seed in (0, 1):
            yield f"synthetic-{n}-s{seed}", synthetic_problem(n, max(2, n // 10), seed=seed)


def large(args, emit) -> None:
    for n, k in ((100_000, 1_000), (1_000_000, 10_000)):
        problem = synthetic_problem(n, k, seed=0)
        base, base_s, _ = run("metis", {}, problem)
        ours, seconds, status = run("lns", {"time_limit": args.large_limit}, problem)
        change = None if base is None or ours is None else ours / base - 1
        emit({"part": "large", "tasks": n, "nodes": k, "metis": base, "metis_s": base_s, "lns": ours, "lns_s": seconds,
              "change_vs_metis": change})
        print(f"large: {n:,} tasks on {k:,} nodes: metis {base:.6g} ({base_s:.0f} s), lns {ours:.6g} ({seconds:.0f} s, "
              f"{status}): {change:+.1%} against metis", flush=True)


def throughput_instances():
    for layout in ("linear", "diamond", "star"):
        for mode in ("io", "cpu"):
            yield f"runtime-{layout}-{mode}", Problem.from_topology(runtime.microbench(layout, mode), runtime.cluster(2, 4))
    for config in lf.CONFIGS:
        for high, preset in ((False, "lf-low"), (True, "lf-high")):
            yield f"lf-{config}{'-x10' if high else ''}@{preset}", Problem.from_topology(lf.synthetic(config, high=high),
                                                                                     lf.cluster(preset))
    yield from apps()


def throughput(args, emit) -> None:
    changes, below = [], []
    for label, problem in throughput_instances():
        figures = {}
        for name, params in OTHERS + (("lf", {}),):
            result = make_scheduler(name, params).schedule(problem)
            if result.placement is not None and not result.placement.violations(problem.graph.loads, problem.cluster):
                figures[name] = predict(problem, result.placement).throughput
        start = time.perf_counter()
        ours = make_scheduler("lns", {"objective": "throughput"}, time_limit=args.time_limit).schedule(problem)
        seconds = time.perf_counter() - start
        mine = predict(problem, ours.placement).throughput
        best = max(figures, key=figures.get)
        change = mine / figures[best] - 1
        changes.append(change)
        if change < -1e-9:
            below.append(f"{label} ({change:+.1%})")
        emit({"part": "throughput", "instance": label, "others": figures, "lns": mine, "lns_s": seconds,
              "start": ours.details["construction"], "change_vs_best": change})
        print(f"  {label:>34}  best other {best} {figures[best]:>12,.0f}  lns {mine:>12,.0f}  {change:+.2%}"
              f"  (start {ours.details['construction']}, {seconds:.1f} s)", flush=True)
    print(f"throughput: {len(changes)} instances; lns (objective=throughput) vs the best other: mean {np.mean(changes):+.2%}, "
          f"best {max(changes):+.2%}, worst {min(changes):+.2%}; below the best on {len(below)}"
          + (f": {', '.join(below)}" if below else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--time-limit", type=float, default=10.0, help="lns time limit on apps, fischer, random")
    parser.add_argument("--micro-limit", type=float, default=1.0)
    parser.add_argument("--large-limit", type=float, default=60.0)
    parser.add_argument("--jsonl", default=None, help="also write every row as JSON lines here")
    args = parser.parse_args()
    out = open(args.jsonl, "w") if args.jsonl else None

    def emit(row: dict) -> None:
        if out:
            out.write(json.dumps(row) + "\n")
            out.flush()

    parts = args.parts.split(",")
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)} (choose from {', '.join(PARTS)})")
    if "micro" in parts:
        micro(args, emit)
    if "throughput" in parts:
        throughput(args, emit)
    for part, instances in (("apps", apps), ("fischer", fischer_instances), ("random", random_graphs)):
        if part in parts:
            compared(part, instances(), args, emit)
    if "large" in parts:
        large(args, emit)
    if out:
        out.close()


if __name__ == "__main__":
    main()

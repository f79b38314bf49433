"""Calibrate I-Scheduler's phi: the largest reduced graph the exact solver proves optimal within theta.

[I] Alg. 1 line 4 takes phi "from previous experiments"; this script is those experiments, run with
the project's own solver (:func:`streamplace.exact.solve_min_inter_node`, default
8 workers). For growing sizes n = 4, 5, 6, ... it builds representative reduced graphs:

* what the fusion loop leaves for the solver (I-Scheduler with phi = n, optimiser on) on the
  32-task micro-benchmark of every layout x cluster (sizes <= n; [I] Sec. 5);
* random graphs with n vertices on both paper clusters ({4: 10} and {6: 3, 4: 3, 2: 4}): loads
  1-4 (fused groups next to single tasks), about 4 neighbours per vertex, rates 1-5, total load at
  most 85 % of the capacity;

and solves each with ``time_limit`` = the largest theta, recording the time to proven optimality.
``phi(theta)`` = the largest n such that every graph of size <= n was proven optimal within theta.
The run stops at the first graph not proven within the largest theta (larger sizes cannot raise
any phi) and writes ``streamplace/schedulers/ischeduler_phi.json`` (table + raw measurements).
Timings depend on the machine and its load: rerun to re-measure.

    python benchmarks/calibrate_phi.py [--thetas 0.5,1,2,5,10] [--repeats 2] [--max-size 40] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from streamplace.schedulers import ischeduler
from streamplace.schedulers.fill import reduced_graph
from streamplace.schedulers.ischeduler import capacity_classes, fuse
from streamplace.exact import solve_min_inter_node
from streamplace.workloads import microbench

TABLE = Path(ischeduler.__file__).with_name(ischeduler.PHI_TABLE)


def fusion_graphs(n: int):
    """(name, W, loads, capacities) of the reduced graphs the fusion loop leaves at phi = n."""
    for inst in microbench.instances(sizes=(32,)):
        graph, caps = inst.problem.graph, inst.problem.cluster.capacities
        fusion = fuse(graph.weights, graph.loads, capacity_classes(caps), n, True)
        if fusion.optimiser:
            reduced, loads, _ = reduced_graph(graph.weights, graph.loads, fusion.group, fusion.group_class.size)
            yield f"fused {inst.name}", reduced.toarray(), loads, caps


def random_graph(n: int, caps: np.ndarray, rng: np.random.Generator):
    """A random reduced-graph-like instance with n vertices that fits ``caps``."""
    loads = rng.choice([1.0, 2.0, 3.0, 4.0], size=n, p=[0.55, 0.2, 0.15, 0.1])
    loads = np.minimum(loads, caps.max())
    while loads.sum() > 0.85 * caps.sum() and loads.max() > 1:
        loads[np.argmax(loads)] -= 1
    W = np.triu(np.where(rng.random((n, n)) < min(1.0, 4.0 / max(n - 1, 1)), rng.integers(1, 6, (n, n)), 0), 1)
    return (W + W.T).astype(float), loads


def graphs_of_size(n: int, repeats: int, seed: int):
    clusters = {name: microbench.cluster(name).capacities for name in microbench.CLUSTER_PRESETS}
    for name, caps in clusters.items():
        rng = np.random.default_rng([seed, n, len(name)])
        for r in range(repeats):
            W, loads = random_graph(n, caps, rng)
            if loads.sum() <= caps.sum():
                yield f"random {name} #{r}", W, loads, caps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thetas", default="0.5,1,2,5,10", help="comma-separated theta values (seconds)")
    parser.add_argument("--repeats", type=int, default=2, help="random graphs per cluster and size")
    parser.add_argument("--max-size", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dry-run", action="store_true", help="print the table, do not write the JSON")
    args = parser.parse_args()
    thetas = sorted(float(x) for x in args.thetas.split(","))
    limit = thetas[-1]
    start = time.perf_counter()
    measured, seen = [], set()
    print(f"{'size':>4}  {'graph':<34} {'status':>9} {'seconds':>8}")
    stop = False
    for n in range(4, args.max_size + 1):
        for name, W, loads, caps in [*fusion_graphs(n), *graphs_of_size(n, args.repeats, args.seed)]:
            key = (name, W.shape[0])
            if name.startswith("fused") and key in seen:
                continue
            seen.add(key)
            sol = solve_min_inter_node(W, loads, caps, time_limit=limit, seed=args.seed)
            proven = sol.status == "optimal"
            measured.append({"size": int(W.shape[0]), "graph": name, "status": sol.status,
                             "seconds": round(sol.seconds, 3) if proven else None})
            print(f"{W.shape[0]:>4}  {name:<34} {sol.status:>9} {sol.seconds:>8.2f}", flush=True)
            if not proven:
                stop = True
                break
        if stop:
            break
    phi = {}
    for theta in thetas:
        slow = [m["size"] for m in measured if m["seconds"] is None or m["seconds"] > theta]
        phi[f"{theta:g}"] = (min(slow) - 1) if slow else max(m["size"] for m in measured)
    print("\nphi by theta:", ", ".join(f"{t} s -> {p}" for t, p in phi.items()),
          f"({len(measured)} solves, {time.perf_counter() - start:.0f} s)")
    if args.dry_run:
        return
    table = {
        "description": "I-Scheduler phi: largest reduced-graph size (vertices) every representative graph of "
                       "that size or smaller was proven optimal within theta seconds by solve_min_inter_node; "
                       "written by benchmarks/calibrate_phi.py",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_average": list(os.getloadavg())},
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "phi": phi,
        "measurements": measured,
    }
    tmp = TABLE.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    tmp.replace(TABLE)
    print(f"wrote {TABLE}")


if __name__ == "__main__":
    main()

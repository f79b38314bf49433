"""Scale benchmark: wall time and peak memory of the partitioning schedulers at 10^4-10^6 tasks.

Workloads from :mod:`streamplace.workloads.synthetic` (seeded operator-chain DAGs with bounded
fan-out, heterogeneous clusters with 20 % slack): 10^4 tasks on 10^2 nodes, 10^5 on 10^3 and
10^6 on 10^4 (100 tasks per node). Schedulers: ``metis`` and, when registered, ``t3`` and
``ischeduler`` (theta = 0, the heuristic without the optimiser). Every (case, scheduler) runs in
its own subprocess so peak memory figures do not mix; a case is stopped after ``--timeout``.

Columns: generation and scheduling wall time (s), CPU time of the scheduling (s: on a shared
machine wall time includes waiting), peak RSS of the process (MB, ``getrusage``; includes
the workload itself) and the RSS already held after generation, inter-node traffic as a
fraction of the total, and whether capacity holds. Target: ``metis`` at 10^6 tasks < 60 s.

    python benchmarks/scale.py [--cases 10000:100,100000:1000,1000000:10000] [--schedulers metis,t3]
                               [--seed 0] [--timeout 900] [--param metis.objective=cut ...]
    python benchmarks/scale.py --profile 1000000:10000:metis   # cProfile of one run, top 30
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import resource
import subprocess
import sys
import time

from streamplace.evaluate.metrics import inter_node_cost
from streamplace.schedulers import available, make_scheduler
from streamplace.workloads.synthetic import synthetic_problem

CANDIDATES = ("metis", "t3", "ischeduler")
DEFAULT_CASES = "10000:100,100000:1000,1000000:10000"
PARAMS = {"ischeduler": {"theta": 0}}
TARGET_SECONDS = 60.0


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def scheduler_params(name: str, seed: int, extra: list[str], time_limit: float | None = None) -> dict:
    """Defaults of this benchmark, the seed, the time limit (schedulers that honour one), then
    ``--param NAME.KEY=VALUE`` overrides."""
    from streamplace.schedulers.base import REGISTRY
    params = {**PARAMS.get(name, {}), "seed": seed}
    if time_limit is not None and REGISTRY[name].honours_time_limit:  # the budget field, as the CLI sets it
        params.update({key: time_limit for key in ("time_limit", "theta") if key in REGISTRY[name].__dataclass_fields__})
    for item in extra:
        target, _, value = item.partition("=")
        owner, _, key = target.partition(".")
        if owner == name:
            params[key] = value
    return params


def run_one(n_tasks: int, n_nodes: int, scheduler: str, seed: int, extra: list[str], time_limit: float | None = None) -> dict:
    start = time.perf_counter()
    problem = synthetic_problem(n_tasks, n_nodes, seed=seed)
    generated = time.perf_counter() - start
    rss_before = rss_mb()
    cpu = time.process_time()
    result = make_scheduler(scheduler, scheduler_params(scheduler, seed, extra, time_limit)).schedule(problem)
    cpu = time.process_time() - cpu
    row = {"tasks": n_tasks, "nodes": n_nodes, "edges": int(problem.graph.edges[0].size), "scheduler": scheduler,
           "generate_s": generated, "schedule_s": result.seconds, "cpu_s": cpu, "rss_before_mb": rss_before,
           "peak_rss_mb": rss_mb(), "status": result.status}
    if result.placement is not None:
        row["inter_node_fraction"] = inter_node_cost(problem, result.placement) / problem.graph.total_weight
        row["capacity_ok"] = not result.placement.violations(problem.loads, problem.cluster)
    return row


def parse_case(text: str) -> tuple[int, int]:
    tasks, nodes = text.split(":")
    return int(float(tasks)), int(float(nodes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated TASKS:NODES")
    parser.add_argument("--schedulers", default=",".join(s for s in CANDIDATES if s in available()))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=None,
                        help="solve budget (s) for the schedulers that honour one (Scheduler.honours_time_limit)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--param", action="append", default=[], metavar="NAME.KEY=VALUE",
                        help="scheduler parameter, e.g. metis.objective=cut (repeatable)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--profile", metavar="TASKS:NODES:SCHEDULER", help="profile one run in-process")
    args = parser.parse_args()
    if args.one:
        tasks, nodes, name = args.one.split(":")
        print(json.dumps(run_one(int(tasks), int(nodes), name, args.seed, args.param, args.time_limit)))
        return
    if args.profile:
        tasks, nodes, name = args.profile.split(":")
        problem = synthetic_problem(int(float(tasks)), int(float(nodes)), seed=args.seed)
        scheduler = make_scheduler(name, scheduler_params(name, args.seed, args.param))
        profiler = cProfile.Profile()
        profiler.runcall(scheduler.schedule, problem)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return
    header = f"{'tasks':>9} {'nodes':>6} {'edges':>9} {'scheduler':>10} {'gen s':>6} {'sched s':>8} {'cpu s':>7} " \
             f"{'RSS0 MB':>8} {'peak MB':>8} {'inter-node':>10} {'capacity':>8}"
    print(header)
    for case in args.cases.split(","):
        tasks, nodes = parse_case(case)
        for name in (s for s in args.schedulers.split(",") if s):
            cmd = [sys.executable, __file__, "--one", f"{tasks}:{nodes}:{name}", "--seed", str(args.seed),
                   *(f"--param={p}" for p in args.param),
                   *(["--time-limit", str(args.time_limit)] if args.time_limit is not None else [])]
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, check=True).stdout
                row = json.loads(out.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                print(f"{tasks:>9} {nodes:>6} {'':>9} {name:>10}  timed out after {args.timeout:g} s")
                continue
            except subprocess.CalledProcessError as exc:
                print(f"{tasks:>9} {nodes:>6} {'':>9} {name:>10}  failed: {exc.stderr.strip().splitlines()[-1]}")
                continue
            frac = f"{row['inter_node_fraction']:.3f}" if "inter_node_fraction" in row else row["status"]
            cap = {True: "ok", False: "OVER"}.get(row.get("capacity_ok"), "-")
            flag = " > target" if name == "metis" and tasks >= 10**6 and row["schedule_s"] > TARGET_SECONDS else ""
            print(f"{tasks:>9} {nodes:>6} {row['edges']:>9} {name:>10} {row['generate_s']:>6.1f} {row['schedule_s']:>8.1f} "
                  f"{row['cpu_s']:>7.1f} {row['rss_before_mb']:>8.0f} {row['peak_rss_mb']:>8.0f} {frac:>10} {cap:>8}{flag}",
                  flush=True)


if __name__ == "__main__":
    main()

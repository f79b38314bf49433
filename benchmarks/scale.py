"""Scale benchmark: wall time and peak memory of every scheduler at 10^3-10^6 tasks.

Workloads from :mod:`streamplace.workloads.synthetic` (seeded operator-chain DAGs with bounded
fan-out, heterogeneous clusters with 20 % slack): 10^3 tasks on 10 nodes, 10^4 on 10^2, 10^5 on 10^3 and
10^6 on 10^4 (100 tasks per node). Schedulers: every registered one (``ischeduler`` with
theta = 0, the heuristic without the optimiser, unless ``--time-limit`` gives it a budget); a
scheduler with a declared size limit (``optimal``'s ``max_tasks``) reports its refusal. Every
(case, scheduler) runs in its own subprocess so peak memory figures do not mix; a run is
stopped after ``--timeout``.

Columns: generation and scheduling wall time (s), CPU time of the scheduling (s: on a shared
machine wall time includes waiting), peak RSS of the process (MB, ``getrusage``; includes
the workload itself) and the RSS already held after generation, inter-node traffic as a
fraction of the total, whether capacity holds, and the growth exponent of the scheduling time
from the previous size (``log(t2/t1) / log(n2/n1)``: 1 is linear in the tasks) beside the
complexity the scheduler declares. The summary gives, per scheduler, the largest case it
finished within 60 s. Target: ``metis`` at 10^6 tasks < 60 s.

    python benchmarks/scale.py [--cases 10000:100,100000:1000,1000000:10000] [--schedulers metis,t3]
                               [--seed 0] [--timeout 900] [--time-limit S] [--param metis.objective=cut ...]
                               [--jsonl FILE]
    python benchmarks/scale.py --profile 1000000:10000:metis   # cProfile of one run, top 30
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import json
import math
import os
import pstats
import resource
import signal
import subprocess
import sys
import time

from streamplace.evaluate.metrics import inter_node_cost
from streamplace.interrupt import cpu_seconds
from streamplace.model import Problem, Topology
from streamplace.schedulers import available, make_scheduler
from streamplace.schedulers.base import REGISTRY
from streamplace.schedulers.papers import ISCHEDULER_NO_OPTIMISER, OLS_RELAX
from streamplace.workloads.synthetic import synthetic_problem

DEFAULT_CASES = "1000:10,10000:100,100000:1000,1000000:10000"
PARAMS = {"ischeduler": ISCHEDULER_NO_OPTIMISER,
          "online": OLS_RELAX}   # synthetic jobs break Aniello's slot-load cap: time the relaxed run
CPU_PER_TUPLE = 1e-5   # s per tuple, every operator, for the schedulers that need a profiling
TARGET_SECONDS = 60.0


def rss_mb() -> float:
    """Peak resident memory (MiB) of this process, or of a child that ended (a native solver's
    search runs in one; it shares this process's pages, so its peak includes them)."""
    return max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024.0


def scheduler_params(name: str, extra: list[str], time_limit: float | None = None) -> dict:
    """Defaults of this benchmark (but not a budget when ``--time-limit`` gives one), then
    ``--param NAME.KEY=VALUE`` overrides."""
    budget = REGISTRY[name].budget_param if time_limit is not None else None
    params = {key: value for key, value in PARAMS.get(name, {}).items() if key != budget}
    for item in extra:
        target, _, value = item.partition("=")
        owner, _, key = target.partition(".")
        if owner == name:
            params[key] = value
    return params


def profiled(problem: Problem) -> Problem:
    """The problem with :data:`CPU_PER_TUPLE` on every operator (synthetic workloads have no profiling)."""
    ops = [dataclasses.replace(op, cpu_per_tuple=CPU_PER_TUPLE) for op in problem.topology.operators]
    return Problem.from_topology(Topology.build(problem.topology.name, ops, problem.topology.streams), problem.cluster,
                                 graph=problem.graph)


def run_one(n_tasks: int, n_nodes: int, scheduler: str, seed: int, extra: list[str], time_limit: float | None = None) -> dict:
    start = time.perf_counter()
    problem = synthetic_problem(n_tasks, n_nodes, seed=seed)
    if REGISTRY[scheduler].needs_profiling:
        problem = profiled(problem)
    generated = time.perf_counter() - start
    rss_before = rss_mb()
    cpu = cpu_seconds()   # with the child process a native solver's search runs in
    sched = make_scheduler(scheduler, scheduler_params(scheduler, extra, time_limit), seed=seed,
                           time_limit=time_limit)
    result = sched.schedule(problem)
    cpu = cpu_seconds() - cpu
    row = {"tasks": n_tasks, "nodes": n_nodes, "edges": int(problem.graph.edges[0].size), "scheduler": scheduler,
           "generate_s": generated, "schedule_s": result.seconds, "cpu_s": cpu, "rss_before_mb": rss_before,
           "peak_rss_mb": rss_mb(), "status": result.status, "message": result.message}
    if result.placement is not None:
        row["inter_node_fraction"] = inter_node_cost(result.problem, result.placement) / result.problem.graph.total_weight
        row["capacity_ok"] = not result.placement.violations(result.problem.loads, result.problem.cluster)
    return row


def parse_case(text: str) -> tuple[int, int]:
    tasks, nodes = text.split(":")
    return int(float(tasks)), int(float(nodes))


def growth(previous: dict | None, row: dict) -> str:
    """Growth exponent of the scheduling time from the previous size of the same scheduler."""
    if not previous or previous["schedule_s"] <= 0.05 or row["schedule_s"] <= 0:
        return "-"
    return f"{math.log(row['schedule_s'] / previous['schedule_s']) / math.log(row['tasks'] / previous['tasks']):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated TASKS:NODES")
    parser.add_argument("--schedulers", default=",".join(available()))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=None,
                        help="solve budget (s) for the schedulers that honour one (Scheduler.honours_time_limit)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--param", action="append", default=[], metavar="NAME.KEY=VALUE",
                        help="scheduler parameter, e.g. metis.objective=cut (repeatable)")
    parser.add_argument("--jsonl", help="also append every row to this JSON Lines file")
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
        scheduler = make_scheduler(name, scheduler_params(name, args.param, args.time_limit), seed=args.seed,
                                   time_limit=args.time_limit)
        profiler = cProfile.Profile()
        # a native solver's search runs in a child process (Scheduler.native_solver): profile it here
        profiler.runcall(scheduler._schedule if scheduler.native_solver else scheduler.schedule, problem)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return
    names = [s for s in args.schedulers.split(",") if s]
    header = f"{'tasks':>9} {'nodes':>6} {'edges':>9} {'scheduler':>10} {'gen s':>6} {'sched s':>8} {'cpu s':>7} " \
             f"{'RSS0 MB':>8} {'peak MB':>8} {'inter-node':>10} {'capacity':>8} {'growth':>6}  declared"
    print(header)
    last: dict[str, dict] = {}
    within: dict[str, int] = {}
    for case in args.cases.split(","):
        tasks, nodes = parse_case(case)
        for name in names:
            row = run_case(tasks, nodes, name, args)
            if row is None:
                continue
            if args.jsonl:
                with open(args.jsonl, "a") as fh:
                    fh.write(json.dumps({**row, "time_limit": args.time_limit}) + "\n")
            frac = f"{row['inter_node_fraction']:.3f}" if "inter_node_fraction" in row else row["status"]
            grew = growth(last.get(name), row) if row.get("capacity_ok") is not None else "-"
            cap = {True: "ok", False: "OVER"}.get(row.get("capacity_ok"), "-")
            flag = " > target" if name == "metis" and tasks >= 10**6 and row["schedule_s"] > TARGET_SECONDS else ""
            print(f"{tasks:>9} {nodes:>6} {row['edges']:>9} {name:>10} {row['generate_s']:>6.1f} {row['schedule_s']:>8.1f} "
                  f"{row['cpu_s']:>7.1f} {row['rss_before_mb']:>8.0f} {row['peak_rss_mb']:>8.0f} {frac:>10} {cap:>8} "
                  f"{grew:>6}  {REGISTRY[name].complexity}{flag}", flush=True)
            if row.get("capacity_ok") is None:
                print(f"{'':>17} {row['message'][:150]}", flush=True)
            if row.get("capacity_ok") is not None:
                last[name] = row
                if row["schedule_s"] <= TARGET_SECONDS:
                    within[name] = max(within.get(name, 0), tasks)
    print("\nlargest case placed within 60 s: " + ", ".join(f"{n} {within[n]:,}" if n in within else f"{n} none" for n in names))


def run_case(tasks: int, nodes: int, name: str, args) -> dict | None:
    """One (case, scheduler) in its own process; None (after a line saying why) if it did not finish."""
    cmd = [sys.executable, __file__, "--one", f"{tasks}:{nodes}:{name}", "--seed", str(args.seed),
           *(f"--param={p}" for p in args.param),
           *(["--time-limit", str(args.time_limit)] if args.time_limit is not None else [])]
    # its own session, so that a timeout also ends the child process a native solver's search runs in
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            print(f"{tasks:>9} {nodes:>6} {'':>9} {name:>10}  timed out after {args.timeout:g} s", flush=True)
            return None
    if proc.returncode != 0:
        print(f"{tasks:>9} {nodes:>6} {'':>9} {name:>10}  failed: {(err.strip().splitlines() or ['?'])[-1]}", flush=True)
        return None
    return json.loads(out.strip().splitlines()[-1])


if __name__ == "__main__":
    main()

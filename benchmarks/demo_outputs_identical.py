"""Whether two ``streamplace demo`` output directories hold the same results, timings apart.

A refactoring must not change what the demo writes: run ``streamplace demo --quick -o BEFORE``
on the tree before the change and ``-o AFTER`` on the tree after it, then

    python benchmarks/demo_outputs_identical.py BEFORE AFTER

Compared: ``results.json`` (record by record, every key and value), ``results.csv`` (header and
every cell) and ``run.json`` (every key and value). Left out, because they differ from run to
run whatever the code: wall-clock times (:data:`TIMING_KEYS` at any depth, e.g. a record's
``seconds``, ``run.json``'s ``steps``; LNS's ``history`` pairs a time with each improvement), and
what the Storm step measured on a live cluster (:data:`MEASURED_KEYS` in ``run.json``'s
``storm.jobs``: its keys are still compared, and so are the predictions beside them). Prints each
difference (up to ``--show``) and exits 0 if there is none, 1 otherwise.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

#: keys whose values are wall-clock durations (or, ``history``, improvements stamped with one)
TIMING_KEYS = frozenset({"seconds", "solver_seconds", "wall_seconds", "wall_s", "steps", "scheduler_seconds",
                         "history"})
#: values the Storm step measures on a running cluster (run.json: storm.jobs[*])
MEASURED_KEYS = frozenset({"throughput", "bolt_throughput", "source_rate", "per_bolt_task_10s", "latency_ms",
                           "wire_inter_node_bytes_per_s", "monitor_inter_node_bytes_per_s", "node_cpu",
                           "node_executor_cpu", "windows"})


def differences(before, after, path: str = "", ignore: frozenset = TIMING_KEYS) -> list[str]:
    """Every place where ``after`` differs from ``before`` (JSON values), ``ignore``'d keys left out."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in sorted(set(before) | set(after), key=str):
            here = f"{path}.{key}" if path else str(key)
            if key not in before or key not in after:
                out.append(f"{here}: only in {'after' if key in after else 'before'}")
            elif key not in ignore:
                out += differences(before[key], after[key], here, ignore)
        if list(before) != list(after) and not out:
            out.append(f"{path}: key order {list(before)} -> {list(after)}")
        return out
    if isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            return [f"{path}: {len(before)} items -> {len(after)}"]
        return [d for i, (b, a) in enumerate(zip(before, after)) for d in differences(b, a, f"{path}[{i}]", ignore)]
    if before != after or type(before) is not type(after):
        return [f"{path}: {before!r} -> {after!r}"]
    return []


def _storm_jobs(run: dict) -> list:
    return (run.get("storm") or {}).get("jobs") or []


def compare(before: Path, after: Path) -> list[str]:
    out = []
    load = lambda d, name: json.loads((d / name).read_text())  # noqa: E731
    out += [f"results.json: {d}" for d in differences(load(before, "results.json"), load(after, "results.json"))]
    rows = [list(csv.reader((d / "results.csv").open())) for d in (before, after)]
    if rows[0][0] != rows[1][0]:
        out.append(f"results.csv: header {rows[0][0]} -> {rows[1][0]}")
    else:
        keep = [i for i, k in enumerate(rows[0][0]) if k not in TIMING_KEYS]
        if len(rows[0]) != len(rows[1]):
            out.append(f"results.csv: {len(rows[0])} rows -> {len(rows[1])}")
        for n, (b, a) in enumerate(zip(rows[0][1:], rows[1][1:]), start=2):
            out += [f"results.csv: line {n}, {rows[0][0][i]}: {b[i]!r} -> {a[i]!r}" for i in keep if b[i] != a[i]]
    runs = [load(before, "run.json"), load(after, "run.json")]
    jobs = [_storm_jobs(r) for r in runs]
    for r in runs:
        if r.get("storm"):
            r["storm"] = {k: v for k, v in r["storm"].items() if k != "jobs"}
    out += [f"run.json: {d}" for d in differences(*runs)]
    if len(jobs[0]) != len(jobs[1]):
        out.append(f"run.json: storm.jobs: {len(jobs[0])} -> {len(jobs[1])}")
    for i, (b, a) in enumerate(zip(*jobs)):
        out += [f"run.json: storm.jobs[{i}].{d}" for d in differences(b, a, ignore=TIMING_KEYS | MEASURED_KEYS)]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--show", type=int, default=40, help="print at most this many differences")
    args = parser.parse_args(argv)
    found = compare(args.before, args.after)
    for line in found[:args.show]:
        print(line)
    if len(found) > args.show:
        print(f"... {len(found) - args.show} more")
    print(f"{len(found)} difference(s) between {args.before} and {args.after} (timings and Storm measurements apart)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

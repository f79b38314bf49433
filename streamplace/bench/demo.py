"""``streamplace demo``: the main job on the embedded default.

Today: every uniform micro-benchmark on both paper clusters with every scheduler
registered for the demo, a summary table on the terminal (with progress) and the results
as ``results.csv`` + ``results.json`` in the output directory.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..evaluate.records import records_to_csv, result_record
from ..model.specs import atomic_write_text
from ..schedulers import make_scheduler
from ..workloads import microbench

DEMO_SCHEDULERS = ("even", "optimal")
QUICK_SIZES = (10, 12, 14, 16)


def demo_records(*, quick: bool = False, time_limit: float = 10.0, progress=None) -> list[dict]:
    """One record per (instance, scheduler), placement included."""
    sizes = QUICK_SIZES if quick else microbench.SIZES
    instances = list(microbench.instances(sizes=sizes))
    schedulers = [make_scheduler(name, {"time_limit": time_limit} if name == "optimal" else {}) for name in DEMO_SCHEDULERS]
    records = []
    task = progress.add_task("scheduling", total=len(instances) * len(schedulers)) if progress else None
    for inst in instances:
        for sched in schedulers:
            if progress:
                progress.update(task, description=f"{sched.name:>8} {inst.name}")
            record = result_record(sched.schedule(inst.problem))
            records.append({"workload": f"{inst.layout}-{inst.n_tasks}", "layout": inst.layout, "n_tasks": inst.n_tasks,
                            "cluster": inst.cluster, **record})
            if progress:
                progress.advance(task)
    return records


def summary_table(records: list[dict]) -> Table:
    table = Table(title="inter-node cost: even vs optimal")
    for col in ("workload", "cluster", "even", "optimal", "status", "lower bound", "saving", "solve s"):
        table.add_column(col, justify="left" if col in ("workload", "cluster", "status") else "right")
    by_key: dict[tuple, dict] = {}
    for rec in records:
        by_key.setdefault((rec["workload"], rec["cluster"]), {})[rec["scheduler"]] = rec
    for (workload, cluster), recs in by_key.items():
        even, opt = recs.get("even", {}), recs.get("optimal", {})
        e, o = even.get("inter_node_cost"), opt.get("inter_node_cost")
        saving = f"{100 * (1 - o / e):.0f}%" if e and o is not None else "-"
        table.add_row(workload, cluster, f"{e:g}" if e is not None else "-", f"{o:g}" if o is not None else "-",
                      opt.get("status", "-"), f"{opt['lower_bound']:g}" if opt.get("lower_bound") is not None else "-",
                      saving, f"{opt.get('seconds', 0):.2f}")
    return table


def run_demo(out_dir: Path, *, quick: bool = False, time_limit: float = 10.0, console: Console | None = None) -> list[dict]:
    console = console or Console()
    out_dir.mkdir(parents=True, exist_ok=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as progress:
        records = demo_records(quick=quick, time_limit=time_limit, progress=progress)
    console.print(summary_table(records))
    atomic_write_text(out_dir / "results.json", json.dumps(records, indent=2) + "\n")
    atomic_write_text(out_dir / "results.csv", records_to_csv(records))
    console.print(f"results: {out_dir / 'results.csv'} and {out_dir / 'results.json'} ({len(records)} records)")
    return records

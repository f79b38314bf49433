"""The placement commands: ``schedule``, ``evaluate``, ``compare``, ``diff``, ``reschedule``."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import click
from rich import box
from rich.console import Console
from rich.table import Table

import streamplace as sp

from . import output as writes
from .base import (OutputPath, PROFILE_HELP, PROFILING_HELP, SECONDS, SEED, FiniteFloat, UserError, cli,
                   calibrate_option, cost_model_option, err_console, note, vertical)

# compare's table (JSON and CSV carry every key, cohesion and coupling too)
TABLE_KEYS = ("scheduler", "status", "valid", "inter_node_cost", "lower_bound", "inter_worker_cost", "throughput",
              "latency_ms", "nodes_used", "max_utilisation", "seconds", "message")


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.option("--scheduler", "-s", "name", required=True, help=f"Scheduler name ({', '.join(sp.available())}).")
@click.option("--param", "-p", "params", multiple=True, metavar="KEY=VALUE", help="Scheduler parameter (repeatable).")
@click.option("--seed", type=SEED, default=None, help="Random seed (default 0).")
@click.option("--time-limit", type=SECONDS, default=None, help="Seconds allowed to solvers that take a limit (optimal: time_limit, ischeduler: theta).")
@click.option("-o", "--output", type=OutputPath("document"), help="Write the result (JSON, with the placement) here.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--profiling", type=click.Path(), default=None, help=PROFILING_HELP)
@click.option("--profile", "profile_dir", type=click.Path(), default=None, help=PROFILE_HELP)
@calibrate_option
def schedule(topology, cluster, name, params, seed, time_limit, output, fmt, profiling, profile_dir, calibrate_run):
    """Schedule TOPOLOGY on CLUSTER with one scheduler."""
    job = sp.JobFiles(topology, cluster, profile_dir, calibrate=calibrate_run)
    run = sp.run_scheduler(job, name, sp.parse_pairs(params), seed=seed, time_limit=time_limit, profiling=profiling,
                           on_note=note)
    _show_run(run, output, fmt, f"{run.result.scheduler}: {job.title()}")


def _show_run(run, output_path, fmt, title, hidden=()) -> None:
    """A scheduler run's record: written to ``output_path``, printed as JSON or a table; exit 3 without a placement."""
    if output_path:
        sp.write_document(run.document(), output_path)
    if fmt == "json":
        click.echo(sp.dumps_json(run.document()))
    else:
        Console().print(vertical({k: v for k, v in run.document().items() if k not in hidden}, title))
        if run.result.message:
            err_console.print(f"[yellow]{run.result.scheduler}: {run.result.message}[/yellow]")
    if not run.result.ok:
        sys.exit(3)


@cli.command()
@click.argument("first", type=click.Path())
@click.argument("second", type=click.Path())
@click.option("--topology", type=click.Path(), default=None, help="Topology of the job: the traffic change is computed "
              "from its task graph (else taken from the files' inter_node_cost, if both have one).")
@click.option("--cluster", type=click.Path(), default=None, help="Cluster of the job (with --topology).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def diff(first, second, topology, cluster, fmt):
    """What changes from placement FIRST to SECOND: tasks moved (node or worker), nodes touched, traffic."""
    if (topology is None) != (cluster is None):
        raise UserError("--topology and --cluster go together")
    result = sp.diff_files(first, second, sp.JobFiles(topology, cluster) if topology is not None else None)
    if fmt == "json":
        click.echo(sp.dumps_json(result.to_dict()))
        return
    delta = "unknown (give --topology and --cluster)" if result.traffic_delta is None else sp.format_value(result.traffic_delta)
    Console().print(f"{len(result.moves)} task(s) move: {result.node_moves} to another node, {result.worker_moves} to "
                    f"another worker of their node; {len(result.nodes_touched)} node(s) touched; "
                    f"inter-node traffic change {delta}", soft_wrap=True, markup=False, highlight=False)
    if result.moves:
        table = Table(box=box.SIMPLE)
        for column in ("task", "from", "to"):
            table.add_column(column)
        for move in result.moves:
            table.add_row(move.task, f"{move.before[0]}/{move.before[1]}", f"{move.after[0]}/{move.after[1]}")
        Console().print(table)


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.option("--current", "current_path", type=click.Path(), required=True,
              help="The running placement (a schedule result or a label map); nodes not in CLUSTER are gone.")
@click.option("--scheduler", "-s", "name", default="lns", show_default=True,
              help="lns keeps to the budget; any other scheduler schedules from scratch and reports the moves.")
@click.option("--param", "-p", "params", multiple=True, metavar="KEY=VALUE", help="Scheduler parameter (repeatable).")
@click.option("--seed", type=SEED, default=None, help="Random seed (default 0).")
@click.option("--time-limit", type=SECONDS, default=None, help="Seconds allowed (lns: the whole search).")
@click.option("--max-moves", type=click.IntRange(min=0), default=None,
              help="At most this many tasks change node (default: any); forced moves do not count.")
@click.option("--migration-weight", type=FiniteFloat(min=0, max=1e12), default=0.0, show_default=True,
              help="Traffic units one moved task costs: minimise traffic + W x tasks moved.")
@click.option("-o", "--output", type=OutputPath("document"), help="Write the new placement (JSON) here.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@calibrate_option
def reschedule(topology, cluster, current_path, name, params, seed, time_limit, max_moves, migration_weight, output, fmt,
               calibrate_run):
    """A new placement for a job running as --current: least traffic with at most --max-moves tasks moved.

    Tasks on nodes no longer in CLUSTER, or on a node over capacity, must move whatever the budget
    (forced_moves). Write the result into the Storm plugin's plan directory and it is applied on
    Nimbus' next round."""
    job = sp.JobFiles(topology, cluster, calibrate=calibrate_run)
    run = sp.reschedule(job, current_path, name, sp.parse_pairs(params), seed=seed, time_limit=time_limit,
                        max_moves=max_moves, migration_weight=migration_weight, on_note=note)
    _show_run(run, output, fmt, f"{run.result.scheduler}: reschedule {job.title()}", hidden=("diff",))


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.argument("placement", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--profile", "profile_dir", type=click.Path(), default=None, help=PROFILE_HELP)
@cost_model_option
@calibrate_option
def evaluate(topology, cluster, placement, fmt, profile_dir, cost_model, calibrate_run):
    """Evaluate the PLACEMENT of TOPOLOGY on CLUSTER (a schedule result or a label map)."""
    job = sp.JobFiles(topology, cluster, profile_dir, cost_model=cost_model, calibrate=calibrate_run)
    record = sp.evaluate_placement(job, placement, on_note=note)
    if fmt == "json":
        click.echo(sp.dumps_json(record))
    else:
        Console().print(vertical(record, job.title()))


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.option("--schedulers", "names", default=None, help="Comma-separated scheduler names (default: all).")
@click.option("--param", "-p", "params", multiple=True, metavar="SCHEDULER.KEY=VALUE", help="Parameter for one scheduler.")
@click.option("--seed", type=SEED, default=None)
@click.option("--time-limit", type=SECONDS, default=None)
@click.option("-o", "--output", type=OutputPath("file"), help="Write the output here instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--profiling", type=click.Path(), default=None, help=PROFILING_HELP)
@click.option("--profile", "profile_dir", type=click.Path(), default=None, help=PROFILE_HELP)
@click.option("--objective", type=click.Choice(["throughput", "traffic", "latency"]), default="throughput",
              show_default=True, help="What the recommended placement is best at (within capacity).")
@cost_model_option
@calibrate_option
def compare(topology, cluster, names, params, seed, time_limit, output, fmt, profiling, profile_dir, objective,
            cost_model, calibrate_run):
    """Run several schedulers on TOPOLOGY and CLUSTER and compare their placements."""
    suffix = Path(output).suffix.lower().lstrip(".") if output else ""
    if suffix in ("json", "csv") and suffix != fmt:
        raise UserError(f"-o: {output} is named as {suffix.upper()} but --format is {fmt}: give --format {suffix} "
                        "(or another file name)")
    if names is not None and not any(n.strip() for n in names.split(",")):
        raise UserError(f"--schedulers: names no scheduler (got {sp.quote(names)}); leave it out to run every scheduler")
    chosen = [n.strip() for n in names.split(",") if n.strip()] if names is not None else sp.available()
    twice = next((n for i, n in enumerate(chosen) if n in chosen[:i]), None)
    if twice is not None:
        raise UserError(f"--schedulers: {sp.quote(twice)} named twice (a scheduler is one row)")
    job = sp.JobFiles(topology, cluster, profile_dir, cost_model=cost_model, calibrate=calibrate_run)
    result = sp.compare(job, chosen, sp.per_scheduler(sp.parse_pairs(params), chosen), seed=seed, time_limit=time_limit,
                        profiling=profiling, objective=objective, on_note=note,
                        running=lambda name: err_console.status(f"running {name}..."))
    records = result.documents()
    if fmt == "json":
        writes.emit(sp.dumps_json(records), output)
    elif fmt == "csv":
        writes.emit(sp.records_to_csv(records), output)
    else:
        table = sp.summary_table(records, TABLE_KEYS, title=job.title(),
                                 footnote="message")
        console = Console(file=io.StringIO(), width=200) if output else Console()
        console.print(*table.fitted(console))
        if output:
            writes.emit(console.file.getvalue(), output)
        err_console.print(result.verdict, soft_wrap=True, markup=False, highlight=False)

"""The longer jobs: ``profile`` and ``traffic`` (Spark), ``demo``, ``reproduce`` and ``sweep``."""

from __future__ import annotations

import math

import click
from rich.console import Console

import streamplace as sp

from . import output as writes
from .base import (OutputPath, POSITIVE_SECONDS, SECONDS, SEED, SPARK_MASTER_HELP, FiniteFloat, UserError, cli,
                   cost_model_option, err_console)

REPRODUCE_PAPERS = sp.REPRODUCE_PAPERS


def _seconds(value: str | None, option: str) -> float | None:
    """Epoch seconds from a number or an ISO-8601 timestamp (UTC unless it names a zone)."""
    if value is None:
        return None
    from datetime import datetime, timezone
    try:
        seconds = float(value)
    except ValueError:
        seconds = None
    if seconds is not None:
        if not math.isfinite(seconds):
            raise UserError(f"{option}: expected a finite number of epoch seconds, got {sp.quote(value)}")
        return seconds
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise UserError(f"{option}: expected epoch seconds or an ISO-8601 timestamp, got {sp.quote(value)}") from None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()


@cli.command("profile")
@click.option("--topology", "topology_path", type=click.Path(), required=True, help="Topology the records were measured on.")
@click.option("--traffic", multiple=True, required=True, type=click.Path(), metavar="PATH",
              help="Traffic records: window_start, window_seconds, src_task, dst_task, tuples, bytes (repeatable; globs expand).")
@click.option("--load", multiple=True, type=click.Path(), metavar="PATH",
              help="Load records: window_start, window_seconds, task, executed, cpu_seconds (repeatable).")
@click.option("--from", "start", default=None, metavar="TS", help="Use windows starting at or after TS (epoch s or ISO-8601).")
@click.option("--to", "end", default=None, metavar="TS", help="Use windows ending at or before TS.")
@click.option("--decay", "half_life", type=FiniteFloat(min=0, max=1e12, min_open=True), default=None, metavar="HALF_LIFE_S",
              help="Exponential decay across windows with this half-life in seconds (default: plain average).")
@click.option("--weight", type=click.Choice(["tuples", "bytes"]), default="tuples", show_default=True,
              help="Which rate becomes the task graph's edge weight.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "parquet"]), default=None,
              help="Input format (default: from each file's extension).")
@click.option("--spark-master", envvar="STREAMPLACE_SPARK_MASTER", default=None, help=SPARK_MASTER_HELP)
@click.option("-o", "--output", "out_dir", type=OutputPath("dir"), required=True,
              help="Profile directory to write (replaced as a whole; never one holding the inputs).")
@click.option("--force", is_flag=True, help="Replace DIR even if it holds files that are not a profile.")
def profile_cmd(topology_path, traffic, load, start, end, half_life, weight, fmt, spark_master, out_dir, force):
    """Monitoring records -> a profile (per-second rates per task edge and task) on Spark."""
    writes.guard_profile_dir(out_dir, force)
    result = sp.profile_records(topology_path, traffic, load, out_dir, start=_seconds(start, "--from"), end=_seconds(end, "--to"),
                        start_text=start, end_text=end, half_life=half_life, weight=weight, fmt=fmt,
                        spark_master=spark_master)
    s = result.summary
    reasons = ", ".join(f"{r} {n}" for r, n in s["rejected_by_reason"].items()) or "none"
    err_console.print(f"rows read {s['rows_read']:,}, used {s['rows_used']:,}, rejected {s['rows_rejected']:,} ({reasons}); "
                      f"{s['edges']} edges over {s['traffic']['observed_seconds']:g} s observed; wrote {out_dir} "
                      f"in {s['seconds']:.1f} s on {s['spark_master']}")


@cli.command("traffic")
@click.option("--app", "app_name", type=click.Choice(list(sp.APPLICATIONS)), default=None,
              help="Use a bundled application's operator logic (else operators pass tuples on with their selectivity).")
@click.option("--topology", "topology_path", type=click.Path(), default=None, help="Topology (default with --app: the application's).")
@click.option("--records", "records_path", type=click.Path(), required=True, help="Application records (Parquet, CSV or JSON Lines).")
@click.option("--records-format", type=click.Choice(["jsonl", "csv", "parquet"]), default=None, help="Default: from the extension.")
@click.option("--time-column", default=None, help="Event-time column (default: the application's, else ts).")
@click.option("--window", "window_seconds", type=FiniteFloat(min=0, max=1e7, min_open=True), default=10.0, show_default=True,
              help="Monitoring window length in seconds.")
@click.option("--cluster", "cluster_path", type=click.Path(), default=None, help="Cluster of --placement.")
@click.option("--placement", "placement_path", type=click.Path(), default=None,
              help="Placement for local_or_shuffle streams (without it they shuffle).")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv", "jsonl"]), default="parquet", show_default=True,
              help="Format of the monitoring records written.")
@click.option("--spark-master", envvar="STREAMPLACE_SPARK_MASTER", default=None, help=SPARK_MASTER_HELP)
@click.option("-o", "--output", "out_dir", type=OutputPath("into"), required=True,
              help="Directory for traffic.<format> and load.<format>.")
def traffic_cmd(app_name, topology_path, records_path, records_format, time_column, window_seconds, cluster_path,
                placement_path, seed, fmt, spark_master, out_dir):
    """Replay application records through a topology's groupings -> monitoring records."""
    mon, paths = sp.replay_traffic(records_path, out_dir, app=app_name, topology=topology_path,
                                   records_format=records_format, time_column=time_column,
                                   window_seconds=window_seconds, cluster=cluster_path, placement=placement_path,
                                   seed=seed, fmt=fmt, spark_master=spark_master)
    executed = ", ".join(f"{k} {v:,}" for k, v in mon.executed.items())
    skipped = "".join(f"; {n:,} {what} skipped" for n, what in ((mon.records_without_time, "records without a time"),
                                                                (mon.malformed_lines, "lines that are no record (malformed JSON)")) if n)
    err_console.print(f"tuples executed: {executed}{skipped}; wrote {paths[0]} and {paths[1]}")


@cli.command()
@click.option("-o", "--output", "out_dir", type=OutputPath("into"), default="out/demo", show_default=True)
@click.option("--quick", is_flag=True, help="Reduced sizes (2 applications, 5,000 records, 10-14 task micro-benchmarks), same steps.")
@click.option("--time-limit", type=POSITIVE_SECONDS, default=10.0, show_default=True,
              help="Seconds per optimal solve.")
@click.option("--spark-master", envvar="STREAMPLACE_SPARK_MASTER", default=None, help=SPARK_MASTER_HELP)
@cost_model_option
@click.option("--calibrate", "calibrate_run", type=click.Path(), default=None, metavar="RUN",
              help="A run of one of the demo's jobs (a `streamplace storm run` output directory of, e.g., "
                   "DIR/apps/page-view/topology.yaml on its cluster-4high+4low.yaml): that job's predictions and "
                   "recommendation are calibrated on it (docs/demo.md).")
def demo(out_dir, quick, time_limit, spark_master, cost_model, calibrate_run):
    """The main job: bundled applications generated, replayed and profiled on Spark, scheduled by every
    scheduler on a homogeneous and a heterogeneous cluster, plus the micro-benchmarks; report in DIR."""
    sp.run_demo(out_dir, quick=quick, time_limit=time_limit, console=Console(), master=spark_master, model=cost_model,
                calibrate=calibrate_run)


@cli.command()
@click.option("--paper", "papers", type=click.Choice([*REPRODUCE_PAPERS, "all"]), multiple=True, default=("all",),
              show_default=True, help="Paper to reproduce (repeatable): ischeduler [I], t3 [T3], metis [F], lf [LF], "
                                      "throughput [N].")
@click.option("-o", "--output", "out_dir", type=OutputPath("into"), required=True,
              help="Directory for report.html, PNGs, results.csv/json and summary.md.")
@click.option("--quick", is_flag=True, help="Reduced sizes (seconds instead of minutes), same steps.")
@click.option("--time-limit", type=SECONDS, default=10.0, show_default=True, help="Seconds per optimal solve.")
@cost_model_option
@click.option("--testbed", "testbed_runs", type=click.Path(), multiple=True,
              help="A testbed campaign (DIR or DIR/runs.jsonl of benchmarks/storm_testbed.py; repeatable, the runs of "
                   "all are pooled): score [I]/[T3] Sec. 6 statements against its measured throughput too "
                   "(statements-testbed.json, a report section).")
def reproduce(papers, out_dir, quick, time_limit, cost_model, testbed_runs):
    """The papers' comparisons rebuilt from our implementations, beside the published numbers."""
    chosen = REPRODUCE_PAPERS if "all" in papers else tuple(dict.fromkeys(papers))
    sp.reproduce_papers(chosen, out_dir, quick=quick, time_limit=time_limit, console=Console(), model=cost_model,
                        testbed=testbed_runs)


@cli.command("sweep")
@click.argument("grid", type=click.Path())
@click.option("-o", "--output", "out_dir", type=OutputPath("into"), required=True,
              help="Directory for parts/*.parquet and results.csv; scenarios already there are skipped.")
@click.option("--batch-size", type=click.IntRange(min=1), default=None,
              help="Scenarios per Spark job and Parquet part (default: 4 x Spark's parallelism).")
@click.option("--retry-failed", is_flag=True, help="Run again the scenarios recorded with an error.")
@click.option("--report", "with_report", is_flag=True, help="Also write report.html and PNG plots of all results in DIR.")
@click.option("--spark-master", envvar="STREAMPLACE_SPARK_MASTER", default=None, help=SPARK_MASTER_HELP)
def sweep_cmd(grid, out_dir, batch_size, retry_failed, with_report, spark_master):
    """A GRID of workloads x clusters x schedulers x seeds, evaluated in parallel on Spark."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal) as progress:
            task = None

            def start(total):
                nonlocal task
                task = progress.add_task("scenarios", total=total)
            summary = sp.sweep(grid, out_dir, spark_master=spark_master, batch_size=batch_size,
                               retry_failed=retry_failed, report=with_report, on_start=start, on_progress=lambda p: progress.update(
                                   task, completed=p.done, description=f"batch {p.batches_done}/{p.batches}, "
                                                                       f"{p.failed} failed"))
    except KeyboardInterrupt:
        err_console.print(f"the scenarios finished so far are in {out_dir}; rerun the same command to resume", soft_wrap=True,
                          markup=False)
        raise
    err_console.print(summary.describe(), soft_wrap=True, markup=False)
    for line in summary.errors:
        err_console.print(f"failed: {line}", style="yellow", soft_wrap=True, markup=False)
    if summary.report:
        err_console.print(f"report: {summary.report}", soft_wrap=True, markup=False)

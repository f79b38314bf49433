"""Command line: ``streamplace schedule | evaluate | compare | workload | demo``.

User errors (bad files, unknown schedulers or parameters) print one line
``streamplace: FILE: FIELD: problem`` and exit with code 2; internal errors show their
traceback only with ``--debug``.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import click
from rich import box
from rich.console import Console
from rich.table import Table

from .evaluate.records import evaluation_record, records_to_csv, result_record
from .model import Problem
from .model.profiling import DEFAULT_MET, profiling_to_dict
from .model.specs import (SpecError, atomic_write_text, cluster_to_dict, load_cluster, load_placement,
                          load_topology, topology_to_dict, write_document)
from .schedulers import ParameterError, available, make_scheduler
from .workloads import microbench
from .workloads import lf as lf_workloads
from .workloads import nasiri as nasiri_workloads

TABLE_KEYS = ("scheduler", "status", "inter_node_cost", "inter_worker_cost", "lower_bound", "nodes_used",
              "max_utilisation", "cohesion", "coupling", "seconds")

err_console = Console(stderr=True)


class UserError(Exception):
    """A problem with the user's input: one line, exit code 2."""


def _parse_params(pairs: tuple[str, ...]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--param: expected key=value, got {pair!r}")
        params[key.strip()] = value.strip()
    return params


def _scheduler(name: str, params: dict, seed: int | None, time_limit: float | None, profiling: str | None = None):
    from .schedulers.base import REGISTRY
    if name in REGISTRY:
        fields = REGISTRY[name].__dataclass_fields__
        if seed is not None:
            params.setdefault("seed", seed)
        if profiling is not None and "profiling" in fields:
            params.setdefault("profiling", profiling)
        if time_limit is not None and "time_limit" in fields:
            params.setdefault("time_limit", time_limit)
    return make_scheduler(name, params)


PROFILING_HELP = ("Profiling spec (YAML/JSON: machine types, e and MET tables, R0) passed to schedulers that "
                  "take one (throughput); without it they derive one from the operators' cpu_per_tuple.")


def _problem(topology: str, cluster: str) -> Problem:
    return Problem.from_topology(load_topology(topology), load_cluster(cluster))


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, list):
        return ",".join(map(str, value)) or "-"
    return str(value)


LABELS = {"inter_node_cost": "inter-node", "inter_worker_cost": "inter-worker", "lower_bound": "bound",
          "nodes_used": "nodes", "max_utilisation": "max util", "seconds": "seconds"}


def _table(records: list[dict], keys, title: str | None = None) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD)
    for key in keys:
        table.add_column(LABELS.get(key, key), justify="left" if key in ("scheduler", "status", "workload", "cluster") else "right")
    for rec in records:
        table.add_row(*(_fmt(rec.get(k)) for k in keys))
    return table


def _vertical(record: dict, title: str) -> Table:
    """One record as a two-column metric/value table."""
    table = Table(title=title, box=box.SIMPLE_HEAD)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in record.items():
        if key not in ("placement", "params", "details"):
            table.add_row(key, _fmt(value))
    return table


def _emit(text: str, output: str | None) -> None:
    if output:
        path = Path(output)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    else:
        click.echo(text, nl=not text.endswith("\n"))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks of internal errors.")
@click.version_option(package_name="streamplace")
@click.pass_context
def cli(ctx, debug):
    """Place the tasks of stream-processing jobs on clusters, and measure the result."""
    ctx.obj = {"debug": debug}


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.option("--scheduler", "-s", "name", required=True, help=f"Scheduler name ({', '.join(available())}).")
@click.option("--param", "-p", "params", multiple=True, metavar="KEY=VALUE", help="Scheduler parameter (repeatable).")
@click.option("--seed", type=int, default=None, help="Random seed (default 0).")
@click.option("--time-limit", type=click.FloatRange(min=0), default=None, help="Seconds allowed to solvers that take a limit.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the result (JSON, with the placement) here.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--profiling", type=click.Path(), default=None, help=PROFILING_HELP)
def schedule(topology, cluster, name, params, seed, time_limit, output, fmt, profiling):
    """Schedule TOPOLOGY on CLUSTER with one scheduler."""
    problem = _problem(topology, cluster)
    result = _scheduler(name, _parse_params(params), seed, time_limit, profiling).schedule(problem)
    record = result_record(result)
    if result.problem.topology != problem.topology:  # the scheduler chose the parallelism (throughput)
        record["parallelism"] = {op.name: op.parallelism for op in result.problem.topology.operators}
    if output:
        write_document(record, output if Path(output).suffix else output + ".json")
    if fmt == "json":
        click.echo(json.dumps(record, indent=2))
    else:
        Console().print(_vertical(record, f"{result.scheduler}: {problem.topology.name} on {problem.cluster.name}"))
        if result.message:
            err_console.print(f"[yellow]{result.scheduler}: {result.message}[/yellow]")
    if result.status == "infeasible":
        sys.exit(1)


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.argument("placement", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def evaluate(topology, cluster, placement, fmt):
    """Evaluate the PLACEMENT of TOPOLOGY on CLUSTER (a schedule result or a label map)."""
    problem = _problem(topology, cluster)
    record = evaluation_record(problem, load_placement(placement, problem.topology, problem.cluster))
    if fmt == "json":
        click.echo(json.dumps(record, indent=2))
    else:
        Console().print(_vertical(record, f"{problem.topology.name} on {problem.cluster.name}"))


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.option("--schedulers", "names", default=None, help="Comma-separated scheduler names (default: all).")
@click.option("--param", "-p", "params", multiple=True, metavar="SCHEDULER.KEY=VALUE", help="Parameter for one scheduler.")
@click.option("--seed", type=int, default=None)
@click.option("--time-limit", type=click.FloatRange(min=0), default=None)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the output here instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--profiling", type=click.Path(), default=None, help=PROFILING_HELP)
def compare(topology, cluster, names, params, seed, time_limit, output, fmt, profiling):
    """Run several schedulers on TOPOLOGY and CLUSTER and compare their placements."""
    problem = _problem(topology, cluster)
    chosen = [n.strip() for n in names.split(",") if n.strip()] if names else available()
    per_scheduler: dict[str, dict] = {n: {} for n in chosen}
    for key, value in _parse_params(params).items():
        sched, dot, param = key.partition(".")
        if not dot or sched not in per_scheduler:
            raise UserError(f"--param: expected SCHEDULER.KEY=VALUE with SCHEDULER one of {', '.join(chosen)}, got {key!r}")
        per_scheduler[sched][param] = value
    schedulers = [_scheduler(n, per_scheduler[n], seed, time_limit, profiling) for n in chosen]
    records = []
    for sched in schedulers:
        with err_console.status(f"running {sched.name}..."):
            records.append(result_record(sched.schedule(problem)))
    if fmt == "json":
        _emit(json.dumps(records, indent=2), output)
    elif fmt == "csv":
        _emit(records_to_csv(records), output)
    else:
        table = _table(records, TABLE_KEYS, title=f"{problem.topology.name} on {problem.cluster.name}")
        if output:
            console = Console(file=io.StringIO(), width=200)
            console.print(table)
            _emit(console.file.getvalue(), output)
        else:
            Console().print(table)


@cli.group()
def workload():
    """Write bundled workloads (topologies, clusters) as spec files."""


@workload.command("microbench")
@click.option("--layout", type=click.Choice(microbench.LAYOUTS), required=True)
@click.option("--tasks", type=int, required=True, help="Task count (even; 10..32 in the papers).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="YAML or JSON file to write.")
def workload_microbench(layout, tasks, output):
    """A uniform micro-benchmark topology ([I]/[T3] Sec. 5)."""
    try:
        topo = microbench.microbench(layout, tasks)
    except ValueError as exc:
        raise UserError(f"--tasks: {exc}") from None
    write_document(topology_to_dict(topo), output)
    err_console.print(f"wrote {output}: {topo.n_tasks} tasks, {len(topo.operators)} operators")


@workload.command("lf")
@click.option("--config", type=click.Choice([*lf_workloads.CONFIGS, "page-view-count"]), required=True)
@click.option("--high", is_flag=True, help="High parallelism (x10), for the lf-high cluster.")
@click.option("--grouping", type=click.Choice(lf_workloads.SW_GROUPINGS), default=None,
              help="Streams of a synthetic configuration (default local_or_shuffle; shuffle = [LF]'s non-LSP runs).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="YAML or JSON file to write.")
def workload_lf(config, high, grouping, output):
    """An [LF] workload: a synthetic configuration of Table 3 or the page-view-count topology."""
    if config == "page-view-count":
        if high or grouping:
            raise UserError("--high/--grouping: the page-view-count topology has fixed parallelism and groupings")
        topo = lf_workloads.page_view_count()
    else:
        topo = lf_workloads.synthetic(config, high=high, grouping=grouping or "local_or_shuffle")
    write_document(topology_to_dict(topo), output)
    err_console.print(f"wrote {output}: {topo.n_tasks} tasks, {len(topo.operators)} operators")


@workload.command("nasiri")
@click.option("--layout", type=click.Choice(nasiri_workloads.LAYOUTS), required=True)
@click.option("--compute", type=click.Choice(nasiri_workloads.COMPUTE), default="mixed", show_default=True,
              help="Operator types: mixed = one high- and one mid-compute bolt, the rest low; else all of one type.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="Topology YAML or JSON file to write.")
@click.option("--profiling-out", type=click.Path(dir_okay=False), default=None,
              help="Also write the matching profiling spec ([N] Table 3) here, for schedule/compare --profiling.")
@click.option("--preset", type=click.Choice(list(nasiri_workloads.CLUSTER_PRESETS)), default=None,
              help="Put this Table 4 cluster's machine counts in the profiling spec.")
@click.option("--met", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_MET, show_default=True,
              help="MET of every task in the profiling spec, percent of a machine ([N] gives none).")
def workload_nasiri(layout, compute, output, profiling_out, preset, met):
    """An [N] micro-benchmark topology (linear, diamond, star) and optionally its profiling spec."""
    topo = nasiri_workloads.topology(layout, compute)
    write_document(topology_to_dict(topo), output)
    err_console.print(f"wrote {output}: {topo.n_tasks} tasks, {len(topo.operators)} operators")
    if profiling_out:
        write_document(profiling_to_dict(nasiri_workloads.profiling(layout, compute, preset=preset, met=met)), profiling_out)
        err_console.print(f"wrote {profiling_out}: profiling of {len(topo.operators)} operators on 3 machine types")


@workload.command("cluster")
@click.option("--preset", type=click.Choice(list(microbench.CLUSTER_PRESETS) + list(lf_workloads.CLUSTER_PRESETS)
                                            + list(nasiri_workloads.CLUSTER_PRESETS)), required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="YAML or JSON file to write.")
def workload_cluster(preset, output):
    """A cluster preset (homogeneous 10 x 4; heterogeneous {6: 3, 4: 3, 2: 4}; lf-low 8 x 1 slot; lf-high 8 x 10 slots;
    nasiri-small/medium/large: [N] Table 4, 2/2/2, 10/10/10, 20/70/90 machines of types 1/2/3)."""
    if preset in nasiri_workloads.CLUSTER_PRESETS:  # [N] Table 4: machine types 1/2/3, capacity 100 = MAC
        cluster = nasiri_workloads.cluster(preset)
    else:
        cluster = lf_workloads.cluster(preset) if preset in lf_workloads.CLUSTER_PRESETS else microbench.cluster(preset)
    write_document(cluster_to_dict(cluster), output)
    err_console.print(f"wrote {output}: {cluster.n_nodes} nodes, capacity {cluster.capacities.sum():g}")


@cli.command()
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default="out/demo", show_default=True)
@click.option("--quick", is_flag=True, help="Smaller sizes (10-16 tasks), same steps.")
@click.option("--time-limit", type=click.FloatRange(min=0), default=10.0, show_default=True, help="Seconds per optimal solve.")
def demo(out_dir, quick, time_limit):
    """The main job: every micro-benchmark on both clusters with every scheduler, to DIR."""
    from .bench.demo import run_demo
    run_demo(Path(out_dir), quick=quick, time_limit=time_limit, console=Console())


def main(argv=None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="streamplace", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        err_console.print("streamplace: aborted")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (SpecError, ParameterError, UserError) as exc:
        click.echo(f"streamplace: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("streamplace: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # internal error: one line unless --debug
        if debug:
            raise
        click.echo(f"streamplace: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)", err=True)
        sys.exit(1)

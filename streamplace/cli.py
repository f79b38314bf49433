"""Command line: ``streamplace schedule | evaluate | compare | workload | profile | traffic | demo | storm``.

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
from rich.markup import escape as rich_escape
from rich.table import Table

from .report.display import format_value, metric, summary_table
from .evaluate.records import evaluation_record, records_to_csv, result_record
from .model import Problem, build_task_graph
from .model.errors import FieldError, Notice
from .model.profiling import DEFAULT_MET, profiling_to_dict
from .profile import PROFILE_FILES
from .model.specs import (SpecError, atomic_write_text, cluster_to_dict, load_cluster, load_placement,
                          load_topology, read_document, topology_to_dict, write_document)
from .schedulers import ParameterError, available, make_scheduler
from .schedulers.base import MAX_TIME_LIMIT
from .storm.errors import StormError
from .workloads import microbench
from .workloads import lf as lf_workloads
from .workloads import nasiri as nasiri_workloads
from .workloads.applications import APPLICATIONS
from .workloads.catalogue import CLUSTER_GENERATORS, PRESETS, REQUIRED, TOPOLOGIES, describe
from .workloads.catalogue import preset as catalogue_preset

# compare's table (JSON and CSV carry every key, cohesion and coupling too)
TABLE_KEYS = ("scheduler", "status", "valid", "inter_node_cost", "lower_bound", "inter_worker_cost", "throughput",
              "latency_ms", "nodes_used", "max_utilisation", "seconds", "message")

err_console = Console(stderr=True)


class UserError(Exception):
    """A problem with the user's input: one line, exit code 2."""


class FiniteFloat(click.FloatRange):
    """A float in a documented range; NaN and infinities are refused (click's FloatRange lets NaN through)."""

    def convert(self, value, param, ctx):
        import math
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{number} is not a finite number.", param, ctx)
        return number


SECONDS = FiniteFloat(min=0, max=MAX_TIME_LIMIT)  # 0: ischeduler's theta 0 (its heuristic alone)
POSITIVE_SECONDS = FiniteFloat(min=0, max=MAX_TIME_LIMIT, min_open=True)
SEED = click.IntRange(min=0, max=2**31 - 1)  # CP-SAT and METIS take 32-bit seeds


def _parse_params(pairs: tuple[str, ...]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--param: expected key=value, got {pair!r}")
        params[key.strip()] = value.strip()
    return params


def _schedulers(names: list[str], params: dict[str, dict], seed: int | None, time_limit: float | None,
                profiling: str | None = None) -> list:
    """The named schedulers through the one path (:func:`make_scheduler`); one note names those
    that take no time budget when ``--time-limit`` was given."""
    from .schedulers.base import REGISTRY
    unbudgeted = [n for n in names if time_limit is not None and n in REGISTRY and not REGISTRY[n].honours_time_limit]
    if unbudgeted:
        verb = "takes" if len(unbudgeted) == 1 else "take"
        click.echo(f"streamplace: note: {', '.join(unbudgeted)} {verb} no time limit and run{'s' * (verb == 'takes')} to "
                   f"completion (--time-limit applies to {', '.join(n for n, c in REGISTRY.items() if c.honours_time_limit)})",
                   err=True)
    return [make_scheduler(n, params.get(n), seed=seed, time_limit=time_limit, profiling=profiling) for n in names]


def _scheduler(name: str, params: dict, seed: int | None, time_limit: float | None, profiling: str | None = None):
    return _schedulers([name], {name: params}, seed, time_limit, profiling)[0]


PROFILING_HELP = ("Profiling spec (YAML/JSON: machine types, e and MET tables, R0) passed to schedulers that "
                  "take one (throughput); without it they derive one from the operators' cpu_per_tuple.")


def _problem(topology: str, cluster: str, profile: str | None = None) -> Problem:
    """The problem of the given files; a model error (e.g. too many task edges) names its file."""
    from .api import load_problem
    return load_problem(topology, cluster, profile)


PROFILE_HELP = "Profile directory (from `streamplace profile`): its measured rates are the task graph's edge weights."


def _vertical(record: dict, title: str) -> Table:
    """One record as a two-column table: each key with its unit, and its value."""
    table = Table(title=title, box=box.SIMPLE_HEAD)
    table.add_column("metric")
    table.add_column("value", justify="right", overflow="fold")
    for key, value in record.items():
        if key not in ("placement", "params", "details"):
            unit = metric(key).unit
            table.add_row(f"{key} [dim]({unit})[/dim]" if unit else key, format_value(value))
    return table


def _same_or_inside(path: str, inputs) -> str | None:
    """The first of ``inputs`` that is ``path`` or lies inside it (any spelling: symlinks, ``..``)."""
    import os
    out = os.path.realpath(path)
    for inp in inputs:
        if inp is None:
            continue
        real = os.path.realpath(inp)
        if real == out or real.startswith(out.rstrip(os.sep) + os.sep):
            return str(inp)
    return None


def _guard_output(output: str | None, inputs, option: str = "-o") -> None:
    """Refuse an output path that is one of the inputs or holds one (exit 2, inputs untouched)."""
    if output is None:
        return
    clash = _same_or_inside(output, inputs)
    if clash is not None:
        what = "is" if Path(clash).resolve() == Path(output).resolve() else "contains"
        raise UserError(f"{option}: {output} {what} the input {clash}; choose another output path")


def _guard_profile_dir(out_dir: str, force: bool) -> None:
    """A profile replaces its directory: refuse one holding anything but an earlier profile, unless --force."""
    out = Path(out_dir)
    if not out.is_dir():
        return
    foreign = sorted(p.name for p in out.iterdir() if p.name not in PROFILE_FILES)
    if foreign and not force:
        raise UserError(f"-o: {out_dir} holds files that are not a profile ({', '.join(foreign[:3])}"
                        f"{', ...' if len(foreign) > 3 else ''}); they would be deleted: choose an empty or new "
                        "directory, or add --force")


def _emit(text: str, output: str | None) -> None:
    if output:
        atomic_write_text(Path(output), text)
    else:
        click.echo(text, nl=not text.endswith("\n"))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks of internal errors.")
@click.option("--memory-limit", default=None, metavar="SIZE",
              help="Memory an input may need, e.g. 12G (default: half of this machine's memory); larger inputs are refused.")
@click.version_option(package_name="streamplace")
@click.pass_context
def cli(ctx, debug, memory_limit):
    """Place the tasks of stream-processing jobs on clusters, and measure the result."""
    ctx.obj = {"debug": debug}
    if memory_limit is not None:
        import os
        from .memory import ENV, parse_size
        try:
            parse_size(memory_limit)
        except ValueError:
            raise click.BadParameter(f"expected a size such as 12G, got {memory_limit!r}", param_hint="--memory-limit") from None
        os.environ[ENV] = memory_limit


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.option("--scheduler", "-s", "name", required=True, help=f"Scheduler name ({', '.join(available())}).")
@click.option("--param", "-p", "params", multiple=True, metavar="KEY=VALUE", help="Scheduler parameter (repeatable).")
@click.option("--seed", type=SEED, default=None, help="Random seed (default 0).")
@click.option("--time-limit", type=SECONDS, default=None, help="Seconds allowed to solvers that take a limit (optimal: time_limit, ischeduler: theta).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the result (JSON, with the placement) here.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--profiling", type=click.Path(), default=None, help=PROFILING_HELP)
@click.option("--profile", "profile_dir", type=click.Path(), default=None, help=PROFILE_HELP)
def schedule(topology, cluster, name, params, seed, time_limit, output, fmt, profiling, profile_dir):
    """Schedule TOPOLOGY on CLUSTER with one scheduler."""
    if output:
        output = output if Path(output).suffix else output + ".json"
    _guard_output(output, (topology, cluster, profiling, profile_dir))
    problem = _problem(topology, cluster, profile_dir)
    result = _scheduler(name, _parse_params(params), seed, time_limit, profiling).schedule(problem)
    record = result_record(result)
    if result.problem.topology != problem.topology:  # the scheduler chose the parallelism (throughput)
        record["parallelism"] = {op.name: op.parallelism for op in result.problem.topology.operators}
    if output:
        write_document(record, output)
    if fmt == "json":
        click.echo(json.dumps(record, indent=2))
    else:
        Console().print(_vertical(record, f"{result.scheduler}: {problem.topology.name} on {problem.cluster.name}"))
        if result.message:
            err_console.print(f"[yellow]{result.scheduler}: {result.message}[/yellow]")
    if not result.ok:
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
    from .evaluate.diff import DiffError, diff_placements, diff_targets
    from .model.specs import placement_targets
    if (topology is None) != (cluster is None):
        raise UserError("--topology and --cluster go together")
    try:
        if topology is not None:
            problem = _problem(topology, cluster)
            result = diff_placements(problem, load_placement(first, problem.topology, problem.cluster),
                                     load_placement(second, problem.topology, problem.cluster))
        else:
            docs = [read_document(first), read_document(second)]
            costs = [d.get("inter_node_cost") if isinstance(d, dict) else None for d in docs]
            delta = costs[1] - costs[0] if all(isinstance(c, (int, float)) for c in costs) else None
            result = diff_targets(placement_targets(docs[0], first), placement_targets(docs[1], second),
                                  traffic_delta=delta, names=(first, second))
    except DiffError as exc:
        raise UserError(f"{first}, {second}: {exc}") from None
    record = result.to_dict()
    if fmt == "json":
        click.echo(json.dumps(record, indent=2))
        return
    delta = "unknown (give --topology and --cluster)" if result.traffic_delta is None else format_value(result.traffic_delta)
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
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the new placement (JSON) here.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def reschedule(topology, cluster, current_path, name, params, seed, time_limit, max_moves, migration_weight, output, fmt):
    """A new placement for a job running as --current: least traffic with at most --max-moves tasks moved.

    Tasks on nodes no longer in CLUSTER, or on a node over capacity, must move whatever the budget
    (forced_moves). Write the result into the Storm plugin's plan directory and it is applied on
    Nimbus' next round."""
    from .evaluate.diff import diff_targets, targets_of
    from .model.specs import placement_targets
    if output:
        output = output if Path(output).suffix else output + ".json"
    _guard_output(output, (topology, cluster, current_path))
    problem = _problem(topology, cluster)
    current = placement_targets(read_document(current_path), current_path)
    result = _scheduler(name, _parse_params(params), seed, time_limit).reschedule(
        problem, current, max_moves=max_moves, migration_weight=migration_weight)
    record = result_record(result)
    if result.placement is not None:
        moved = result.details["reschedule"]
        record.update(moves=moved["moves"], forced_moves=moved["forced_moves"],
                      diff=[m.to_dict() for m in diff_targets(current, targets_of(problem, result.placement)).moves
                            if m.before[0] != m.after[0]])
    if output:
        write_document(record, output)
    if fmt == "json":
        click.echo(json.dumps(record, indent=2))
    else:
        Console().print(_vertical({k: v for k, v in record.items() if k not in ("diff",)},
                                  f"{result.scheduler}: reschedule {problem.topology.name} on {problem.cluster.name}"))
        if result.message:
            err_console.print(f"[yellow]{result.scheduler}: {result.message}[/yellow]")
    if not result.ok:
        sys.exit(3)


COST_MODEL_HELP = ("Cost model file (YAML/JSON, `cost_model:` mapping of constants) for the predicted throughput and "
                   "latency; default: the bundled model fitted to testbed measurements (docs/performance-model.md).")


def cost_model_option(command):
    return click.option("--cost-model", "cost_model", type=click.Path(), default=None, help=COST_MODEL_HELP)(command)


def _cost_model(path):
    from .model.performance import load_cost_model
    return load_cost_model(path) if path else None


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.argument("placement", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--profile", "profile_dir", type=click.Path(), default=None, help=PROFILE_HELP)
@cost_model_option
def evaluate(topology, cluster, placement, fmt, profile_dir, cost_model):
    """Evaluate the PLACEMENT of TOPOLOGY on CLUSTER (a schedule result or a label map)."""
    model = _cost_model(cost_model)
    problem = _problem(topology, cluster, profile_dir)
    record = evaluation_record(problem, load_placement(placement, problem.topology, problem.cluster), model=model)
    if fmt == "json":
        click.echo(json.dumps(record, indent=2))
    else:
        Console().print(_vertical(record, f"{problem.topology.name} on {problem.cluster.name}"))


@cli.command()
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.option("--schedulers", "names", default=None, help="Comma-separated scheduler names (default: all).")
@click.option("--param", "-p", "params", multiple=True, metavar="SCHEDULER.KEY=VALUE", help="Parameter for one scheduler.")
@click.option("--seed", type=SEED, default=None)
@click.option("--time-limit", type=SECONDS, default=None)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the output here instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--profiling", type=click.Path(), default=None, help=PROFILING_HELP)
@click.option("--profile", "profile_dir", type=click.Path(), default=None, help=PROFILE_HELP)
@click.option("--objective", type=click.Choice(["throughput", "traffic", "latency"]), default="throughput",
              show_default=True, help="What the recommended placement is best at (within capacity).")
@cost_model_option
def compare(topology, cluster, names, params, seed, time_limit, output, fmt, profiling, profile_dir, objective,
            cost_model):
    """Run several schedulers on TOPOLOGY and CLUSTER and compare their placements."""
    _guard_output(output, (topology, cluster, profiling, profile_dir, cost_model))
    model = _cost_model(cost_model)
    problem = _problem(topology, cluster, profile_dir)
    chosen = [n.strip() for n in names.split(",") if n.strip()] if names else available()
    per_scheduler: dict[str, dict] = {n: {} for n in chosen}
    for key, value in _parse_params(params).items():
        sched, dot, param = key.partition(".")
        if not dot or sched not in per_scheduler:
            raise UserError(f"--param: expected SCHEDULER.KEY=VALUE with SCHEDULER one of {', '.join(chosen)}, got {key!r}")
        per_scheduler[sched][param] = value
    schedulers = _schedulers(chosen, per_scheduler, seed, time_limit, profiling)
    records = []
    for sched in schedulers:
        with err_console.status(f"running {sched.name}..."):
            records.append(result_record(sched.schedule(problem), model=model))
    verdict = _recommend(problem, records, objective, model, seed)
    if fmt == "json":
        _emit(json.dumps(records, indent=2), output)
    elif fmt == "csv":
        _emit(records_to_csv(records), output)
    else:
        table = summary_table(records, TABLE_KEYS, title=f"{problem.topology.name} on {problem.cluster.name}",
                              footnote="message")
        console = Console(file=io.StringIO(), width=200) if output else Console()
        console.print(*table.fitted(console))
        if output:
            _emit(console.file.getvalue(), output)
        err_console.print(verdict, soft_wrap=True, markup=False, highlight=False)


def _recommend(problem: Problem, records: list[dict], objective: str, model, seed) -> str:
    """Marks the recommended record (``recommended``, ``reason``) and gives every record with a
    placement its change against Storm's default (``vs_<default>``), evaluating the default
    whether it was listed or not; returns the verdict in one line."""
    from .evaluate.decision import annotate, disagreement, recommend
    from .schedulers import storm_default
    default = storm_default()
    reference = next((r for r in records if r["scheduler"] == default), None) or \
        result_record(_scheduler(default, {}, seed, None).schedule(problem), model=model)
    decision = annotate(records, reference, objective, key=f"vs_{default}")
    if decision.index is None:
        return f"recommended: none ({decision.reason})"
    best = records[decision.index]
    gain = best.get(f"vs_{default}", {})
    parts = [f"{label} {value:+.0f} %" for label, value in (("traffic saved", gain.get("traffic_pct")),
             ("throughput", gain.get("throughput_pct")), ("latency", gain.get("latency_pct"))) if value is not None]
    why = disagreement(records, decision.index, problem.n_tasks, problem.cluster.n_nodes)
    unlisted = reference not in records and recommend([best, reference], objective).index == 1
    against = (f"{default} itself, Storm's default, is the best here" if best["scheduler"] == default
               else f"against {default}: {', '.join(parts) or 'n/a'}")
    return (f"recommended: {best['scheduler']} ({decision.reason}); {against}"
            + (f". {why}" if why else "")
            + (f". {default} (not listed) would do better on {objective}" if unlisted else ""))


@cli.group()
def workload():
    """Write bundled workloads (topologies, clusters) as spec files."""


@workload.command("microbench")
@click.option("--layout", type=click.Choice(microbench.LAYOUTS), required=True)
@click.option("--tasks", type=click.IntRange(min=1, max=1_000_000), required=True, help="Task count (even; 10..32 in the papers).")
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
    try:
        topo = TOPOLOGIES["lf"].build(config, high, grouping or "local_or_shuffle")[0]
    except ValueError as exc:
        raise UserError(f"--high/--grouping: {exc}") from None
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
@click.option("--met", type=FiniteFloat(min=0, max=1e6, min_open=True), default=DEFAULT_MET, show_default=True,
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
@click.option("--preset", type=click.Choice(list(PRESETS)), default=None,
              help="A named cluster (homogeneous 10 x 4; heterogeneous {6: 3, 4: 3, 2: 4}; lf-low 8 x 1 slot; lf-high "
                   "8 x 10 slots; nasiri-small/medium/large: [N] Table 4; the testbed's 8high, 2high+4low, ...).")
@click.option("--generator", type=click.Choice(list(CLUSTER_GENERATORS)), default=None,
              help="A cluster generator of the catalogue instead (arguments as KEY=VALUE; `workload list` shows them).")
@click.option("--topology", "topology_file", type=click.Path(), default=None,
              help="The job a generator sizes the cluster to (synthetic, sized).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="YAML or JSON file to write.")
@click.argument("args", nargs=-1)
def workload_cluster(preset, generator, topology_file, output, args):
    """A cluster preset, or a generated cluster (the sweep's and the demo's, by the same names)."""
    if (preset is None) == (generator is None):
        raise UserError("give exactly one of --preset and --generator")
    if preset is not None:
        if args:
            raise UserError(f"--preset {preset}: takes no arguments, got {' '.join(args)}")
        cluster = catalogue_preset(preset)
    else:
        graph = build_task_graph(load_topology(topology_file)) if topology_file else None
        cluster = _generate(CLUSTER_GENERATORS, generator, args, graph=graph)
    write_document(cluster_to_dict(cluster), output)
    err_console.print(f"wrote {output}: {cluster.n_nodes} nodes, capacity {cluster.capacities.sum():g}")


@workload.command("topology")
@click.argument("generator", type=click.Choice(list(TOPOLOGIES)))
@click.argument("args", nargs=-1)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="YAML or JSON file to write.")
def workload_topology(generator, args, output):
    """Any topology generator of the catalogue with its arguments as KEY=VALUE (`workload list`
    shows them), e.g. `runtime layout=diamond mode=io`: the sweep's workloads by the same names."""
    topo = _generate(TOPOLOGIES, generator, args)[0]
    write_document(topology_to_dict(topo), output)
    err_console.print(f"wrote {output}: {topo.n_tasks} tasks, {len(topo.operators)} operators")


@workload.command("list")
def workload_list():
    """The catalogue: topology and cluster generators with their arguments, and the cluster presets."""
    table = Table(box=box.SIMPLE_HEAD)
    for col in ("kind", "name", "arguments (KEY=VALUE, \\[default])"):
        table.add_column(col, overflow="fold")
    for kind, gens in (("topology", TOPOLOGIES), ("cluster", CLUSTER_GENERATORS)):
        for name, gen in gens.items():
            table.add_row(kind, name, rich_escape(describe(gen)))
    for name in PRESETS:
        table.add_row("preset", name, "-")
    Console().print(table)


def _generate(generators: dict, name: str, args, **extra):
    """``generators[name]`` built from ``KEY=VALUE`` strings, converted and checked by its :class:`Arg`\\s."""
    gen = generators[name]
    given = _parse_params(args)
    unknown = sorted(set(given) - set(gen.args))
    if unknown:
        raise UserError(f"{name}: unknown argument {unknown[0]!r} (arguments: {describe(gen)})")
    values = {}
    for key, arg in gen.args.items():
        if key not in given:
            if arg.default is REQUIRED:
                raise UserError(f"{name}: missing argument {key} (arguments: {describe(gen)})")
            values[key] = arg.default
            continue
        try:
            value = arg.kind(given[key]) if arg.kind is not bool else given[key].lower() in ("1", "true", "yes")
        except ValueError:
            raise UserError(f"{name}: {key}: cannot read {given[key]!r} as {arg.kind.__name__}") from None
        if arg.choices and value not in arg.choices:
            raise UserError(f"{name}: {key}: {value!r} is not one of {', '.join(map(str, arg.choices))}")
        values[key] = value
    if gen.needs_job and extra.get("graph") is None:
        raise UserError(f"{name}: give --topology: this generator sizes the cluster to a job")
    try:
        return gen.build(**values, **extra)
    except ValueError as exc:
        raise UserError(f"{name}: {exc}") from None


@workload.command("app")
@click.option("--name", type=click.Choice(list(APPLICATIONS)), required=True)
@click.option("--records", "n_records", type=click.IntRange(min=1, max=50_000_000), default=None,
              help="How many records to generate (default: the application's).")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv", "jsonl"]), default="parquet", show_default=True)
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), required=True, help="Directory to write.")
def workload_app(name, n_records, seed, fmt, out_dir):
    """An application workload: DIR/topology.yaml, DIR/cluster.yaml and generated DIR/records.<format>."""
    from .workloads.applications import application, write_records
    app = application(name)
    out = Path(out_dir)
    write_document(topology_to_dict(app.topology), out / "topology.yaml")
    write_document(cluster_to_dict(app.cluster()), out / "cluster.yaml")
    records = write_records(app.generate(n_records or app.default_records, seed), out / f"records.{fmt}")
    err_console.print(f"wrote {out}: topology ({app.topology.n_tasks} tasks), cluster, {records.name} (time column "
                      f"{app.time_column!r}); next: streamplace traffic --app {name} --topology {out / 'topology.yaml'} "
                      f"--records {records} -o {out / 'monitoring'}")


SPARK_MASTER_HELP = "Spark master URL (default: local[*], the embedded Spark; e.g. spark://host:7077)."


def _inputs(patterns) -> list[str]:
    """Paths, with glob patterns expanded (a pattern matching nothing is kept, to be reported as missing)."""
    import glob
    out = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) if any(ch in pattern for ch in "*?[") else []
        out += matches or [pattern]
    return out


def _seconds(value: str | None, option: str) -> float | None:
    """Epoch seconds from a number or an ISO-8601 timestamp (UTC unless it names a zone)."""
    if value is None:
        return None
    from datetime import datetime, timezone
    try:
        return float(value)
    except ValueError:
        pass
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise UserError(f"{option}: expected epoch seconds or an ISO-8601 timestamp, got {value!r}") from None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()


def _refuse_repeated_files(option: str, paths) -> None:
    """One file reached twice (two spellings, or a file and its directory) would be counted twice."""
    import os
    seen: dict[str, str] = {}
    for path in paths:
        p = Path(path)
        for file in (sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]):
            real = os.path.realpath(file)
            if real in seen and seen[real] != path:
                raise UserError(f"{option}: {path} and {seen[real]} both reach {file}; its records would be counted twice")
            seen.setdefault(real, path)


@cli.command("profile")
@click.option("--topology", "topology_path", type=click.Path(), required=True, help="Topology the records were measured on.")
@click.option("--traffic", multiple=True, required=True, metavar="PATH",
              help="Traffic records: window_start, window_seconds, src_task, dst_task, tuples, bytes (repeatable; globs expand).")
@click.option("--load", multiple=True, metavar="PATH",
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
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Profile directory to write (replaced as a whole; never one holding the inputs).")
@click.option("--force", is_flag=True, help="Replace DIR even if it holds files that are not a profile.")
def profile_cmd(topology_path, traffic, load, start, end, half_life, weight, fmt, spark_master, out_dir, force):
    """Monitoring records -> a profile (per-second rates per task edge and task) on Spark."""
    from .profile.metrics import build_profile
    from .profile.spark import SparkUnavailable, spark_session
    from .profile import LOAD_COLUMNS, TRAFFIC_COLUMNS, inspect_input
    _guard_output(out_dir, (topology_path, *_inputs(traffic), *_inputs(load)))
    _guard_profile_dir(out_dir, force)
    topo = load_topology(topology_path)
    start_s, end_s = _seconds(start, "--from"), _seconds(end, "--to")
    if start_s is not None and end_s is not None and not start_s < end_s:
        raise UserError(f"--from/--to: the range is empty ({start} is not before {end})")
    for option, paths, columns in (("--traffic", _inputs(traffic), TRAFFIC_COLUMNS), ("--load", _inputs(load), LOAD_COLUMNS)):
        for path in paths:  # file-level problems before Spark starts
            inspect_input(path, fmt, columns)
        _refuse_repeated_files(option, paths)
    try:
        with spark_session(spark_master) as spark:
            result = build_profile(spark, topo, _inputs(traffic), _inputs(load), out_dir=out_dir, fmt=fmt,
                                   start=start_s, end=end_s, half_life=half_life, weight=weight)
    except SparkUnavailable as exc:
        raise UserError(str(exc)) from None
    s = result.summary
    reasons = ", ".join(f"{r} {n}" for r, n in s["rejected_by_reason"].items()) or "none"
    err_console.print(f"rows read {s['rows_read']:,}, used {s['rows_used']:,}, rejected {s['rows_rejected']:,} ({reasons}); "
                      f"{s['edges']} edges over {s['traffic']['observed_seconds']:g} s observed; wrote {out_dir} "
                      f"in {s['seconds']:.1f} s on {s['spark_master']}")


@cli.command("traffic")
@click.option("--app", "app_name", type=click.Choice(list(APPLICATIONS)), default=None,
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
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Directory for traffic.<format> and load.<format>.")
def traffic_cmd(app_name, topology_path, records_path, records_format, time_column, window_seconds, cluster_path,
                placement_path, seed, fmt, spark_master, out_dir):
    """Replay application records through a topology's groupings -> monitoring records."""
    from .profile import inspect_input
    from .profile.spark import SparkUnavailable, spark_session
    from .profile.traffic import ReplayError, read_application_records, release, replay, write_monitoring
    from .workloads.applications import application
    ext = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}[fmt]
    for written in (Path(out_dir) / f"traffic{ext}", Path(out_dir) / f"load{ext}"):
        _guard_output(str(written), (records_path, topology_path, cluster_path, placement_path))
    app = application(app_name) if app_name else None
    if topology_path is None and app is None:
        raise UserError("--topology: required unless --app names a bundled application")
    topo = load_topology(topology_path) if topology_path else app.topology
    if app is not None:
        missing = [name for name in app.logic if name not in topo.index]
        if missing:
            raise SpecError(topology_path, "operators", f"no operator {missing[0]!r}, which application {app_name!r} needs")
    if (cluster_path is None) != (placement_path is None):
        raise UserError("--cluster/--placement: give both or neither")
    placement = load_placement(placement_path, topo, load_cluster(cluster_path)) if placement_path else None
    time_column = time_column or (app.time_column if app else "ts")
    inp = inspect_input(records_path, records_format, (time_column,))
    try:
        with spark_session(spark_master) as spark:
            mon = replay(spark, topo, read_application_records(spark, inp), logic=app.logic if app else None,
                         time_column=time_column, window_seconds=window_seconds, placement=placement, seed=seed)
            try:
                paths = write_monitoring(mon, out_dir, fmt)
            finally:
                release(mon)
    except SparkUnavailable as exc:
        raise UserError(str(exc)) from None
    except ReplayError as exc:
        raise SpecError(records_path if exc.about == "records" else (topology_path or app_name), exc.field_path, exc.problem) from None
    executed = ", ".join(f"{k} {v:,}" for k, v in mon.executed.items())
    skipped = f"; {mon.records_without_time:,} records without a time skipped" if mon.records_without_time else ""
    err_console.print(f"tuples executed: {executed}{skipped}; wrote {paths[0]} and {paths[1]}")


@cli.command()
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default="out/demo", show_default=True)
@click.option("--quick", is_flag=True, help="Reduced sizes (2 applications, 5,000 records, 10-14 task micro-benchmarks), same steps.")
@click.option("--time-limit", type=POSITIVE_SECONDS, default=10.0, show_default=True,
              help="Seconds per optimal solve.")
@click.option("--spark-master", envvar="STREAMPLACE_SPARK_MASTER", default=None, help=SPARK_MASTER_HELP)
@cost_model_option
def demo(out_dir, quick, time_limit, spark_master, cost_model):
    """The main job: bundled applications generated, replayed and profiled on Spark, scheduled by every
    scheduler on a homogeneous and a heterogeneous cluster, plus the micro-benchmarks; report in DIR."""
    from .demo.run import run_demo
    from .profile.spark import SparkUnavailable
    try:
        run_demo(Path(out_dir), quick=quick, time_limit=time_limit, console=Console(), master=spark_master,
                 model=_cost_model(cost_model))
    except SparkUnavailable as exc:
        raise UserError(str(exc)) from None


REPRODUCE_PAPERS = ("ischeduler", "t3", "metis", "lf", "throughput")  # = streamplace.reproduce.PAPERS


@cli.command()
@click.option("--paper", "papers", type=click.Choice([*REPRODUCE_PAPERS, "all"]), multiple=True, default=("all",),
              show_default=True, help="Paper to reproduce (repeatable): ischeduler [I], t3 [T3], metis [F], lf [LF], "
                                      "throughput [N].")
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), required=True,
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
    from .reproduce import reproduce as run_reproduce
    chosen = REPRODUCE_PAPERS if "all" in papers else tuple(dict.fromkeys(papers))
    from .reproduce.measured import load_campaigns
    runs = load_campaigns(testbed_runs) if testbed_runs else None
    run_reproduce(chosen, Path(out_dir), quick=quick, time_limit=time_limit, console=Console(),
                  model=_cost_model(cost_model), testbed_runs=runs)


@cli.command("sweep")
@click.argument("grid", type=click.Path())
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Directory for parts/*.parquet and results.csv; scenarios already there are skipped.")
@click.option("--batch-size", type=click.IntRange(min=1), default=None,
              help="Scenarios per Spark job and Parquet part (default: 4 x Spark's parallelism).")
@click.option("--retry-failed", is_flag=True, help="Run again the scenarios recorded with an error.")
@click.option("--report", "with_report", is_flag=True, help="Also write report.html and PNG plots of all results in DIR.")
@click.option("--spark-master", envvar="STREAMPLACE_SPARK_MASTER", default=None, help=SPARK_MASTER_HELP)
def sweep_cmd(grid, out_dir, batch_size, retry_failed, with_report, spark_master):
    """A GRID of workloads x clusters x schedulers x seeds, evaluated in parallel on Spark."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from .campaign.sweep import SweepLocked, load_grid, run_sweep, write_sweep_report
    from .profile.spark import SparkUnavailable
    scenarios = load_grid(grid)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal) as progress:
            task = progress.add_task("scenarios", total=len(scenarios))
            summary = run_sweep(scenarios, out_dir, spark_master=spark_master, batch_size=batch_size,
                                retry_failed=retry_failed, on_progress=lambda p: progress.update(
                                    task, completed=p.done, description=f"batch {p.batches_done}/{p.batches}, "
                                                                        f"{p.failed} failed"))
    except (SparkUnavailable, SweepLocked) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        err_console.print(f"the scenarios finished so far are in {out_dir}; rerun the same command to resume", soft_wrap=True,
                          markup=False)
        raise
    err_console.print(summary.describe(), soft_wrap=True, markup=False)
    for line in summary.errors:
        err_console.print(f"failed: {line}", style="yellow", soft_wrap=True, markup=False)
    if with_report:
        err_console.print(f"report: {write_sweep_report(out_dir)}", soft_wrap=True, markup=False)


@cli.group("import")
def import_group():
    """Build specs from what another tool shows."""


@import_group.command("storm-ui")
@click.argument("source")
@click.option("--window", default=None, help="The UI's statistics window in seconds (600, 10800, 86400) or "
              ":all-time; default: the UI's own (for a URL) or the saved one.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="Topology spec to write (YAML or JSON).")
def import_storm_ui_cmd(source, window, output):
    """A topology spec from the Storm UI: SOURCE is http://HOST:8080/api/v1/topology/ID or a directory of saved
    responses (topology.json, component-<id>.json per component, optional visualization.json).

    Parallelism = each component's tasks; rates = what it emitted and executed in the window."""
    from .storm.ui import import_storm_ui
    _guard_output(output, (source,))
    imported = import_storm_ui(source, window=window)
    write_document(topology_to_dict(imported.topology), output)
    for note in imported.notes:
        err_console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    topo = imported.topology
    click.echo(f"wrote {output}: {topo.name}, {len(topo.operators)} components, {topo.n_tasks} tasks, "
               f"rates over {imported.window_s:g} s")


@cli.group()
def storm():
    """Run placements on Apache Storm; write plans for a Storm cluster's scheduler plugin."""


@storm.command("run")
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.option("--plan", "plan_path", type=click.Path(), default=None, help="Placement to apply (JSON from `schedule -o`).")
@click.option("--scheduler", "-s", "name", default=None, help="Schedule with this scheduler first, then apply its plan.")
@click.option("--param", "-p", "params", multiple=True, metavar="KEY=VALUE", help="Scheduler parameter (repeatable).")
@click.option("--seed", type=int, default=None, help="Scheduler seed, and the seed of the topology's key/payload generators.")
@click.option("--time-limit", type=click.FloatRange(min=0), default=None, help="Seconds allowed to solvers that take a limit.")
@click.option("--profiling", type=click.Path(), default=None, help=PROFILING_HELP)
@click.option("--storm-default", is_flag=True, help="No plan: let Storm's own EvenScheduler place the topology.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="topology.workers with --storm-default (default: every slot of the cluster).")
@click.option("--duration", type=click.FloatRange(min=0.1, max=1e6), default=60.0, show_default=True,
              help="Seconds measured (rounded up to whole windows), after the warm-up.")
@click.option("--warmup", type=click.FloatRange(min=0, max=1e6), default=20.0, show_default=True, help="Seconds discarded first.")
@click.option("--window", type=click.FloatRange(min=0.1, max=1e6), default=10.0, show_default=True, help="Monitor window, seconds.")
@click.option("--ackers", type=click.IntRange(min=0), default=0, show_default=True,
              help="Acker executors (0: no acking; latency comes from the tuples' emit time).")
@click.option("--load-aware", is_flag=True, help="Storm 2's load-aware, locality-first shuffle (off: uniform shuffle, as the papers and the model).")
@click.option("--heap-mb", type=click.IntRange(min=128), default=1024, show_default=True, help="Heap of the embedded Storm JVM.")
@click.option("--storm-conf", "storm_conf", multiple=True, metavar="KEY=VALUE",
              help="A Storm topology setting (repeatable; VALUE read as YAML), e.g. "
                   "topology.bolt.wait.progressive.level2.count=0. Overrides streamplace's defaults and Storm's; "
                   "docs/storm.md lists the settings of the testbed campaign.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "parquet"]), default="jsonl", show_default=True,
              help="Format of the traffic and load records.")
@click.option("--mode", type=click.Choice(["embedded", "cluster"]), default="embedded", show_default=True,
              help="embedded: Storm's LocalCluster in one JVM, one supervisor per cluster node. cluster: the testbed, "
                   "a real Storm cluster on this machine (needs root): one network namespace per node with its "
                   "bandwidth (tc) and its CPU share (cgroup), ZooKeeper, Nimbus and a supervisor per node.")
@click.option("--worker-heap-mb", type=click.IntRange(min=64), default=256, show_default=True,
              help="Heap of each testbed worker process (--mode cluster).")
@click.option("--cpu-budget", type=click.FloatRange(min=0.05, max=4096), default=None,
              help="Cores shared by all testbed nodes, in proportion to their `cores` (default: this machine's cores - 0.5).")
@click.option("--force", is_flag=True, help="Replace the output directory if it exists.")
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), required=True, help="Directory to write.")
def storm_run(topology, cluster, plan_path, name, params, seed, time_limit, profiling, storm_default, workers,
              duration, warmup, window, ackers, load_aware, heap_mb, storm_conf, fmt, mode, worker_heap_mb, cpu_budget, force, out_dir):
    """Run TOPOLOGY on Storm with CLUSTER's nodes, under a plan, and measure it.

    Writes DIR/run.json (what Storm assigned, read back from Storm, throughput, latency; on the
    testbed also the bytes measured on the wire between nodes), DIR/traffic.* and DIR/load.* (the
    monitor's records of the measured windows, ready for `streamplace profile`), DIR/plan.json
    and DIR/storm.log.
    """
    from .storm.run import RunSettings, measure, parse_storm_conf
    from .storm.testbed import TestbedSettings
    if sum(x is not None and x is not False for x in (plan_path, name, storm_default or None)) != 1:
        raise UserError("give exactly one of --plan, --scheduler or --storm-default")
    if workers is not None and not storm_default:
        raise UserError("--workers goes with --storm-default (a plan fixes its workers)")
    settings = RunSettings(duration_s=duration, warmup_s=warmup, window_s=window, ackers=ackers,
                           load_aware=load_aware, heap_mb=heap_mb, seed=seed or 0, mode=mode,
                           testbed=TestbedSettings(worker_heap_mb=worker_heap_mb, cpu_budget=cpu_budget),
                           storm_conf=parse_storm_conf(storm_conf))
    problem = _problem(topology, cluster)
    placement, source = None, {"kind": "storm-default"}
    if plan_path:
        placement = load_placement(plan_path, problem.topology, problem.cluster)
        source = {"kind": "plan", "file": str(plan_path)}
    elif name:
        result = _scheduler(name, _parse_params(params), seed, time_limit, profiling).schedule(problem)
        if result.placement is None:
            raise UserError(f"{name}: {result.status}: {result.message}")
        problem, placement = result.problem, result.placement
        source = {"kind": "scheduler", "scheduler": result.scheduler, "params": result.params, "status": result.status}
    run = measure(problem, placement, Path(out_dir), settings, workers=workers, fmt=fmt, source=source,
                  force=force, on_event=_storm_progress(settings))
    Console().print(_vertical({k: run[k] for k in STORM_RUN_KEYS if k in run}, f"storm run: {problem.topology.name} on {problem.cluster.name}"))
    for node, cpu in run.get("measured_node_cpu", {}).items():
        Console().print(f"node {node}: {cpu['cores']:.3f} cores used, out of CPU quota in {cpu['throttled']:.0%} of periods",
                        markup=False, highlight=False)
    if placement is not None and not run["plan_applied"]:
        err_console.print(f"[yellow]plan not applied: {run['scheduler_status']}[/yellow]")
    err_console.print(f"written: {out_dir}/run.json, {run['traffic_file']}, {run['load_file']}", soft_wrap=True, markup=False)


STORM_RUN_KEYS = ("mode", "storm_version", "plan_applied", "plan_matches", "scheduler_status", "workers", "throughput",
                  "source_rate", "duration_s", "windows", "monitor_cross_node_bytes_per_s", "measured_inter_node_bytes_per_s",
                  "predicted_inter_node_bytes_per_s", "predicted_throughput",
                  "jvm_peak_rss_mb", "wall_s")


def _storm_progress(settings):
    """Prints the run's progress on stderr, one line per step."""
    messages = {"testbed": "{message}", "note": "{message}", "starting": f"starting {settings.mode} Storm", "cluster": "{supervisors} supervisors up",
                "submitted": "submitted {job}", "assigned": "{job}: every executor assigned",
                "running": "{job}: every worker running", "warmup": "warm-up {seconds:g} s", "measuring": "measuring {seconds:g} s",
                "killed": "{job} killed"}

    def show(event):
        text = messages.get(event.get("event"))
        if text:
            err_console.print(f"storm: {text.format(**event)}", soft_wrap=True, markup=False, highlight=False)
    return show


@storm.command("plan-dir")
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.argument("placement", type=click.Path())
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Plan directory (the plugin's streamplace.plan.dir).")
def storm_plan_dir(topology, cluster, placement, out_dir):
    """Check PLACEMENT against TOPOLOGY and CLUSTER and write it as DIR/<topology name>.json.

    Point Nimbus' `streamplace.plan.dir` at DIR: the plugin applies the plan on its next round,
    also to a running topology (that is how a new plan reaches a running job).
    """
    click.echo(str(_write_storm_plan(topology, cluster, placement, out_dir)))


def _write_storm_plan(topology, cluster, placement, out_dir) -> Path:
    from .storm.plans import plan_document, storm_name, write_plan
    problem = _problem(topology, cluster)
    name = storm_name(problem.topology)
    placed = load_placement(placement, problem.topology, problem.cluster)
    doc = read_document(placement)
    extra = {"scheduler": doc["scheduler"]} if isinstance(doc, dict) and isinstance(doc.get("scheduler"), str) else {}
    return write_plan(Path(out_dir), name, plan_document(problem.topology, problem.cluster, placed, **extra))


@cli.command()
@click.argument("placement", type=click.Path())
@click.option("--to", "target", type=click.Choice(["storm-plan", "heron", "flink"]), required=True,
              help="storm-plan: the plugin's plan directory; heron: a Heron packing plan (JSON); flink: "
                   "parallelism and slot-sharing groups per operator, and what Flink cannot express.")
@click.option("--topology", type=click.Path(), default=None, help="The job's topology (required for storm-plan; "
              "with --cluster it checks the placement and gives Heron the tasks' CPU and memory).")
@click.option("--cluster", type=click.Path(), default=None, help="The job's cluster (with --topology).")
@click.option("-o", "--output", type=click.Path(), required=True, help="File to write (storm-plan: the plan directory).")
def export(placement, target, topology, cluster, output):
    """Write PLACEMENT in the form another engine takes."""
    from .export import flink_job_hints, heron_container_nodes, heron_packing_plan, read_targets
    _guard_output(output, (placement, topology, cluster))
    if target == "storm-plan":
        if topology is None or cluster is None:
            raise UserError("--to storm-plan needs --topology and --cluster (the plan is checked against them)")
        click.echo(str(_write_storm_plan(topology, cluster, placement, output)))
        return
    if (topology is None) != (cluster is None):
        raise UserError("--topology and --cluster go together")
    topo = None
    if topology is not None:   # checks every label and node against the job
        problem = _problem(topology, cluster)
        load_placement(placement, problem.topology, problem.cluster)
        topo = problem.topology
    try:
        targets = read_targets(read_document(placement), placement)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if target == "heron":
        write_document(heron_packing_plan(targets, topo.name if topo else Path(placement).stem, topo), output)
        for number, node in heron_container_nodes(targets).items():
            err_console.print(f"heron container {number}: node {node}", markup=False, highlight=False)
    else:
        write_document(flink_job_hints(targets, topo), output)
    click.echo(output)


EXIT_CODES_HELP = ("Exit codes: 0 ok; 1 a bug in streamplace (traceback with --debug); 2 usage or input error; "
                   "3 no placement (the status says why); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).")
cli.help = f"{cli.help}\n\n{EXIT_CODES_HELP}"


def _input_error(exc: BaseException) -> str | None:
    """The one line for an exception caused by the user's files or environment, else None."""
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    if isinstance(exc, MemoryError):
        return "out of memory (the input is too large for this machine)"
    if "pyspark" in sys.modules:
        from pyspark.errors import AnalysisException, PySparkException
        from py4j.protocol import Py4JError
        if isinstance(exc, (AnalysisException, PySparkException, Py4JError)):
            text = str(exc).strip()
            return f"spark: {text.splitlines()[0] if text else type(exc).__name__}"
    return None


def _warnings_as_one_line() -> None:
    """Fallbacks and repairs that change a result (METIS could not partition, a sweep part set aside) are
    said in one stderr line."""
    import warnings
    previous = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, Notice):
            click.echo(f"streamplace: warning: {message}", err=True)
        else:
            previous(message, category, filename, lineno, file, line)
    warnings.showwarning = show


def main(argv=None) -> None:
    """The ``streamplace`` command. From the command line (``argv`` None) the work runs interruptibly:
    Ctrl-C / SIGTERM stop it at once with one line, no partial output, exit 130 / 143."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        if argv is None:  # the command line (in-process callers keep their own signal and warning handling)
            from .interrupt import run_interruptible
            _warnings_as_one_line()
            run_interruptible(lambda: cli.main(args=argv, prog_name="streamplace", standalone_mode=False))
        else:
            cli.main(args=argv, prog_name="streamplace", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        err_console.print("streamplace: aborted")
        sys.exit(130)
    except click.UsageError as exc:  # one line, with where to read more
        command = exc.ctx.command_path if exc.ctx is not None else "streamplace"
        click.echo(f"streamplace: {exc.format_message()} (see '{command} --help')", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (SpecError, ParameterError, UserError, FieldError, StormError) as exc:
        click.echo(f"streamplace: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("streamplace: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # internal error: one line unless --debug
        line = _input_error(exc)
        if line is not None and not debug:
            click.echo(f"streamplace: {line}", err=True)
            sys.exit(2)
        if debug:
            raise
        click.echo(f"streamplace: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)", err=True)
        sys.exit(1)

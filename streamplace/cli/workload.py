"""``streamplace workload``: bundled workloads written as spec files (the catalogue's generators)."""

from __future__ import annotations

from pathlib import Path

import click
from rich import box
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.table import Table

import streamplace as sp

from .base import SEED, OutputPath, FiniteFloat, UserError, cli, err_console

ARGS = {name: gen.args for name, gen in sp.TOPOLOGIES.items()}   # the choices of the generators' options


@cli.group()
def workload():
    """Write bundled workloads (topologies, clusters) as spec files."""


def _wrote_topology(topo, output) -> None:
    sp.write_document(sp.topology_to_dict(topo), output)
    err_console.print(f"wrote {output}: {topo.n_tasks} tasks, {len(topo.operators)} operators")


@workload.command("microbench")
@click.option("--layout", type=click.Choice(ARGS["microbench"]["layout"].choices), required=True)
@click.option("--tasks", type=click.IntRange(min=1, max=1_000_000), required=True, help="Task count (even; 10..32 in the papers).")
@click.option("-o", "--output", type=OutputPath("document"), required=True, help="YAML or JSON file to write.")
def workload_microbench(layout, tasks, output):
    """A uniform micro-benchmark topology ([I]/[T3] Sec. 5)."""
    try:
        topo = sp.TOPOLOGIES["microbench"].build(layout, tasks)[0]
    except ValueError as exc:
        raise UserError(f"--tasks: {exc}") from None
    _wrote_topology(topo, output)


@workload.command("lf")
@click.option("--config", type=click.Choice(ARGS["lf"]["config"].choices), required=True)
@click.option("--high", is_flag=True, help="High parallelism (x10), for the lf-high cluster.")
@click.option("--grouping", type=click.Choice(ARGS["lf"]["grouping"].choices), default=None,
              help="Streams of a synthetic configuration (default local_or_shuffle; shuffle = [LF]'s non-LSP runs).")
@click.option("-o", "--output", type=OutputPath("document"), required=True, help="YAML or JSON file to write.")
def workload_lf(config, high, grouping, output):
    """An [LF] workload: a synthetic configuration of Table 3 or the page-view-count topology."""
    try:
        topo = sp.TOPOLOGIES["lf"].build(config, high, grouping or "local_or_shuffle")[0]
    except ValueError as exc:
        raise UserError(f"--high/--grouping: {exc}") from None
    _wrote_topology(topo, output)


@workload.command("nasiri")
@click.option("--layout", type=click.Choice(ARGS["nasiri"]["layout"].choices), required=True)
@click.option("--compute", type=click.Choice(ARGS["nasiri"]["compute"].choices), default="mixed", show_default=True,
              help="Operator types: mixed = one high- and one mid-compute bolt, the rest low; else all of one type.")
@click.option("-o", "--output", type=OutputPath("document"), required=True, help="Topology YAML or JSON file to write.")
@click.option("--profiling-out", type=OutputPath("document"), default=None,
              help="Also write the matching profiling spec ([N] Table 3) here, for schedule/compare --profiling.")
@click.option("--preset", type=click.Choice(list(sp.NASIRI_CLUSTER_PRESETS)), default=None,
              help="Put this Table 4 cluster's machine counts in the profiling spec.")
@click.option("--met", type=FiniteFloat(min=0, max=1e6, min_open=True), default=sp.DEFAULT_MET, show_default=True,
              help="MET of every task in the profiling spec, percent of a machine ([N] gives none).")
def workload_nasiri(layout, compute, output, profiling_out, preset, met):
    """An [N] micro-benchmark topology (linear, diamond, star) and optionally its profiling spec."""
    if profiling_out and Path(profiling_out).resolve() == Path(output).resolve():
        raise UserError(f"--profiling-out: {profiling_out} is also -o (the topology): give two files")
    topo, profiling = sp.nasiri_workload(layout, compute, preset=preset, met=met)
    _wrote_topology(topo, output)
    if profiling_out:
        sp.write_document(sp.profiling_to_dict(profiling), profiling_out)
        err_console.print(f"wrote {profiling_out}: profiling of {len(topo.operators)} operators on 3 machine types")


@workload.command("cluster")
@click.option("--preset", type=click.Choice(list(sp.PRESETS)), default=None,
              help="A named cluster (homogeneous 10 x 4; heterogeneous {6: 3, 4: 3, 2: 4}; lf-low 8 x 1 slot; lf-high "
                   "8 x 10 slots; nasiri-small/medium/large: [N] Table 4; the testbed's 8high, 2high+4low, ...).")
@click.option("--generator", type=click.Choice(list(sp.CLUSTER_GENERATORS)), default=None,
              help="A cluster generator of the catalogue instead (arguments as KEY=VALUE; `workload list` shows them).")
@click.option("--topology", "topology_file", type=click.Path(), default=None,
              help="The job a generator sizes the cluster to (synthetic, sized).")
@click.option("-o", "--output", type=OutputPath("document"), required=True, help="YAML or JSON file to write.")
@click.argument("args", nargs=-1)
def workload_cluster(preset, generator, topology_file, output, args):
    """A cluster preset, or a generated cluster (the sweep's and the demo's, by the same names)."""
    cluster = sp.make_cluster(preset=preset, generator=generator, args=args, topology=topology_file)
    sp.write_document(sp.cluster_to_dict(cluster), output)
    err_console.print(f"wrote {output}: {cluster.n_nodes} nodes, capacity {cluster.capacities.sum():g}")


@workload.command("topology")
@click.argument("generator", type=click.Choice(list(sp.TOPOLOGIES)))
@click.argument("args", nargs=-1)
@click.option("-o", "--output", type=OutputPath("document"), required=True, help="YAML or JSON file to write.")
def workload_topology(generator, args, output):
    """Any topology generator of the catalogue with its arguments as KEY=VALUE (`workload list`
    shows them), e.g. `runtime layout=diamond mode=io`: the sweep's workloads by the same names."""
    _wrote_topology(sp.generate(sp.TOPOLOGIES, generator, args)[0], output)


@workload.command("list")
def workload_list():
    """The catalogue: topology and cluster generators with their arguments, and the cluster presets."""
    table = Table(box=box.SIMPLE_HEAD)
    for col in ("kind", "name", "arguments (KEY=VALUE, \\[default])"):
        table.add_column(col, overflow="fold")
    for kind, gens in (("topology", sp.TOPOLOGIES), ("cluster", sp.CLUSTER_GENERATORS)):
        for name, gen in gens.items():
            table.add_row(kind, name, rich_escape(sp.describe(gen)))
    for name in sp.PRESETS:
        table.add_row("preset", name, "-")
    Console().print(table)


@workload.command("app")
@click.option("--name", type=click.Choice(list(sp.APPLICATIONS)), required=True)
@click.option("--records", "n_records", type=click.IntRange(min=1, max=50_000_000), default=None,
              help="How many records to generate (default: the application's).")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv", "jsonl"]), default="parquet", show_default=True)
@click.option("-o", "--output", "out_dir", type=OutputPath("into"), required=True, help="Directory to write.")
def workload_app(name, n_records, seed, fmt, out_dir):
    """An application workload: DIR/topology.yaml, DIR/cluster.yaml and generated DIR/records.<format>."""
    written = sp.write_application(name, out_dir, records=n_records, seed=seed, fmt=fmt)
    app, out = written.application, Path(out_dir)
    err_console.print(f"wrote {out}: topology ({app.topology.n_tasks} tasks), cluster, {written.records.name} (time column "
                      f"{app.time_column!r}); next: streamplace traffic --app {name} --topology {written.topology} "
                      f"--records {written.records} -o {out / 'monitoring'}")

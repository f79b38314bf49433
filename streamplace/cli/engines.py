"""The engines: ``storm run`` and ``storm plan-dir``, ``export`` (Storm plugin, Heron, Flink) and
``import storm-ui``."""

from __future__ import annotations


import click
from rich.console import Console

import streamplace as sp

from .base import PROFILING_HELP, SECONDS, FiniteFloat, OutputPath, UserError, cli, err_console, note, vertical

STORM_RUN_KEYS = ("mode", "storm_version", "plan_applied", "plan_matches", "scheduler_status", "workers", "throughput",
                  "bolt_throughput",
                  "source_rate", "duration_s", "windows", "monitor_missing_windows", "monitor_cross_node_bytes_per_s", "measured_inter_node_bytes_per_s",
                  "predicted_inter_node_bytes_per_s", "predicted_throughput",
                  "jvm_peak_rss_mb", "wall_s")


#: the loop's defaults (one home: the library's settings)
LOOP = sp.AutopilotSettings()


def loop_options(prefix: str):
    """The autopilot loop's options, shared by ``autopilot`` and ``storm run --autopilot`` (one
    home for their names, ranges and defaults; ``prefix`` leads each help text)."""
    def say(text):
        return (prefix + text)[:1].upper() + (prefix + text)[1:]
    options = [
        click.option("--min-gain", type=FiniteFloat(min=0, max=100), default=sp.Hysteresis.min_gain, show_default=True,
                     help=say("predicted gain (share of throughput, after the migration cost) a change must bring (hysteresis).")),
        click.option("--confirm", type=click.IntRange(min=1), default=sp.Hysteresis.confirm, show_default=True,
                     help=say("periods in a row the gain must hold (hysteresis).")),
        click.option("--max-moves", type=click.IntRange(min=0), default=LOOP.max_moves, show_default=True,
                     help=say("tasks one change may move.")),
        click.option("--migration-cost", "migration_s", type=FiniteFloat(min=0, max=86400), default=LOOP.migration_s, show_default=True,
                     help=say("seconds of the running rate one plan loses while Storm restarts the workers it changes "
                                   "(measured on the testbed).")),
        click.option("--payback", "payback_s", type=FiniteFloat(min=0.001, max=10**7), default=LOOP.payback_s, show_default=True,
                     help=say("seconds within which a plan's gain must repay its migration cost.")),
        click.option("--rewarm", "rewarm_s", type=FiniteFloat(min=0, max=86400), default=LOOP.rewarm_s, show_default=True,
                     help=say("seconds the workers a change restarted run before the loop calibrates on them "
                                   "(a restarted JVM warms up as at the job's start).")),
        click.option("--load-change", "load_change", type=FiniteFloat(min=0.001, max=1), default=LOOP.load_change,
                     show_default=True,
                     help=say("share of a key-routed operator's tuples that, moved between its tasks since the last "
                                   "plan was decided, cuts the re-warm wait short (the load changed); moved within "
                                   "the horizon, keeps the period (the load is changing).")),
        click.option("--horizon", type=click.IntRange(min=1), default=LOOP.horizon_windows, show_default=True,
                     help=say("windows each period reads.")),
        click.option("--steady-tolerance", "steady_tolerance", type=FiniteFloat(min=0, max=100), default=LOOP.steady_tolerance, show_default=True,
                     help=say("no decision while the newest window of the horizon executed more than this share above "
                                   "its oldest (the job warming up, or recovering from a move).")),
    ]

    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command
    return decorate


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
@click.option("--time-limit", type=SECONDS, default=None, help="Seconds allowed to solvers that take a limit.")
@click.option("--profiling", type=click.Path(), default=None, help=PROFILING_HELP)
@click.option("--storm-default", is_flag=True, help="No plan: let Storm's own EvenScheduler place the topology.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="topology.workers with --storm-default (default: every slot of the cluster).")
@click.option("--storm-scheduler", "storm_scheduler", type=click.Choice(["even", "ras"]), default="even", show_default=True,
              help="Storm's scheduler for a job without a plan (--storm-default): its EvenScheduler, or its "
                   "ResourceAwareScheduler (default strategy) on the operators' declared cpu_demand and memory_mb "
                   "and the nodes' cores and memory_mb; the Nimbus plugin's streamplace.fallback.scheduler.")
@click.option("--duration", type=FiniteFloat(min=0.1, max=1e6), default=60.0, show_default=True,
              help="Seconds measured (rounded up to whole windows), after the warm-up.")
@click.option("--warmup", type=FiniteFloat(min=0, max=1e6), default=20.0, show_default=True, help="Seconds discarded first.")
@click.option("--window", type=FiniteFloat(min=0.1, max=1e6), default=10.0, show_default=True, help="Monitor window, seconds.")
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
@click.option("--cpu-budget", type=FiniteFloat(min=0.05, max=4096), default=None,
              help="Cores shared by all testbed nodes, in proportion to their `cores` (default: this machine's cores - 0.5).")
@click.option("--operating-point", "operating_point", type=click.Choice(list(sp.OPERATING_POINTS)), default=None,
              help="Run at a named operating point (docs/performance-model.md): its sources (saturated, or its fixed rate), ackers and max "
                   "spout pending, Storm settings (--storm-conf over them), CPU budget (unless --cpu-budget) and links. "
                   "Default: the topology's own rates and the options given.")
@click.option("--monitor-via", "monitor_via", type=click.Choice(["files", "metrics"]), default="files", show_default=True,
              help="How the monitor's windows leave the workers: files in a directory of this machine, or Storm's "
                   "metrics path to a receiver here (what a cluster without a shared directory uses; docs/monitor.md).")
@click.option("--autopilot", "autopilot", is_flag=True,
              help="Run the autopilot beside the job (docs/autopilot.md): DIR/autopilot.jsonl, and the plans it "
                   "applied in run.json.")
@click.option("--autopilot-policy", type=click.Choice(["hysteresis", "every-period", "greedy"]), default="hysteresis",
              show_default=True, help="With --autopilot: when a candidate is applied.")
@loop_options("With --autopilot: ")
@click.option("--cooldown", type=FiniteFloat(min=0, max=1e7), default=60.0, show_default=True,
              help="With --autopilot: seconds after a change before the next (hysteresis).")
@click.option("--autopilot-after", "autopilot_after", type=FiniteFloat(min=0, max=1e7), default=0.0, show_default=True,
              help="With --autopilot: seconds after the job's workers run before the loop starts, as an operator "
                   "starts it beside a job already running (0: with the job, through its warm-up).")
@click.option("--force", is_flag=True, help="Replace the output directory if it exists.")
@click.option("-o", "--output", "out_dir", type=OutputPath("dir"), required=True, help="Directory to write.")
def storm_run(topology, cluster, plan_path, name, params, seed, time_limit, profiling, storm_default, workers,
              storm_scheduler, duration, warmup, window, ackers, load_aware, heap_mb, storm_conf, fmt, mode, worker_heap_mb, cpu_budget,
              operating_point, monitor_via, autopilot, autopilot_policy, min_gain, confirm, max_moves, migration_s, payback_s, rewarm_s, load_change,
              horizon, steady_tolerance, cooldown, autopilot_after, force, out_dir):
    """Run TOPOLOGY on Storm with CLUSTER's nodes, under a plan, and measure it.

    Writes DIR/run.json (what Storm assigned, read back from Storm, throughput, latency; on the
    testbed also the bytes measured on the wire between nodes), DIR/traffic.* and DIR/load.* (the
    monitor's records of the measured windows, ready for `streamplace profile`), DIR/plan.json
    and DIR/storm.log.
    """
    if sum(x is not None and x is not False for x in (plan_path, name, storm_default or None)) != 1:
        raise UserError("give exactly one of --plan, --scheduler or --storm-default")
    settings = sp.storm_settings(duration_s=duration, warmup_s=warmup, window_s=window, ackers=ackers,
                                 load_aware=load_aware, heap_mb=heap_mb, seed=seed or 0, mode=mode,
                                 worker_heap_mb=worker_heap_mb, cpu_budget=cpu_budget, storm_conf=storm_conf,
                                 operating_point=operating_point, monitor_via=monitor_via, storm_scheduler=storm_scheduler)
    done = sp.storm_run(sp.JobFiles(topology, cluster), out_dir, settings, plan=plan_path, scheduler=name,
                        params=sp.parse_pairs(params) if name else None, seed=seed, time_limit=time_limit,
                        profiling=profiling, workers=workers, fmt=fmt, force=force,
                        on_event=_storm_progress(settings), on_note=note,
                        autopilot=dict(policy=autopilot_policy, min_gain=min_gain, confirm=confirm, max_moves=max_moves,
                                       migration_s=migration_s, payback_s=payback_s, rewarm_s=rewarm_s, load_change=load_change,
                                       horizon_windows=horizon, steady_tolerance=steady_tolerance,
                                       cooldown_s=cooldown, after_s=autopilot_after) if autopilot else None)
    run, problem = done.run, done.problem
    Console().print(vertical({k: run[k] for k in STORM_RUN_KEYS if k in run}, f"storm run: {problem.topology.name} on {problem.cluster.name}"))
    for node, cpu in run.get("measured_node_cpu", {}).items():
        Console().print(f"node {node}: {cpu['cores']:.3f} cores used, out of CPU quota in {cpu['throttled']:.0%} of periods",
                        markup=False, highlight=False)
    if "plans" in run:
        last = run["plans"][-1]["matched"] if run["plans"] else None
        Console().print(f"autopilot ({run['autopilot_policy']}): {len(run['plans'])} plan(s) applied"
                        + ("" if last is None else f"; Storm's assignment at the end {'is' if last else 'is not'} the last one"),
                        markup=False, highlight=False)
    if done.placement is not None and not run["plan_applied"]:
        err_console.print(f"[yellow]plan not applied: {run['scheduler_status']}[/yellow]")
    err_console.print(f"written: {out_dir}/run.json, {run['traffic_file']}, {run['load_file']}", soft_wrap=True, markup=False)


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
@click.option("-o", "--output", "out_dir", type=OutputPath("into"), required=True,
              help="Plan directory (the plugin's streamplace.plan.dir).")
def storm_plan_dir(topology, cluster, placement, out_dir):
    """Check PLACEMENT against TOPOLOGY and CLUSTER and write it as DIR/<topology name>.json.

    Point Nimbus' `streamplace.plan.dir` at DIR: the plugin applies the plan on its next round,
    also to a running topology (that is how a new plan reaches a running job).
    """
    click.echo(str(sp.export_placement(placement, "storm-plan", sp.JobFiles(topology, cluster), output=out_dir).written))


@cli.command()
@click.argument("placement", type=click.Path())
@click.option("--to", "target", type=click.Choice(list(sp.EXPORT_TARGETS)), required=True,
              help="storm-plan: the plugin's plan directory; heron: a Heron packing plan (JSON); flink: "
                   "parallelism and slot-sharing groups per operator, and what Flink cannot express.")
@click.option("--topology", type=click.Path(), default=None, help="The job's topology (required for storm-plan; "
              "with --cluster it checks the placement and gives Heron the tasks' CPU and memory).")
@click.option("--cluster", type=click.Path(), default=None, help="The job's cluster (with --topology).")
@click.option("-o", "--output", type=OutputPath("any"), required=True, help="File to write (storm-plan: the plan directory).")
def export(placement, target, topology, cluster, output):
    """Write PLACEMENT in the form another engine takes."""
    if (topology is None) != (cluster is None):
        raise UserError("--topology and --cluster go together")
    exported = sp.export_placement(placement, target, sp.JobFiles(topology, cluster) if topology is not None else None,
                                   output=output)
    for number, node in exported.containers.items():
        err_console.print(f"heron container {number}: node {node}", markup=False, highlight=False)
    click.echo(str(exported.written))


@cli.group("import")
def import_group():
    """Build specs from what another tool shows."""


@import_group.command("storm-ui")
@click.argument("source", type=click.Path())
@click.option("--window", default=None, help="The UI's statistics window in seconds (600, 10800, 86400) or "
              ":all-time; default: the UI's own (for a URL) or the saved one.")
@click.option("-o", "--output", type=OutputPath("document"), required=True, help="Topology spec to write (YAML or JSON).")
def import_storm_ui_cmd(source, window, output):
    """A topology spec from the Storm UI: SOURCE is http://HOST:8080/api/v1/topology/ID or a directory of saved
    responses (topology.json, component-<id>.json per component, optional visualization.json).

    Parallelism = each component's tasks; rates = what it emitted and executed in the window."""
    imported = sp.import_storm_ui(source, window=window, output=output)
    for note_text in imported.notes:
        err_console.print(f"note: {note_text}", markup=False, highlight=False, soft_wrap=True)
    topo = imported.topology
    click.echo(f"wrote {output}: {topo.name}, {len(topo.operators)} components, {topo.n_tasks} tasks, "
               f"rates over {imported.window_s:g} s")


@cli.command("autopilot")
@click.argument("topology", type=click.Path())
@click.argument("cluster", type=click.Path())
@click.option("--monitor", "monitor", type=click.Path(file_okay=False), required=True,
              help="Directory the traffic monitor writes its windows into (load-*.jsonl, traffic-*.jsonl).")
@click.option("--plan-dir", "plan_dir", type=OutputPath("into"), required=True,
              help="The Storm plugin's plan directory: an applied plan is written here as <topology>.json.")
@click.option("--current", type=click.Path(), default=None,
              help="The running placement at the start (default: the last plan the log applied, else the plan in --plan-dir).")
@click.option("--policy", type=click.Choice(["hysteresis", "every-period", "greedy"]), default="hysteresis", show_default=True,
              help="hysteresis: ours (--min-gain, --confirm, --cooldown); every-period: Aniello's, a new schedule every "
                   "period; greedy: [F]'s reference, whenever the prediction improves by more than 1 %, at most once a minute.")
@click.option("--period", type=FiniteFloat(min=0.1, max=1e6), default=None, help="Seconds between periods (default: one window).")
@click.option("--window", type=FiniteFloat(min=0.1, max=1e6), default=LOOP.window_s, show_default=True, help="The monitor's window, seconds.")
@loop_options("")
@click.option("--cooldown", type=FiniteFloat(min=0, max=1e7), default=sp.Hysteresis.cooldown_s, show_default=True,
              help="Seconds after a change before the next.")
@click.option("--time-limit", type=SECONDS, default=LOOP.time_limit, show_default=True, help=f"Seconds of lns per period on a free core (a search starved of CPU runs again with more, up to {LOOP.search_stretch:g}x).")
@click.option("--operating-point", "operating_point", type=click.Choice(list(sp.OPERATING_POINTS)), default=None,
              help="The job's operating point (acking, max spout pending, sleeps; default: Storm's defaults, no acking).")
@click.option("--periods", type=click.IntRange(min=1), default=None, help="Stop after this many periods (default: run until stopped).")
@click.option("--log", "log", type=OutputPath("file"), default=None,
              help="Decision log, one JSON line per period (default: PLAN_DIR/<topology>.autopilot.jsonl); a restart resumes from it.")
@click.option("--receive", "receive", metavar="HOST:PORT", default=None,
              help="Also receive the windows of a topology whose monitor sends them through Storm's metrics path "
                   "(its RecordsConsumer's argument: http://HOST:PORT/records), writing them into --monitor.")
def autopilot(topology, cluster, monitor, plan_dir, current, policy, period, window, min_gain, confirm, max_moves, migration_s, payback_s, rewarm_s, load_change,
              horizon, steady_tolerance, cooldown, time_limit, operating_point, periods, log, receive):
    """Keep TOPOLOGY well placed on CLUSTER while it runs: every period read the monitor's windows,
    calibrate the model on them, reschedule the running placement and, when the policy says so,
    write the plan the Nimbus plugin applies. One line per period; Ctrl-C or SIGTERM stop it."""
    sp.run_autopilot(sp.JobFiles(topology, cluster), monitor, plan_dir, log=log, current=current, policy=policy, period_s=period, periods=periods,
                 window_s=window, horizon_windows=horizon, max_moves=max_moves, migration_s=migration_s, payback_s=payback_s, rewarm_s=rewarm_s,
                 load_change=load_change, time_limit=time_limit,
                 min_gain=min_gain, confirm=confirm, cooldown_s=cooldown, steady_tolerance=steady_tolerance,
                 operating_point=operating_point,
                 receive=receive, on_decision=lambda d: click.echo(d.line()), on_note=note)

"""The ``streamplace`` command group, the option types and help texts several commands share, and
how a record is shown (a two-column table)."""

from __future__ import annotations

import glob
import math
import os

import click
from rich import box
from rich.console import Console
from rich.table import Table

import streamplace as sp

err_console = Console(stderr=True)
UserError = sp.InputError   # a problem with the user's input: one line, exit code 2


class FiniteFloat(click.FloatRange):
    """A float in a documented range; NaN and infinities are refused (click's FloatRange lets NaN through)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{number} is not a finite number.", param, ctx)
        return number


class OutputPath(click.Path):
    """Where a command writes: ``kind`` ``"document"`` (a spec or result: ``.json``, ``.yaml`` or
    ``.yml``, the format following the extension), ``"file"`` (any other file), ``"dir"`` (a
    directory replaced as a whole), ``"into"`` (a directory files are written into) or ``"any"``
    (a file or a directory, by another option).
    :class:`GuardedCommand` checks it against the command's inputs before any work."""

    def __init__(self, kind: str = "document", **kwargs):
        super().__init__(file_okay=kind not in ("dir", "into"), dir_okay=kind in ("dir", "into", "any"), **kwargs)
        self.kind = kind

    def check(self, value: str, option: str) -> None:
        if self.kind in ("dir", "into"):
            sp.check_output_dir(value, option, replaced=self.kind == "dir")
        elif self.kind == "any":
            sp.refuse_overlap(value, option, holding_ok=True)
        else:
            sp.check_output_file(value, option, document=self.kind == "document")


class GuardedCommand(click.Command):
    """A command whose file arguments are guarded before it runs: every path-typed parameter
    that is not an :class:`OutputPath` is recorded as an input (globs expanded), then every
    output is checked (not an input, not holding or inside one, the format known), so a command
    added later is covered without listing its cases (the files layer: :mod:`streamplace.files`)."""

    def invoke(self, ctx):
        outputs = []
        for param in self.params:
            value = ctx.params.get(param.name)
            if value is None or not isinstance(param.type, click.Path):
                continue
            values = value if isinstance(value, (tuple, list)) else (value,)
            if isinstance(param.type, OutputPath):
                outputs += [(param, v) for v in values]
                continue
            for v in values:
                for path in (glob.glob(v) if glob.has_magic(v) else [v]):
                    if os.path.exists(path):
                        sp.note_input(path)
        for param, value in outputs:
            param.type.check(value, param.opts[0] if param.opts else param.name)
        return super().invoke(ctx)


class GuardedGroup(click.Group):
    command_class = GuardedCommand
    group_class = type   # subgroups are GuardedGroups too


SECONDS = FiniteFloat(min=0, max=sp.MAX_TIME_LIMIT)  # 0: ischeduler's theta 0 (its heuristic alone)
POSITIVE_SECONDS = FiniteFloat(min=0, max=sp.MAX_TIME_LIMIT, min_open=True)
SEED = click.IntRange(min=0, max=2**31 - 1)  # CP-SAT and METIS take 32-bit seeds

PROFILING_HELP = ("Profiling spec (YAML/JSON: machine types, e and MET tables, R0) passed to schedulers that "
                  "take one (throughput); without it they derive one from the operators' cpu_per_tuple.")
PROFILE_HELP = "Profile directory (from `streamplace profile`): its measured rates are the task graph's edge weights."
SPARK_MASTER_HELP = "Spark master URL (default: local[*], the embedded Spark; e.g. spark://host:7077)."
COST_MODEL_HELP = ("Cost model file (YAML/JSON, `cost_model:` mapping of constants) for the predicted throughput and "
                   "latency; default: the bundled model fitted to testbed measurements (docs/performance-model.md).")
EXIT_CODES_HELP = ("Exit codes: 0 ok; 1 a bug in streamplace (traceback with --debug); 2 usage or input error; "
                   "3 no placement (the status says why); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).")


def cost_model_option(command):
    return click.option("--cost-model", "cost_model", type=click.Path(), default=None, help=COST_MODEL_HELP)(command)


CALIBRATE_HELP = ("A run of this job (a `streamplace storm run` output directory, or one made the same way on a real "
                  "cluster: docs/performance-model.md, \"Calibration\"): predictions are calibrated on it, at the "
                  "operating point it ran at (acking, max spout pending, wait strategies, CPU budget). Repeat it "
                  "with runs of the same placement to calibrate on their mean; the note then gives their spread.")


def calibrate_option(command):
    """``--calibrate RUN``, repeatable: the command gets the runs as a tuple, or None for none."""
    return click.option("--calibrate", "calibrate_run", type=click.Path(), multiple=True, metavar="RUN",
                        callback=lambda _ctx, _param, runs: runs or None, help=CALIBRATE_HELP)(command)


def note(text: str) -> None:
    """A note on stderr (``streamplace: note: ...``)."""
    click.echo(f"streamplace: note: {text}", err=True)


def vertical(record: dict, title: str) -> Table:
    """One record as a two-column table: each key with its unit, and its value."""
    table = Table(title=title, box=box.SIMPLE_HEAD)
    table.add_column("metric")
    table.add_column("value", justify="right", overflow="fold")
    for key, value in record.items():
        if key not in ("placement", "params", "details"):
            unit = sp.metric(key).unit
            table.add_row(f"{key} [dim]({unit})[/dim]" if unit else key, sp.format_value(value))
    return table


@click.group(cls=GuardedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks of internal errors.")
@click.option("--memory-limit", default=None, metavar="SIZE",
              help="Memory an input may need, e.g. 12G (default: half of this machine's memory); larger inputs are refused.")
@click.version_option(package_name="streamplace")
@click.pass_context
def cli(ctx, debug, memory_limit):
    """Place the tasks of stream-processing jobs on clusters, and measure the result."""
    ctx.obj = {"debug": debug}
    if memory_limit is not None:
        try:
            sp.parse_size(memory_limit)
        except ValueError:
            raise click.BadParameter(f"expected a size such as 12G, got {sp.quote(memory_limit)}", param_hint="--memory-limit") from None
        os.environ[sp.MEMORY_LIMIT_ENV] = memory_limit
    sp.memory_limit()   # a bad $STREAMPLACE_MEMORY_LIMIT is refused here, before any work


cli.help = f"{cli.help}\n\n{EXIT_CODES_HELP}"

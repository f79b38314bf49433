"""Command line: ``streamplace schedule | evaluate | compare | workload | profile | traffic | demo | storm``.

Each command parses its options, calls one function of the library's public API
(:mod:`streamplace.api`) and prints; every file it writes goes through the library's writer (:mod:`streamplace.files`). User errors
(bad files, unknown schedulers or parameters) print one line ``streamplace: FILE: FIELD: problem``
and exit with code 2; internal errors show their traceback only with ``--debug``.

Modules: :mod:`.base` (the command group, shared options, a record as a table), :mod:`.placement`
(schedule, evaluate, compare, diff, reschedule), :mod:`.workload`, :mod:`.jobs` (profile,
traffic, demo, reproduce, sweep), :mod:`.engines` (storm, export, import), :mod:`.output` (text to a file or stdout, the profile directory rule).
"""

from __future__ import annotations

import sys

import click

import streamplace as sp

from . import engines, jobs, placement, workload  # noqa: F401  (the commands register on the group)
from .base import UserError, cli, err_console
from .jobs import REPRODUCE_PAPERS

__all__ = ["REPRODUCE_PAPERS", "UserError", "cli", "main"]


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
        if issubclass(category, sp.Notice):
            click.echo(f"streamplace: warning: {message}", err=True)
        else:
            previous(message, category, filename, lineno, file, line)
    warnings.showwarning = show


def _guarded(argv) -> None:
    """The command in its own files session (:func:`streamplace.guarding`): what it reads is
    recorded, and nothing it writes may replace it. Opened in the thread that does the work."""
    with sp.guarding():
        cli.main(args=argv, prog_name="streamplace", standalone_mode=False)


MAX_LINE = 2000   # the longest error line printed: values are quoted short at their source; this bounds the rest


def _one_line(text: str) -> str:
    text = sp.printable(" ".join(text.split()))   # a user's control characters are shown, never sent to the terminal
    return text if len(text) <= MAX_LINE else f"{text[:MAX_LINE]}... ({len(text):,} characters)"


def main(argv=None) -> None:
    """The ``streamplace`` command. From the command line (``argv`` None) the work runs interruptibly:
    Ctrl-C / SIGTERM stop it at once with one line, no partial output, exit 130 / 143."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        if argv is None:  # the command line (in-process callers keep their own signal and warning handling)
            _warnings_as_one_line()
            sp.run_interruptible(lambda: _guarded(argv))
        else:
            _guarded(argv)
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
    except (sp.SpecError, sp.ParameterError, sp.InputError, sp.FieldError, sp.StormError, sp.OutputError,
            sp.MemoryLimitError) as exc:
        click.echo(f"streamplace: {_one_line(str(exc))}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("streamplace: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # internal error: one line unless --debug
        line = _input_error(exc)
        if line is not None and not debug:
            click.echo(f"streamplace: {_one_line(line)}", err=True)
            sys.exit(2)
        if debug:
            raise
        click.echo(f"streamplace: internal error: {type(exc).__name__}: {_one_line(str(exc))} (rerun with --debug for the "
                   "traceback)", err=True)
        sys.exit(1)

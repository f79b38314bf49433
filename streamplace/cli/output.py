"""Where the command line writes: every file a command writes goes through here, and the rules
that keep outputs off the inputs (an output is never an input nor holds one; a profile directory
is replaced only if it holds nothing but a profile). Writes are atomic.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from streamplace.api import InputError, atomic_write_text, write_document, write_plan
from streamplace.api import write_records as sp_write_records


def same_or_inside(path: str, inputs) -> str | None:
    """The first of ``inputs`` that is ``path`` or lies inside it (any spelling: symlinks, ``..``)."""
    out = os.path.realpath(path)
    for inp in inputs:
        if inp is None:
            continue
        real = os.path.realpath(inp)
        if real == out or real.startswith(out.rstrip(os.sep) + os.sep):
            return str(inp)
    return None


def guard_output(output: str | None, inputs, option: str = "-o") -> None:
    """Refuse an output path that is one of the inputs or holds one (exit 2, inputs untouched)."""
    if output is None:
        return
    clash = same_or_inside(output, inputs)
    if clash is not None:
        what = "is" if Path(clash).resolve() == Path(output).resolve() else "contains"
        raise InputError(f"{option}: {output} {what} the input {clash}; choose another output path")


PROFILE_FILES = {"edges.parquet", "loads.parquet", "summary.json", "rejected"}


def guard_profile_dir(out_dir: str, force: bool) -> None:
    """A profile replaces its directory: refuse one holding anything but an earlier profile, unless --force."""
    out = Path(out_dir)
    if not out.is_dir():
        return
    foreign = sorted(p.name for p in out.iterdir() if p.name not in PROFILE_FILES)
    if foreign and not force:
        raise InputError(f"-o: {out_dir} holds files that are not a profile ({', '.join(foreign[:3])}"
                         f"{', ...' if len(foreign) > 3 else ''}); they would be deleted: choose an empty or new "
                         "directory, or add --force")


def emit(text: str, output: str | None) -> None:
    """``text`` to the file ``output``, else to stdout."""
    if output:
        atomic_write_text(Path(output), text)
    else:
        click.echo(text, nl=not text.endswith("\n"))


def write(document, path) -> None:
    """A spec or result document as YAML or JSON (by ``path``'s extension)."""
    write_document(document, path)


def write_storm_plan(plan_dir: str, name: str, document: dict) -> Path:
    """A plan into the Storm plugin's plan directory, as ``plan_dir/<name>.json``."""
    return write_plan(plan_dir, name, document)


def write_records(frame, path) -> Path:
    """Generated application records (Parquet, CSV or JSON Lines by ``path``'s extension)."""
    return sp_write_records(frame, path)

"""Where the command line writes: every file a command writes goes through here, and the rules
that keep outputs off the inputs (an output is never an input nor holds one; a profile directory
is replaced only if it holds nothing but a profile). Writes are atomic.
"""

from __future__ import annotations

from pathlib import Path

import click

import streamplace as sp

from streamplace.api import InputError, atomic_write_text, write_document, write_plan
from streamplace.api import write_records as sp_write_records


def guard_profile_dir(out_dir: str, force: bool) -> None:
    """A profile replaces its directory: refuse one holding anything but an earlier profile, unless --force."""
    out = Path(out_dir)
    if not out.is_dir():
        return
    foreign = sorted(p.name for p in out.iterdir() if p.name not in sp.PROFILE_FILES)
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

"""What the command line adds to the library's writer (:mod:`streamplace.files`, which keeps every
output off the inputs and writes atomically): text to a file or stdout, and the profile
directory rule (replaced only if it holds nothing but a profile, unless --force).
"""

from __future__ import annotations

from pathlib import Path

import click

import streamplace as sp

from streamplace.api import InputError, atomic_write_text


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

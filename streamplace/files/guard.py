"""Which paths the running command reads, so that nothing it writes replaces or deletes them.

A command runs inside :func:`guarding` (the CLI opens one session per invocation). Inside it,
every file the reader layer opens, and every input path the command line names (files, and
directories read as a whole: a profile, a monitor directory, saved Storm UI responses), is
recorded by its real path (symlinks and ``..`` resolved, so every spelling is the same input).
:func:`refuse_overlap` then refuses an output that is an input, holds one (a directory to be
replaced), or lies inside an input directory. Outside a session (the library used from Python:
a long-lived process may legitimately rewrite what it read, e.g. the next plan over the last)
nothing is recorded and only the writer's other rules apply.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator


class OutputError(ValueError):
    """An output path that would replace or delete an input, or that cannot be written in the
    asked format: ``OPTION: problem`` (one line, exit 2), raised before any work when possible."""


@dataclass
class Session:
    files: dict[str, str] = field(default_factory=dict)   # real path -> as the user spelled it
    trees: dict[str, str] = field(default_factory=dict)   # directories read as a whole


_session: ContextVar[Session | None] = ContextVar("streamplace_files_session", default=None)


@contextmanager
def guarding() -> Iterator[Session]:
    """A command's session: inputs recorded inside it are protected from its outputs."""
    token = _session.set(Session())
    try:
        yield _session.get()
    finally:
        _session.reset(token)


def _real(path: str | os.PathLike) -> str:
    return os.path.realpath(os.fspath(path))


def note_input(path: str | os.PathLike, *, tree: bool | None = None) -> None:
    """Record ``path`` as an input of the running command (no-op outside :func:`guarding`).
    ``tree``: a directory read as a whole (default: whether ``path`` is a directory now)."""
    session = _session.get()
    if session is None or path is None:
        return
    real = _real(path)
    if tree is None:
        tree = os.path.isdir(real)
    (session.trees if tree else session.files).setdefault(real, os.fspath(path))


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


def overlap(output: str | os.PathLike, *, holding_ok: bool = False) -> str | None:
    """How ``output`` collides with a recorded input (a sentence), or None. ``holding_ok``: a
    directory the command writes files into (not replaced as a whole) may hold inputs; the files
    it writes are checked one by one when written."""
    session = _session.get()
    if session is None:
        return None
    out = _real(output)
    for real, spelled in {**session.files, **session.trees}.items():
        if real == out:
            return f"is the input {spelled}"
        if _inside(real, out) and not holding_ok:
            return f"contains the input {spelled}"
    for real, spelled in session.trees.items():
        if _inside(out, real):
            return f"lies inside the input directory {spelled}"
    return None


def refuse_overlap(output: str | os.PathLike, option: str = "-o", *, holding_ok: bool = False) -> None:
    """Raise :class:`OutputError` when ``output`` is, holds (unless ``holding_ok``), or lies inside an input."""
    clash = overlap(output, holding_ok=holding_ok)
    if clash is not None:
        raise OutputError(f"{option}: {os.fspath(output)} {clash}; inputs are never replaced or deleted "
                          "(--force included): choose another output path")

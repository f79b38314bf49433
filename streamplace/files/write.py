"""The one way out: every file or directory a command writes goes through here.

Rules (docs/safety.md states them for users):

- **Inputs are never replaced or deleted**, ``--force`` included: an output that is an input,
  holds one, or lies inside an input directory is refused (:mod:`streamplace.files.guard`),
  by any spelling of the path.
- **The format follows the extension**: ``.json``, ``.yaml``/``.yml`` for documents
  (:func:`document_format`); anything else is refused, by the CLI before any work starts.
- **Atomic**: a file is written under a temporary name in its directory and renamed; a directory
  is built beside its destination and swapped in, so an interruption never leaves half a result.
- **Symlinks are written through**, as ``cp`` does: the link stays and its target gets the new
  content (atomically, in the target's directory); a symlinked output directory is refused.
- **Finite**: JSON is written with ``allow_nan=False``; a NaN or infinity reaching a writer is a
  bug upstream (metrics say ``null`` with a note instead), never an ``Infinity`` token.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from .guard import OutputError, refuse_overlap
from .read import check_finite

DOCUMENT_FORMATS = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}


def document_format(path: str | os.PathLike, option: str = "-o") -> str:
    """``"json"`` or ``"yaml"`` by ``path``'s extension; any other extension is refused."""
    suffix = Path(path).suffix.lower()
    if suffix not in DOCUMENT_FORMATS:
        shown = f"extension {suffix!r}" if suffix else "no extension"
        raise OutputError(f"{option}: {os.fspath(path)} has {shown}; the format follows the extension: "
                          f"use {', '.join(DOCUMENT_FORMATS)}")
    return DOCUMENT_FORMATS[suffix]


def check_output_file(path: str | os.PathLike, option: str = "-o", *, document: bool = False) -> None:
    """Everything that can be said about an output file before the work: not an input, not a
    directory, and (``document``) a known format."""
    if document:
        document_format(path, option)
    if Path(path).is_dir():
        raise OutputError(f"{option}: {os.fspath(path)} is a directory, expected a file name")
    refuse_overlap(path, option)


def check_output_dir(path: str | os.PathLike, option: str = "-o", *, replaced: bool = True) -> None:
    """An output directory: not a file, not an input nor inside an input directory; when it is
    ``replaced`` as a whole, also not holding an input and not a symlink (replacing it would
    replace the link). A directory files are written into (``replaced=False``) may hold inputs:
    each file written is checked when it is written."""
    p = Path(path)
    if replaced and p.is_symlink():
        raise OutputError(f"{option}: {os.fspath(path)} is a symbolic link; give the directory it points to")
    if p.exists() and not p.is_dir():
        raise OutputError(f"{option}: {os.fspath(path)} is a file, expected a directory")
    refuse_overlap(path, option, holding_ok=not replaced)


def _target(path: Path) -> Path:
    """Where writing ``path`` lands: through a symlink (chains resolved) to its target."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, option: str = "-o") -> None:
    """Write ``data`` to ``path`` atomically (temporary name, then rename), world-readable (0644:
    results are meant to be shared), through a symlink to its target, never over an input. A
    failure (unwritable directory, full disk) is an ``OSError`` naming ``path``."""
    from ..interrupt import temporary
    path = Path(path)
    refuse_overlap(path, option)
    target = _target(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory, expected a file name", str(path))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot write: {exc.strerror or exc}", str(path)) from None
    with temporary(tmp):
        try:
            with os.fdopen(fd, "wb") as fh:
                os.fchmod(fh.fileno(), 0o644)
                fh.write(data)
            os.replace(tmp, target)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise type(exc)(exc.errno, f"cannot write: {exc.strerror or exc}", str(path)) from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def atomic_write_text(path: str | os.PathLike, text: str, *, option: str = "-o") -> None:
    atomic_write_bytes(path, text.encode("utf-8"), option=option)


def dumps_json(data: Any, *, indent: int | None = 2) -> str:
    """JSON text of ``data``; NaN and infinities are refused (``ValueError``), never written as
    the ``NaN``/``Infinity`` tokens no JSON parser accepts."""
    return json.dumps(data, indent=indent, allow_nan=False)


def _plain(value: Any) -> Any:
    """Enum members as their values, tuples as lists: what a YAML safe dumper can represent."""
    from enum import Enum
    if isinstance(value, Enum):
        return _plain(value.value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def format_document(data: Any, fmt: str) -> str:
    """``data`` as JSON or YAML text (the same values either way)."""
    data = _plain(data)
    if fmt == "json":
        return dumps_json(data) + "\n"
    check_finite(data, "<output>")   # the same finiteness rule for YAML (a SpecError, which is a ValueError)
    return yaml.safe_dump(data, sort_keys=False)


def write_document(data: Any, path: str | os.PathLike, *, option: str = "-o") -> None:
    """Write ``data`` as JSON or YAML by ``path``'s extension (:func:`document_format`), atomically."""
    atomic_write_text(path, format_document(data, document_format(path, option)), option=option)


def stage_dir(out_dir: str | os.PathLike) -> Path:
    """A fresh hidden directory beside ``out_dir`` to build a result in (same filesystem, so
    :func:`replace_dir` can swap it in with a rename)."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))


def replace_dir(stage: str | os.PathLike, out_dir: str | os.PathLike, *, option: str = "-o") -> None:
    """Swap the finished ``stage`` in as ``out_dir``: the old directory (if any) is renamed aside,
    the stage renamed in, the old one removed. Refused (the stage removed) when ``out_dir`` is,
    holds or lies inside an input."""
    stage, out = Path(stage), Path(out_dir)
    try:
        check_output_dir(out, option)
    except OutputError:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    if out.exists():
        old = out.with_name(f".{out.name}.old-{time.time_ns()}")
        out.rename(old)
        stage.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        stage.rename(out)

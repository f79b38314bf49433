"""The profiling pipeline's file formats, and the Spark-free profile loader (docs/pipeline.md).

Monitoring records (what a running job's metrics, or :mod:`.traffic`, produce), one row per
measurement window:

* traffic: ``window_start, window_seconds, src_task, dst_task, tuples, bytes``
* load:    ``window_start, window_seconds, task, executed, cpu_seconds``

``window_start`` is epoch seconds or an ISO-8601 timestamp (UTC unless it names a zone);
tasks are labels ``op[i]`` or integer task ids. A profile directory (written by
:mod:`.metrics`) holds ``edges.parquet`` (``src_task, dst_task, tuples_per_s, bytes_per_s``),
``loads.parquet`` (``task, executed_per_s, cpu_cores``), ``summary.json`` and ``rejected/``.

This module imports neither Spark nor anything from ``profile.spark``: schedulers and the
CLI read a profile with pandas/pyarrow only (:func:`load_profile_graph`).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np

from ..files import quote
from ..model import TaskGraph, Topology
from ..files import SpecError, check_total_size, note_input, read_document

TRAFFIC_COLUMNS = ("window_start", "window_seconds", "src_task", "dst_task", "tuples", "bytes")
LOAD_COLUMNS = ("window_start", "window_seconds", "task", "executed", "cpu_seconds")
EDGE_COLUMNS = ("src_task", "dst_task", "tuples_per_s", "bytes_per_s")
LOAD_RATE_COLUMNS = ("task", "executed_per_s", "cpu_cores")
WEIGHTS = ("tuples", "bytes")
FORMATS = ("jsonl", "csv", "parquet")
EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
JSON_SCAN_LINES = 1000
#: window edges closer than this meet (epoch seconds parsed from text)
OVERLAP_TOLERANCE_S = 1e-6

# The layout of a profile directory (the one home: the writer :mod:`.metrics`, the reader
# :func:`load_profile_graph`, and the CLI's check before it replaces a directory).
EDGES_FILE = "edges.parquet"     # EDGE_COLUMNS, one row per task edge
LOADS_FILE = "loads.parquet"     # LOAD_RATE_COLUMNS, one row per task
SUMMARY_FILE = "summary.json"    # what was read, used and rejected; the weight
REJECTED_DIR = "rejected"        # one Parquet dataset per input with rejected rows
PROFILE_FILES = frozenset({EDGES_FILE, LOADS_FILE, SUMMARY_FILE, REJECTED_DIR})


def local_path(uri: str) -> str:
    """Spark's ``input_file_name()`` (``file:///dir/a.csv``) as a path; other URIs and paths as they are."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def window_text(ws: float, wl: float) -> str:
    return f"[{ws:.15g}, {ws + wl:.15g})"


def tumbling_windows(by_file, needs: str = "a profile"):
    """The distinct windows (``ws``, ``wl``) of ``by_file`` (a pandas frame of ``ws, wl, _source``);
    :class:`SpecError` naming the later file if two overlap: the rates of ``needs`` (a profile, a
    calibration) count each second once. The one rule for the Spark pipeline and ``--calibrate``."""
    windows = by_file.drop_duplicates(["ws", "wl"]).sort_values(["ws", "wl"]).reset_index(drop=True)
    ends = (windows["ws"] + windows["wl"]).to_numpy()
    reach = np.maximum.accumulate(ends)   # the latest end of any window that starts no later
    starts = windows["ws"].to_numpy()
    clash = np.flatnonzero(starts[1:] < reach[:-1] - OVERLAP_TOLERANCE_S)
    if len(clash):
        later = clash[0] + 1
        earlier = int(np.flatnonzero(ends[:later] > starts[later] + OVERLAP_TOLERANCE_S)[0])
        a, b = windows.iloc[earlier], windows.iloc[later]
        file_a, file_b = (local_path(by_file.loc[(by_file["ws"] == w["ws"]) & (by_file["wl"] == w["wl"]), "_source"].iloc[0])
                          for w in (a, b))
        raise SpecError(file_b, "window_start", f"window {window_text(b['ws'], b['wl'])} overlaps window "
                                                f"{window_text(a['ws'], a['wl'])} of {file_a}: {needs} needs "
                                                "windows that do not overlap (each second counted once)")
    return windows[["ws", "wl"]]


@dataclass(frozen=True)
class InputFile:
    """A monitoring or application-record input checked before Spark reads it."""

    path: Path
    fmt: str
    columns: tuple[str, ...]
    size: int = 0   #: bytes of its data files


def input_format(path: Path, fmt: str | None = None) -> str:
    """``jsonl``, ``csv`` or ``parquet``: ``fmt`` if given, else from the extension."""
    if fmt:
        if fmt not in FORMATS:
            raise SpecError(path, "", f"unknown format {quote(fmt)} (expected one of {', '.join(FORMATS)})")
        return fmt
    candidates = [path] + (sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [])
    for candidate in candidates:
        if candidate.suffix.lower() in EXTENSIONS:
            return EXTENSIONS[candidate.suffix.lower()]
    raise SpecError(path, "", f"cannot tell the format from the name (use an extension {', '.join(EXTENSIONS)} or --format)")


def _data_files(path: Path) -> tuple[Path, ...]:
    if not path.is_dir():
        return (path,)
    files = tuple(sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(("_", "."))))
    if not files:
        raise SpecError(path, "", "the directory holds no data files")
    return files


def _text_lines(files: tuple[Path, ...]):
    for file in files:
        with open(file, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip():
                    yield line


def _csv_header(line: str) -> tuple[str, ...]:
    return tuple(h.strip() for h in next(csv.reader(io.StringIO(line)), []))


def _columns(path: Path, fmt: str, files: tuple[Path, ...]) -> tuple[str, ...]:
    if fmt == "parquet":
        import pyarrow.parquet as pq
        try:
            metas = [pq.ParquetFile(f).metadata for f in files]
        except Exception as exc:  # pyarrow raises several types for unreadable files
            raise SpecError(path, "", f"not a readable Parquet file: {str(exc).splitlines()[0]}") from None
        if sum(m.num_rows for m in metas) == 0:
            raise SpecError(path, "", "the file has no records")
        return tuple(metas[0].schema.to_arrow_schema().names)
    lines = _text_lines(files)
    first = next(lines, None)
    if first is None:
        raise SpecError(path, "", "file is empty")
    if fmt == "csv":
        header = _csv_header(first)
        if next(lines, None) is None:
            raise SpecError(path, "", "the file has no records (only a header line)")
        for other in files[1:]:  # Spark reads a directory with one header: all files must share it
            with open(other, encoding="utf-8", errors="replace") as fh:
                own = _csv_header(next((line for line in fh if line.strip()), ""))
            if own != header:
                raise SpecError(other, "", f"its header ({', '.join(own)}) differs from {files[0].name}'s "
                                           f"({', '.join(header)}); the CSV files of one directory must share one header")
        return header
    keys: dict[str, None] = {}
    for line in itertools.islice(itertools.chain([first], lines), JSON_SCAN_LINES):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            keys.update(dict.fromkeys(record))
    if not keys:
        raise SpecError(path, "", f"not JSON Lines: none of the first {JSON_SCAN_LINES} lines is a JSON object")
    return tuple(keys)


def inspect_input(path: str | os.PathLike, fmt: str | None = None, required: tuple[str, ...] = ()) -> InputFile:
    """Check an input before Spark reads it: it exists, is not empty, and has the ``required`` columns.

    Columns come from the CSV header, the Parquet schema, or the keys of the first
    ``JSON_SCAN_LINES`` JSON Lines records. A directory (as Spark writes) is read as its data files.
    """
    p = Path(path)
    if not p.exists():
        raise SpecError(p, "", "file not found")
    fmt = input_format(p, fmt)
    files = _data_files(p)
    note_input(p)
    size = check_total_size(files, p, what=f"{fmt} records")
    columns = _columns(p, fmt, files)
    missing = [c for c in required if c not in columns]
    if missing:
        raise SpecError(p, missing[0], f"missing column (the file has columns {', '.join(columns)}; expected {', '.join(required)})")
    return InputFile(path=p, fmt=fmt, columns=columns, size=size)


def _read_parquet(path: Path, columns: tuple[str, ...]):
    import pyarrow.parquet as pq

    if not path.exists():
        raise SpecError(path, "", "file not found (is this a profile directory written by `streamplace profile`?)")
    check_total_size([path], path, what="profile data", in_memory="parquet")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for unreadable files
        raise SpecError(path, "", f"cannot read Parquet: {exc}") from None
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise SpecError(path, missing[0], f"missing column (the file has {', '.join(table.column_names) or 'no columns'})")
    return table.select(list(columns)).to_pandas()


def _task_ids(frame, column: str, topology: Topology, path: Path) -> np.ndarray:
    ids = {label: t for t, label in enumerate(topology.task_labels)}
    labels = frame[column].astype(str).to_numpy()
    out = np.fromiter((ids.get(lab, -1) for lab in labels), dtype=np.int64, count=labels.shape[0])
    bad = np.flatnonzero(out < 0)
    if bad.size:
        raise SpecError(path, column, f"unknown task {quote(labels[bad[0]])}: {bad.size} row(s) name tasks that topology "
                                      f"{topology.name!r} does not have (was the profile made for another topology?)")
    return out


def read_summary(profile_dir: str | os.PathLike) -> dict:
    """``summary.json`` of a profile directory, with one-line errors for a bad directory."""
    root = Path(profile_dir)
    if not root.is_dir():
        raise SpecError(root, "", "profile directory not found" if not root.exists() else "not a directory (expected a profile directory)")
    path = root / SUMMARY_FILE
    if not path.exists():
        raise SpecError(path, "", "file not found (is this a profile directory written by `streamplace profile`?)")
    note_input(root, tree=True)
    summary = read_document(path, what="profile summary (JSON)")
    if not isinstance(summary, dict):
        raise SpecError(path, "", "expected a JSON object")
    return summary


def load_profile_graph(profile_dir: str | os.PathLike, topology: Topology, *, weight: str | None = None) -> TaskGraph:
    """The task graph whose edge weights are a measured profile (no Spark involved).

    ``weight`` chooses ``tuples_per_s`` or ``bytes_per_s`` (default: the ``weight`` the profile
    was made with). Vertex weights stay the topology's per-task loads (task units, the unit of
    node ``capacity``); the measured ``cpu_cores`` (0 for a task without load records) become
    the tasks' CPU need, checked against the nodes' ``cores`` (model.resources), when the
    profile has load records at all.
    """
    root = Path(profile_dir)
    summary = read_summary(root)
    weight = weight or summary.get("weight", "tuples")
    if weight not in WEIGHTS:
        raise SpecError(root / SUMMARY_FILE, "weight", f"must be one of {', '.join(WEIGHTS)}, got {quote(weight)}")
    edges_path = root / EDGES_FILE
    edges = _read_parquet(edges_path, EDGE_COLUMNS)
    src = _task_ids(edges, "src_task", topology, edges_path)
    dst = _task_ids(edges, "dst_task", topology, edges_path)
    rate = edges[f"{weight}_per_s"].to_numpy(dtype=float)
    if not np.all(np.isfinite(rate)) or np.any(rate < 0):
        raise SpecError(edges_path, f"{weight}_per_s", "rates must be finite and >= 0")
    loads_path = root / LOADS_FILE
    table = _read_parquet(loads_path, LOAD_RATE_COLUMNS)
    cpu = None
    if len(table):
        measured = table["cpu_cores"].to_numpy(dtype=float)
        if not np.all(np.isfinite(measured)) or np.any(measured < 0):
            raise SpecError(loads_path, "cpu_cores", "must be finite and >= 0")
        cpu = np.zeros(topology.n_tasks)
        cpu[_task_ids(table, "task", topology, loads_path)] = measured
    graph = dataclasses.replace(TaskGraph.from_edges(topology.n_tasks, src, dst, rate, topology.task_loads, unit=f"{weight}/s"),
                                cpu=cpu)
    graph.meta["profile"] = str(root)
    return graph


__all__ = [
    "TRAFFIC_COLUMNS", "LOAD_COLUMNS", "EDGE_COLUMNS", "LOAD_RATE_COLUMNS", "WEIGHTS", "FORMATS", "EXTENSIONS",
    "InputFile", "input_format", "inspect_input", "read_summary", "load_profile_graph",
]

"""The two Spark jobs of the command line, from the files the user names to the files written:
:func:`profile_records` (``streamplace profile``: monitoring records -> a profile directory) and
:func:`replay_records` (``streamplace traffic``: application records replayed through a
topology's groupings -> monitoring records). File-level problems are found before Spark starts.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..files import check_output_file, quote
from ..model.errors import InputError
from ..model.specs import SpecError, load_cluster, load_placement, load_topology


def expand_paths(patterns: Iterable[str]) -> list[str]:
    """Paths, with glob patterns expanded (a pattern matching nothing is kept, to be reported as missing).

    >>> expand_paths(["no-such-file-*.jsonl", "b.csv"])
    ['no-such-file-*.jsonl', 'b.csv']
    """
    out = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) if any(ch in pattern for ch in "*?[") else []
        out += matches or [pattern]
    return out


def refuse_repeated_files(option: str, paths: Sequence[str]) -> None:
    """One file reached twice (two spellings, or a file and its directory) would be counted twice."""
    seen: dict[str, str] = {}
    for path in paths:
        p = Path(path)
        for file in (sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]):
            real = os.path.realpath(file)
            if real in seen and seen[real] != path:
                raise InputError(f"{option}: {path} and {seen[real]} both reach {file}; its records would be counted twice")
            seen.setdefault(real, path)


def profile_records(topology: str, traffic: Sequence[str], load: Sequence[str], out_dir: str, *,
                    start: float | None = None, end: float | None = None, start_text: str | None = None,
                    end_text: str | None = None, half_life: float | None = None, weight: str = "tuples",
                    fmt: str | None = None, spark_master: str | None = None):
    """The profile of the monitoring records ``traffic`` and ``load`` (paths or glob patterns) of
    the job ``topology`` (a spec file), written to ``out_dir``; returns the
    :func:`~.metrics.build_profile` result (its ``summary``). ``start``/``end``: epoch seconds
    (``start_text``/``end_text``: how the user wrote them, for the error)."""
    from . import LOAD_COLUMNS, TRAFFIC_COLUMNS, inspect_input
    from .metrics import build_profile
    from .spark import SparkUnavailable, fast_start_for, spark_session
    topo = load_topology(topology)
    if start is not None and end is not None and not start < end:
        raise InputError(f"--from/--to: the range is empty ({start_text} is not before {end_text})")
    traffic, load = expand_paths(traffic), expand_paths(load)
    size = 0
    for option, paths, columns in (("--traffic", traffic, TRAFFIC_COLUMNS), ("--load", load, LOAD_COLUMNS)):
        for path in paths:  # file-level problems before Spark starts
            size += inspect_input(path, fmt, columns).size
        refuse_repeated_files(option, paths)
    try:
        with spark_session(spark_master, fast_start=fast_start_for(size)) as spark:
            return build_profile(spark, topo, traffic, load, out_dir=out_dir, fmt=fmt,
                                 start=start, end=end, half_life=half_life, weight=weight)
    except SparkUnavailable as exc:
        raise InputError(str(exc)) from None


def replay_records(records: str, out_dir: str, *, app: str | None = None, topology: str | None = None,
                   records_format: str | None = None, time_column: str | None = None, window_seconds: float = 10.0,
                   cluster: str | None = None, placement: str | None = None, seed: int = 0, fmt: str = "parquet",
                   spark_master: str | None = None):
    """Replays application ``records`` through the job's groupings (the bundled application
    ``app``'s operator logic, else each operator passes tuples on with its selectivity) and writes
    ``out_dir``/traffic.<fmt> and load.<fmt>; returns ``(monitoring, paths)``."""
    from . import inspect_input
    from ..workloads.applications import application
    from .spark import SparkUnavailable, fast_start_for, spark_session
    from .traffic import ReplayError, monitoring_paths, read_application_records, release, replay, write_monitoring
    for written in monitoring_paths(out_dir, fmt):   # before any work: not an input, a known format
        check_output_file(written)
    bundled = application(app) if app else None
    if topology is None and bundled is None:
        raise InputError("--topology: required unless --app names a bundled application")
    topo = load_topology(topology) if topology else bundled.topology
    if bundled is not None:
        missing = [name for name in bundled.logic if name not in topo.index]
        if missing:
            raise SpecError(topology, "operators", f"no operator {quote(missing[0])}, which application {quote(app)} needs")
    if (cluster is None) != (placement is None):
        raise InputError("--cluster/--placement: give both or neither")
    placed = load_placement(placement, topo, load_cluster(cluster)) if placement else None
    time_column = time_column or (bundled.time_column if bundled else "ts")
    inp = inspect_input(records, records_format, (time_column,))
    made = not Path(out_dir).exists()
    try:
        with spark_session(spark_master, fast_start=fast_start_for(inp.size)) as spark:
            mon = replay(spark, topo, read_application_records(spark, inp), logic=bundled.logic if bundled else None,
                         time_column=time_column, window_seconds=window_seconds, placement=placed, seed=seed)
            try:
                paths = write_monitoring(mon, out_dir, fmt)
            finally:
                release(mon)
    except SparkUnavailable as exc:
        raise InputError(str(exc)) from None
    except ReplayError as exc:
        raise SpecError(records if exc.about == "records" else (topology or app), exc.field_path, exc.problem) from None
    finally:
        if made and Path(out_dir).is_dir() and not any(Path(out_dir).iterdir()):   # made here, nothing written: gone
            Path(out_dir).rmdir()
    return mon, paths

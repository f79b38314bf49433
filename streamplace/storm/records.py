"""The traffic monitor's files -> the measured run: records in the ``profile`` schema, throughput,
latency percentiles, bytes between nodes.

The hook (``org.streamplace.storm.TrafficMonitor``) writes per worker process
``traffic-*.jsonl``, ``load-*.jsonl`` and ``latency-*.jsonl`` for every whole window; a run keeps
the windows inside its measured interval.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..model import Topology
from ..files import SpecError, atomic_write_bytes, check_total_size, quote
from ..profile import LOAD_COLUMNS, TRAFFIC_COLUMNS

if TYPE_CHECKING:   # pandas loads in ~0.5 s: imported where used, so the CLI starts without it
    import pandas as pd

#: Latency buckets per doubling (``LatencyHistogram.PER_DOUBLING`` in Java).
PER_DOUBLING = 8
#: latency buckets a record may name: 2^40 us (about 12 days) and beyond fall in none
LATENCY_BUCKETS = 40 * PER_DOUBLING
EPS = 1e-6
#: per kind: the fields every record of the monitor has (``TrafficMonitor``); ``acked`` and
#: ``failed`` (a spout's load record with ackers) may be absent
RECORD_FIELDS = {"traffic": TRAFFIC_COLUMNS, "load": LOAD_COLUMNS,
                 "latency": ("window_start", "window_seconds", "task", "count", "buckets")}
_LABELS = ("task", "src_task", "dst_task")
_OPTIONAL_COUNTS = ("acked", "failed")


def check_records(rows: pd.DataFrame, source, required=None, kind: str = "load") -> None:
    """:class:`~streamplace.files.SpecError` naming ``source`` and the field unless every row of
    ``rows`` is a monitor record of ``kind``: its ``required`` fields (default: all of the kind's)
    present and set, task labels strings, times, seconds and counts finite numbers >= 0 (a
    window's length > 0), latency buckets ``[bucket, count]`` pairs within the histogram."""
    from pandas.api.types import infer_dtype
    required = tuple(RECORD_FIELDS[kind] if required is None else required)
    for field in required:
        if field not in rows.columns:
            raise SpecError(source, field, "missing: monitoring records need " + ", ".join(required))
        if rows[field].isna().any():
            raise SpecError(source, field, f"missing in record {int(rows[field].isna().to_numpy().argmax()) + 1}")
    for field in rows.columns.intersection([*required, *_OPTIONAL_COUNTS]):
        column = rows[field]
        if field in _LABELS:
            if infer_dtype(column, skipna=False) == "string":
                continue
            bad = ~column.map(lambda v: isinstance(v, str))
            problem = "must be a task label (a string)"
        elif field == "buckets":
            bad = ~column.map(_buckets_ok)
            problem = f"must be a list of [bucket, count] pairs, buckets 0..{LATENCY_BUCKETS - 1}, counts >= 0"
        else:
            bad = _bad_numbers(column, np.nextafter(0.0, 1.0) if field == "window_seconds" else 0.0)
            problem = "must be a number of seconds > 0" if field == "window_seconds" else "must be a finite number >= 0"
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise SpecError(source, field, f"{problem}, got {quote(column.iloc[row])} in record {row + 1}")


def _bad_numbers(column: pd.Series, low: float) -> pd.Series:
    """Which set values of ``column`` are not finite numbers >= ``low`` (a boolean is not one)."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype
    is_set = column.notna()
    if is_bool_dtype(column):
        return is_set
    if is_numeric_dtype(column):
        values = column.to_numpy(dtype=float, na_value=np.nan)
        return is_set & ~(np.isfinite(values) & (values >= low))
    return is_set & column.map(lambda v: isinstance(v, bool) or not isinstance(v, (int, float))
                               or not math.isfinite(v) or v < low)


def _buckets_ok(value) -> bool:
    return isinstance(value, list) and all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
        and 0 <= pair[0] < LATENCY_BUCKETS and pair[1] >= 0 for pair in value)


def read_monitor(monitor_dir: Path, kind: str, start: float, end: float, *, live: bool = False) -> pd.DataFrame:
    """All rows of one kind (traffic, load, latency) whose window lies inside ``[start, end]``.
    ``live``: the files are still being written, so each is read up to its last complete line."""
    import pandas as pd
    files = [p for p in sorted(monitor_dir.glob(f"{kind}-*.jsonl")) if p.stat().st_size > 0]
    check_total_size(files, monitor_dir, what=f"{kind} monitoring records", in_memory="json")

    def frame(path: Path) -> pd.DataFrame:
        text = path.read_text(errors="replace")
        if live:
            text = text[:text.rfind("\n") + 1]
        if not text.strip():
            return pd.DataFrame()
        try:
            rows = pd.read_json(io.StringIO(text), lines=True, dtype=False)
        except ValueError as exc:
            raise SpecError(path, "", f"not readable as monitoring records ({quote(str(exc))})") from None
        except (AttributeError, TypeError):   # pandas on a line that is JSON but not an object
            raise SpecError(path, "", "not readable as monitoring records (a line is not a JSON object)") from None
        check_records(rows, path, kind=kind)
        return rows
    frames = [f for f in (frame(p) for p in files) if len(f)]
    if not frames:
        return pd.DataFrame()
    rows = pd.concat(frames, ignore_index=True)
    inside = (rows["window_start"] >= start - EPS) & (rows["window_start"] + rows["window_seconds"] <= end + EPS)
    return rows[inside].reset_index(drop=True)


def _records(monitor_dir: Path, kind: str, columns, start: float, end: float) -> pd.DataFrame:
    """:func:`read_monitor`'s rows with the ``profile`` schema's ``columns`` (none read: empty, same columns)."""
    import pandas as pd
    rows = read_monitor(monitor_dir, kind, start, end)
    return rows[list(columns)] if len(rows) else pd.DataFrame(columns=list(columns))


def traffic_records(monitor_dir: Path, start: float, end: float) -> pd.DataFrame:
    return _records(monitor_dir, "traffic", TRAFFIC_COLUMNS, start, end)


def load_records(monitor_dir: Path, start: float, end: float) -> pd.DataFrame:
    return _records(monitor_dir, "load", LOAD_COLUMNS, start, end)


def spout_labels(topology: Topology) -> set[str]:
    """The labels of the tasks Storm runs as spouts: those of operators without an upstream (the
    spec topology's rule)."""
    return {label for op in topology.operators if not topology.upstream(op.name)
            for label in (topology.task_labels[t] for t in topology.tasks_of(op.name))}


def throughput(load: pd.DataFrame, topology: Topology, seconds: float) -> tuple[float, float]:
    """(tuples executed per second summed over bolt tasks, tuples emitted per second by spouts).

    The papers count executed tuples of bolt tasks ([I], [T3] Sec. 6); a spout's "executed" in
    the load records is what it emitted.
    """
    if seconds <= 0 or not len(load):
        return 0.0, 0.0
    is_spout = load["task"].isin(spout_labels(topology))
    return float(load.loc[~is_spout, "executed"].sum() / seconds), float(load.loc[is_spout, "executed"].sum() / seconds)


def rates(load: pd.DataFrame, traffic: pd.DataFrame, topology: Topology, seconds: float) -> dict:
    """What a calibration reads from a run: ``tasks`` (per task label: ``executed_per_s``, and
    ``cpu_cores`` of its executor thread) and ``streams`` (per ``"<from>><to>"`` operator pair:
    ``tuples_per_s`` sent over it), over the measured ``seconds``."""
    if seconds <= 0:
        return {"tasks": {}, "streams": {}}
    tasks = {}
    if len(load):
        per_task = load.groupby("task")[["executed", "cpu_seconds"]].sum() / seconds
        tasks = {str(label): {"executed_per_s": float(row.executed), "cpu_cores": float(row.cpu_seconds)}
                 for label, row in per_task.iterrows()}
    streams = {}
    if len(traffic):
        def op(label: str) -> str:
            return label[:label.rindex("[")]
        pairs = traffic.assign(src=traffic["src_task"].map(op), dst=traffic["dst_task"].map(op))
        per_pair = pairs.groupby(["src", "dst"])["tuples"].sum() / seconds
        streams = {f"{s}>{d}": {"tuples_per_s": float(v)} for (s, d), v in per_pair.items()}
    return {"tasks": tasks, "streams": streams}


def missing_windows(load: pd.DataFrame, topology: Topology, windows: int) -> int:
    """Task-windows without a load record among the ``windows`` measured ones. The monitor writes
    a load record for every task in every whole window while its executor runs, so a gap is a
    restarted executor's open window (a migration) or records that never arrived."""
    import pandas as pd
    if windows <= 0:
        return 0
    have = load.groupby("task")["window_start"].nunique() if len(load) else pd.Series(dtype=int)
    return int(sum(max(0, windows - int(have.get(label, 0))) for label in topology.task_labels))


def spout_trees(load: pd.DataFrame, topology: Topology) -> dict:
    """The spouts' tuple trees in the monitor's raw ``load`` rows: ``emitted`` (tuples the spouts
    emitted), ``acked`` (trees Storm reported complete) and ``failed`` (failed or timed out); 0
    acked without ackers (the spec spout emits untracked tuples). Unlike Storm's statistics these
    survive an executor's restart: each window counts what its executor saw. ``emitted - acked -
    failed`` over a stretch that starts and ends drained is what a replaying spout would read again:
    trees pending in an executor that stopped are reported neither way."""
    rows = load[load["task"].isin(spout_labels(topology))] if len(load) else load
    out = {"emitted": int(rows["executed"].sum()) if len(rows) else 0}
    for key in ("acked", "failed"):
        out[key] = int(rows[key].fillna(0).sum()) if len(rows) and key in rows else 0
    return out


def timeline(load: pd.DataFrame) -> list[dict]:
    """Per window of ``load`` (warm-up included): ``t`` (its start) and ``throughput`` (tuples
    executed per second by every task, spouts' emits included)."""
    if not len(load):
        return []
    per = load.groupby("window_start").agg(executed=("executed", "sum"), seconds=("window_seconds", "first"))
    return [{"t": float(t), "throughput": float(row.executed / row.seconds)} for t, row in per.iterrows()]


def latency_summary(latency: pd.DataFrame) -> dict:
    """p50/p95/p99 and mean end-to-end latency in ms over all sink tasks and windows.

    A bucket b holds [2^(b/8), 2^((b+1)/8)) microseconds; its geometric middle stands for it
    (at most ~4.5 % off).
    """
    if not len(latency):
        return {"p50": None, "p95": None, "p99": None, "mean": None, "count": 0}
    counts = np.zeros(40 * PER_DOUBLING)
    for buckets in latency["buckets"]:
        for b, c in buckets:
            counts[int(b)] += c
    middle_ms = 2.0 ** ((np.arange(counts.size) + 0.5) / PER_DOUBLING) / 1000.0
    cum = np.cumsum(counts)
    total = cum[-1]

    def pct(q):
        return float(middle_ms[int(np.searchsorted(cum, q * total))])

    return {"p50": pct(0.50), "p95": pct(0.95), "p99": pct(0.99),
            "mean": float((counts * middle_ms).sum() / total), "count": int(total)}


def cross_node_bytes(traffic: pd.DataFrame, node_of_label: dict[str, str]) -> float:
    """Bytes the monitor counted between tasks on different nodes."""
    if not len(traffic):
        return 0.0
    src = traffic["src_task"].map(node_of_label)
    dst = traffic["dst_task"].map(node_of_label)
    return float(traffic.loc[src != dst, "bytes"].sum())


FORMATS = {"jsonl": ".jsonl", "csv": ".csv", "parquet": ".parquet"}


def write_records(rows: pd.DataFrame, path: Path, fmt: str) -> Path:
    """Monitoring records as ``path`` + the format's extension, written atomically."""
    path = path.with_suffix(FORMATS[fmt])
    if fmt == "jsonl":
        data = rows.to_json(orient="records", lines=True).encode()
    elif fmt == "csv":
        data = rows.to_csv(index=False).encode()
    else:
        buf = io.BytesIO()
        rows.to_parquet(buf, index=False)
        data = buf.getvalue()
    atomic_write_bytes(path, data)
    return path

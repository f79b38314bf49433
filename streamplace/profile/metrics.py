"""Monitoring records -> a profile (per-second rates per task edge and per task), on Spark.

docs/pipeline.md. The input schemas are in :mod:`streamplace.profile`. Every row read is either used
or rejected with exactly one reason, checked in this order (the first that applies wins):

``malformed_record`` (a line that is not a JSON object / has the wrong number of CSV fields),
``missing_value``, ``non_numeric`` (a number field that does not parse, NaN or infinite),
``bad_timestamp`` (``window_start`` neither epoch seconds nor an ISO-8601 timestamp, or beyond
10^12 s of 1970), ``bad_window`` (``window_seconds`` <= 0), ``negative_value``, ``too_large`` (a
count or window beyond 10^12, the specs' bound: the rates would pass what the solvers hold),
``unknown_task`` (not a label
``op[i]`` nor an integer id of the topology), ``self_loop`` (``src_task`` = ``dst_task``),
``outside_range`` (the window ``[start, start + seconds)`` is not inside ``[--from, --to]``).
Two things no single row shows are refused with an error naming the files (nothing is written):
a *duplicate* (two used rows equal in every field, in one file or two: a copied file or a
log read twice), which would be counted twice (rows of one task or edge and window with
different counts are partial counts and are added up), and *overlapping windows* (two distinct windows of the used rows that
intersect, e.g. 10 s windows beside a 60 s one over the same time), which would count the
overlap twice and dilute the rates.
Rejected rows go to ``PROFILE_DIR/rejected/{traffic,load}/`` (Parquet: the source file, reason,
field and the raw values as text); ``rows_read = rows_used + rows_rejected`` is checked against
an independent count of each file before anything is written.

Rates. Windows are expected to tumble (each distinct ``(window_start, window_seconds)`` is one
observation interval). With ``W`` the distinct windows of the used rows and ``len(w)`` their
lengths, the rate of an edge (or task) is ``sum_w weight(w) x count(w) / sum_{w in W} weight(w)
x len(w)``: a window in which an edge has no record counts as zero traffic for it. Without decay
``weight = 1`` (total count over observed seconds); with a half-life ``H`` the weight of a window
ending at ``e`` is ``2 ** (-(t_end - e) / H)``, ``t_end`` the latest window end, so older windows
fade exponentially. Loads: ``executed_per_s`` and ``cpu_cores`` (CPU seconds per second) from
the load records, over the load records' own windows.

The heavy part (parsing, validating, grouping 10^7 rows) runs on Spark; only per-window
aggregates (windows x edges) and the distinct windows reach the driver.
"""

from __future__ import annotations

import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..files import quote
from ..interrupt import temporary
from ..model import Topology
from ..model.specs import MAX_NUMBER
from ..files import SpecError, atomic_write_text, check_output_dir, dumps_json, replace_dir, stage_dir
from . import (EDGE_COLUMNS, EDGES_FILE, LOAD_COLUMNS, LOAD_RATE_COLUMNS, LOADS_FILE, REJECTED_DIR, SUMMARY_FILE, TRAFFIC_COLUMNS,
               WEIGHTS, InputFile, inspect_input, local_path, tumbling_windows, window_text)

REASONS = ("malformed_record", "missing_value", "non_numeric", "bad_timestamp", "bad_window", "negative_value",
           "too_large", "unknown_task", "self_loop", "outside_range")
CORRUPT = "_corrupt_record"


@dataclass(frozen=True)
class RecordKind:
    name: str
    columns: tuple[str, ...]
    task_columns: tuple[str, ...]
    value_columns: tuple[str, ...]
    rate_columns: tuple[str, ...]


TRAFFIC = RecordKind("traffic", TRAFFIC_COLUMNS, ("src_task", "dst_task"), ("tuples", "bytes"), ("tuples_per_s", "bytes_per_s"))
LOAD = RecordKind("load", LOAD_COLUMNS, ("task",), ("executed", "cpu_seconds"), ("executed_per_s", "cpu_cores"))


@dataclass(frozen=True)
class Profile:
    """What :func:`build_profile` computed: rates (pandas, labels ``op[i]``) and the summary."""

    edges: pd.DataFrame
    loads: pd.DataFrame
    summary: dict


# ---------------------------------------------------------------------- reading and parsing
def read_records(spark: SparkSession, inp: InputFile, columns: tuple[str, ...]) -> DataFrame:
    """The file as a DataFrame with ``columns`` (text formats: every column a string) and ``_corrupt_record``."""
    path = str(inp.path)
    if inp.fmt == "parquet":
        df = spark.read.parquet(path).withColumn(CORRUPT, F.lit(None).cast("string"))
    else:
        names = inp.columns if inp.fmt == "csv" else columns
        schema = T.StructType([T.StructField(c, T.StringType()) for c in names] + [T.StructField(CORRUPT, T.StringType())])
        reader = spark.read.schema(schema).option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
        df = reader.option("header", True).csv(path) if inp.fmt == "csv" else reader.json(path)
    return df.select(*[F.col(f"`{c}`").alias(c) for c in columns], CORRUPT)


def _col(c: str):
    return F.col(f"`{c}`")


def _text(df: DataFrame, c: str):
    return F.trim(_col(c).cast("string"))


def _missing(df: DataFrame, c: str):
    return _col(c).isNull() | (_text(df, c) == "") if isinstance(df.schema[c].dataType, T.StringType) else _col(c).isNull()


def _number(df: DataFrame, c: str):
    if isinstance(df.schema[c].dataType, T.NumericType):
        return _col(c).cast("double")
    return _text(df, c).try_cast("double")


def epoch_seconds(df: DataFrame, c: str):
    """Epoch seconds from a number, a timestamp or date column, or text (a number or ISO-8601)."""
    dtype = df.schema[c].dataType
    if isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):
        return F.unix_micros(_col(c).cast("timestamp")) / 1e6
    if isinstance(dtype, T.DateType):
        return F.unix_date(_col(c)).cast("double") * 86400.0
    if isinstance(dtype, T.NumericType):
        return _col(c).cast("double")
    text = _text(df, c)
    return F.coalesce(text.try_cast("double"), F.unix_micros(F.try_to_timestamp(text)) / 1e6)


def _bad_number(x):
    return x.isNull() | F.isnan(x) | (F.abs(x) == float("inf"))


def task_lookup(spark: SparkSession, topology: Topology) -> DataFrame:
    """``key -> id`` for every task: its label ``op[i]`` and its id in decimal (joined by broadcast)."""
    keys = topology.task_labels + [str(t) for t in range(topology.n_tasks)]
    ids = list(range(topology.n_tasks)) * 2
    return spark.createDataFrame(pd.DataFrame({"key": keys, "id": np.asarray(ids, dtype=np.int64)}))


def _with_task_ids(parsed: DataFrame, df: DataFrame, kind: RecordKind, topology: Topology) -> DataFrame:
    """Add ``id_<column>``: integer columns checked against the task range, text looked up by a broadcast join."""
    lookup = None
    for c in kind.task_columns:
        if isinstance(df.schema[c].dataType, T.IntegralType):
            raw = F.col(f"raw_{c}").cast("long")
            parsed = parsed.withColumn(f"id_{c}", F.when((raw >= 0) & (raw < topology.n_tasks), raw))
            continue
        lookup = lookup if lookup is not None else F.broadcast(task_lookup(parsed.sparkSession, topology))
        table = lookup.select(F.col("key").alias(f"_key_{c}"), F.col("id").alias(f"id_{c}"))
        parsed = parsed.join(table, parsed[f"raw_{c}"] == table[f"_key_{c}"], "left").drop(f"_key_{c}")
    return parsed


def validate(df: DataFrame, kind: RecordKind, topology: Topology, *, start: float | None = None,
             end: float | None = None) -> DataFrame:
    """Parsed columns ``ws, wl, id_<task>, v_<value>``, the raw text ``raw_<column>``, and ``reason`` /
    ``field`` (NULL when the row is used).

    Parsing happens once in a first projection (task ids by a broadcast join on the trimmed
    text); the checks then only compare its columns, so no cast is evaluated twice.
    """
    parsed = df.select(
        *[_text(df, c).alias(f"raw_{c}") for c in kind.columns], F.col(CORRUPT).alias("raw_record"),
        epoch_seconds(df, "window_start").alias("ws"), _number(df, "window_seconds").alias("wl"),
        F.input_file_name().alias("_source"),
        *[_number(df, c).alias(f"v_{c}") for c in kind.value_columns],
        *[_missing(df, c).alias(f"m_{c}") for c in kind.columns])
    parsed = _with_task_ids(parsed, df, kind, topology)
    ws, wl = F.col("ws"), F.col("wl")
    values = {c: F.col(f"v_{c}") for c in kind.value_columns}
    checks = [(F.col("raw_record").isNotNull(), "malformed_record", None)]
    checks += [(F.col(f"m_{c}"), "missing_value", c) for c in kind.columns]
    checks += [(_bad_number(x), "non_numeric", c) for c, x in [("window_seconds", wl), *values.items()]]
    checks += [(_bad_number(ws) | (F.abs(ws) > MAX_NUMBER), "bad_timestamp", "window_start"),
               (wl <= 0, "bad_window", "window_seconds")]
    checks += [(x < 0, "negative_value", c) for c, x in values.items()]
    checks += [(x > MAX_NUMBER, "too_large", c) for c, x in [("window_seconds", wl), *values.items()]]
    checks += [(F.col(f"id_{c}").isNull(), "unknown_task", c) for c in kind.task_columns]
    if len(kind.task_columns) == 2:
        checks.append((F.col("id_src_task") == F.col("id_dst_task"), "self_loop", "dst_task"))
    if start is not None:
        checks.append((ws < start, "outside_range", "window_start"))
    if end is not None:
        checks.append((ws + wl > end, "outside_range", "window_start"))
    reason, field = F, F
    for cond, why, where in checks:
        reason, field = reason.when(cond, F.lit(why)), field.when(cond, F.lit(where).cast("string"))
    return parsed.select(*[c for c in parsed.columns if not c.startswith("m_")], reason.alias("reason"), field.alias("field"))


# ---------------------------------------------------------------------- aggregation
def _observed_seconds(windows: pd.DataFrame, half_life: float | None) -> float:
    """``sum_w weight(w) x len(w)`` over the distinct windows (see the module doc)."""
    ends = windows["ws"].to_numpy() + windows["wl"].to_numpy()
    weights = np.ones(len(windows)) if half_life is None else np.exp2(-(ends.max() - ends) / half_life)
    return float((weights * windows["wl"].to_numpy()).sum())


def _rates(per_window: DataFrame, windows: pd.DataFrame, kind: RecordKind, topology: Topology,
           half_life: float | None) -> tuple[pd.DataFrame, dict]:
    observed = _observed_seconds(windows, half_life)
    t_end = float((windows["ws"] + windows["wl"]).max())
    weight = F.lit(1.0) if half_life is None else F.pow(F.lit(2.0), (F.col("ws") + F.col("wl") - t_end) / half_life)
    keys = [f"id_{c}" for c in kind.task_columns]
    sums = per_window.groupBy(*keys).agg(*[F.sum(F.col(f"v_{c}") * weight).alias(r) for c, r in zip(kind.value_columns, kind.rate_columns)])
    frame = sums.toPandas().sort_values(keys)
    labels = np.asarray(topology.task_labels, dtype=object)
    out = pd.DataFrame({c: labels[frame[k].to_numpy(dtype=np.int64)] for c, k in zip(kind.task_columns, keys)})
    for r in kind.rate_columns:
        out[r] = frame[r].to_numpy(dtype=float) / observed
        overflow = np.flatnonzero(~np.isfinite(out[r].to_numpy()))
        if overflow.size:   # a sum of finite counts beyond a double's range: refused, never written as inf
            first = " -> ".join(str(out[c].iloc[overflow[0]]) for c in kind.task_columns)
            raise SpecError(f"{kind.name} records", r, f"the counts of {overflow.size} task(s) add up beyond the largest "
                                                       f"number a double holds (first {first}); check the records' values")
    info = {"windows": int(len(windows)), "observed_seconds": observed, "first_window_start": float(windows["ws"].min()),
            "last_window_end": t_end}
    return out, info


def _empty_rates(kind: RecordKind) -> pd.DataFrame:
    return pd.DataFrame({**{c: pd.Series(dtype=object) for c in kind.task_columns}, **{r: pd.Series(dtype=float) for r in kind.rate_columns}})


@dataclass
class _KindResult:
    rates: pd.DataFrame
    summary: dict
    rejected: DataFrame | None


def _process(spark: SparkSession, kind: RecordKind, paths, topology: Topology, fmt: str | None,
             start: float | None, end: float | None, half_life: float | None) -> _KindResult:
    inputs = [inspect_input(p, fmt, kind.columns) for p in paths]
    raw, checked = [], []
    for inp in inputs:
        df = read_records(spark, inp, kind.columns)
        raw.append(df.select(F.lit(str(inp.path)).alias("_file")))
        checked.append(validate(df, kind, topology, start=start, end=end).withColumn("_file", F.lit(str(inp.path))))
    union = checked[0]
    for df in checked[1:]:
        union = union.unionByName(df)
    read_union = raw[0]
    for df in raw[1:]:
        read_union = read_union.unionByName(df)
    keys = ["_file", "_source", "reason", "ws", "wl", *[f"id_{c}" for c in kind.task_columns]]
    # the values are keys too (as k_<value>): rows equal in every field stay apart from the others
    # for the duplicate check; the sums v_<value> are what the rates use
    values = [F.col(f"v_{c}").alias(f"k_{c}") for c in kind.value_columns]
    grouped = union.groupBy(*keys, *values).agg(F.count(F.lit(1)).alias("n"), *[F.sum(f"v_{c}").alias(f"v_{c}") for c in kind.value_columns])
    grouped = grouped.persist()
    try:
        counts = grouped.groupBy("_file", "reason").agg(F.sum("n").alias("n")).toPandas()
        read = read_union.groupBy("_file").count().toPandas().set_index("_file")["count"]
        files = {}
        for inp in inputs:
            name = str(inp.path)
            mine = counts[counts["_file"] == name]
            by_reason = {str(r): int(n) for r, n in zip(mine["reason"], mine["n"]) if isinstance(r, str)}
            used = int(mine.loc[mine["reason"].isna(), "n"].sum())
            files[name] = {"rows_read": int(read.get(name, 0)), "rows_used": used, "rows_rejected": sum(by_reason.values()),
                           "rejected_by_reason": _by_reason([by_reason])}
            if files[name]["rows_read"] != used + files[name]["rows_rejected"]:
                raise RuntimeError(f"{name}: {files[name]['rows_read']} rows read but {used} used + {files[name]['rows_rejected']} rejected")
            _check_topology_matches(inp, files[name], union, kind, topology)
        total = _totals(files.values())
        if total["rows_used"] == 0:
            reasons = ", ".join(f"{r} {n}" for r, n in total["rejected_by_reason"].items())
            raise SpecError(inputs[0].path, "", f"no usable {kind.name} records: all {total['rows_read']} rows were rejected ({reasons})")
        used_rows = grouped.filter(F.col("reason").isNull())
        _refuse_duplicates(used_rows, kind, topology)
        windows = tumbling_windows(used_rows.select("ws", "wl", "_source").distinct().toPandas())
        rates, info = _rates(used_rows, windows, kind, topology, half_life)
    finally:
        grouped.unpersist()
    rejected = None
    if total["rows_rejected"]:
        rejected = union.filter(F.col("reason").isNotNull()).select(
            F.url_decode(F.regexp_replace("_source", "^file://", "")).alias("source_file"), "reason", "field", "raw_record", *[f"raw_{c}" for c in kind.columns])
        for c in kind.columns:
            rejected = rejected.withColumnRenamed(f"raw_{c}", c)
    return _KindResult(rates, {**total, **info, "files": files}, rejected)


def _refuse_duplicates(used: DataFrame, kind: RecordKind, topology: Topology) -> None:
    """Two used rows equal in every field (task or edge, window, counts): a duplicate, refused (see the module doc)."""
    keys = ["ws", "wl", *[f"id_{c}" for c in kind.task_columns], *[f"k_{c}" for c in kind.value_columns]]
    dup = (used.groupBy(*keys).agg(F.sum("n").alias("n"), F.array_sort(F.collect_set("_source")).alias("files"))
           .filter(F.col("n") > 1).orderBy(*keys).first())
    if dup is None:
        return
    labels = topology.task_labels
    what = " -> ".join(labels[dup[f"id_{c}"]] for c in kind.task_columns)
    files = [local_path(f) for f in dup["files"]]
    also = f" (also in {', '.join(files[1:])})" if len(files) > 1 else ""
    raise SpecError(files[0], "", f"{kind.name} record of {what} for window {window_text(dup['ws'], dup['wl'])} "
                                  f"appears {dup['n']} times with the same counts{also}: copies would be counted twice; remove them "
                                  "(rows of one window with different counts are added up)")


def _by_reason(maps) -> dict[str, int]:
    """Counts per reason added up over ``maps``, in the order of :data:`REASONS`."""
    total: dict[str, int] = {}
    for m in maps:
        for r, n in m.items():
            total[r] = total.get(r, 0) + n
    return dict(sorted(total.items(), key=lambda kv: REASONS.index(kv[0])))


def _totals(counts) -> dict:
    """``rows_read``, ``rows_used``, ``rows_rejected``, ``rejected_by_reason`` added up over ``counts``."""
    counts = list(counts)
    by_reason = _by_reason(c["rejected_by_reason"] for c in counts)
    return {"rows_read": sum(c["rows_read"] for c in counts), "rows_used": sum(c["rows_used"] for c in counts),
            "rows_rejected": sum(by_reason.values()), "rejected_by_reason": by_reason}


def _check_topology_matches(inp: InputFile, counts: dict, checked: DataFrame, kind: RecordKind, topology: Topology) -> None:
    """A file where most rows name unknown tasks was made for another topology: one clear error."""
    unknown = counts["rejected_by_reason"].get("unknown_task", 0)
    if 2 * unknown <= counts["rows_read"]:
        return
    row = checked.filter((F.col("_file") == str(inp.path)) & (F.col("reason") == "unknown_task")).select(
        "field", *[f"raw_{c}" for c in kind.task_columns]).first()
    field = row["field"]
    raise SpecError(inp.path, field, f"{unknown} of {counts['rows_read']} rows name tasks that topology {quote(topology.name)} does not have "
                                     f"(first {row[f'raw_{field}']!r}; its tasks are {topology.task_labels[0]} .. {topology.task_labels[-1]}): "
                                     "records and topology do not match")


# ---------------------------------------------------------------------- the whole job
def build_profile(spark: SparkSession, topology: Topology, traffic, load=(), *, out_dir=None, fmt: str | None = None,
                  start: float | None = None, end: float | None = None, half_life: float | None = None,
                  weight: str = "tuples") -> Profile:
    """Validate and aggregate monitoring records; write ``out_dir`` if given (atomically)."""
    if weight not in WEIGHTS:
        raise ValueError(f"weight must be one of {', '.join(WEIGHTS)}, got {quote(weight)}")
    if half_life is not None and not (half_life > 0 and math.isfinite(half_life)):
        raise ValueError(f"the decay half-life must be a positive number of seconds, got {half_life}")
    if start is not None and end is not None and not start < end:
        raise ValueError(f"the time range is empty: --from {start} is not before --to {end}")
    if not traffic:
        raise ValueError("at least one traffic file is needed")
    began = time.perf_counter()
    traffic_result = _process(spark, TRAFFIC, list(dict.fromkeys(traffic)), topology, fmt, start, end, half_life)
    load_result = _process(spark, LOAD, list(dict.fromkeys(load)), topology, fmt, start, end, half_life) if load else None
    parts = [traffic_result] + ([load_result] if load_result else [])
    summary = {
        "topology": topology.name, "weight": weight, "decay_half_life_s": half_life, "from": start, "to": end,
        **_totals(p.summary for p in parts),
        "edges": int(len(traffic_result.rates)), "tasks_with_load": int(len(load_result.rates)) if load_result else 0,
        "traffic": traffic_result.summary, "load": load_result.summary if load_result else None,
        "spark_master": spark.sparkContext.master, "seconds": time.perf_counter() - began,
    }
    loads = load_result.rates if load_result else _empty_rates(LOAD)
    profile = Profile(edges=traffic_result.rates, loads=loads, summary=summary)
    if out_dir is not None:
        _write(Path(out_dir), profile, {"traffic": traffic_result.rejected, "load": load_result.rejected if load_result else None})
    return profile


def _write(out: Path, profile: Profile, rejected: dict) -> None:
    """Build the profile in a hidden directory beside ``out``, then swap it in (no half-written
    profile; never over an input: :func:`streamplace.files.replace_dir`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_output_dir(out)
    tmp = stage_dir(out)
    with temporary(tmp):
        try:
            pq.write_table(pa.Table.from_pandas(profile.edges[list(EDGE_COLUMNS)], preserve_index=False), tmp / EDGES_FILE)
            pq.write_table(pa.Table.from_pandas(profile.loads[list(LOAD_RATE_COLUMNS)], preserve_index=False), tmp / LOADS_FILE)
            for name, df in rejected.items():
                if df is not None:
                    df.write.mode("overwrite").parquet(str(tmp / REJECTED_DIR / name))
            (tmp / REJECTED_DIR).mkdir(exist_ok=True)
            atomic_write_text(tmp / SUMMARY_FILE, dumps_json(profile.summary) + "\n")
            replace_dir(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

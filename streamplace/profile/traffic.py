"""Application records pushed through a topology's groupings -> monitoring records, on Spark.

docs/pipeline.md (traffic replay). Each record enters one task of each source operator; every
operator applies its :class:`~streamplace.workloads.applications.OperatorLogic` (explode,
derived fields, filter, periodic emission, selectivity) and every stream routes each output
tuple to downstream tasks by its grouping. Counting the routed tuples per window gives the
traffic records ``window_start, window_seconds, src_task, dst_task, tuples, bytes``; counting
the tuples each task receives gives the load records ``..., task, executed, cpu_seconds``
(``cpu_seconds = executed x cpu_per_tuple``; a per-machine-type table uses its mean, no value
gives 0).

Routing (all hashes are Spark's ``xxhash64``, XXH64 with Spark's fixed seed 42 over the
values' binary form: stable across processes, machines and runs, unlike Python's ``hash``):

* record -> source task: ``pmod(xxhash64(seed, operator, tuple id), p)``, tuple id =
  ``xxhash64`` of all the record's columns (identical records share a task);
* ``shuffle``: ``pmod(xxhash64(seed, stream, sender task, tuple id), p)``, seeded per sender
  task: uniform over the receivers, even within binomial noise;
* ``fields``: ``pmod(xxhash64(key fields), p)``, the same key always on the same task
  (``key`` may list several fields, comma-separated);
* ``global``: the receiver with the lowest task index; ``all``: a copy to every receiver;
* ``local_or_shuffle``: given a placement, uniform over the receivers in the sender's worker
  (same node and slot) if there are any, else shuffle; without a placement, shuffle.

Tuple ids follow the tuples (an exploded or copied tuple gets ``xxhash64(parent id, index)``,
a periodic emission ``xxhash64(task, period, group)``), so a run is reproducible for a seed.
Window ``w`` holds event times ``[w, w + window_seconds)``; bytes are tuples x the sender's
``tuple_bytes``. Monitoring records are small (windows x edges), so :func:`write_monitoring`
collects them and writes single files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import numpy as np
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..files import quote
from ..model.errors import InputError
from ..model import Placement, Stream, Topology
from ..model.specs import MAX_NUMBER
from ..workloads.applications import OperatorLogic, write_records
from . import LOAD_COLUMNS, TRAFFIC_COLUMNS, InputFile
from .metrics import CORRUPT, epoch_seconds

TS, TASK, TID, SRC = "_ts", "_task", "_tid", "_src"


class ReplayError(ValueError):
    """Records or logic that cannot drive the topology; ``about`` is ``records`` or ``topology``."""

    def __init__(self, about: str, field_path: str, problem: str):
        super().__init__(f"{field_path}: {problem}")
        self.about, self.field_path, self.problem = about, field_path, problem


@dataclass(frozen=True)
class Monitoring:
    """Monitoring records (Spark DataFrames), tuples executed per operator, records skipped for lack
    of a time and, apart, lines skipped that were no record at all (a truncated JSON line)."""

    traffic: DataFrame
    load: DataFrame
    executed: dict[str, int]
    records_without_time: int
    cached: tuple[DataFrame, ...] = field(default=(), repr=False)
    malformed_lines: int = 0


def _cpu_per_tuple(value) -> float:
    if value is None:
        return 0.0
    if isinstance(value, dict):
        return float(np.mean(list(value.values()))) if value else 0.0
    return float(value)


def _hash_index(n: int, *cols) -> Column:
    return F.pmod(F.xxhash64(*cols), F.lit(n)).cast("long")


#: the furthest time from 1970 a record may have (s): the specs' bound on any number; beyond it
#: a window's number overflows Spark's long (and no event of a real job is that far)
MAX_EPOCH_S = MAX_NUMBER


def _sources(records: DataFrame, topology: Topology, name: str, time_column: str, seed: int) -> DataFrame:
    tasks = topology.tasks_of(name)
    cols = [F.col(f"`{c}`") for c in records.columns]
    df = records.select("*", epoch_seconds(records, time_column).alias(TS), F.xxhash64(*cols).alias(TID))
    df = df.filter(F.col(TS).isNotNull() & ~F.isnan(TS) & (F.abs(F.col(TS)) <= MAX_EPOCH_S))
    return df.withColumn(TASK, tasks.start + _hash_index(len(tasks), F.lit(seed), F.lit(name), F.col(TID)))


def _spark_message(exc: Exception) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first.split(" SQLSTATE:")[0]


def apply_logic(df: DataFrame, logic: OperatorLogic, seed: int, operator: str = "operator") -> DataFrame:
    """The tuples an operator emits for its input tuples ``df`` (same ``_task``).

    A logic expression that does not fit the tuples (a field the records lack) is a
    :class:`ReplayError` naming the field.
    """
    from pyspark.errors import AnalysisException

    step, field_name = "explode", logic.explode_as
    try:
        if logic.explode:
            df = df.select("*", F.posexplode(F.expr(logic.explode)).alias("_pos", logic.explode_as))
            df = df.withColumn(TID, F.xxhash64(TID, "_pos")).drop("_pos")
        for name, expr in logic.fields:
            step, field_name = f"field {name!r}", name
            df = df.withColumn(name, F.expr(expr))
        if logic.where:
            step, field_name = "its filter", "where"
            df = df.filter(F.expr(logic.where))
        if logic.every:
            step, field_name = "its periodic output", ",".join(logic.group_by) or "every"
            period = F.floor(F.col(TS) / logic.every).alias("_period")
            df = df.groupBy(TASK, period, *logic.group_by).agg(F.max(TS).alias(TS), F.count(F.lit(1)).alias("n"))
            df = df.withColumn(TID, F.xxhash64(TASK, "_period", *logic.group_by)).drop("_period")
    except AnalysisException as exc:
        raise ReplayError("records", field_name, f"operator {quote(operator)} cannot compute {step}: {_spark_message(exc)}") from None
    if logic.selectivity is not None and logic.selectivity != 1.0:
        whole, frac = int(np.floor(logic.selectivity)), float(logic.selectivity - np.floor(logic.selectivity))
        u = _hash_index(1 << 20, F.lit(seed), F.lit("selectivity"), F.col(TID)) / float(1 << 20)
        copies = F.lit(whole) + F.when(u < frac, 1).otherwise(0)
        df = df.withColumn("_copies", copies).filter(F.col("_copies") > 0)
        df = df.select("*", F.explode(F.sequence(F.lit(1), F.col("_copies"))).alias("_copy"))
        df = df.withColumn(TID, F.xxhash64(TID, "_copy")).drop("_copies", "_copy")
    return df


def _local_targets(topology: Topology, stream: Stream, placement: Placement) -> dict[int, list[int]]:
    senders, receivers = topology.tasks_of(stream.src), np.arange(topology.tasks_of(stream.dst).start, topology.tasks_of(stream.dst).stop)
    out = {}
    for s in senders:
        local = receivers[(placement.node[receivers] == placement.node[s]) & (placement.worker[receivers] == placement.worker[s])]
        if local.size:
            out[s] = local.tolist()
    return out


def route(df: DataFrame, topology: Topology, index: int, placement: Placement | None, seed: int) -> DataFrame:
    """Tuples emitted on stream ``index`` with ``_src`` (sender) and ``_task`` (receiver)."""
    stream = topology.streams[index]
    tasks = topology.tasks_of(stream.dst)
    p, first = len(tasks), tasks.start
    df = df.withColumnRenamed(TASK, SRC)
    shuffle = first + _hash_index(p, F.lit(seed), F.lit(index), F.col(SRC), F.col(TID))
    if stream.grouping == "global":
        dst = F.lit(first).cast("long")
    elif stream.grouping == "all":
        return df.select("*", F.explode(F.array(*[F.lit(t).cast("long") for t in tasks])).alias(TASK))
    elif stream.grouping == "fields":
        if not stream.key:
            raise ReplayError("topology", f"streams[{index}].key", f"fields grouping {stream.src} -> {stream.dst} needs a key field")
        keys = [k.strip() for k in stream.key.split(",")]
        missing = [k for k in keys if k not in df.columns]
        if missing:
            have = ", ".join(c for c in df.columns if not c.startswith("_"))
            raise ReplayError("records", missing[0], f"stream {stream.src} -> {stream.dst} groups by field {quote(missing[0])}, "
                                                     f"which the tuples of {stream.src!r} do not have (they have {have})")
        dst = first + _hash_index(p, *[F.col(f"`{k}`") for k in keys])
    elif stream.grouping == "local_or_shuffle" and placement is not None:
        local = _local_targets(topology, stream, placement)
        if local:
            table = F.create_map(*[x for s, targets in local.items() for x in (F.lit(s), F.array(*[F.lit(t) for t in targets]))])
            candidates = F.try_element_at(table, F.col(SRC))
            pick = F.try_element_at(candidates, (F.pmod(F.xxhash64(F.lit(seed), F.lit(index), F.col(SRC), F.col(TID)), F.size(candidates)) + 1).cast("int"))
            dst = F.coalesce(pick.cast("long"), shuffle)
        else:
            dst = shuffle
    else:
        dst = shuffle
    return df.withColumn(TASK, dst)


def _window(window_seconds: float) -> Column:
    return (F.floor(F.col(TS) / window_seconds) * window_seconds).alias("window_start")


def replay(spark: SparkSession, topology: Topology, records: DataFrame, *, logic: Mapping[str, OperatorLogic] | None = None,
           time_column: str = "ts", window_seconds: float = 10.0, placement: Placement | None = None,
           seed: int = 0) -> Monitoring:
    """Push ``records`` through ``topology``; monitoring records as Spark DataFrames (labels ``op[i]``).

    Operators without an entry in ``logic`` pass tuples on with the topology's ``selectivity``.
    Each operator's input is cached once (released by :func:`release`) so the DAG is not recomputed.
    """
    if not window_seconds > 0:
        raise ValueError(f"the window length must be > 0 seconds, got {window_seconds}")
    if time_column not in records.columns:
        raise ReplayError("records", time_column, f"no such column (the records have {', '.join(records.columns)})")
    if placement is not None and placement.n_tasks != topology.n_tasks:
        raise ValueError(f"the placement covers {placement.n_tasks} tasks, the topology has {topology.n_tasks}")
    logic = dict(logic or {})
    labels = F.array(*[F.lit(label) for label in topology.task_labels])
    inputs: dict[str, list[DataFrame]] = {op.name: [] for op in topology.operators}
    traffic, loads, executed, cached = [], [], {}, []
    for name in topology.topological_order:
        op = topology.operators[topology.index[name]]
        if not topology.upstream(name):
            inp = _sources(records, topology, name, time_column, seed)
        else:
            inp = inputs[name][0]
            for other in inputs[name][1:]:
                inp = inp.unionByName(other, allowMissingColumns=True)
        inp = inp.persist()
        cached.append(inp)
        executed[name] = inp.count()
        cpu = _cpu_per_tuple(op.cpu_per_tuple)
        loads.append(inp.groupBy(_window(window_seconds), TASK).agg(F.count(F.lit(1)).alias("executed"))
                     .select("window_start", F.lit(float(window_seconds)).alias("window_seconds"),
                             F.element_at(labels, F.col(TASK).cast("int") + 1).alias("task"),
                             F.col("executed").cast("double").alias("executed"), (F.col("executed") * cpu).alias("cpu_seconds")))
        out_streams = [i for i, s in enumerate(topology.streams) if s.src == name]
        if not out_streams:
            continue
        out = apply_logic(inp, logic.get(name) or OperatorLogic(selectivity=op.selectivity), seed, name)
        for i in out_streams:
            routed = route(out, topology, i, placement, seed)
            traffic.append(routed.groupBy(_window(window_seconds), SRC, TASK).agg(F.count(F.lit(1)).alias("tuples"))
                           .select("window_start", F.lit(float(window_seconds)).alias("window_seconds"),
                                   F.element_at(labels, F.col(SRC).cast("int") + 1).alias("src_task"),
                                   F.element_at(labels, F.col(TASK).cast("int") + 1).alias("dst_task"),
                                   F.col("tuples").cast("double").alias("tuples"),
                                   (F.col("tuples") * float(op.tuple_bytes)).alias("bytes")))
            inputs[topology.streams[i].dst].append(routed.drop(SRC))
    first_source = next(name for name in topology.topological_order if not topology.upstream(name))
    total = records.count()
    without_time = total - executed[first_source]
    # Spark reads a line that is no JSON object (a truncated last line) as a row of nulls beside its
    # text in CORRUPT: no time either, but counted apart. The filter reads every column, as the
    # replay does: a query of fewer columns parses each line only as far as it needs, and may not
    # find it malformed (on this run's session settings it did not), and one of CORRUPT alone is refused
    everything = F.to_json(F.struct(*[F.col(f"`{c}`") for c in records.columns]))
    malformed = records.filter(F.col(CORRUPT).isNotNull() & (F.length(everything) > 0)).count() \
        if CORRUPT in records.columns else 0
    if total and without_time == total:
        for df in cached:
            df.unpersist()
        lines = f" ({malformed:,} of them lines that are no record)" if malformed else ""
        raise ReplayError("records", time_column, f"none of the {total:,} records has a usable time{lines} (epoch seconds, "
                                                  f"a timestamp or ISO-8601 text, within {MAX_EPOCH_S:g} s of 1970; epoch "
                                                  "milliseconds are beyond it: give seconds)")
    return Monitoring(_union(traffic, spark, TRAFFIC_COLUMNS), _union(loads, spark, LOAD_COLUMNS), executed,
                      without_time - malformed, tuple(cached), malformed)


def _union(frames: list[DataFrame], spark: SparkSession, columns) -> DataFrame:
    if not frames:
        return spark.createDataFrame([], ", ".join(f"{c} {'string' if c.endswith('task') else 'double'}" for c in columns))
    out = frames[0]
    for df in frames[1:]:
        out = out.unionByName(df)
    return out


def release(monitoring: Monitoring) -> None:
    for df in monitoring.cached:
        df.unpersist()


def read_application_records(spark: SparkSession, inp: InputFile) -> DataFrame:
    """Application records with their native types (JSON and CSV types inferred by Spark)."""
    path = str(inp.path)
    if inp.fmt == "parquet":
        return spark.read.parquet(path)
    if inp.fmt == "csv":
        return spark.read.option("header", True).option("inferSchema", True).csv(path)
    return spark.read.json(path)


def monitoring_paths(out_dir: str | os.PathLike, fmt: str = "parquet") -> tuple[Path, Path]:
    """Where :func:`write_monitoring` writes: ``traffic.<ext>`` and ``load.<ext>`` in ``out_dir``."""
    exts = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}
    if fmt not in exts:
        raise InputError(f"--format: expected one of {', '.join(exts)}, got {quote(fmt)}")
    ext = exts[fmt]
    return Path(out_dir) / f"traffic{ext}", Path(out_dir) / f"load{ext}"


def write_monitoring(monitoring: Monitoring, out_dir: str | os.PathLike, fmt: str = "parquet") -> tuple[Path, Path]:
    """``traffic.<ext>`` and ``load.<ext>`` in ``out_dir`` (single files, sorted by window and task)."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    paths = []
    for path, df, order in zip(monitoring_paths(out_dir, fmt), (monitoring.traffic, monitoring.load),
                               (["window_start", "src_task", "dst_task"], ["window_start", "task"])):
        frame = df.toPandas().sort_values(order, kind="stable").reset_index(drop=True)
        paths.append(write_records(frame, path))
    return paths[0], paths[1]

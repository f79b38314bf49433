"""Traffic generation: grouping semantics, conservation, and skew of the bundled applications."""

import struct

import numpy as np
import pytest
from pyspark.sql import functions as F

from streamplace.model import Operator, Placement, Stream, Topology
from streamplace.profile.metrics import build_profile
from streamplace.profile import InputFile
from streamplace.profile.traffic import SRC, TASK, ReplayError, apply_logic, read_application_records, release, replay, route
from streamplace.workloads.applications import APPLICATIONS, OperatorLogic, application

M = (1 << 64) - 1
P1, P2, P3, P4, P5 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def _round(acc, lane):
    return (_rotl((acc + lane * P2) & M, 31) * P1) & M


def xxh64(data: bytes, seed: int) -> int:
    """Reference XXH64 (the published algorithm), as a signed 64-bit integer like Spark's."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed, (seed - P1) & M]
        while i <= n - 32:
            v = [_round(v[k], struct.unpack_from("<Q", data, i + 8 * k)[0]) for k in range(4)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M
        for x in v:
            h = ((h ^ _round(0, x)) * P1 + P4) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * P1 + P4) & M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, i)[0] * P1 & M), 23) * P2 + P3) & M
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * P5 & M), 11) * P1) & M
        i += 1
    h = ((h ^ (h >> 33)) * P2) & M
    h = ((h ^ (h >> 29)) * P3) & M
    h ^= h >> 32
    return h - (1 << 64) if h >> 63 else h


def _topo(grouping, pa=2, pb=4, key="key"):
    return Topology.build("g", [Operator("s", pa, role="source"), Operator("d", pb, role="sink")],
                          [Stream("s", "d", grouping=grouping, key=key if grouping == "fields" else None)])


def _tuples(spark, n, senders=2, keys=50, offset=0):
    rng = np.random.default_rng(1)
    rows = [(int(offset + i % senders), float(i), int(i), f"k{int(k)}") for i, k in enumerate(rng.zipf(1.5, n) % keys)]
    return spark.createDataFrame(rows, "_task long, _ts double, _tid long, key string")


def test_fields_routes_every_key_to_one_task_by_xxhash64(spark):
    topo = _topo("fields")
    routed = route(_tuples(spark, 4000), topo, 0, None, seed=0)
    per_key = routed.groupBy("key").agg(F.countDistinct(TASK).alias("tasks"), F.first(TASK).alias("task")).toPandas()
    assert (per_key["tasks"] == 1).all() and len(per_key) > 20
    for key, task in zip(per_key["key"], per_key["task"]):
        assert task == 2 + xxh64(key.encode(), 42) % 4  # receivers are tasks 2..5


def test_shuffle_splits_evenly_per_sender(spark):
    n, p = 20_000, 5
    topo = _topo("shuffle", pa=2, pb=p)
    counts = route(_tuples(spark, n), topo, 0, None, seed=3).groupBy(SRC, TASK).count().toPandas()
    assert len(counts) == 2 * p
    per_sender = n / 2
    sigma = np.sqrt(per_sender * (1 / p) * (1 - 1 / p))
    assert np.all(np.abs(counts["count"] - per_sender / p) < 4 * sigma)
    other_seed = route(_tuples(spark, n), topo, 0, None, seed=4).groupBy(SRC, TASK).count().toPandas()
    assert not counts.sort_values([SRC, TASK])["count"].to_numpy().tolist() == \
        other_seed.sort_values([SRC, TASK])["count"].to_numpy().tolist()


def test_global_sends_everything_to_the_first_task_and_all_copies(spark):
    routed = route(_tuples(spark, 300), _topo("global"), 0, None, seed=0).groupBy(TASK).count().collect()
    assert [(r[TASK], r["count"]) for r in routed] == [(2, 300)]
    copies = route(_tuples(spark, 300), _topo("all"), 0, None, seed=0).groupBy(TASK).count().toPandas()
    assert sorted(copies[TASK]) == [2, 3, 4, 5] and (copies["count"] == 300).all()


def test_local_or_shuffle_stays_in_the_worker_when_it_can(spark):
    topo = _topo("local_or_shuffle", pa=2, pb=4)
    # s[0] shares node 0 / worker 0 with d[0] and d[1]; s[1] is alone on node 1.
    placement = Placement(node=[0, 1, 0, 0, 0, 2], worker=[0, 0, 0, 0, 1, 0])
    counts = route(_tuples(spark, 8000), topo, 0, placement, seed=0).groupBy(SRC, TASK).count().toPandas()
    local = counts[counts[SRC] == 0].set_index(TASK)["count"]
    assert sorted(local.index) == [2, 3] and local.sum() == 4000 and abs(local[2] - local[3]) < 4 * np.sqrt(4000 * 0.25)
    remote = counts[counts[SRC] == 1].set_index(TASK)["count"]
    assert sorted(remote.index) == [2, 3, 4, 5] and remote.sum() == 4000
    unplaced = route(_tuples(spark, 8000), topo, 0, None, seed=0).groupBy(SRC, TASK).count().toPandas()
    assert len(unplaced) == 8  # without a placement it is a shuffle


def test_selectivity_and_periodic_emission(spark):
    df = _tuples(spark, 10_000)
    assert abs(apply_logic(df, OperatorLogic(selectivity=2.5), seed=0).count() - 25_000) < 4 * np.sqrt(10_000 * 0.25)
    assert abs(apply_logic(df, OperatorLogic(selectivity=0.3), seed=0).count() - 3_000) < 4 * np.sqrt(10_000 * 0.21)
    # _ts = i, 2 senders, keys k0..k49: one tuple per (task, key, 100 s period) seen.
    every = apply_logic(df, OperatorLogic(every=100.0, group_by=("key",)), seed=0).toPandas()
    pdf = df.toPandas()
    expected = pdf.assign(period=pdf["_ts"] // 100).groupby(["_task", "key", "period"]).size()
    assert len(every) == len(expected) and every["n"].sum() == 10_000


def test_replay_conserves_tuples_and_loads(spark):
    topo = Topology.build("chain", [Operator("s", 2, role="source", tuple_bytes=10, cpu_per_tuple=0.001),
                                    Operator("m", 3, selectivity=2.0, tuple_bytes=20), Operator("k", 2, role="sink")],
                          [Stream("s", "m"), Stream("m", "k", grouping="fields", key="word")])
    records = spark.createDataFrame([(float(i) / 10, f"w{i % 7}") for i in range(1000)], "ts double, word string")
    mon = replay(spark, topo, records, window_seconds=20.0, seed=1)
    traffic, load = mon.traffic.toPandas(), mon.load.toPandas()
    release(mon)
    assert mon.executed == {"s": 1000, "m": 1000, "k": 2000}
    first = traffic[traffic["src_task"].str.startswith("s")]
    assert first["tuples"].sum() == 1000 and (first["bytes"] == 10 * first["tuples"]).all()
    assert traffic[traffic["src_task"].str.startswith("m")]["tuples"].sum() == 2000
    assert sorted(traffic["window_start"].unique()) == [0.0, 20.0, 40.0, 60.0, 80.0]
    executed = load.groupby("task")["executed"].sum()
    assert executed[executed.index.str.startswith("s")].sum() == 1000
    assert executed.drop(["s[0]", "s[1]"]).to_dict() == traffic.groupby("dst_task")["tuples"].sum().to_dict()
    assert load.loc[load["task"].str.startswith("s"), "cpu_seconds"].sum() == pytest.approx(1.0)
    with pytest.raises(ReplayError, match="groups by field 'word'"):
        replay(spark, topo, records.withColumnRenamed("word", "token"), seed=1)


def test_times_no_window_can_hold_are_records_without_a_time_and_none_at_all_is_refused(spark):
    """A time of 1e308 s ended the replay in a Spark overflow error (70 lines on stderr); records
    none of which has a time wrote empty files and exited 0."""
    topo = Topology.build("pair", [Operator("s", 1, role="source"), Operator("k", 1, role="sink")], [Stream("s", "k")])
    records = spark.createDataFrame([(1e308,), (5.0,), (-2e12,), (float("nan"),)], "ts double")
    mon = replay(spark, topo, records, window_seconds=10.0)
    release(mon)
    assert mon.executed == {"s": 1, "k": 1} and mon.records_without_time == 3
    with pytest.raises(ReplayError, match="none of the 3 records has a usable time"):
        replay(spark, topo, spark.createDataFrame([(1e308,), (None,), (float("nan"),)], "ts double"), window_seconds=10.0)


def test_a_truncated_json_line_is_counted_as_no_record_not_as_a_record_without_a_time(spark, tmp_path):
    """A file cut off mid-line (a copy interrupted) was reported as "1 records without a time"."""
    topo = Topology.build("pair", [Operator("s", 1, role="source"), Operator("k", 1, role="sink")], [Stream("s", "k")])
    path = tmp_path / "records.jsonl"
    path.write_text('{"ts": 1.0, "w": "a"}\n{"w": "b"}\n{"ts": 2.0, "w": "c"}\n{"ts": 3.0, "w')
    mon = replay(spark, topo, read_application_records(spark, InputFile(path, "jsonl", ())), window_seconds=10.0)
    release(mon)
    assert mon.executed == {"s": 2, "k": 2} and (mon.records_without_time, mon.malformed_lines) == (1, 1)
    path.write_text('{"ts": "soon", "w": "a"}\n{"ts": 2.0,')
    with pytest.raises(ReplayError, match=r"none of the 2 records has a usable time \(1 of them lines that are no record\)"):
        replay(spark, topo, read_application_records(spark, InputFile(path, "jsonl", ())), window_seconds=10.0)


def _max_mean(graph_weights):
    return float(graph_weights.max() / graph_weights.mean())


# Fields streams whose receivers get visibly unequal traffic: few or Zipf-popular keys. The
# 10^4+ routes of frequent-routes spread evenly over 4 rankers despite their heavy tail.
SKEWED_STREAMS = {"frequent-routes": [], "smart-home": [("house-prediction", "sink")], "page-view": [("view", "count")],
                  "trending-topics": [("A", "B")]}


@pytest.mark.parametrize("name", sorted(APPLICATIONS))
def test_applications_give_skewed_communication_graphs(spark, tmp_path, name):
    """Every bundled application yields a non-uniform graph; streams keyed by few or popular keys are skewed."""
    app = application(name)
    records = spark.createDataFrame(app.generate(6000, seed=0))
    mon = replay(spark, app.topology, records, logic=app.logic, time_column=app.time_column, window_seconds=10.0)
    traffic_path, load_path = tmp_path / "traffic.parquet", tmp_path / "load.parquet"
    mon.traffic.toPandas().to_parquet(traffic_path)
    mon.load.toPandas().to_parquet(load_path)
    release(mon)
    prof = build_profile(spark, app.topology, [traffic_path], [load_path])
    weights = prof.edges["tuples_per_s"].to_numpy()
    assert _max_mean(weights) > 1.5
    src_op, dst_op = (prof.edges[c].str.replace(r"\[\d+\]$", "", regex=True) for c in ("src_task", "dst_task"))
    for src, dst in SKEWED_STREAMS[name]:
        received = prof.edges[(src_op == src) & (dst_op == dst)].groupby("dst_task")["tuples_per_s"].sum()
        received = received.reindex([lab for lab in app.topology.task_labels if lab.startswith(dst + "[")], fill_value=0.0)
        assert received.max() / received.mean() > 1.3, (src, dst, received)

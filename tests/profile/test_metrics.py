"""Monitoring records -> profile: conservation, rates against pandas, decay, round trip to a TaskGraph."""

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from streamplace.model import Operator, Stream, Topology
from streamplace.model.specs import SpecError
from streamplace.profile import load_profile_graph
from streamplace.profile.metrics import REASONS, build_profile

TOPO = Topology.build("t", [Operator("a", 2, role="source"), Operator("b", 3), Operator("c", 1, role="sink")],
                      [Stream("a", "b"), Stream("b", "c", grouping="global")])

GOOD = {"window_start": 0, "window_seconds": 10, "src_task": "a[0]", "dst_task": "b[1]", "tuples": 100, "bytes": 1000}


def _bad_rows():
    """One row per rejection reason (outside_range needs --from/--to), plus the expected reason."""
    rows = [
        ({**GOOD, "tuples": None}, "missing_value"),
        ({k: v for k, v in GOOD.items() if k != "bytes"}, "missing_value"),
        ({**GOOD, "tuples": "many"}, "non_numeric"),
        ({**GOOD, "bytes": "NaN"}, "non_numeric"),
        ({**GOOD, "window_start": "yesterday"}, "bad_timestamp"),
        ({**GOOD, "window_seconds": 0}, "bad_window"),
        ({**GOOD, "tuples": -5}, "negative_value"),
        ({**GOOD, "tuples": 1e302}, "too_large"),   # the solvers then cast rates beyond what they hold
        ({**GOOD, "window_seconds": 2e12}, "too_large"),
        ({**GOOD, "window_start": 1e13}, "bad_timestamp"),
        ({**GOOD, "dst_task": "b[3]"}, "unknown_task"),
        ({**GOOD, "src_task": "zz[0]"}, "unknown_task"),
        ({**GOOD, "src_task": 17}, "unknown_task"),
        ({**GOOD, "src_task": "b[0]", "dst_task": 2}, "self_loop"),
        ({**GOOD, "window_start": 1000}, "outside_range"),
    ]
    return rows


def _good_rows():
    return [
        GOOD,
        {**GOOD, "window_start": 10, "tuples": 300, "bytes": 3000},
        {**GOOD, "window_start": "1970-01-01T00:00:10Z", "src_task": 1, "dst_task": "4", "tuples": 50, "bytes": 10},
        {**GOOD, "src_task": "b[2]", "dst_task": "c[0]", "tuples": 7.5, "bytes": 75},
    ]


def _write_jsonl(path, rows, extra_lines=()):
    with open(path, "w") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
        for line in extra_lines:
            fh.write(line + "\n")


def test_conservation_every_kind_of_bad_row_jsonl(spark, tmp_path):
    bad = _bad_rows()
    path = tmp_path / "traffic.jsonl"
    _write_jsonl(path, _good_rows() + [r for r, _ in bad], extra_lines=["{not json", "[1, 2, 3]"])
    prof = build_profile(spark, TOPO, [path], out_dir=tmp_path / "prof", start=0, end=100)
    s = prof.summary
    expected: dict[str, int] = {}
    for _, reason in bad:
        expected[reason] = expected.get(reason, 0) + 1
    expected["malformed_record"] = 2
    assert set(expected) == set(REASONS)
    assert s["rows_read"] == len(_good_rows()) + len(bad) + 2
    assert s["rows_used"] == len(_good_rows())
    assert s["rows_read"] == s["rows_used"] + s["rows_rejected"]
    assert s["rejected_by_reason"] == dict(sorted(expected.items(), key=lambda kv: REASONS.index(kv[0])))
    written = json.loads((tmp_path / "prof" / "summary.json").read_text())
    assert {k: written[k] for k in ("rows_read", "rows_used", "rows_rejected", "rejected_by_reason")} == \
           {k: s[k] for k in ("rows_read", "rows_used", "rows_rejected", "rejected_by_reason")}
    rejected = pq.read_table(tmp_path / "prof" / "rejected" / "traffic").to_pandas()
    assert len(rejected) == s["rows_rejected"]
    assert rejected["reason"].value_counts().to_dict() == expected
    assert set(rejected.loc[rejected["reason"] == "non_numeric", "field"]) == {"tuples", "bytes"}
    assert "many" in set(rejected["tuples"])
    assert (rejected["source_file"] == str(path)).all()


def test_conservation_csv_with_wrong_field_counts(spark, tmp_path):
    path = tmp_path / "traffic.csv"
    path.write_text("window_start,window_seconds,src_task,dst_task,tuples,bytes\n"
                    "0,10,a[0],b[0],5,50\n"
                    "0,10,a[1],b[0],6\n"            # a field short
                    "0,10,a[1],b[1],1,2,3\n"        # a field too many
                    "0,10,a[1],b[1],,2\n"           # empty = missing
                    "0,x,a[1],b[1],1,2\n")          # non-numeric window length
    s = build_profile(spark, TOPO, [path]).summary
    assert (s["rows_read"], s["rows_used"], s["rows_rejected"]) == (5, 1, 4)
    assert s["rejected_by_reason"] == {"malformed_record": 2, "missing_value": 1, "non_numeric": 1}


def _random_records(rng, n, windows=6, length=30.0):
    src = rng.integers(0, 2, n)
    dst = rng.integers(2, 5, n)
    frame = pd.DataFrame({
        "window_start": 1_700_000_000 + length * rng.integers(0, windows, n),
        "window_seconds": np.full(n, length),
        "src_task": [f"a[{s}]" if i % 3 else str(s) for i, s in enumerate(src)],
        "dst_task": [f"b[{d - 2}]" for d in dst],
        "tuples": rng.integers(0, 1000, n).astype(float),
        "bytes": rng.integers(0, 10**6, n).astype(float),
    })
    return frame


def _pandas_rates(frame, start=None, end=None):
    """Independent reference: sum over used rows / total length of the distinct windows."""
    keep = np.ones(len(frame), bool)
    if start is not None:
        keep &= frame["window_start"] >= start
    if end is not None:
        keep &= frame["window_start"] + frame["window_seconds"] <= end
    used = frame[keep].copy()
    used["src"] = used["src_task"].map(lambda s: s if s.startswith("a[") else f"a[{s}]")
    observed = used[["window_start", "window_seconds"]].drop_duplicates()["window_seconds"].sum()
    sums = used.groupby(["src", "dst_task"])[["tuples", "bytes"]].sum() / observed
    return sums, int((~keep).sum())


def test_rates_equal_pandas_on_the_same_records(spark, tmp_path):
    rng = np.random.default_rng(7)
    frame = _random_records(rng, 3000)
    path = tmp_path / "traffic.parquet"
    frame.to_parquet(path, index=False)
    start, end = 1_700_000_000 + 30, 1_700_000_000 + 150
    prof = build_profile(spark, TOPO, [path], start=start, end=end)
    expected, outside = _pandas_rates(frame, start, end)
    got = prof.edges.set_index(["src_task", "dst_task"])
    assert prof.summary["rejected_by_reason"] == {"outside_range": outside}
    assert len(got) == len(expected) == 6
    for (src, dst), row in expected.iterrows():
        assert got.loc[(src, dst), "tuples_per_s"] == pytest.approx(row["tuples"], rel=1e-12)
        assert got.loc[(src, dst), "bytes_per_s"] == pytest.approx(row["bytes"], rel=1e-12)
    assert prof.summary["traffic"]["observed_seconds"] == 120.0


def test_decay_hand_example(spark, tmp_path):
    """Windows [0,10) 100 tuples and [10,20) 300, half-life 10 s: weights 0.5 and 1.

    rate = (0.5 x 100 + 1 x 300) / (0.5 x 10 + 1 x 10) = 350 / 15; without decay 400 / 20 = 20.
    Loads decay the same way: executed 40 then 10 -> (0.5 x 40 + 10) / 15 = 2.
    """
    traffic, load = tmp_path / "t.jsonl", tmp_path / "l.csv"
    _write_jsonl(traffic, [GOOD, {**GOOD, "window_start": 10, "tuples": 300, "bytes": 600}])
    load.write_text("window_start,window_seconds,task,executed,cpu_seconds\n0,10,b[1],40,4\n10,10,b[1],10,1\n")
    plain = build_profile(spark, TOPO, [traffic], [load])
    decayed = build_profile(spark, TOPO, [traffic], [load], half_life=10.0)
    assert plain.edges["tuples_per_s"].tolist() == [20.0]
    assert decayed.edges["tuples_per_s"].iloc[0] == pytest.approx(350 / 15)
    assert decayed.edges["bytes_per_s"].iloc[0] == pytest.approx((0.5 * 1000 + 600) / 15)
    assert plain.loads.to_dict("records") == [{"task": "b[1]", "executed_per_s": 2.5, "cpu_cores": 0.25}]
    assert decayed.loads["executed_per_s"].iloc[0] == pytest.approx(2.0)
    assert decayed.loads["cpu_cores"].iloc[0] == pytest.approx((0.5 * 4 + 1) / 15)


def test_profile_round_trips_into_a_task_graph(spark, tmp_path):
    rng = np.random.default_rng(3)
    frame = _random_records(rng, 500)
    path = tmp_path / "traffic.csv"
    frame.to_csv(path, index=False)
    load = tmp_path / "load.jsonl"
    _write_jsonl(load, [{"window_start": 1_700_000_000, "window_seconds": 30, "task": t, "executed": 30 * (t + 1),
                         "cpu_seconds": 3.0 * t} for t in range(6)])
    prof = build_profile(spark, TOPO, [path], [load], out_dir=tmp_path / "prof", weight="bytes")
    graph = load_profile_graph(tmp_path / "prof", TOPO)
    assert graph.unit == "bytes/s"
    dense = graph.rates.toarray()
    expected = np.zeros((6, 6))
    for row in prof.edges.itertuples():
        expected[TOPO.task_id(row.src_task), TOPO.task_id(row.dst_task)] = row.bytes_per_s
    assert np.allclose(dense, expected, rtol=1e-12, atol=0)
    assert np.array_equal(graph.loads, TOPO.task_loads)   # task units stay the topology's
    assert np.allclose(graph.cpu, [0.1 * t for t in range(6)])   # CPU: measured, 3 t CPU seconds per 30 s
    tuples = load_profile_graph(tmp_path / "prof", TOPO, weight="tuples")
    assert tuples.rates.sum() == pytest.approx(prof.edges["tuples_per_s"].sum())
    other = Topology.build("other", [Operator("a", 1), Operator("b", 3)], [Stream("a", "b")])
    with pytest.raises(SpecError, match=r"src_task: unknown task 'a\[1\]'"):
        load_profile_graph(tmp_path / "prof", other)


def test_records_for_another_topology_are_refused(spark, tmp_path):
    path = tmp_path / "traffic.jsonl"
    _write_jsonl(path, [{**GOOD, "src_task": "spout[0]", "dst_task": "bolt[1]"}] * 3 + [GOOD])
    with pytest.raises(SpecError, match=r"src_task: 3 of 4 rows name tasks that topology 't' does not have \(first 'spout\[0\]'"):
        build_profile(spark, TOPO, [path])

"""Profile pipeline speed on Spark vs. the same aggregation in pandas, and the skew of the bundled applications.

Throughput: generated traffic records (labels ``op[i]`` of the frequent-routes topology,
1000 windows of 10 s, random communicating task pairs) written to Parquet, then
``build_profile`` on local Spark with 2 cores (session start and a 10^5-record warm-up run not
counted: steady state) and a vectorised pandas reference doing the same validation and
aggregation. Prints records/s of both, the ratio, and the largest relative difference of the rates.

Skew: each bundled application's generated records replayed through its topology and profiled;
prints the max/mean edge weight of the whole graph and of each fields-grouped stream's receivers.

    .venv/bin/python benchmarks/profile_throughput.py                 # 10^6 and 10^7 records, then skew
    .venv/bin/python benchmarks/profile_throughput.py --sizes 1e6 --skew-records 20000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from streamplace.model import build_task_graph
from streamplace.profile.metrics import build_profile
from streamplace.profile.spark import start_session, stop_session
from streamplace.profile.traffic import release, replay
from streamplace.workloads.applications import APPLICATIONS, application

WINDOWS, WINDOW_S = 1000, 10.0


def generate(path: Path, n: int, topology, seed: int = 0) -> None:
    """``n`` traffic records over the topology's communicating pairs (labels stored dictionary-encoded)."""
    rng = np.random.default_rng(seed)
    src, dst, _ = build_task_graph(topology).directed
    pick = rng.integers(0, src.shape[0], n)
    labels = pa.array(topology.task_labels)
    table = pa.table({
        "window_start": 1_700_000_000.0 + WINDOW_S * rng.integers(0, WINDOWS, n),
        "window_seconds": np.full(n, WINDOW_S),
        "src_task": pa.DictionaryArray.from_arrays(pa.array(src[pick].astype(np.int32)), labels),
        "dst_task": pa.DictionaryArray.from_arrays(pa.array(dst[pick].astype(np.int32)), labels),
        "tuples": rng.integers(0, 1000, n).astype(float),
        "bytes": rng.integers(0, 100_000, n).astype(float),
    })
    pq.write_table(table, path, row_group_size=1 << 20)


def pandas_profile(path: Path, topology) -> pd.DataFrame:
    """The same validation and aggregation in pandas (single process): the reference."""
    frame = pd.read_parquet(path)
    ids = {label: t for t, label in enumerate(topology.task_labels)}
    src = frame["src_task"].astype(str).map(ids)
    dst = frame["dst_task"].astype(str).map(ids)
    values = frame[["window_start", "window_seconds", "tuples", "bytes"]].apply(pd.to_numeric, errors="coerce")
    ok = values.notna().all(axis=1) & np.isfinite(values).all(axis=1) & (values["window_seconds"] > 0)
    ok &= (values["tuples"] >= 0) & (values["bytes"] >= 0) & src.notna() & dst.notna() & (src != dst)
    used = values[ok].assign(src=src[ok].astype(np.int64), dst=dst[ok].astype(np.int64))
    observed = used[["window_start", "window_seconds"]].drop_duplicates()["window_seconds"].sum()
    rates = used.groupby(["src", "dst"], sort=True)[["tuples", "bytes"]].sum() / observed
    labels = np.asarray(topology.task_labels, dtype=object)
    return pd.DataFrame({"src_task": labels[rates.index.get_level_values(0)], "dst_task": labels[rates.index.get_level_values(1)],
                         "tuples_per_s": rates["tuples"].to_numpy(), "bytes_per_s": rates["bytes"].to_numpy()})


def throughput(spark, sizes, workdir: Path) -> None:
    topology = application("frequent-routes").topology
    generate(workdir / "warm-up.parquet", 100_000, topology, seed=1)
    t = time.perf_counter()
    build_profile(spark, topology, [workdir / "warm-up.parquet"])
    print(f"warm-up (10^5 records, JVM JIT and code generation): {time.perf_counter() - t:.1f} s")
    print(f"{'records':>12} {'spark s':>9} {'spark rec/s':>12} {'pandas s':>9} {'pandas rec/s':>13} {'spark/pandas':>13}  max rel diff")
    for n in sizes:
        path = workdir / f"traffic-{n}.parquet"
        generate(path, n, topology)
        t = time.perf_counter()
        prof = build_profile(spark, topology, [path], out_dir=workdir / f"profile-{n}")
        spark_s = time.perf_counter() - t
        t = time.perf_counter()
        ref = pandas_profile(path, topology)
        pandas_s = time.perf_counter() - t
        assert prof.summary["rows_read"] == n == prof.summary["rows_used"]
        merged = prof.edges.merge(ref, on=["src_task", "dst_task"], suffixes=("", "_ref"))
        assert len(merged) == len(ref) == len(prof.edges)
        diff = float(np.max(np.abs(merged["tuples_per_s"] / merged["tuples_per_s_ref"] - 1)))
        print(f"{n:>12,} {spark_s:>9.1f} {n / spark_s:>12,.0f} {pandas_s:>9.1f} {n / pandas_s:>13,.0f} "
              f"{(n / spark_s) / (n / pandas_s):>13.2f}  {diff:.1e}")


def skew(spark, n_records: int, workdir: Path) -> None:
    print(f"\n{'application':<16} {'records':>8} {'edges':>6} {'max/mean':>9}  fields streams: receivers' max/mean")
    for name in APPLICATIONS:
        app = application(name)
        records = spark.createDataFrame(app.generate(n_records, seed=0))
        mon = replay(spark, app.topology, records, logic=app.logic, time_column=app.time_column, window_seconds=10.0)
        traffic = workdir / f"{name}-traffic.parquet"
        mon.traffic.toPandas().to_parquet(traffic)
        release(mon)
        edges = build_profile(spark, app.topology, [traffic]).edges
        w = edges["tuples_per_s"].to_numpy()
        ops = {c: edges[c].str.replace(r"\[\d+\]$", "", regex=True) for c in ("src_task", "dst_task")}
        keyed = []
        for s in app.topology.streams:
            if s.grouping == "fields":
                received = edges[(ops["src_task"] == s.src) & (ops["dst_task"] == s.dst)].groupby("dst_task")["tuples_per_s"].sum()
                received = received.reindex([lab for lab in app.topology.task_labels if lab.startswith(s.dst + "[")], fill_value=0.0)
                keyed.append(f"{s.src}->{s.dst} ({s.key}) {received.max() / received.mean():.2f}")
        print(f"{name:<16} {n_records:>8,} {len(w):>6} {w.max() / w.mean():>9.2f}  {'; '.join(keyed)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6,1e7", help="comma-separated record counts ('' to skip)")
    parser.add_argument("--skew-records", type=int, default=20_000, help="records per application (0 to skip)")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",") if s.strip()]
    t = time.perf_counter()
    spark = start_session(args.master)
    print(f"Spark session on {args.master} started in {time.perf_counter() - t:.1f} s")
    try:
        with tempfile.TemporaryDirectory(prefix="streamplace-bench-") as tmp:
            if sizes:
                throughput(spark, sizes, Path(tmp))
            if args.skew_records:
                skew(spark, args.skew_records, Path(tmp))
    finally:
        stop_session(spark)


if __name__ == "__main__":
    main()

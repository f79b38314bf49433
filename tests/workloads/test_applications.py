"""Application workloads: topologies of docs/workloads.md and the shape of the generated data (no Spark here)."""

import numpy as np
import pandas as pd
import pytest

from streamplace.model import build_task_graph
from streamplace.workloads.applications import (DLAT, DLON, GRID, LAT0, LON0, APPLICATIONS, application, page_views,
                                                smart_plug_readings, taxi_trips, tweets, write_records)

SHAPES = {
    "frequent-routes": ([("source", 16), ("preprocess", 16), ("rolling-count", 8), ("intermediate-rank", 4), ("final-rank", 1)],
                        [("source", "preprocess", "shuffle"), ("preprocess", "rolling-count", "shuffle"),
                         ("rolling-count", "intermediate-rank", "fields"), ("intermediate-rank", "final-rank", "global")]),
    "smart-home": ([("source", 10), ("plug-prediction", 10), ("house-prediction", 10), ("sink", 10)],
                   [("source", "plug-prediction", "shuffle"), ("source", "house-prediction", "shuffle"),
                    ("plug-prediction", "sink", "fields"), ("house-prediction", "sink", "fields")]),
    "page-view": ([("source", 4), ("view", 4), ("count", 4), ("sink", 4)],
                  [("source", "view", "local_or_shuffle"), ("view", "count", "fields"), ("count", "sink", "local_or_shuffle")]),
    "trending-topics": ([("A", 5), ("B", 9), ("C", 4), ("D", 1)],
                        [("A", "B", "fields"), ("B", "C", "fields"), ("C", "D", "global")]),
}


@pytest.mark.parametrize("name", sorted(APPLICATIONS))
def test_topologies_follow_design_6(name):
    app = application(name)
    ops, streams = SHAPES[name]
    assert [(op.name, op.parallelism) for op in app.topology.operators] == ops
    assert [(s.src, s.dst, s.grouping) for s in app.topology.streams] == streams
    assert all(s.key for s in app.topology.streams if s.grouping == "fields")
    assert set(app.logic) <= set(app.topology.index)
    assert app.cluster().capacities.sum() >= app.topology.n_tasks
    assert build_task_graph(app.topology).rates.nnz > 0


@pytest.mark.parametrize("name", sorted(APPLICATIONS))
def test_generators_are_seeded(name):
    app = application(name)
    a, b, c = app.generate(500, 1), app.generate(500, 1), app.generate(500, 2)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert app.time_column in a.columns and a[app.time_column].is_monotonic_increasing


def test_page_views_follow_lf_distributions():
    n = 100_000
    clicks = page_views(n, seed=0)
    share = clicks["page"].value_counts(normalize=True)
    assert np.allclose(share.sort_values(ascending=False).to_numpy(), [0.7, 0.2, 0.1], atol=0.01)
    assert clicks["status"].eq(200).mean() == pytest.approx(0.95, abs=0.005)
    assert clicks["zip"].nunique() == 2 and clicks["zip"].value_counts(normalize=True).min() > 0.49
    assert sorted(clicks["user_id"].unique()) == list(range(1, 101))
    assert np.allclose(np.diff(clicks["ts"].to_numpy()), 0.001, atol=1e-6)  # one click per millisecond


def _cells(lon, lat):
    x = np.floor((lon - (LON0 - DLON / 2)) / DLON) + 1
    y = np.floor(((LAT0 + DLAT / 2) - lat) / DLAT) + 1
    return x, y


def test_taxi_routes_are_heavy_tailed_on_the_300_grid():
    trips = taxi_trips(100_000, seed=0)
    sx, sy = _cells(trips["pickup_longitude"], trips["pickup_latitude"])
    ex, ey = _cells(trips["dropoff_longitude"], trips["dropoff_latitude"])
    inside = sx.between(1, GRID) & sy.between(1, GRID) & ex.between(1, GRID) & ey.between(1, GRID)
    assert 0.97 < inside.mean() < 0.995  # ~1 % of trips carry zero coordinates, as in the real data
    routes = (sx.astype(int).astype(str) + "." + sy.astype(int).astype(str) + "." + ex.astype(int).astype(str) + "."
              + ey.astype(int).astype(str))[inside].value_counts()
    top_percent = routes.iloc[: len(routes) // 100].sum() / routes.sum()
    assert top_percent > 0.2 and routes.iloc[0] > 50 * routes.median()
    assert (trips["dropoff_datetime"] - trips["pickup_datetime"] == trips["trip_time_in_secs"]).all()


def test_smart_plugs_report_periodically_with_a_heavy_tail_of_plugs_per_house():
    readings = smart_plug_readings(60_000, seed=0, period=30.0)
    assert list(readings.columns) == ["id", "timestamp", "value", "property", "plug_id", "household_id", "house_id"]
    assert readings["property"].value_counts().to_dict() == {0: 30_000, 1: 30_000}
    plugs = readings.groupby(["house_id", "household_id", "plug_id"])
    gaps = plugs["timestamp"].apply(lambda t: np.diff(np.unique(t)))
    assert np.allclose(np.concatenate(gaps.to_numpy()), 30.0)
    per_house = readings.drop_duplicates(["house_id", "household_id", "plug_id"]).groupby("house_id").size()
    assert readings["house_id"].nunique() == 40 and per_house.max() > 3 * per_house.median()
    work = readings[readings["property"] == 0].sort_values("timestamp").groupby(["house_id", "household_id", "plug_id"])["value"]
    assert (work.diff().dropna() >= 0).all()  # work is cumulative


def test_tweet_topics_are_zipf_popular():
    posts = tweets(20_000, seed=0)
    tags = posts["text"].str.findall(r"#\w+").explode()
    counts = tags.value_counts()
    assert 1 <= posts["text"].str.count("#").min() and posts["text"].str.count("#").max() <= 5
    assert counts.iloc[0] / counts.iloc[9] > 5 and counts.iloc[0] / len(tags) > 0.05


@pytest.mark.parametrize("ext", ["parquet", "csv", "jsonl"])
def test_write_records_round_trips(tmp_path, ext):
    frame = page_views(50, seed=3)
    path = write_records(frame, tmp_path / f"r.{ext}")
    back = {"parquet": pd.read_parquet, "csv": lambda p: pd.read_csv(p, dtype={"zip": str}),
            "jsonl": lambda p: pd.read_json(p, lines=True, dtype={"zip": str})}[ext](path)
    pd.testing.assert_frame_equal(back, frame, check_dtype=False)
    with pytest.raises(ValueError, match="unknown extension"):
        write_records(frame, tmp_path / "r.txt")

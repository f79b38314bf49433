"""Application workloads: topologies, operator logic and seeded data generators (docs/workloads.md).

Four applications from the papers, each with a generator of records in the shape of the
original data set, so the profiling pipeline (``streamplace traffic`` then ``profile``) turns
them into realistic, skewed communication graphs; a user can point the same pipeline at real
files of the same schema.

* ``frequent-routes`` ([T3] Sec. 6.3, DEBS 2015 Grand Challenge query 1): taxi trips in the
  challenge's column names and coordinates; the preprocess operator maps them to the
  challenge's 300 x 300 grid of 500 m cells (origin cell centre 41.474937 N, 74.913585 W;
  0.005986 deg per cell east, 0.004491556 deg south) and drops trips outside it. Pickups and
  drop-offs cluster around Zipf-popular hot spots, so route popularity is heavy-tailed.
  source(16) -shuffle-> preprocess(16) -shuffle-> rolling-count(8) -fields(route)->
  intermediate-rank(4) -global-> final-rank(1); the rankers emit their top list once a second.
* ``smart-home`` ([T3] Sec. 6.2, DEBS 2014 query 1): plug readings in the challenge's schema
  ``id, timestamp, value, property, plug_id, household_id, house_id`` (property 0 = work in
  kWh, 1 = load in W), 40 houses of Poisson-many households with geometric-many plugs (a
  heavy tail of plugs per house), one reading of each property per plug and period.
  source(10) -shuffle-> plug-prediction(10) and house-prediction(10) -fields-> sink(10);
  the source passes load readings only, the predictors emit one prediction per plug / house
  and 15-minute slice.
* ``page-view`` ([LF] Sec. 4.5): clicks ``ts, page, status, zip, user_id`` every 1 ms, pages
  70/20/10 %, status 200/500 at 95/5 %, two zip codes, 100 users.
  source(4) -local_or_shuffle-> view(4) -fields(page)-> count(4) -local_or_shuffle-> sink(4).
* ``trending-topics`` ([T3] Sec. 3, Fig. 1-2, App. C; storm-starter's rolling top words):
  tweets whose hashtags are Zipf-popular. A(5) emits topics -fields(topic)-> B(9) rolling
  count, emitting each counted topic every 3 s -fields(topic)-> C(4) intermediate rank, once a
  second -global-> D(1) total rank.

Operator logic is declarative (:class:`OperatorLogic`, Spark SQL expressions) so this module
does not import Spark; :mod:`streamplace.profile.traffic` interprets it. Generators are
vectorised NumPy, deterministic for a seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..files import quote
from ..model import Cluster, Operator, Stream, Topology
from ..memory import RECORD_BYTES, over_limit
from ..model.specs import atomic_write_bytes, atomic_write_text

if TYPE_CHECKING:   # pandas loads in ~0.5 s: imported where used, so the CLI starts without it
    import pandas as pd

T0 = 1_357_000_000.0  # 2012-12-31T00:26:40Z: epoch seconds where generated data starts


@dataclass(frozen=True)
class OperatorLogic:
    """What an operator does with each input tuple, applied in this order.

    ``explode``: a SQL expression giving an array; one output tuple per element, named
    ``explode_as``. ``fields``: derived columns ``(name, SQL expression)``, in order.
    ``where``: a SQL predicate; failing tuples are dropped. ``every``: instead of one output per
    input, one output per (task, ``group_by`` values, period of ``every`` seconds), with a
    count ``n`` and the time of the period's last input. ``selectivity``: copies per output
    (``floor(s)`` plus one more with probability ``s - floor(s)``, seeded per tuple).
    """

    explode: str | None = None
    explode_as: str = "item"
    fields: tuple[tuple[str, str], ...] = ()
    where: str | None = None
    every: float | None = None
    group_by: tuple[str, ...] = ()
    selectivity: float | None = None


@dataclass(frozen=True)
class Application:
    name: str
    description: str
    topology: Topology
    logic: dict[str, OperatorLogic]
    time_column: str
    generate: Callable[..., pd.DataFrame] = field(repr=False)
    default_records: int = 100_000

    def records(self, n: int, seed: int = 0) -> pd.DataFrame:
        """``n`` generated records, refused (``ValueError`` with the estimate) when they would not
        fit the memory limit (:data:`streamplace.memory.RECORD_BYTES` per record)."""
        refusal = over_limit(RECORD_BYTES * int(n), f"{int(n):,} records of {self.name}")
        if refusal:
            raise ValueError(refusal)
        return self.generate(n, seed)

    def cluster(self) -> Cluster:
        """A heterogeneous cluster for the application: nodes of capacity 8, 4 and 2, room for every task + 25 %."""
        n = self.topology.n_tasks
        big = max(1, int(np.ceil(1.25 * n / 2 / 8)))
        medium = max(1, int(np.ceil(1.25 * n / 4 / 4)))
        small = max(1, int(np.ceil((1.25 * n - 8 * big - 4 * medium) / 2)))
        return Cluster.from_capacities({8: big, 4: medium, 2: small}, name=f"{self.name}-cluster")


def _zipf_probs(k: int, s: float) -> np.ndarray:
    p = 1.0 / np.arange(1, k + 1) ** s
    return p / p.sum()


def _arrivals(rng: np.random.Generator, n: int, rate: float) -> np.ndarray:
    """Poisson arrival times (seconds after ``T0``) of ``n`` events at ``rate`` per second."""
    return T0 + np.cumsum(rng.exponential(1.0 / rate, size=n))


# ---------------------------------------------------------------------- frequent routes (DEBS 2015)
GRID = 300
LON0, LAT0 = -74.913585, 41.474937
DLON, DLAT = 0.005986, 0.004491556


def taxi_trips(n: int, seed: int = 0, *, rate: float = 50.0, hotspots: int = 60, zipf_s: float = 1.1) -> pd.DataFrame:
    """``n`` trips, ``rate`` drop-offs per second; 85 % between Zipf-popular hot spots, 1 % with zero coordinates."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    spots = np.clip(np.round(rng.normal([155.0, 160.0], 12.0, size=(hotspots, 2))), 1, GRID)
    probs = _zipf_probs(hotspots, zipf_s)

    def cells(order: np.ndarray) -> np.ndarray:
        hot = rng.random(n) < 0.85
        xy = np.where(hot[:, None], spots[order[rng.choice(hotspots, size=n, p=probs)]] + rng.normal(0, 0.25, (n, 2)),
                      rng.normal([155.0, 160.0], 40.0, size=(n, 2)))
        return xy + rng.random((n, 2)) - 0.5

    start, end = cells(np.arange(hotspots)), cells(rng.permutation(hotspots))
    dropoff = _arrivals(rng, n, rate)
    cell_km = 0.5
    miles = np.abs(end - start).sum(axis=1) * cell_km / 1.609 + rng.exponential(0.2, n)
    trip_time = np.maximum(60, miles * rng.uniform(150, 400, n)).astype(np.int64)
    fare = np.round(2.5 + 2.5 * miles + rng.exponential(1.0, n), 2)
    tip = np.round(np.where(rng.random(n) < 0.6, fare * rng.uniform(0.1, 0.25, n), 0.0), 2)
    broken = rng.random(n) < 0.01

    def coords(xy: np.ndarray):
        lon = np.where(broken, 0.0, LON0 + (xy[:, 0] - 1) * DLON)
        lat = np.where(broken, 0.0, LAT0 - (xy[:, 1] - 1) * DLAT)
        return np.round(lon, 6), np.round(lat, 6)

    plon, plat = coords(start)
    dlon, dlat = coords(end)
    medallion = rng.integers(0, 13_000, n)
    return pd.DataFrame({
        "medallion": [f"M{m:05d}" for m in medallion], "hack_license": [f"H{h:05d}" for h in (medallion * 7 + rng.integers(0, 3, n)) % 40_000],
        "pickup_datetime": np.round(dropoff - trip_time, 3), "dropoff_datetime": np.round(dropoff, 3), "trip_time_in_secs": trip_time,
        "trip_distance": np.round(miles, 2), "pickup_longitude": plon, "pickup_latitude": plat, "dropoff_longitude": dlon,
        "dropoff_latitude": dlat, "payment_type": np.where(rng.random(n) < 0.55, "CRD", "CSH"), "fare_amount": fare,
        "tip_amount": tip, "total_amount": np.round(fare + tip + 0.5, 2),
    })


def _cell(lon: str, lat: str) -> tuple[str, str]:
    x = f"cast(floor(({lon} - ({LON0} - {DLON} / 2)) / {DLON}) + 1 as int)"
    y = f"cast(floor((({LAT0} + {DLAT} / 2) - {lat}) / {DLAT}) + 1 as int)"
    return x, y


def _frequent_routes() -> Application:
    px, py = _cell("pickup_longitude", "pickup_latitude")
    dx, dy = _cell("dropoff_longitude", "dropoff_latitude")
    ops = [Operator("source", 16, role="source", source_rate=50.0, tuple_bytes=180, cpu_per_tuple=5e-6),
           Operator("preprocess", 16, selectivity=0.98, tuple_bytes=40, cpu_per_tuple=2e-5),
           Operator("rolling-count", 8, tuple_bytes=48, cpu_per_tuple=1e-5),
           Operator("intermediate-rank", 4, selectivity=0.1, tuple_bytes=400, cpu_per_tuple=2e-5),
           Operator("final-rank", 1, role="sink", tuple_bytes=400, cpu_per_tuple=2e-5)]
    streams = [Stream("source", "preprocess"), Stream("preprocess", "rolling-count"),
               Stream("rolling-count", "intermediate-rank", grouping="fields", key="route", key_distribution="zipf", num_keys=10_000),
               Stream("intermediate-rank", "final-rank", grouping="global")]
    logic = {
        "preprocess": OperatorLogic(
            fields=(("start_x", px), ("start_y", py), ("end_x", dx), ("end_y", dy),
                    ("route", "concat_ws('.', start_x, start_y, end_x, end_y)")),
            where=" and ".join(f"{c} between 1 and {GRID}" for c in ("start_x", "start_y", "end_x", "end_y"))),
        "intermediate-rank": OperatorLogic(every=1.0),
    }
    return Application("frequent-routes", "top 10 frequent taxi routes (DEBS 2015 Q1, [T3] 6.3)",
                       Topology.build("frequent-routes", ops, streams), logic, "dropoff_datetime", taxi_trips)


# ---------------------------------------------------------------------- smart home (DEBS 2014)
def smart_plug_readings(n: int, seed: int = 0, *, houses: int = 40, period: float = 30.0) -> pd.DataFrame:
    """About ``n`` readings: each plug reports work (property 0) and load (property 1) every ``period`` s."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    households = 1 + rng.poisson(3.0, houses)
    house_of_hh = np.repeat(np.arange(houses), households)
    hh_index = np.concatenate([np.arange(k) for k in households])
    plugs = rng.geometric(0.3, house_of_hh.shape[0])
    plug_house = np.repeat(house_of_hh, plugs)
    plug_hh = np.repeat(hh_index, plugs)
    plug_idx = np.concatenate([np.arange(k) for k in plugs])
    n_plugs = plug_house.shape[0]
    steps = max(1, int(np.ceil(n / (2 * n_plugs))))
    phase = rng.uniform(0, period, n_plugs)
    base = rng.lognormal(3.5, 1.0, n_plugs)  # typical load around 30 W, heavy tail
    t = T0 + phase[None, :] + period * np.arange(steps)[:, None]
    daily = 1 + 0.5 * np.sin(2 * np.pi * (t - T0) / 86_400.0)
    load = np.maximum(0.0, base[None, :] * daily * rng.lognormal(0.0, 0.2, t.shape))
    work = np.cumsum(load * period / 3.6e6, axis=0)  # kWh
    ts = np.repeat(t.ravel(), 2)
    order = np.argsort(ts, kind="stable")[:n]
    frame = pd.DataFrame({
        "timestamp": np.round(ts, 3),
        "value": np.column_stack([work.ravel(), load.ravel()]).ravel().round(3),
        "property": np.tile([0, 1], t.size),
        "plug_id": np.repeat(np.tile(plug_idx, steps), 2),
        "household_id": np.repeat(np.tile(plug_hh, steps), 2),
        "house_id": np.repeat(np.tile(plug_house, steps), 2),
    }).iloc[order].reset_index(drop=True)
    frame.insert(0, "id", np.arange(len(frame)))
    return frame


def _smart_home() -> Application:
    slice_s = 900.0
    ops = [Operator("source", 10, role="source", source_rate=70.0, selectivity=0.5, tuple_bytes=60, cpu_per_tuple=5e-6),
           Operator("plug-prediction", 10, selectivity=0.02, tuple_bytes=60, cpu_per_tuple=3e-5),
           Operator("house-prediction", 10, selectivity=0.002, tuple_bytes=50, cpu_per_tuple=2e-5),
           Operator("sink", 10, role="sink", cpu_per_tuple=1e-5)]
    streams = [Stream("source", "plug-prediction"), Stream("source", "house-prediction"),
               Stream("plug-prediction", "sink", grouping="fields", key="plug", key_distribution="zipf", num_keys=2000),
               Stream("house-prediction", "sink", grouping="fields", key="house_id", key_distribution="zipf", num_keys=40)]
    logic = {
        "source": OperatorLogic(where="property = 1"),
        "plug-prediction": OperatorLogic(every=slice_s, group_by=("plug",),
                                         fields=(("plug", "concat_ws('/', house_id, household_id, plug_id)"),)),
        "house-prediction": OperatorLogic(every=slice_s, group_by=("house_id",)),
    }
    return Application("smart-home", "load prediction for smart homes (DEBS 2014 Q1, [T3] 6.2)",
                       Topology.build("smart-home", ops, streams), logic, "timestamp", smart_plug_readings)


# ---------------------------------------------------------------------- page-view count ([LF] 4.5)
PAGES = ("/index.html", "/products.html", "/contact.html")


def page_views(n: int, seed: int = 0, *, rate: float = 1000.0) -> pd.DataFrame:
    """``n`` clicks, one per ``1 / rate`` s: page 70/20/10 %, status 200/500 at 95/5 %, 2 zip codes, 100 users."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "ts": np.round(T0 + np.arange(n) / rate, 3),
        "page": np.asarray(PAGES)[rng.choice(3, size=n, p=[0.7, 0.2, 0.1])],
        "status": np.where(rng.random(n) < 0.95, 200, 500),
        "zip": np.where(rng.random(n) < 0.5, "10001", "94103"),
        "user_id": rng.integers(1, 101, n),
    })


def _page_view() -> Application:
    ops = [Operator("source", 4, role="source", source_rate=1000.0, tuple_bytes=80, cpu_per_tuple=3e-6),
           Operator("view", 4, tuple_bytes=40, cpu_per_tuple=3e-6),
           Operator("count", 4, tuple_bytes=40, cpu_per_tuple=5e-6),
           Operator("sink", 4, role="sink", cpu_per_tuple=2e-6)]
    streams = [Stream("source", "view", grouping="local_or_shuffle"),
               Stream("view", "count", grouping="fields", key="page", key_distribution="zipf", num_keys=3),
               Stream("count", "sink", grouping="local_or_shuffle")]
    logic = {"view": OperatorLogic(fields=(("page", "page"), ("user_id", "user_id")))}
    return Application("page-view", "simple page-view count ([LF] 4.5)", Topology.build("page-view", ops, streams),
                       logic, "ts", page_views)


# ---------------------------------------------------------------------- trending topics ([T3] Fig. 1-2)
WORDS = ("the", "new", "live", "today", "game", "vote", "music", "love", "watch", "city", "breaking", "news")


def tweets(n: int, seed: int = 0, *, rate: float = 200.0, topics: int = 5000, zipf_s: float = 1.1) -> pd.DataFrame:
    """``n`` tweets at ``rate`` per second, each with 1 + Poisson(0.6) hashtags of Zipf popularity."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    tags = np.array([f"#topic{np.base_repr(i, 36).lower()}" for i in rng.permutation(topics)])
    k = np.minimum(1 + rng.poisson(0.6, n), 5)
    drawn = tags[rng.choice(topics, size=int(k.sum()), p=_zipf_probs(topics, zipf_s))]
    words = np.asarray(WORDS)[rng.integers(0, len(WORDS), (n, 3))]
    bounds = np.concatenate([[0], np.cumsum(k)])
    text = [" ".join([*words[i], *drawn[bounds[i]:bounds[i + 1]]]) for i in range(n)]
    return pd.DataFrame({"ts": np.round(_arrivals(rng, n, rate), 3), "tweet_id": np.arange(n),
                         "user_id": rng.zipf(1.8, n) % 50_000, "text": text})


def _trending_topics() -> Application:
    ops = [Operator("A", 5, role="source", source_rate=320.0, tuple_bytes=30, cpu_per_tuple=5e-6),
           Operator("B", 9, selectivity=0.3, tuple_bytes=40, cpu_per_tuple=1e-5),
           Operator("C", 4, selectivity=0.05, tuple_bytes=400, cpu_per_tuple=2e-5),
           Operator("D", 1, role="sink", cpu_per_tuple=2e-5)]
    streams = [Stream("A", "B", grouping="fields", key="topic", key_distribution="zipf", num_keys=5000),
               Stream("B", "C", grouping="fields", key="topic", key_distribution="zipf", num_keys=5000),
               Stream("C", "D", grouping="global")]
    logic = {"A": OperatorLogic(explode="filter(split(text, ' '), w -> startswith(w, '#'))", explode_as="topic"),
             "B": OperatorLogic(every=3.0, group_by=("topic",)),
             "C": OperatorLogic(every=1.0)}
    return Application("trending-topics", "top trending topics ([T3] Fig. 1-2, App. C)",
                       Topology.build("trending-topics", ops, streams), logic, "ts", tweets)


APPLICATIONS: dict[str, Callable[[], Application]] = {
    "frequent-routes": _frequent_routes, "smart-home": _smart_home, "page-view": _page_view, "trending-topics": _trending_topics,
}


def application(name: str) -> Application:
    if name not in APPLICATIONS:
        raise ValueError(f"unknown application {quote(name)} (expected one of {', '.join(APPLICATIONS)})")
    return APPLICATIONS[name]()


def write_records(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write records as Parquet, CSV or JSON Lines by the extension, atomically."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    suffix = p.suffix.lower()
    if suffix in (".parquet", ".pq"):
        import io
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        atomic_write_bytes(p, buffer.getvalue())
    elif suffix == ".csv":
        atomic_write_text(p, frame.to_csv(index=False))
    elif suffix in (".jsonl", ".ndjson", ".json"):
        atomic_write_text(p, frame.to_json(orient="records", lines=True))
    else:
        raise ValueError(f"{p}: unknown extension {quote(suffix)} (use .parquet, .csv or .jsonl)")
    return p

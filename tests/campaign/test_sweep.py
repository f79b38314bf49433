"""Sweeps: grid validation and expansion, records equal to direct runs, resume, failures, the CLI."""

import json
import math
import os

import pytest
import yaml

from streamplace.campaign.sweep import SweepProgress, expand_grid, load_grid, read_results, run_scenario, run_sweep
from streamplace.cli import main
from streamplace.evaluate.records import METRIC_KEYS, result_record
from streamplace.model import Problem
from streamplace.model.specs import topology_to_dict, write_document
from streamplace.schedulers import make_scheduler
from streamplace.workloads import microbench

SMALL = {"workloads": [{"microbench": {"layout": ["linear", "star"], "tasks": 10}}],
         "clusters": ["heterogeneous"],
         "schedulers": {"even": {}, "ischeduler": {"theta": 0}, "metis": {"objective": ["cut", "volume"]}},
         "seeds": [0, 1]}  # deterministic variants (theta > 0 may call multi-threaded CP-SAT: any of several optima)
RESULT_KEYS = ("status", "lower_bound", "valid", *METRIC_KEYS)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _result_set(frame) -> dict:
    """scenario_id -> the scheduler's results (timings left out)."""
    frame = frame.astype(object).where(frame.notna(), None)
    return {row["scenario_id"]: tuple(row[k] for k in RESULT_KEYS) for row in frame.to_dict("records")}


# ---------------------------------------------------------------------- grid (no Spark)
def test_expansion_counts_orders_and_identifies_scenarios(tmp_path):
    doc = {"workloads": [{"microbench": {"layout": ["linear", "star"], "tasks": [10, 12]}}],
           "clusters": ["heterogeneous", {"capacities": {4: 3}}],
           "schedulers": {"even": None, "ischeduler": {"theta": [0, 1]}}, "seeds": [0, 1]}
    scenarios = expand_grid(doc, tmp_path / "g.yaml")
    assert len(scenarios) == 2 * 2 * 2 * 3 * 2
    assert len({s["scenario_id"] for s in scenarios}) == len(scenarios)
    first = scenarios[0]
    assert (first["workload"], first["layout"], first["cluster"], first["variant"], first["seed"]) == \
        ("linear-10", "linear", "heterogeneous", "even", 0)
    assert scenarios[-1]["variant"] == "ischeduler[theta=1]" and scenarios[-1]["cluster"] == "cap-4x3"
    assert [s["scenario_id"] for s in expand_grid(doc, tmp_path / "g.yaml")] == [s["scenario_id"] for s in scenarios]

    def one(workload, params):
        return expand_grid({"workloads": [workload], "clusters": ["homogeneous"], "schedulers": {"ischeduler": params}})
    # defaults filled in and integral floats: the same scenario, the same id
    assert one({"lf": {"config": "ascent"}}, {"theta": 1})[0]["scenario_id"] == \
        one({"lf": {"config": "ascent", "high": False}}, {"theta": 1.0})[0]["scenario_id"]
    assert one({"lf": {"config": "ascent"}}, {"theta": 0})[0]["scenario_id"] != \
        one({"lf": {"config": "ascent"}}, {"theta": 1})[0]["scenario_id"]
    # topology files are identified by their content, not their path
    for sub, tasks in (("a", 10), ("b", 10), ("c", 12)):
        write_document(topology_to_dict(microbench.microbench("linear", tasks)), tmp_path / sub / "t.yaml")
    ids = [one(str(tmp_path / sub / "t.yaml"), {})[0]["scenario_id"] for sub in "abc"]
    assert ids[0] == ids[1] != ids[2]
    # a grid listing the same scenario twice runs it once
    twice = expand_grid({**doc, "seeds": [0, 0]}, tmp_path / "g.yaml")
    assert len(twice) == len(scenarios) // 2


BAD_GRIDS = [
    ("workloads: []\nclusters: [homogeneous]\nschedulers: {even: {}}\n", "workloads", "must be a non-empty list"),
    ("clusters: [homogeneous]\nschedulers: {even: {}}\n", "workloads", "required"),
    ("workloads: [{microbench: {layout: ring, tasks: 10}}]\nclusters: [homogeneous]\nschedulers: {even: {}}\n",
     "workloads[0].microbench.layout", "unknown value 'ring' (expected one of linear, diamond, star)"),
    ("workloads: [{microbench: {layout: linear, tasks: [10, ten]}}]\nclusters: [homogeneous]\nschedulers: {even: {}}\n",
     "workloads[0].microbench.tasks[1]", "must be an int, got 'ten'"),
    ("workloads: [{microbench: {layout: linear}}]\nclusters: [homogeneous]\nschedulers: {even: {}}\n",
     "workloads[0].microbench.tasks", "missing"),
    ("workloads: [{pipeline: {}}]\nclusters: [homogeneous]\nschedulers: {even: {}}\n",
     "workloads[0].pipeline", "unknown workload generator"),
    ("workloads: [{lf: {config: ascent}}]\nclusters: [nowhere]\nschedulers: {even: {}}\n",
     "clusters[0]", "no cluster preset 'nowhere'"),
    ("workloads: [{lf: {config: ascent}}]\nclusters: [{capacities: {4: 0}}]\nschedulers: {even: {}}\n",
     "clusters[0].capacities.4", "node count must be an integer >= 1, got 0"),
    ("workloads: [{lf: {config: ascent}}]\nclusters: [homogeneous]\nschedulers: {bogus: {}}\n",
     "schedulers.bogus", "unknown scheduler (available: "),
    ("workloads: [{lf: {config: ascent}}]\nclusters: [homogeneous]\nschedulers: {metis: {objective: [cut, sideways]}}\n",
     "schedulers.metis", "scheduler 'metis': objective must be one of cut, volume, got 'sideways'"),
    ("workloads: [{lf: {config: ascent}}]\nclusters: [homogeneous]\nschedulers: [even, {t3: {seed: 3}}]\n",
     "schedulers[1].t3.seed", "seeds are set for the whole grid"),
    ("workloads: [{lf: {config: ascent}}]\nclusters: [homogeneous]\nschedulers: {even: {}}\nseeds: [0, x]\n",
     "seeds[1]", "must be an integer between 0 and 2147483647, got 'x'"),
    ("workloads: [{lf: {config: ascent}}]\nclusters: [homogeneous]\nschedulers: {even: {}}\nseeds: [0, -3]\n",
     "seeds[1]", "must be an integer between 0 and 2147483647, got -3"),
    ("workloads: [{lf: {config: ascent}}]\nclusters: [homogeneous]\nschedulers: {even: {}}\nseed: 1\n",
     "seed", "unknown field"),
    ("workloads: [{lf: {config: ascent}}]\nclusters: [homogeneous]\nschedulers: {even: {}}\ntime_limit: -1\n",
     "time_limit", "must be a number of seconds between 0 and 1e+06, got -1"),
    ("workloads: [{lf: {config: ascent}\n", "", "invalid YAML"),
]


@pytest.mark.parametrize("text, field, problem", BAD_GRIDS, ids=[f or "yaml" for _, f, _ in BAD_GRIDS])
def test_bad_grid_is_one_line_and_exit_2(tmp_path, capsys, text, field, problem):
    grid = tmp_path / "grid.yaml"
    grid.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(grid), "-o", str(tmp_path / "out")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"streamplace: {grid}: {field + ': ' if field else ''}") and problem in err
    assert not (tmp_path / "out").exists()


def test_a_missing_topology_file_is_reported_as_that_file(tmp_path, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text("workloads: [topos/absent.yaml]\nclusters: [homogeneous]\nschedulers: {even: {}}\n")
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(grid), "-o", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert capsys.readouterr().err == f"streamplace: {tmp_path / 'topos' / 'absent.yaml'}: file not found\n"


# ---------------------------------------------------------------------- on Spark
@pytest.fixture(scope="module")
def small_run(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "full"
    scenarios = expand_grid(SMALL)
    summary = run_sweep(scenarios, out, batch_size=5)
    return scenarios, summary, read_results(out), out


def test_one_record_per_scenario_equal_to_running_the_scheduler_directly(small_run):
    scenarios, summary, frame, out = small_run
    assert (summary.total, summary.skipped, summary.ran, summary.failed, len(summary.parts)) == (16, 0, 16, 0, 4)
    assert sorted(frame["scenario_id"]) == sorted(s["scenario_id"] for s in scenarios)
    assert frame["error"].isna().all() and set(frame["status"]) <= {"heuristic", "optimal"}
    assert len(list((out / "parts").glob("*.parquet"))) == 4
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 16
    rows = {(r["workload"], r["variant"], r["seed"]): r for r in frame.to_dict("records")}
    for layout, name, params, seed in (("star", "ischeduler", {"theta": 0}, 1), ("linear", "metis", {"objective": "cut"}, 0)):
        problem = Problem.from_topology(microbench.microbench(layout, 10), microbench.cluster("heterogeneous"))
        direct = result_record(make_scheduler(name, {**params, "seed": seed}).schedule(problem), include_placement=False)
        row = rows[(f"{layout}-10", f"{name}[{','.join(f'{k}={v}' for k, v in params.items())}]", seed)]
        assert row["n_tasks"] == 10 and row["n_nodes"] == 10 and json.loads(row["params"]) == params
        for key in ("status", "valid", *METRIC_KEYS):
            want = json.dumps(direct[key]) if isinstance(direct[key], list) else direct[key]
            assert _same(row[key], want), key
        assert row["inter_node_cost"] > 0


def test_resume_after_an_interruption_gives_the_same_results_once(spark, small_run, tmp_path):
    scenarios, _, full, _ = small_run
    out = tmp_path / "resumed"
    (out / "parts").mkdir(parents=True)
    (out / "parts" / ".part-000007-deadbeef.parquet.tmp").write_bytes(b"half a part from a killed run")

    def interrupt(p: SweepProgress):
        if p.batches_done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(scenarios, out, batch_size=5, on_progress=interrupt)
    assert [p.name.startswith("part-000000-") for p in (out / "parts").iterdir()] == [True]  # stale temp file gone
    assert len(read_results(out)) == 5
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 5  # refreshed on the way out

    seen = []
    summary = run_sweep(scenarios, out, batch_size=5, on_progress=seen.append)
    assert (summary.skipped, summary.ran, len(summary.parts)) == (5, 11, 3)
    assert seen[0].done == 5 and seen[-1].done == 16 and seen[-1].batches_done == 3
    resumed = read_results(out)
    assert len(resumed) == 16 and resumed["scenario_id"].is_unique
    assert _result_set(resumed) == _result_set(full)

    again = run_sweep(scenarios, out, batch_size=5, spark_master="spark://127.0.0.1:9")  # nothing to run: no Spark needed
    assert (again.skipped, again.ran, again.parts) == (16, 0, [])
    assert len(list((out / "parts").glob("*.parquet"))) == 4


def test_failing_scenarios_are_recorded_and_the_others_complete(spark, tmp_path):
    missing = tmp_path / "no-such-profiling.yaml"
    doc = {"workloads": [{"microbench": {"layout": "diamond", "tasks": [8, 10]}}],  # diamond-8 cannot be built
           "clusters": ["heterogeneous", {"capacities": {1: 2}}],                  # 2 units of capacity for 10 tasks
           "schedulers": {"t3": {}, "throughput": {"profiling": str(missing)}}}      # raises when it reads the file
    scenarios = expand_grid(doc)
    summary = run_sweep(scenarios, tmp_path / "out", batch_size=3)
    assert (summary.ran, summary.failed, summary.no_placement) == (8, 6, 1)
    rows = {(r["workload"], r["cluster"], r["scheduler"]): r for r in read_results(tmp_path / "out").to_dict("records")}
    assert len(rows) == 8
    for cluster in ("heterogeneous", "cap-1x2"):
        for sched in ("t3", "throughput"):
            assert rows[("diamond-8", cluster, sched)]["status"] == "error"
            assert rows[("diamond-8", cluster, sched)]["error"] == "ValueError: diamond needs an even task count >= 10, got 8"
        assert rows[("diamond-10", cluster, "throughput")]["error"] == f"SpecError: {missing}: file not found"
    infeasible = rows[("diamond-10", "cap-1x2", "t3")]
    assert infeasible["status"] == "infeasible"
    assert infeasible["error"] == "infeasible: total task load 10 exceeds total cluster capacity 2"
    ok = rows[("diamond-10", "heterogeneous", "t3")]
    assert ok["status"] == "heuristic" and ok["error"] is None and ok["valid"] and ok["inter_node_cost"] > 0

    retried = run_sweep(scenarios, tmp_path / "out", batch_size=3, retry_failed=True)
    assert (retried.skipped, retried.ran, retried.failed) == (2, 6, 6)
    assert len(read_results(tmp_path / "out")) == 8


def test_the_grid_time_limit_is_each_budget_scheduler_s_budget():
    doc = {"workloads": [{"microbench": {"layout": "linear", "tasks": 10}}], "clusters": ["homogeneous"],
           "schedulers": {"optimal": {}, "ischeduler": {"theta": 0}, "metis": {}}}
    plain, limited = expand_grid(doc), expand_grid({**doc, "time_limit": 2})
    assert all("time_limit" not in s for s in plain)   # grids without it keep their scenario ids
    assert {s["scenario_id"] for s in plain}.isdisjoint(s["scenario_id"] for s in limited)
    rows = {s["scheduler"]: run_scenario(s) for s in limited}
    assert all(row["error"] is None for row in rows.values())
    # the record names the budget each scheduler ran with; the grid's own value wins
    assert [json.loads(rows[name]["params"]) for name in ("optimal", "ischeduler", "metis")] == \
        [{"time_limit": 2}, {"theta": 0}, {}]


def test_run_scenario_takes_and_returns_plain_data():
    scenario = expand_grid(SMALL)[0]
    row = run_scenario(json.loads(json.dumps(scenario)))
    assert row["scenario_id"] == scenario["scenario_id"] and row["error"] is None
    assert all(isinstance(v, (str, int, float, bool, type(None))) for v in row.values())


def test_cli_sweep_writes_results_and_a_report(spark, tmp_path, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump({"workloads": [{"microbench": {"layout": "star", "tasks": [10, 12]}}],
                                    "clusters": ["heterogeneous"], "schedulers": ["even", "t3"]}))
    main(["sweep", str(grid), "-o", str(tmp_path / "out"), "--batch-size", "3", "--report"])
    err = " ".join(capsys.readouterr().err.split())
    assert "4 scenarios: 0 already done, 4 run in" in err and "(0 failed, 0 without a placement), 2 new parts" in err
    assert len((tmp_path / "out" / "results.csv").read_text().splitlines()) == 1 + 4
    assert (tmp_path / "out" / "report.html").stat().st_size > 0
    main(["sweep", str(grid), "-o", str(tmp_path / "out")])
    assert "4 scenarios: 4 already done, 0 run in" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # work to do on a master this process cannot reach: one line, exit 2
        main(["sweep", str(grid), "-o", str(tmp_path / "other"), "--spark-master", "spark://127.0.0.1:9"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("streamplace: spark: a session on local[2] is already running")
    assert len(load_grid(grid)) == 4


def test_a_file_in_parts_that_is_not_a_part_is_not_read_as_one(tmp_path):
    """A stray ``part-zzz.parquet`` ended a resume in an internal error (its number read as an int)."""
    from streamplace.campaign.sweep import PARTS, _part_paths
    (tmp_path / PARTS).mkdir()
    for name in ("part-000001-0a1b2c3d.parquet", "part-zzz.parquet", "part-000000-ffff0000.parquet", "part-2.parquet"):
        (tmp_path / PARTS / name).write_bytes(b"")
    assert [p.name for p in _part_paths(tmp_path)] == ["part-000000-ffff0000.parquet", "part-000001-0a1b2c3d.parquet"]


def test_a_lock_naming_no_possible_process_is_stale():
    """A lock file holding 99999999999999999999 ended the sweep in an OverflowError."""
    from streamplace.campaign.sweep import _alive
    assert not _alive(99999999999999999999) and _alive(os.getpid())

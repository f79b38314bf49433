"""The findings of the reliability review that led to one reader and one writer (streamplace.files),
each reproduced through the command line (in process): inputs destroyed, internal errors,
sizes allocated before an estimate, hostile values accepted silently. Each test names the class
of input it stands for; the property suite (test_properties.py) covers every command."""

import json
import shutil
from pathlib import Path

import pytest
import yaml

from streamplace.profile.metrics import TRAFFIC, _rates

UI = Path(__file__).resolve().parents[1] / "storm" / "storm-ui" / "wordcount"


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("streamplace: ") and "Traceback" not in err, err
    return lines[0]


# ---------------------------------------------------------------------- inputs destroyed
def test_storm_run_force_never_deletes_a_directory_holding_its_inputs(cli, small, tmp_path):
    topo, cluster = small   # both in tmp_path: -o tmp_path --force would replace the directory holding them
    before = topo.read_bytes(), cluster.read_bytes()
    code, _, err = cli(["storm", "run", topo, cluster, "--scheduler", "even", "--force", "-o", tmp_path])
    assert code == 2 and f"contains the input {topo}" in _one_line(err)
    assert (topo.read_bytes(), cluster.read_bytes()) == before


def test_an_importer_never_writes_over_the_responses_it_reads(cli, tmp_path):
    saved = shutil.copytree(UI, tmp_path / "ui")
    before = (saved / "topology.json").read_bytes()
    for out in (saved / "topology.json", saved / "new.yaml"):
        code, _, err = cli(["import", "storm-ui", saved, "-o", out])
        assert code == 2 and "lies inside the input directory" in _one_line(err)
    assert (saved / "topology.json").read_bytes() == before and not (saved / "new.yaml").exists()


def test_a_generator_never_writes_over_the_job_it_reads(cli, small):
    topo, _ = small
    before = topo.read_bytes()
    code, _, err = cli(["workload", "cluster", "--generator", "sized", "--topology", topo, "-o", topo, "kind=homogeneous"])
    assert code == 2 and f"is the input {topo}" in _one_line(err)
    assert topo.read_bytes() == before


# ---------------------------------------------------------------------- internal errors
def test_a_yaml_result_is_written_and_an_unknown_format_is_refused_before_the_solve(cli, small, tmp_path):
    topo, cluster = small
    code, _, _ = cli(["schedule", topo, cluster, "-s", "even", "-o", tmp_path / "placement.yaml"])
    assert code == 0 and yaml.safe_load((tmp_path / "placement.yaml").read_text())["status"] == "heuristic"
    for name, shown in (("p.txt", "extension '.txt'"), ("p", "no extension")):
        code, out, err = cli(["schedule", topo, cluster, "-s", "optimal", "--format", "json", "-o", tmp_path / name])
        assert code == 2 and f"has {shown}; the format follows the extension" in _one_line(err)
        assert out == "" and not (tmp_path / name).exists()   # refused before the solve: nothing printed


@pytest.mark.parametrize("topology, component, where", [
    ({"spouts": "nope"}, None, "topology.json: spouts: expected a list of objects"),
    ({"spouts": [7]}, None, "topology.json: spouts: expected a list of objects"),
    ({}, {"outputStats": "x"}, "component-s.json: outputStats: expected a list of objects"),
    ({}, {"outputStats": [1, 2]}, "component-s.json: outputStats: expected a list of objects"),
    ({}, {"outputStats": [{"stream": "default", "emitted": 1e308}]}, "operators[0].source_rate: must be at most 1e+12"),
    ({}, {"outputStats": [{"stream": "default", "emitted": "many"}]}, "emitted: not a number"),
])
def test_a_malformed_storm_ui_response_is_one_line_and_nothing_unloadable_is_written(cli, tmp_path, topology, component,
                                                                                     where):
    saved = tmp_path / "ui"
    saved.mkdir()
    page = {"name": "x", "window": "600", "spouts": [{"spoutId": "s", "tasks": 1}], "bolts": [], **topology}
    (saved / "topology.json").write_text(json.dumps(page))
    (saved / "component-s.json").write_text(json.dumps(component or {"outputStats": []}))
    code, _, err = cli(["import", "storm-ui", saved, "-o", tmp_path / "t.yaml"])
    assert code == 2 and where in _one_line(err)
    assert not (tmp_path / "t.yaml").exists()


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:1/api/v1/topology/x"])
def test_a_malformed_or_dead_url_is_one_line(cli, tmp_path, url):
    code, _, err = cli(["import", "storm-ui", url, "-o", tmp_path / "t.yaml"])
    assert code == 2 and _one_line(err).startswith(f"streamplace: {url}")


# ---------------------------------------------------------------------- sizes estimated first
@pytest.mark.parametrize("nodes", [[{"name": "a", "capacity": 4, "slots": 1e308}],
                                   [{"name": "a", "capacity": 4, "slots": 10**9}]])
def test_worker_slots_are_checked_before_anything_is_built(cli, small, tmp_path, nodes):
    topo, _ = small
    (tmp_path / "c.json").write_text(json.dumps({"name": "c", "nodes": nodes}))
    code, _, err = cli(["schedule", topo, tmp_path / "c.json", "-s", "even"])
    line = _one_line(err)
    assert code == 2 and ("must be at most 1e+12" in line or "worker slots need about 111.8 GiB" in line), line


def test_a_generated_cluster_is_estimated_before_it_is_built(cli, tmp_path):
    code, _, err = cli(["workload", "cluster", "--generator", "imacs", "-o", tmp_path / "c.yaml", "nodes=100000000"])
    assert code == 2 and "100,000,000 nodes with 100,000,000 worker slots need about 104.3 GiB" in _one_line(err)


def test_an_alias_bomb_is_a_short_refusal(cli, small, tmp_path):
    _, cluster = small
    text = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(i)}: &{chr(i)} [{', '.join(['*' + chr(i - 1)] * 9)}]\n" for i in range(ord("b"), ord("j")))
    (tmp_path / "bomb.yaml").write_text(text)
    code, _, err = cli(["schedule", tmp_path / "bomb.yaml", cluster, "-s", "even"])
    line = _one_line(err)
    assert code == 2 and "aliases expand to more than" in line and len(line) < 300


# ---------------------------------------------------------------------- accepted silently before
def test_a_key_given_twice_is_refused(cli, small, tmp_path):
    topo, cluster = small
    (tmp_path / "dup.yaml").write_text(topo.read_text() + "name: other\n")
    code, _, err = cli(["schedule", tmp_path / "dup.yaml", cluster, "-s", "even"])
    assert code == 2 and "duplicate key 'name'" in _one_line(err)


def test_a_task_placed_twice_is_refused(cli, small, tmp_path):
    # a label has one spelling (op[00] is no task), so a task placed twice is a key given twice
    topo, cluster = small
    placement = json.dumps({f"S[{i}]": "n0" for i in range(4)} | {f"B[{i}]": "n1" for i in range(6)})
    (tmp_path / "twice.json").write_text(placement.replace('"S[0]": "n0"', '"S[0]": "n0", "S[0]": "n2"'))
    code, _, err = cli(["evaluate", topo, cluster, tmp_path / "twice.json"])
    assert code == 2 and "S[0]: duplicate key" in _one_line(err)


def test_monitoring_counts_that_sum_beyond_a_double_are_refused(spark):
    rows = spark.createDataFrame([(0, 1, 1.7e308, 1.0, 0.0, 10.0), (0, 1, 1.7e308, 1.0, 10.0, 10.0)],
                                 ["id_src_task", "id_dst_task", "v_tuples", "v_bytes", "ws", "wl"])
    import pandas as pd
    from streamplace.files import SpecError
    from streamplace.workloads.microbench import microbench
    windows = pd.DataFrame({"ws": [0.0, 10.0], "wl": [10.0, 10.0]})
    with pytest.raises(SpecError, match="tuples_per_s: the counts of 1 task.* add up beyond the largest number a double"):
        _rates(rows, windows, TRAFFIC, microbench("linear", 10), None)


def test_a_rate_beyond_a_double_is_refused_where_the_task_graph_is_built(cli, tmp_path):
    # source rates and selectivities each within 10^12, multiplied along 30 operators: 10^372
    chain = [{"name": f"o{i}", "parallelism": 1, "selectivity": 1e12} for i in range(30)]
    chain[0].update(role="source", source_rate=1e12)
    topo = {"name": "chain", "operators": chain,
            "streams": [{"from": f"o{i}", "to": f"o{i + 1}", "grouping": "shuffle"} for i in range(29)]}
    (tmp_path / "t.json").write_text(json.dumps(topo))
    (tmp_path / "c.json").write_text(json.dumps({"name": "c", "nodes": [{"name": f"n{j}", "capacity": 100} for j in range(4)]}))
    code, _, err = cli(["schedule", tmp_path / "t.json", tmp_path / "c.json", "-s", "even", "--format", "json"])
    assert code == 2 and "streams[24]: the tuples rate of o24 -> o25 exceeds the largest number a double holds" in _one_line(err)
    # a rate a double holds, times a sender's tuple_bytes (10^12), is a byte rate that it does not:
    # the model's NICs overflowed (numpy warnings, throughput 0)
    chain[0]["selectivity"] = 1.0   # o24 -> o25 carries 10^12 x (10^12)^24 = 10^300 tuples/s, 10^312 bytes/s
    chain[24]["tuple_bytes"] = 1e12
    topo["operators"], topo["streams"] = chain[:26], topo["streams"][:25]
    (tmp_path / "t.json").write_text(json.dumps(topo))
    code, _, err = cli(["schedule", tmp_path / "t.json", tmp_path / "c.json", "-s", "even", "--format", "json"])
    assert code == 2 and "streams[24]: the bytes rate of o24 -> o25 exceeds the largest number a double holds" in _one_line(err)


def test_a_traffic_change_that_is_not_finite_is_null_with_a_note(cli, tmp_path):
    # every rate finite (the last stream carries 10^308 to each of 4 tasks), their sum is not
    chain = [{"name": f"o{i}", "parallelism": 1, "selectivity": 1e12} for i in range(26)]
    chain[0].update(role="source", source_rate=1e12)
    chain[24]["selectivity"] = 1e8
    chain[24]["tuple_bytes"] = 1   # 10^308 bytes/s: within a double too (a stream's byte rate beyond one is refused)
    chain[25]["parallelism"] = 4
    topo = {"name": "chain", "operators": chain,
            "streams": [{"from": f"o{i}", "to": f"o{i + 1}", "grouping": "all" if i == 24 else "shuffle"} for i in range(25)]}
    (tmp_path / "t.json").write_text(json.dumps(topo))
    (tmp_path / "c.json").write_text(json.dumps({"name": "c", "nodes": [{"name": f"n{j}", "capacity": 100} for j in range(5)]}))
    first = {f"o{i}[0]": "n0" for i in range(25)} | {f"o25[{k}]": "n0" for k in range(4)}
    second = {f"o{i}[0]": "n0" for i in range(25)} | {f"o25[{k}]": f"n{k + 1}" for k in range(4)}
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps(second))
    code, out, _ = cli(["diff", tmp_path / "a.json", tmp_path / "b.json", "--topology", tmp_path / "t.json",
                        "--cluster", tmp_path / "c.json", "--format", "json"])
    record = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))
    assert code == 0 and record["traffic_delta"] is None and record["notes"][0].startswith("traffic_delta:")


@pytest.mark.parametrize("args, where", [
    (["-p", "theta=1e308"], "parameter theta: must be between 0 and 1e+06 seconds"),
    (["-p", "seed=-3"], "parameter seed: must be an integer between 0 and 2147483647"),
    (["-p", "tasks_per_worker=9223372036854775808"], "parameter tasks_per_worker: must be at most 2,147,483,647 in size"),
    (["-s", "metis", "-p", "imbalance=1e20"], "parameter imbalance: must be at most 1,000,000,000,000 in size"),
    (["-s", "metis", "-p", "imbalance=1e7"], "imbalance must be between 1 and 1e+06"),
])
def test_a_scheduler_parameter_out_of_range_is_refused_however_given(cli, small, args, where):
    """The ranges every scheduler shares (a budget, a seed, any number) and METIS' own: its
    tolerance goes to a C int (an internal error before)."""
    topo, cluster = small
    scheduler = [] if "-s" in args else ["-s", "ischeduler"]
    code, _, err = cli(["schedule", topo, cluster, *scheduler, *args])
    assert code == 2 and where in _one_line(err)


def test_a_memory_limit_that_is_not_a_size_is_refused(cli, small, monkeypatch):
    topo, cluster = small
    monkeypatch.setenv("STREAMPLACE_MEMORY_LIMIT", "plenty")
    code, _, err = cli(["schedule", topo, cluster, "-s", "even"])
    assert code == 2 and "STREAMPLACE_MEMORY_LIMIT: expected a size such as 12G, got 'plenty'" in _one_line(err)


def test_an_empty_scheduler_list_is_refused(cli, small):
    topo, cluster = small
    code, _, err = cli(["compare", topo, cluster, "--schedulers", " , "])
    assert code == 2 and "--schedulers: names no scheduler" in _one_line(err)
    code, _, err = cli(["compare", topo, cluster, "--schedulers", "even", "-o", "x.json"])   # a table in a .json file
    assert code == 2 and "-o: x.json is named as JSON but --format is table: give --format json" in _one_line(err)
    code, _, err = cli(["compare", topo, cluster, "--schedulers", "even, metis,even"])   # two identical rows before
    assert code == 2 and "--schedulers: 'even' named twice" in _one_line(err)
    code, _, err = cli(["schedule", topo, cluster, "-s", "lns", "-p", "time_limit=1", "-p", "time_limit=2"])
    assert code == 2 and "--param: 'time_limit' given twice ('1' and '2')" in _one_line(err)


def test_generated_records_are_estimated_before_they_are_made(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMPLACE_MEMORY_LIMIT", "100M")   # 10^6 records x 1,000 B: about 0.9 GiB
    code, _, err = cli(["workload", "app", "--name", "page-view", "--records", "1000000", "-o", tmp_path / "app"])
    assert code == 2 and "--records: 1,000,000 records of page-view need about 0.9 GiB" in _one_line(err)
    assert not (tmp_path / "app").exists()


@pytest.mark.parametrize("option", ["--duration", "--warmup", "--window", "--cpu-budget", "--time-limit"])
def test_storm_runs_numbers_are_finite(cli, small, tmp_path, option):
    topo, cluster = small   # click's FloatRange lets NaN through every bound; these options were of that type
    code, _, err = cli(["storm", "run", topo, cluster, "--scheduler", "even", option, "nan", "-o", tmp_path / "run"])
    assert code == 2 and "is not a finite number" in _one_line(err) and not (tmp_path / "run").exists()

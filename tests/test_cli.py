"""The CLI contract: commands, JSON keys, and one-line errors with exit code 2."""

import json
import subprocess
import sys

import pytest


SCHEDULE_KEYS = {"scheduler", "status", "inter_node_cost", "inter_worker_cost", "lower_bound", "seconds",
                 "nodes_used", "max_utilisation", "placement"}


@pytest.fixture
def files(tmp_path, cli):
    topo, cluster = tmp_path / "t.yaml", tmp_path / "c.json"
    assert cli(["workload", "microbench", "--layout", "star", "--tasks", "12", "-o", str(topo)])[0] == 0
    assert cli(["workload", "cluster", "--preset", "heterogeneous", "-o", str(cluster)])[0] == 0
    return topo, cluster


def test_schedule_json_keys_and_evaluate_agree(files, tmp_path, cli):
    topo, cluster = files
    out_file = tmp_path / "p.json"
    code, out, _ = cli(["schedule", str(topo), str(cluster), "--scheduler", "even", "--format", "json", "-o", str(out_file)])
    assert code == 0
    record = json.loads(out)
    assert SCHEDULE_KEYS <= record.keys()
    assert record["lower_bound"] is None and len(record["placement"]) == 12
    code, out, _ = cli(["evaluate", str(topo), str(cluster), str(out_file), "--format", "json"])
    assert code == 0
    evaluated = json.loads(out)
    assert evaluated["inter_node_cost"] == record["inter_node_cost"]
    assert evaluated["placement"] == record["placement"]


def test_compare_json_and_csv(files, cli):
    topo, cluster = files
    code, out, _ = cli(["compare", str(topo), str(cluster), "--schedulers", "even,optimal", "--time-limit", "5", "--format", "json"])
    assert code == 0
    records = json.loads(out)
    assert [r["scheduler"] for r in records] == ["even", "optimal"]
    assert all(SCHEDULE_KEYS <= r.keys() for r in records)
    assert records[1]["status"] == "optimal" and records[1]["inter_node_cost"] <= records[0]["inter_node_cost"]
    code, out, _ = cli(["compare", str(topo), str(cluster), "--schedulers", "even", "--format", "csv"])
    header = out.splitlines()[0].split(",")
    assert code == 0 and "inter_node_cost" in header and "placement" not in header


BAD_TOPOLOGIES = {
    "unknown_op.yaml": ("name: t\noperators: [{name: a, parallelism: 1}]\nstreams: [{from: a, to: b}]\n",
                        "streams[0].to: unknown operator 'b'"),
    "cycle.yaml": ("name: t\noperators: [{name: a, parallelism: 1}, {name: b, parallelism: 1}]\n"
                   "streams: [{from: a, to: b}, {from: b, to: a}]\n", "streams: cycle a -> b -> a"),
    "zero.json": (json.dumps({"name": "t", "operators": [{"name": "a", "parallelism": 0}]}), "operators[0].parallelism: must be >= 1"),
    "dup.yaml": ("name: t\noperators: [{name: a, parallelism: 1}, {name: a, parallelism: 2}]\n", "operators[1].name: duplicate operator name 'a'"),
    "grouping.yaml": ("name: t\noperators: [{name: a, parallelism: 1}, {name: b, parallelism: 1}]\n"
                      "streams: [{from: a, to: b, grouping: broadcast}]\n", "streams[0].grouping: unknown grouping 'broadcast'"),
    "notnum.yaml": ("name: t\noperators: [{name: a, parallelism: many}]\n", "operators[0].parallelism: must be an integer"),
    "syntax.json": ("{\"name\": ", "invalid JSON at line 1"),
    "empty.yaml": ("", "file is empty"),
    "huge.yaml": ("name: t\noperators: [{name: a, parallelism: 1000000000000}]\n", "operators: the topology has 1,000,000,000,000 tasks"),
}


@pytest.mark.parametrize("name", sorted(BAD_TOPOLOGIES))
def test_bad_topology_one_line_exit_2(name, files, tmp_path, cli):
    text, expected = BAD_TOPOLOGIES[name]
    bad = tmp_path / name
    bad.write_text(text)
    code, out, err = cli(["schedule", str(bad), str(files[1]), "--scheduler", "even"])
    assert code == 2
    assert err.strip() == f"streamplace: {bad}: {expected}" or err.startswith(f"streamplace: {bad}: {expected}")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_cluster_missing_file_and_unknown_scheduler(files, tmp_path, cli):
    topo, _ = files
    bad = tmp_path / "c.yaml"
    bad.write_text("name: c\nnodes: [{name: a, capacity: -3}]\n")
    code, _, err = cli(["schedule", str(topo), str(bad), "-s", "even"])
    assert (code, err.strip()) == (2, f"streamplace: {bad}: nodes[0].capacity: must be >= 0, got -3")
    code, _, err = cli(["schedule", str(topo), str(tmp_path / "nope.yaml"), "-s", "even"])
    assert (code, err.strip()) == (2, f"streamplace: {tmp_path / 'nope.yaml'}: file not found")
    code, _, err = cli(["schedule", str(topo), str(files[1]), "-s", "magic"])
    assert code == 2 and err.startswith("streamplace: unknown scheduler 'magic'")
    code, _, err = cli(["schedule", str(topo), str(files[1]), "-s", "even", "--param", "workers=lots"])
    assert code == 2 and "parameter workers: cannot read 'lots'" in err


def test_bad_placement_file(files, tmp_path, cli):
    topo, cluster = files
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps({"centre[0]": {"node": "mars", "worker": 0}}))
    code, _, err = cli(["evaluate", str(topo), str(cluster), str(bad)])
    assert (code, err.strip()) == (2, f"streamplace: {bad}: centre[0].node: unknown node 'mars'")


def test_console_script_runs_as_a_process(files):
    topo, cluster = files
    proc = subprocess.run([sys.executable, "-m", "streamplace", "schedule", str(topo), str(cluster), "-s", "even", "--format", "json"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scheduler"] == "even"


def test_time_limit_reaches_ischeduler_theta(files, cli):
    topo, cluster = files
    code, out, _ = cli(["schedule", str(topo), str(cluster), "-s", "ischeduler", "--time-limit", "0", "--format", "json"])
    assert code == 0 and json.loads(out)["params"]["theta"] == 0

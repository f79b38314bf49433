import json

import pytest

from streamplace.model.profiling import load_profiling
from streamplace.model.specs import load_cluster, load_topology
from streamplace.workloads import nasiri


@pytest.mark.parametrize("layout, ops, streams", [
    ("linear", ["spout", "bolt1", "bolt2", "bolt3"], {("spout", "bolt1"), ("bolt1", "bolt2"), ("bolt2", "bolt3")}),
    ("diamond", ["spout", "bolt1", "bolt2", "bolt3", "bolt4"],
     {("spout", "bolt1"), ("spout", "bolt2"), ("spout", "bolt3"), ("bolt1", "bolt4"), ("bolt2", "bolt4"), ("bolt3", "bolt4")}),
    ("star", ["spout1", "spout2", "bolt1", "bolt2", "bolt3"],
     {("spout1", "bolt1"), ("spout2", "bolt1"), ("bolt1", "bolt2"), ("bolt1", "bolt3")}),
])
def test_shapes(layout, ops, streams):
    topo = nasiri.topology(layout)
    assert [op.name for op in topo.operators] == ops and topo.n_tasks == len(ops)
    assert {(s.src, s.dst) for s in topo.streams} == streams
    assert all(s.grouping == "shuffle" for s in topo.streams)
    kinds = list(nasiri.operator_types(layout).values())
    assert kinds.count("highCompute") == 1 and kinds.count("midCompute") == 1
    assert set(nasiri.operator_types(layout, "high").values()) == {"highCompute"}


def test_table3_profile_in_seconds_and_table4_clusters():
    prof = nasiri.profiling("linear", preset="nasiri-large", met=2.5)
    assert prof.e_of(prof.row_of("bolt3"), "machine2") == pytest.approx(0.3449e-3)
    assert prof.e_of(prof.row_of("spout"), "machine1") == pytest.approx(0.0581e-3)
    assert prof.met_of("lowCompute", "machine3") == 2.5
    assert [(t.name, t.count) for t in prof.machine_types] == [("machine1", 20), ("machine2", 70), ("machine3", 90)]
    for preset, counts in (("nasiri-small", (2, 2, 2)), ("nasiri-medium", (10, 10, 10)), ("nasiri-large", (20, 70, 90))):
        cluster = nasiri.cluster(preset)
        types = [n.machine_type for n in cluster.nodes]
        assert tuple(types.count(t) for t in nasiri.MACHINE_TYPES) == counts
        assert set(cluster.capacities.tolist()) == {100.0} and set(cluster.slots.tolist()) == {1}
    with pytest.raises(ValueError, match="unknown layout"):
        nasiri.topology("ring")
    with pytest.raises(ValueError, match="unknown cluster preset"):
        nasiri.cluster("nasiri-huge")


def test_cli_refuses_one_file_for_the_topology_and_the_profiling(tmp_path, cli):
    """It wrote the topology, then the profiling over it, and said "wrote" twice."""
    code, _, err = cli(["workload", "nasiri", "--layout", "diamond", "-o", str(tmp_path / "same.yaml"),
                        "--profiling-out", str(tmp_path / "." / "same.yaml")])
    assert code == 2 and "is also -o (the topology): give two files" in err and not (tmp_path / "same.yaml").exists()


def test_cli_writes_workload_and_schedules_with_profiling(tmp_path, cli):
    topo, prof, cluster = tmp_path / "star.yaml", tmp_path / "prof.json", tmp_path / "small.yaml"
    code, _, err = cli(["workload", "nasiri", "--layout", "star", "--compute", "mixed", "-o", str(topo),
                        "--profiling-out", str(prof), "--met", "2"])
    assert code == 0 and "wrote" in err
    assert cli(["workload", "cluster", "--preset", "nasiri-small", "-o", str(cluster)])[0] == 0
    assert load_topology(topo).n_tasks == 5 and load_profiling(prof).met_default == 2.0
    assert [n.machine_type for n in load_cluster(cluster).nodes].count("machine3") == 2
    code, out, _ = cli(["schedule", str(topo), str(cluster), "-s", "throughput", "--profiling", str(prof),
                        "-p", "max_batch=50", "--format", "json"])
    record = json.loads(out)
    assert code == 0 and record["valid"] and record["max_utilisation"] <= 1.0
    assert record["parallelism"] == record["details"]["parallelism"]
    assert len(record["placement"]) == sum(record["parallelism"].values())
    code, out, _ = cli(["schedule", str(topo), str(cluster), "-s", "even", "--format", "json"])
    assert code == 0 and "parallelism" not in json.loads(out)
    code, out, _ = cli(["compare", str(topo), str(cluster), "--schedulers", "even,throughput", "--profiling", str(prof),
                        "--format", "json"])
    records = json.loads(out)
    assert code == 0 and records[1]["status"] == "heuristic" and records[1]["params"]["profiling"] == str(prof)


def test_cli_bad_profiling_is_one_line(tmp_path, cli):
    topo, prof, cluster = tmp_path / "l.yaml", tmp_path / "bad.yaml", tmp_path / "c.yaml"
    cli(["workload", "nasiri", "--layout", "linear", "-o", str(topo)])
    cli(["workload", "cluster", "--preset", "nasiri-small", "-o", str(cluster)])
    prof.write_text("machine_types: [{name: machine1}]\ne: {lowCompute: {machine1: -1}}\n")
    code, _, err = cli(["schedule", str(topo), str(cluster), "-s", "throughput", "--profiling", str(prof)])
    assert code == 2 and err.strip() == f"streamplace: {prof}: e.lowCompute.machine1: must be >= 0, got -1"

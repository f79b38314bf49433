import json

import pytest

from streamplace.model.specs import (SpecError, cluster_from_dict, cluster_to_dict, load_cluster, load_placement,
                                     topology_from_dict,
                                     load_topology, topology_to_dict, write_document)
from streamplace.workloads import microbench


def test_topology_round_trip_yaml_and_json(tmp_path):
    topo = microbench.microbench("diamond", 14)
    for suffix in (".yaml", ".json"):
        path = tmp_path / f"t{suffix}"
        write_document(topology_to_dict(topo), path)
        assert load_topology(path) == topo


def test_cluster_groups_expand_in_order(tmp_path):
    c = cluster_from_dict({"name": "c", "groups": [{"capacity": 6, "count": 2, "slots": 3}, {"capacity": 2, "count": 1}]})
    assert [n.name for n in c.nodes] == ["node00", "node01", "node02"]
    assert c.capacities.tolist() == [6, 6, 2] and c.slots.tolist() == [3, 3, 4]
    path = tmp_path / "c.json"
    write_document(cluster_to_dict(c), path)
    assert load_cluster(path) == c


def test_placement_accepts_schedule_output_and_rejects_missing_tasks(tmp_path):
    topo = microbench.microbench("linear", 4)
    c = microbench.cluster("homogeneous")
    mapping = {lab: {"node": "node01", "worker": 0} for lab in topo.task_labels}
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"scheduler": "x", "placement": mapping}))
    assert load_placement(path, topo, c).node.tolist() == [1, 1, 1, 1]
    del mapping["op01[1]"]
    path.write_text(json.dumps(mapping))
    with pytest.raises(SpecError, match="1 task\\(s\\) not placed, first op01\\[1\\]"):
        load_placement(path, topo, c)


@pytest.mark.parametrize("doc, message", [
    ({"scheduler": "x", "status": "infeasible", "placement": None},
     "placement: must map task labels op[i] to {node, worker}, got None (the result's status: 'infeasible')"),
    ({"scheduler": "x", "status": "heuristic", "seconds": 0.1}, "placement: missing: a result of status 'heuristic'"),
    ({"name": "t", "operators": [], "streams": []}, "a topology spec, not a placement"),
])
def test_a_document_that_holds_no_placement_says_so(tmp_path, doc, message):
    """These were read as label maps: 'seconds: must be a mapping, got float'."""
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SpecError) as err:
        load_placement(path, microbench.microbench("linear", 4), microbench.cluster("homogeneous"))
    assert str(err.value) == f"{path}: {message}" or str(err.value).startswith(f"{path}: {message}")


@pytest.mark.parametrize("doc, field, fragment", [
    ({"name": "c", "nodes": [{"name": "a", "capacity": -1}]}, "nodes[0].capacity", ">= 0"),
    ({"name": "c", "nodes": [{"name": "a", "capacity": 1}, {"name": "a", "capacity": 1}]}, "nodes[1].name", "duplicate"),
    ({"name": "c", "nodes": [{"name": "a"}]}, "nodes[0].capacity", "missing required"),
    ({"name": "c", "nodes": [{"name": "a", "capacity": 1, "cpus": 2}]}, "nodes[0].cpus", "unknown field"),
    ({"name": "c", "groups": [{"capacity": 1, "count": 2_000_000}]}, "groups", "limit"),
    ({"name": "c"}, "", "exactly one of nodes or groups"),
])
def test_cluster_errors(doc, field, fragment):
    with pytest.raises(SpecError) as err:
        cluster_from_dict(doc, "c.yaml")
    assert err.value.field_path == field and fragment in err.value.problem
    assert str(err.value).startswith("c.yaml: ")


SHIFT = {"name": "shift",
         "operators": [{"name": "spout", "parallelism": 2, "source_rate": 1000, "tuple_bytes": 50},
                       {"name": "count", "parallelism": 4, "cpu_per_tuple": 1e-4}],
         "streams": [{"from": "spout", "to": "count", "grouping": "fields", "key": "k"}],
         "phases": [{"at": 60, "streams": [{"from": "spout", "to": "count", "key_distribution": "zipf", "zipf_s": 1.5}]},
                    {"at": 120, "operators": [{"name": "spout", "source_rate": 3000},
                                              {"name": "count", "cpu_per_tuple": 2e-4}]}]}


def test_a_topology_at_a_moment_has_every_phase_begun_by_then(tmp_path):
    topo = topology_from_dict(SHIFT)
    assert [ph.at for ph in topo.phases] == [60.0, 120.0]
    first, zipf, busy = topo.at(0), topo.at(60), topo.at(1e6)
    assert first == topo.without_phases() and first.streams[0].key_distribution == "uniform"
    assert (zipf.streams[0].key_distribution, zipf.streams[0].zipf_s) == ("zipf", 1.5)
    assert zipf.operators[0].source_rate == 1000
    assert busy.streams[0].key_distribution == "zipf"           # an earlier phase's change stays
    assert (busy.operators[0].source_rate, busy.operators[1].cpu_per_tuple) == (3000, 2e-4)
    assert busy.operators[0].tuple_bytes == 50 and not busy.phases
    path = tmp_path / "shift.yaml"
    write_document(topology_to_dict(topo), path)
    assert load_topology(path) == topo


def _with_phases(phases):
    return {**SHIFT, "phases": phases}


@pytest.mark.parametrize("phases, field, fragment", [
    ("soon", "phases", "must be a list"),
    ([{"operators": []}], "phases[0].at", "missing required field"),
    ([{"at": 0, "operators": [{"name": "spout", "source_rate": 1}]}], "phases[0].at", "> 0"),
    ([{"at": 60, "operators": [{"name": "spout", "source_rate": 1}]},
      {"at": 60, "operators": [{"name": "spout", "source_rate": 2}]}], "phases[1].at", "> 60"),
    ([{"at": 5, "operators": [{"name": "spot", "source_rate": 1}]}], "phases[0].operators", "unknown operator 'spot'"),
    ([{"at": 5, "operators": [{"name": "spout", "parallelism": 3}]}], "phases[0].operators[0].parallelism",
     "unknown field"),
    ([{"at": 5, "operators": [{"name": "spout"}]}], "phases[0].operators[0]", "changes nothing"),
    ([{"at": 5, "operators": [{"name": "spout", "source_rate": 1}, {"name": "spout", "tuple_bytes": 1}]}],
     "phases[0].operators[1]", "named twice"),
    ([{"at": 5, "operators": [{"name": "count", "cpu_per_tuple": {"m1": 1e-4}}]}],
     "phases[0].operators[0].cpu_per_tuple", "must be a number"),
    ([{"at": 5, "streams": [{"from": "count", "to": "spout", "zipf_s": 2}]}], "phases[0].streams",
     "no stream 'count' -> 'spout'"),
    ([{"at": 5, "streams": [{"from": "spout", "to": "count", "grouping": "all"}]}], "phases[0].streams[0].grouping",
     "unknown field"),
    ([{"at": 5, "streams": [{"from": "spout", "to": "count", "key_distribution": "zipff"}]}], "phases[0]",
     "leaves streams[0].key_distribution: unknown distribution"),
    ([{"at": 5, "streams": [{"from": "spout", "to": "count", "num_keys": 0}]}], "phases[0]",
     "leaves streams[0].num_keys: must be >= 1"),
])
def test_bad_phases_are_refused_naming_the_field(phases, field, fragment):
    with pytest.raises(SpecError) as err:
        topology_from_dict(_with_phases(phases), "t.yaml")
    assert err.value.field_path == field and fragment in str(err.value)

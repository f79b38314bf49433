import json

import pytest

from streamplace.model.specs import (SpecError, cluster_from_dict, cluster_to_dict, load_cluster, load_placement,
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

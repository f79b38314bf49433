import numpy as np

from streamplace.model import Cluster, Node, Placement


def cluster():
    return Cluster.build("c", [Node("n0", 2, slots=2), Node("n1", 1, slots=1)])


def test_valid_placement_has_no_violations():
    p = Placement(node=[0, 0, 1], worker=[0, 1, 0])
    assert p.violations(np.ones(3), cluster()) == []
    assert p.workers_used(cluster()).tolist() == [2, 1]


def test_capacity_overload_is_reported_not_structural():
    p = Placement(node=[0, 0, 0], worker=[0, 0, 1])
    assert p.structural_errors(3, cluster()) == []
    assert p.overloaded_nodes(np.ones(3), cluster()).tolist() == [0]
    assert "n0 holds load 3 > capacity 2" in p.violations(np.ones(3), cluster())[0]


def test_structural_errors():
    c = cluster()
    assert "covers 2 tasks" in Placement(node=[0, 1], worker=[0, 0]).structural_errors(3, c)[0]
    assert "node index 5" in Placement(node=[0, 5, 1], worker=[0, 0, 0]).structural_errors(3, c)[0]
    assert "worker 1 of node n1" in Placement(node=[0, 0, 1], worker=[0, 0, 1]).structural_errors(3, c)[0]


def test_placement_is_immutable_and_maps_labels():
    p = Placement(node=[0, 1], worker=[1, 0])
    assert not p.node.flags.writeable
    assert p.to_mapping(["a[0]", "a[1]"], cluster()) == {"a[0]": {"node": "n0", "worker": 1}, "a[1]": {"node": "n1", "worker": 0}}

"""Resources beside task units: CPU cores and memory, stated in the specs or measured, checked everywhere."""

import dataclasses

import numpy as np
import pytest

from streamplace.evaluate.metrics import summary
from streamplace.model import Cluster, Operator, Placement, Problem, Stream, Topology
from streamplace.model.cluster import Node
from streamplace.model.specs import SpecError, cluster_from_dict, topology_from_dict


def problem(ops, nodes):
    topo = Topology.build("t", ops, [Stream(a.name, b.name) for a, b in zip(ops, ops[1:])])
    return Problem.from_topology(topo, Cluster.build("c", nodes))


def on(*nodes):
    return Placement(node=list(nodes), worker=[0] * len(nodes))


def test_a_job_that_states_nothing_more_is_the_papers_problem():
    p = problem([Operator("s", 2), Operator("b", 2)], [Node("a", 2), Node("b", 2)])
    assert p.resources.names == ("load",) and p.resources.extra is None
    crowded = on(0, 0, 0, 1)
    assert p.violations(crowded) == crowded.violations(p.loads, p.cluster) == ["node a holds load 3 > capacity 2"]
    assert p.infeasibility() is None


def test_cpu_and_memory_are_checked_in_their_units():
    p = problem([Operator("s", 2, cpu_demand=1.5, memory_mb=512), Operator("b", 2, cpu_demand=0.5, memory_mb=512)],
                [Node("a", 4, cores=2, memory_mb=1024), Node("b", 4, cores=4)])   # b states no memory: unlimited
    res = p.resources
    assert res.names == ("load", "cpu", "memory") and res.units == ("task units", "cores", "MB")
    assert res.need[:, 1].tolist() == [1.5, 1.5, 0.5, 0.5] and np.isinf(res.limit[1, 2])
    placement = on(0, 0, 1, 1)   # a: 3 cores of 2, 1024 MB of 1024
    assert p.violations(placement) == ["node a needs 3 cores of cpu > 2 cores"]
    assert p.overloaded(placement).tolist() == [0]
    record = summary(p, placement)
    assert record["overloaded_nodes"] == ["a"] and record["max_utilisation"] == pytest.approx(1.5)   # 3 / 2 cores
    assert p.violations(on(0, 1, 1, 1)) == [] and summary(p, on(0, 1, 1, 1))["max_utilisation"] == pytest.approx(0.75)


def test_infeasibility_names_the_resource():
    big = problem([Operator("s", 1, cpu_demand=3)], [Node("a", 4, cores=2), Node("b", 4, cores=2)])
    assert big.infeasibility() == "task s[0] needs 3 cores of cpu, more than the largest node offers (2 cores)"
    many = problem([Operator("s", 3, memory_mb=600)], [Node("a", 4, memory_mb=1000), Node("b", 4, memory_mb=700)])
    assert many.infeasibility() == "the tasks need 1800 MB of memory in total, the cluster offers 1700 MB"


def test_a_resource_that_cannot_run_short_is_not_binding():
    # two task units per node, 100 MB per task: 200 MB <= 1024 MB everywhere
    p = problem([Operator("s", 4, memory_mb=100)], [Node("a", 2, memory_mb=1024), Node("b", 2, memory_mb=1024)])
    assert p.resources.names == ("load", "memory") and p.resources.binding.tolist() == [0] and p.resources.extra is None
    tight = problem([Operator("s", 4, memory_mb=600)], [Node("a", 2, memory_mb=1024), Node("b", 2, memory_mb=2048)])
    need, limit = tight.resources.extra
    assert tight.resources.binding.tolist() == [0, 1] and need[:, 0].tolist() == [600] * 4 and limit[:, 0].tolist() == [1024, 2048]


def test_measured_cpu_replaces_the_stated_one():
    p = problem([Operator("s", 2, cpu_demand=0.1)], [Node("a", 2, cores=1), Node("b", 2, cores=1)])
    assert p.violations(on(0, 0)) == []
    measured = Problem.from_topology(p.topology, p.cluster, graph=dataclasses.replace(p.graph, cpu=np.array([0.7, 0.6])))
    assert measured.violations(on(0, 0)) == ["node a needs 1.3 cores of cpu > 1 cores"]
    assert measured.violations(on(0, 1)) == []


def test_specs_take_cores_or_storms_percent():
    topo = topology_from_dict({"operators": [{"name": "s", "parallelism": 2, "cpu_percent": 50, "memory_mb": 256}]})
    assert topo.operators[0].cpu_demand == 0.5
    cluster = cluster_from_dict({"nodes": [{"name": "a", "capacity": 4, "cpu_percent": 400, "memory_mb": 4096}],
                                 "name": "c"})
    assert cluster.nodes[0].cores == 4.0
    grouped = cluster_from_dict({"groups": [{"capacity": 4, "count": 2, "cpu_percent": 200}]})
    assert [n.cores for n in grouped.nodes] == [2.0, 2.0]
    with pytest.raises(SpecError, match=r"c.yaml: nodes\[0\].cpu_percent: give cores or cpu_percent \(Storm's percent of a core\), not both"):
        cluster_from_dict({"nodes": [{"name": "a", "capacity": 4, "cores": 4, "cpu_percent": 400}]}, "c.yaml")
    with pytest.raises(SpecError, match=r"operators\[0\].cpu_percent: give cpu_demand \(cores\) or cpu_percent"):
        topology_from_dict({"operators": [{"name": "s", "parallelism": 1, "cpu_demand": 1, "cpu_percent": 100}]})
    with pytest.raises(SpecError, match=r"operators\[0\].cpu_percent: must be"):
        topology_from_dict({"operators": [{"name": "s", "parallelism": 1, "cpu_percent": "lots"}]})

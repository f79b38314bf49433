import numpy as np
import pytest

from streamplace.evaluate.metrics import inter_node_cost
from streamplace.model import Problem
from streamplace.schedulers import make_scheduler
from streamplace.workloads import fischer


def _edges(topo):
    u, v, _ = Problem.from_topology(topo, fischer.cluster(2)).graph.directed
    return [(topo.task_labels[a], topo.task_labels[b]) for a, b in zip(u.tolist(), v.tolist())]


@pytest.mark.parametrize("p", [2, 10, 13])
def test_parallel_is_p_straight_lines_through_one_bolt_instance(p):
    topo = fischer.parallel(p)
    assert topo.n_tasks == p * (fischer.DEPTH + 1)
    edges = _edges(topo)
    assert len(edges) == p * fischer.DEPTH
    out_deg = {}
    for a, b in edges:
        out_deg[a] = out_deg.get(a, 0) + 1
        src, dst = a.split("[")[0], b.split("[")[0]
        if src.startswith("bolt"):  # the key keeps its instance index from bolt to bolt
            j, i = src[4:].split("-")
            assert dst == f"bolt{int(j) + 1}-{i}"
    assert set(out_deg.values()) == {1}
    first_hop = sorted(b for a, b in edges if a.startswith("spout"))
    assert first_hop == sorted(f"bolt1-{i:0{len(str(p - 1))}d}[0]" for i in range(p))  # a permutation


def test_payload_differs_from_parallel_only_in_tuple_size():
    par, pay = fischer.parallel(10), fischer.payload(10)
    assert [op.tuple_bytes for op in pay.operators] == [3072.0] * len(pay.operators)
    assert {op.tuple_bytes for op in par.operators} == {16.0}
    assert [s.dst for s in par.streams] == [s.dst for s in pay.streams]


def test_even_keeps_each_line_together_except_the_spout_hop():
    """Storm's round robin deals bolt instance i of every stage to slot i, so only spout -> bolt1 crosses
    nodes, and only where the key hashes to another instance than the spout's index."""
    p = 10
    problem = Problem.from_topology(fischer.parallel(p), fischer.cluster(p))
    line = np.random.default_rng(0).permutation(p)
    placement = make_scheduler("even").schedule(problem).placement
    assert inter_node_cost(problem, placement) == pytest.approx(fischer.SPOUT_RATE * np.count_nonzero(line != np.arange(p)))


def test_reference_is_a_complete_bipartite_chain_with_alternating_groupings():
    topo = fischer.reference(10)
    assert [op.name for op in topo.operators] == ["spout", "bolt1", "bolt2", "bolt3", "bolt4", "bolt5", "bolt6", "ackbolt"]
    assert {op.parallelism for op in topo.operators} == {10}
    assert [s.grouping for s in topo.streams] == ["fields", "shuffle"] * 3 + ["fields"]
    assert len(_edges(topo)) == 7 * 10 * 10


def test_opengov_shape_and_parallelism():
    topo = fischer.opengov(11)
    par = {op.name: op.parallelism for op in topo.operators}
    assert par == {"T": 6, "C": 5, "A": 11, "B": 11, "F": 11, "J": 11, "O": 1}
    assert {(s.src, s.dst, s.grouping) for s in topo.streams} == {
        ("T", "A", "fields"), ("A", "B", "fields"), ("B", "F", "shuffle"), ("F", "J", "fields"), ("C", "J", "fields"),
        ("J", "O", "global")}
    assert fischer.spout_rate(topo) == 11 * fischer.SPOUT_RATE
    assert all(50 <= op.tuple_bytes <= 110 for op in topo.operators if op.name != "O")


def test_cluster_rows_and_capacity():
    c = fischer.cluster(20)
    assert c.n_nodes == 20 and set(c.slots.tolist()) == {1} and set(c.capacities.tolist()) == {fischer.CAPACITY}
    assert [n.rack for n in c.nodes].count("row0") == 8 and c.nodes[-1].rack == "row2"
    assert {n.cores for n in c.nodes} == {4}


def test_instances_fit_and_errors():
    insts = list(fischer.instances())
    assert len(insts) == 32
    assert all(i.problem.loads.sum() <= i.problem.cluster.capacities.sum() for i in insts)
    with pytest.raises(ValueError, match="unknown"):
        fischer.topology("nope", 10)
    with pytest.raises(ValueError, match=">= 2"):
        fischer.parallel(1)

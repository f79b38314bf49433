import numpy as np
import pytest

from streamplace.workloads.synthetic import MACHINE_CLASSES, synthetic_cluster, synthetic_problem, synthetic_topology


def test_same_seed_same_workload_other_seed_other_workload():
    a = synthetic_problem(3000, 30, seed=7)
    b = synthetic_problem(3000, 30, seed=7)
    c = synthetic_problem(3000, 30, seed=8)
    assert a.topology == b.topology and a.cluster == b.cluster
    assert np.array_equal(a.graph.loads, b.graph.loads)
    assert (a.graph.rates != b.graph.rates).nnz == 0
    assert a.graph.rates.shape != c.graph.rates.shape or (a.graph.rates != c.graph.rates).nnz > 0


@pytest.mark.parametrize("n", [4, 57, 10_000])
def test_exact_task_count_and_linear_edge_count(n):
    topo, graph = synthetic_topology(n, seed=1, fanout=3)
    assert topo.n_tasks == graph.n == n
    # every stream has max(pa, pb) aligned pairs times fan-out <= 3, and an operator has at
    # most two outgoing streams, so the directed edges are at most 2 * 3 * (tasks)
    assert n - 1 <= graph.rates.nnz <= 6 * n
    assert np.all(graph.rates.data > 0)


def test_task_graph_is_a_dag_following_declared_streams():
    topo, graph = synthetic_topology(20_000, seed=3)
    u, v, _ = graph.directed
    assert np.all(u < v)  # ids grow along every edge: no cycle possible
    op = topo.operator_of_task
    declared = {(topo.index[s.src], topo.index[s.dst]) for s in topo.streams}
    assert set(zip(op[u].tolist(), op[v].tolist())) == declared
    assert {s.grouping for s in topo.streams} == {"local_or_shuffle", "fields"}


def test_every_task_takes_part_and_rates_flow():
    topo, graph = synthetic_topology(5000, seed=2)
    deg = np.diff(graph.weights.indptr)
    assert np.all(deg > 0)
    sources = [topo.tasks_of(op.name) for op in topo.operators if op.role == "source"]
    assert sources and all(graph.meta["in_rate"][r.start:r.stop].min() > 0 for r in sources)
    assert graph.loads.min() >= 0.2 and graph.loads.max() <= 4.0


def test_local_grouping_keeps_fanout_bounded():
    topo, graph = synthetic_topology(10_000, seed=4, jobs=1, fanout=2)
    out_degree = np.diff(graph.rates.indptr)
    par = np.array([op.parallelism for op in topo.operators])
    # a sender talks to at most ceil(pb / pa) * fanout receivers per stream, two streams at most
    worst = 2 * 2 * int(np.ceil(par[1:].max() / par[:-1].min()))
    assert out_degree.max() <= worst


def test_cluster_capacity_classes_and_slack():
    c = synthetic_cluster(1000, 5000.0, seed=5, slack=0.25, min_capacity=3.0)
    caps = c.capacities
    assert c.n_nodes == 1000
    assert 5000 * 1.25 <= caps.sum() <= 5000 * 1.25 + 1000 * 0.01 + 1e-6
    assert {n.machine_type for n in c.nodes} == {m.name for m in MACHINE_CLASSES}
    ratios = np.unique(np.round(caps / caps.min()))
    assert set(ratios.tolist()) <= {1.0, 2.0, 4.0, 8.0} and len(ratios) == 4
    tiny = synthetic_cluster(3, 1.0, seed=0, min_capacity=10.0)
    assert tiny.capacities.max() >= 10.0


def test_problem_is_feasible_with_slack():
    p = synthetic_problem(8000, 80, seed=9, slack=0.1)
    assert p.infeasibility() is None
    assert p.cluster.capacities.sum() >= 1.1 * p.loads.sum() - 1e-9


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="n_tasks"):
        synthetic_topology(3)
    with pytest.raises(ValueError, match="jobs"):
        synthetic_topology(40, jobs=11)
    with pytest.raises(ValueError, match="n_nodes"):
        synthetic_cluster(0, 10.0)

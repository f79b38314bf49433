import numpy as np
import pytest

from streamplace.model import Operator, Stream, Topology, TopologyError, build_task_graph
from streamplace.model.graph import MAX_EDGES, TaskGraph, key_shares


def test_flow_rates_through_shuffle_selectivity_global_and_all():
    # source emits 12 tuples/s over 3 tasks (4 each); shuffle to b (2 tasks): 2 per pair;
    # b doubles (selectivity 2): each b task gets 6, emits 12; global to c[0]: 12 per b task;
    # b -all-> d (2 tasks): every b task sends 12 to each d task.
    t = Topology.build("t", [Operator("a", 3, source_rate=12.0), Operator("b", 2, selectivity=2.0),
                             Operator("c", 2), Operator("d", 2)],
                       [Stream("a", "b"), Stream("b", "c", grouping="global"), Stream("b", "d", grouping="all")])
    g = build_task_graph(t)
    r = g.rates.toarray()
    assert np.allclose(r[0:3, 3:5], 2.0)
    assert np.allclose(r[3:5, 5], 12.0) and np.allclose(r[3:5, 6], 0.0)
    assert np.allclose(r[3:5, 7:9], 12.0)
    assert np.allclose(g.meta["in_rate"], [4, 4, 4, 6, 6, 24, 0, 24, 24])
    w = g.weights.toarray()
    assert np.allclose(w, w.T) and np.allclose(w, r + r.T)


def test_bytes_weight_multiplies_by_sender_tuple_size():
    t = Topology.build("t", [Operator("a", 1, tuple_bytes=50.0), Operator("b", 1)], [Stream("a", "b")])
    assert build_task_graph(t, weight="bytes").rates[0, 1] == pytest.approx(50.0)


def test_pair_rate_overrides_flow():
    t = Topology.build("t", [Operator("a", 2), Operator("b", 3)], [Stream("a", "b", pair_rate=1.0)])
    g = build_task_graph(t)
    assert g.rates.nnz == 6 and np.allclose(g.rates.data, 1.0)
    assert g.total_weight == 6.0


def test_fields_zipf_shares_are_skewed_and_sum_to_one():
    s = Stream("a", "b", grouping="fields", key="k", key_distribution="zipf", zipf_s=1.2, num_keys=500)
    shares = key_shares(s, 4)
    assert shares.sum() == pytest.approx(1.0)
    assert shares.max() > 0.3  # top key ~26 % alone, plus its hash-mates
    assert np.array_equal(shares, key_shares(s, 4))  # stable: no per-process hash seed


def test_from_edges_sums_parallel_edges_and_drops_self_loops():
    g = TaskGraph.from_edges(3, [0, 0, 1, 2], [1, 1, 1, 0], [1.0, 2.0, 5.0, 4.0], np.ones(3))
    assert g.rates[0, 1] == 3.0 and g.rates[1, 1] == 0.0
    u, v, w = g.edges
    assert list(zip(u.tolist(), v.tolist(), w.tolist())) == [(0, 1, 3.0), (0, 2, 4.0)]


def test_too_many_edges_refused_before_allocation():
    big = int(np.sqrt(MAX_EDGES)) + 10
    t = Topology.build("t", [Operator("a", big), Operator("b", big)], [Stream("a", "b")])
    with pytest.raises(TopologyError, match="task edges"):
        build_task_graph(t)

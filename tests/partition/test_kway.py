import numpy as np
import scipy.sparse as sp

from streamplace.partition import kway_partition


def two_cliques(k=4, bridge=0.0):
    """Two k-cliques joined by one edge of weight ``bridge``."""
    w = np.zeros((2 * k, 2 * k))
    w[:k, :k] = w[k:, k:] = 5.0
    np.fill_diagonal(w, 0)
    w[0, k] = w[k, 0] = bridge
    return sp.csr_matrix(w)


def test_finds_the_obvious_cut_with_either_objective():
    for objective in ("cut", "volume"):
        parts = kway_partition(two_cliques(bridge=1.0), np.ones(8), 2, objective=objective, seed=3)
        assert len(set(parts[:4])) == 1 and len(set(parts[4:])) == 1 and parts[0] != parts[4]


def test_edge_cases_k1_k_ge_n_disconnected_zero_weight():
    g = two_cliques(bridge=0.0)  # disconnected; the zero bridge is dropped
    assert kway_partition(g, np.ones(8), 1).tolist() == [0] * 8
    parts = kway_partition(g, np.ones(8), 10)
    assert len(set(parts.tolist())) == 8
    parts = kway_partition(g, np.ones(8), 2, seed=1)
    assert sorted(np.bincount(parts).tolist()) == [4, 4]
    empty = sp.csr_matrix((6, 6))
    parts = kway_partition(empty, np.array([3, 1, 1, 1, 2, 2.0]), 2)
    assert sorted(np.bincount(parts, weights=[3, 1, 1, 1, 2, 2]).tolist()) == [5, 5]


def test_target_weights_follow_capacities():
    rng = np.random.default_rng(0)
    a = sp.random(60, 60, density=0.1, random_state=1)
    g = (a + a.T).tocsr()
    parts = kway_partition(g, np.ones(60), 3, targets=[6, 3, 1], imbalance=1.03, seed=rng.integers(100))
    sizes = np.bincount(parts, minlength=3)
    assert sizes[0] > sizes[1] > sizes[2]
    assert abs(sizes[0] - 36) <= 3 and abs(sizes[2] - 6) <= 3

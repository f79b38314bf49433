"""The exact solver (streamplace.exact) against an independent brute force, its formulations and
the published optima."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamplace.exact import ExactSolution, Formulation, cut_weight, solve_min_inter_node
from streamplace.exact.classes import interchangeable_classes

# ---------------------------------------------------------------------------------------------
# independent reference: enumerate all m^n assignments
# ---------------------------------------------------------------------------------------------


def brute_force(W, loads, caps):
    """Minimum inter-node cost over all feasible assignments, or None if none is feasible
    (``loads`` n or n x R and ``caps`` m or m x R: every resource must fit)."""
    W, loads, caps = np.asarray(W, float), np.asarray(loads, float), np.asarray(caps, float)
    n, m = len(loads), len(caps)
    loads, caps = loads.reshape(n, -1), caps.reshape(m, -1)
    best = None
    for assign in itertools.product(range(m), repeat=n):
        used = np.zeros(caps.shape)
        for t, j in enumerate(assign):
            used[j] += loads[t]
        if (used > caps).any():
            continue
        cost = sum(W[u, v] for u in range(n) for v in range(u + 1, n) if assign[u] != assign[v])
        if best is None or cost < best:
            best = cost
    return best


def check_solution(sol: ExactSolution, W, loads, caps, expected):
    if expected is None:
        assert sol.status == "infeasible", sol
        assert sol.node_of_task is None
        return
    assert sol.status == "optimal", sol
    x = np.asarray(sol.node_of_task)
    assert x.shape == (len(loads),)
    assert x.min() >= 0 and x.max() < len(caps)
    used = np.zeros(np.shape(caps))
    np.add.at(used, x, np.asarray(loads, float))
    assert np.all(used <= np.asarray(caps, float) + 1e-12), (used, caps)
    # the objective, recomputed here without the module's helper
    n = len(loads)
    recomputed = sum(W[u][v] for u in range(n) for v in range(u + 1, n) if x[u] != x[v])
    assert recomputed == pytest.approx(sol.objective, abs=1e-9)
    assert sol.objective == pytest.approx(expected, abs=1e-9)
    assert sol.lower_bound is not None and sol.lower_bound <= sol.objective + 1e-12
    assert sol.lower_bound == pytest.approx(sol.objective, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# uniform micro-benchmark builders ([I] Sec. 5)
# ---------------------------------------------------------------------------------------------


def operator_graph(op_sizes, op_edges, weight=1):
    """Tasks of operators; every task pair of two connected operators has the given weight."""
    start = np.cumsum([0] + list(op_sizes))
    n = int(start[-1])
    W = np.zeros((n, n))
    for a, b in op_edges:
        for u in range(start[a], start[a + 1]):
            for v in range(start[b], start[b + 1]):
                W[u, v] = W[v, u] = weight
    ops = np.repeat(np.arange(len(op_sizes)), op_sizes)
    return W, ops


def micro(layout, N):
    if layout == "linear":
        k = N // 2
        return operator_graph([2] * k, [(i, i + 1) for i in range(k - 1)])
    if layout == "diamond":
        k = (N - 8) // 2  # source 0, middles 1..k, sink k+1
        return operator_graph([4] + [2] * k + [4], [(0, i) for i in range(1, k + 1)] + [(i, k + 1) for i in range(1, k + 1)])
    if layout == "star":
        k = (N - 4) // 2  # middle 0, leaves 1..k (alternately sources and sinks)
        return operator_graph([4] + [2] * k, [(i, 0) if i % 2 else (0, i) for i in range(1, k + 1)])
    raise ValueError(layout)


HETEROGENEOUS = [6, 6, 6, 4, 4, 4, 2, 2, 2, 2]
HOMOGENEOUS = [4] * 10


# ---------------------------------------------------------------------------------------------
# small fixed cases
# ---------------------------------------------------------------------------------------------


def test_three_operator_chain_on_three_nodes_of_two():
    W, ops = operator_graph([2, 2, 2], [(0, 1), (1, 2)])
    loads, caps = np.ones(6), [2, 2, 2]
    expected = brute_force(W, loads, caps)
    assert expected == 6  # each node keeps one pair; best is 8 - 2
    for groups in (None, ops):
        sol = solve_min_inter_node(W, loads, caps, groups=groups, time_limit=5)
        check_solution(sol, W, loads, caps, expected)


@pytest.mark.parametrize(
    "layout,N,caps",
    [
        ("linear", 6, [4, 2, 2]),
        ("linear", 8, [4, 4]),
        ("diamond", 10, [6, 4, 2]),  # 10 tasks on 3 nodes: 3^10 assignments
        ("star", 8, [4, 2, 2, 2]),
        ("star", 10, [6, 4]),
    ],
)
def test_small_micro_benchmarks_match_brute_force(layout, N, caps):
    W, ops = micro(layout, N)
    loads = np.ones(N)
    expected = brute_force(W, loads, caps)
    sol = solve_min_inter_node(W, loads, caps, groups=ops, time_limit=5)
    check_solution(sol, W, loads, caps, expected)


def test_classes_of_micro_benchmarks():
    W, ops = micro("diamond", 14)  # source, 3 middles, sink
    cls = interchangeable_classes(W, np.ones(14), ops)
    assert len(set(cls)) == 5  # the operators themselves
    merged = interchangeable_classes(W, np.ones(14), ops, merge=True)
    assert len(set(merged)) == 2  # {source, sink} and {all middles} are twins
    W, ops = micro("linear", 8)
    assert len(set(interchangeable_classes(W, np.ones(8), ops, merge=True))) == 4


def test_infeasible_inputs():
    W = np.zeros((3, 3))
    assert solve_min_inter_node(W, [1, 1, 1], [1, 1]).status == "infeasible"  # total load
    assert solve_min_inter_node(W, [3, 1, 1], [2, 2, 2]).status == "infeasible"  # one task too big
    # bin-packing infeasible although total and max loads fit: 2+2+2 into 3+3
    sol = solve_min_inter_node(W, [2, 2, 2], [3, 3], time_limit=5)
    assert sol.status == "infeasible" and sol.node_of_task is None


def test_empty_and_trivial():
    sol = solve_min_inter_node(np.zeros((0, 0)), [], [4])
    assert sol.status == "optimal" and sol.objective == 0 and len(sol.node_of_task) == 0
    sol = solve_min_inter_node(np.zeros((1, 1)), [1], [1])
    assert sol.status == "optimal" and sol.objective == 0 and list(sol.node_of_task) == [0]


def test_a_placement_of_cost_zero_is_optimal_when_time_runs_out_before_any_bound():
    """Costs are >= 0, so the greedy start that puts all three tasks on one node (cost 0) is
    optimal even when the search stops before its first bound (a CI run of 2026-11-30 called it
    "feasible": a hypothesis example under load); a cost above 0 stays "feasible" then."""
    W = np.array([[0., 1., 4.], [1., 0., 3.], [4., 3., 0.]])
    sol = solve_min_inter_node(W, [2, 1, 2], [7, 7], time_limit=1e-9)
    assert sol.status == "optimal" and sol.objective == 0 == sol.lower_bound
    sol = solve_min_inter_node(W, [2, 1, 2], [3, 3, 3], time_limit=1e-9)
    assert sol.objective > 0 and sol.status == "feasible" and sol.lower_bound < sol.objective


def test_decimal_weights_and_loads():
    rng = np.random.default_rng(3)
    n = 6
    W = np.triu(rng.integers(0, 8, (n, n)) * 0.25, 1)
    W = W + W.T
    loads = rng.integers(1, 4, n) * 0.5
    caps = [2.0, 1.5, 1.5]
    expected = brute_force(W, loads, caps)
    sol = solve_min_inter_node(W, loads, caps, time_limit=5)
    check_solution(sol, W, loads, caps, expected)


def test_hint_is_used_and_bad_hint_ignored():
    W, ops = micro("linear", 8)
    loads, caps = np.ones(8), [4, 4, 2]
    expected = brute_force(W, loads, caps)
    good = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    bad = np.zeros(8, dtype=int)  # overloads node 0
    for hint in (good, bad):
        sol = solve_min_inter_node(W, loads, caps, groups=ops, hint=hint, time_limit=5)
        check_solution(sol, W, loads, caps, expected)


# ---------------------------------------------------------------------------------------------
# random non-uniform instances (Hypothesis)
# ---------------------------------------------------------------------------------------------


@st.composite
def random_instance(draw):
    n = draw(st.integers(1, 7))
    m = draw(st.integers(1, 3))
    loads = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    W = np.zeros((n, n))
    for u in range(n):
        for v in range(u + 1, n):
            w = draw(st.one_of(st.just(0), st.integers(0, 5)))  # plenty of zeros
            W[u, v] = W[v, u] = w
    caps = draw(st.lists(st.integers(0, 9), min_size=m, max_size=m))
    return W, loads, caps


@st.composite
def block_instance(draw):
    """Operators of identical tasks with constant blocks: exercises the class-count model."""
    k = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k).filter(lambda s: sum(s) <= 7))
    op_load = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    wmat = np.zeros((k, k))
    for a in range(k):
        for b in range(a, k):
            wmat[a, b] = wmat[b, a] = draw(st.integers(0, 4))
    ops = np.repeat(np.arange(k), sizes)
    W = wmat[np.ix_(ops, ops)].copy()
    np.fill_diagonal(W, 0)
    loads = np.array(op_load)[ops]
    m = draw(st.integers(1, 3))
    caps = draw(st.lists(st.integers(0, 9), min_size=m, max_size=m))
    return W, loads, caps, ops


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_instance())
def test_random_instances_match_brute_force(inst):
    W, loads, caps = inst
    sol = solve_min_inter_node(W, loads, caps, time_limit=5)
    check_solution(sol, W, loads, caps, brute_force(W, loads, caps))


# The public call usually settles these small cases with the configuration bound; the internal
# switches force the CP-SAT class-count model (with each product encoding / symmetry breaking).
COUNT_MODEL_PATHS = [
    dict(configs=False),
    dict(configs=False, product="unary", symmetry="lex"),
    dict(configs=False, product="semi", symmetry="none", node_bound="cap"),
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_instance(), st.sampled_from(COUNT_MODEL_PATHS))
def test_random_instances_count_model_paths(inst, options):
    W, loads, caps = inst
    sol = solve_min_inter_node(W, loads, caps, time_limit=5, formulation=Formulation(**options))
    check_solution(sol, W, loads, caps, brute_force(W, loads, caps))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block_instance(), st.booleans())
def test_block_instances_match_brute_force(inst, use_groups):
    W, loads, caps, ops = inst
    sol = solve_min_inter_node(W, loads, caps, groups=ops if use_groups else None, time_limit=5)
    check_solution(sol, W, loads, caps, brute_force(W, loads, caps))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block_instance(), st.sampled_from(COUNT_MODEL_PATHS + [dict(merge=False, symmetry="lex", configs=False)]))
def test_block_instances_count_model_paths(inst, options):
    W, loads, caps, ops = inst
    sol = solve_min_inter_node(W, loads, caps, groups=ops, time_limit=5, formulation=Formulation(**options))
    check_solution(sol, W, loads, caps, brute_force(W, loads, caps))


# ---------------------------------------------------------------------------------------------
# the published optima ([I] Sec. 5)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout,expected", [("diamond", 146), ("star", 86)])
def test_thirty_task_heterogeneous_optima(layout, expected):
    W, ops = micro(layout, 30)
    loads = np.ones(30)
    sol = solve_min_inter_node(W, loads, HETEROGENEOUS, groups=ops, time_limit=60)
    assert sol.status == "optimal"
    assert sol.objective == expected and sol.lower_bound == expected
    assert cut_weight(W, sol.node_of_task) == expected
    used = np.bincount(sol.node_of_task, minlength=10)
    assert np.all(used <= HETEROGENEOUS)


def test_linear_32_heterogeneous_is_proven():
    """The case CPLEX needed ~10^6 s for in [T3]; the optimum 24 is also checked by bound."""
    W, ops = micro("linear", 32)
    sol = solve_min_inter_node(W, np.ones(32), HETEROGENEOUS, groups=ops, time_limit=60)
    assert sol.status == "optimal" and sol.objective == 24 and sol.lower_bound == 24


@st.composite
def two_resource_instance(draw):
    """A block instance whose operators also need memory, on nodes that offer some (or unlimited)."""
    W, loads, caps, ops = draw(block_instance())
    k = int(ops.max()) + 1
    memory = np.array(draw(st.lists(st.sampled_from([0, 256, 512, 1024]), min_size=k, max_size=k)), float)[ops]
    offered = np.array(draw(st.lists(st.sampled_from([0.0, 512.0, 1024.0, 2048.0, np.inf]), min_size=len(caps),
                                     max_size=len(caps))))
    return W, loads, caps, ops, memory, offered


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(two_resource_instance(), st.booleans())
def test_a_second_resource_matches_brute_force(inst, use_groups):
    """Eq. 4 once per resource: the optimum over placements that fit both capacity and memory."""
    W, loads, caps, ops, memory, offered = inst
    sol = solve_min_inter_node(W, loads, caps, groups=ops if use_groups else None, time_limit=5,
                               extra=(memory[:, None], offered[:, None]))
    both_loads, both_caps = np.column_stack([loads, memory]), np.column_stack([caps, offered])
    check_solution(sol, W, both_loads, both_caps, brute_force(W, both_loads, both_caps))


@pytest.mark.parametrize("unproven", range(1, 10))
def test_a_node_level_bound_out_of_time_never_proves_a_wrong_optimum(monkeypatch, unproven):
    """With a second resource the count model bounds each node's intra weight by one-node solves,
    one per load level, each on a small time budget. A level whose solve runs out of time (on a
    loaded machine) must not lend a node a lower level's bound. Found by the property test above
    in CI: tasks 0-1, 2, 3-4, 5 of four operators, CPU 2, 2, 1, 3, 3, 1 on nodes of 3, 3 and 9
    cores, memory 0, 0, 256, 1024, 1024, 512 MB against 512 MB on the first node only. The
    optimum, worked by hand: task 3 alone on the second node (3 cores), the rest on the third
    (9 cores), cutting task 3's edges 1 + 1 + 4 + 3 = 9; the search called 14 optimal when the
    9-core level went unproven."""
    import streamplace.exact.count_model as count_model
    real = count_model.single_node_bound
    monkeypatch.setattr(count_model, "single_node_bound",
                        lambda P, cap, *rest: None if cap == unproven else real(P, cap, *rest))
    W = np.array([[0, 3, 4, 1, 1, 4], [3, 0, 4, 1, 1, 4], [4, 4, 0, 4, 4, 1],
                  [1, 1, 4, 0, 3, 0], [1, 1, 4, 3, 0, 0], [4, 4, 1, 0, 0, 0]], float)
    cpu, memory = np.array([2, 2, 1, 3, 3, 1], float), np.array([0, 0, 256, 1024, 1024, 512], float)
    caps, offered = np.array([3, 3, 9], float), np.array([512, np.inf, np.inf])
    sol = solve_min_inter_node(W, cpu, caps, groups=np.array([0, 0, 1, 2, 2, 3]), time_limit=5,
                               extra=(memory[:, None], offered[:, None]))
    both_loads, both_caps = np.column_stack([cpu, memory]), np.column_stack([caps, offered])
    assert brute_force(W, both_loads, both_caps) == 9
    check_solution(sol, W, both_loads, both_caps, 9)


def test_a_second_resource_changes_the_optimum():
    """Two pairs of heavy talkers joined by a light edge, two nodes of capacity 4: by capacity all four
    share a node (cost 0); with 1 GB per node and 512 MB per task two fit per node, so each pair
    takes a node and only the light edge is cut (cost 1); with 1 GB + 512 MB the tasks do not fit."""
    W = np.zeros((4, 4))
    W[0, 1] = W[1, 0] = W[2, 3] = W[3, 2] = 5.0
    W[1, 2] = W[2, 1] = 1.0
    caps = [4, 4]
    assert solve_min_inter_node(W, [1, 1, 1, 1], caps).objective == 0.0
    sol = solve_min_inter_node(W, [1, 1, 1, 1], caps, extra=(np.full((4, 1), 512.0), np.array([[1024.0], [1024.0]])))
    assert sol.status == "optimal" and sol.objective == 1.0   # each pair on its own node: only the light edge cut
    tight = solve_min_inter_node(W, [1, 1, 1, 1], caps, extra=(np.full((4, 1), 512.0), np.array([[1024.0], [512.0]])))
    assert tight.status == "infeasible"

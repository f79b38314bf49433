"""lns: the proven optima of the micro-benchmarks, never worse than its constructions, exact
re-solves of a neighbourhood (contents of two nodes swapped), anytime history."""

import numpy as np
import pytest

from streamplace.model import Cluster, Operator, Placement, Problem, Stream, Topology
from streamplace.schedulers import make_scheduler
from streamplace.schedulers.lns import CONSTRUCTIONS, _cut, _Search
from streamplace.workloads import microbench
from streamplace.workloads.synthetic import synthetic_problem


@pytest.mark.parametrize("layout, tasks, optimum", [("diamond", 30, 146.0), ("star", 30, 86.0)])
def test_proves_the_papers_optima(layout, tasks, optimum):
    # [I] Sec. 5: 30 tasks on the heterogeneous cluster, published optima 146 (diamond) and 86 (star)
    problem = Problem.from_topology(microbench.microbench(layout, tasks), microbench.cluster("heterogeneous"))
    result = make_scheduler("lns", time_limit=20).schedule(problem)
    assert result.status == "optimal" and result.lower_bound == optimum
    assert _cut(problem.graph.edges, result.placement.node) == optimum
    assert not result.placement.violations(problem.graph.loads, problem.cluster)


def test_never_worse_than_its_constructions_and_the_history_only_falls():
    problem = synthetic_problem(1000, 10, seed=1)
    result = make_scheduler("lns", time_limit=3).schedule(problem)
    costs = [_cut(problem.graph.edges, make_scheduler(n, p).schedule(problem).placement.node) for n, p in CONSTRUCTIONS]
    final = _cut(problem.graph.edges, result.placement.node)
    history = [cost for _, cost in result.details["history"]]
    assert history[0] == min(costs) and history[-1] == pytest.approx(final) and final <= min(costs)
    assert all(b < a for a, b in zip(history, history[1:]))
    assert not result.placement.violations(problem.graph.loads, problem.cluster)
    assert result.status == "heuristic" and result.details["stopped"] in ("time limit", "no neighbourhood left")


def test_a_re_solve_can_swap_what_two_nodes_hold():
    # shuffle a -> b: every a talks to every b (4 pairs of weight 1); three nodes of capacity 2
    topo = Topology.build("ab", [Operator("a", 2, role="source"), Operator("b", 2)], [Stream("a", "b", pair_rate=1.0)])
    problem = Problem.from_topology(topo, Cluster.from_capacities({2.0: 3}))
    bad = np.array([0, 1, 0, 1])   # a0 b0 on node 0, a1 b1 on node 1: cut a0-b1, a1-b0 = 2
    search = _Search(problem, bad, np.random.default_rng(0), max_free=4, max_nodes=3)
    assert search.cost == 2.0
    assert not search.resolve(np.arange(4), time_limit=5, seed=0)   # 2 is optimal with capacity 2
    heavy = Topology.build("ab", [Operator("a", 1, role="source"), Operator("b", 1), Operator("c", 1)],
                           [Stream("a", "b", pair_rate=5.0), Stream("b", "c", pair_rate=1.0)])
    problem = Problem.from_topology(heavy, Cluster.from_capacities({2.0: 2}))
    search = _Search(problem, np.array([0, 1, 1]), np.random.default_rng(0), max_free=2, max_nodes=2)
    assert search.cost == 5.0
    assert search.resolve(np.array([0, 1]), time_limit=5, seed=0)   # frees a and b: a joins b (or b joins a)
    assert search.cost == 1.0 and search._fits(search.node)

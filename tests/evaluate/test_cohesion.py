import numpy as np
import pytest

from streamplace.evaluate.metrics import cohesion, coupling
from streamplace.evaluate.records import evaluation_record
from streamplace.model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from streamplace.workloads import lf as lf_workloads


def small():
    # a(2) -shuffle-> b(2), a -global-> c(2) (only c[0] receives); nodes n0, n1 with 2 slots each
    topo = Topology.build("t", [Operator("a", 2), Operator("b", 2), Operator("c", 2)],
                          [Stream("a", "b"), Stream("a", "c", grouping="global")])
    cluster = Cluster.build("c", [Node("n0", 10, slots=2), Node("n1", 10, slots=2)])
    return Problem.from_topology(topo, cluster)


#               a0      a1      b0      b1      c0      c1
NODE, WORKER = [0, 0, 0, 1, 1, 0], [0, 1, 0, 0, 0, 1]


def test_hand_computed_cohesion():
    p, pl = small(), Placement(node=NODE, worker=WORKER)
    # a0 -> b: b0 same worker (1); a1 -> b: b0 same node (1/40), b1 other node (1/40) -> 1/40
    # a0 -> c: only c0, other node (1/40); a1 -> c: only c0 (1/40), although c1 shares a1's worker
    assert cohesion(p, pl) == pytest.approx(1 + 3 / 40)
    # same-node distance 10: a1 -> b0 becomes 1/10
    assert cohesion(p, pl, same_node=10) == pytest.approx(1 + 1 / 10 + 2 / 40)
    assert cohesion(p, pl, same_worker=2, same_node=4, other_node=8) == pytest.approx(1 / 2 + 1 / 4 + 2 / 8)


def test_hand_computed_coupling():
    p, pl = small(), Placement(node=NODE, worker=WORKER)
    # a0, a1 same node; b0, b1 other nodes; c0, c1 other nodes: every task 1/40
    assert coupling(p, pl) == pytest.approx(6 / 40)
    assert coupling(p, pl, same_node=10) == pytest.approx(2 / 10 + 4 / 40)
    # a0 and a1 in one worker: 1 each; a single-task operator would add nothing
    together = Placement(node=[0, 0, 0, 1, 1, 0], worker=[0, 0, 0, 0, 0, 1])
    assert coupling(p, together) == pytest.approx(2 + 4 / 40)
    single = Problem.from_topology(Topology.build("s", [Operator("x", 1)]), p.cluster)
    assert coupling(single, Placement(node=[0], worker=[0])) == 0.0


def brute_force(problem, node, worker, d=(1.0, 40.0, 40.0)):
    """[LF] Eq. 1-2 by plain loops over task pairs."""
    def close(s, t):
        return 1 / d[2] if node[s] != node[t] else 1 / d[1] if worker[s] != worker[t] else 1 / d[0]
    topo, rates = problem.topology, problem.graph.rates.toarray()
    coh = 0.0
    for s in topo.streams:
        for u in topo.tasks_of(s.src):
            coh += max(close(u, v) for v in topo.tasks_of(s.dst) if rates[u, v] > 0)
    coup = 0.0
    for op in topo.operators:
        tasks = topo.tasks_of(op.name)
        for u in tasks:
            coup += max((close(u, v) for v in tasks if v != u), default=0.0)
    return coh, coup


@pytest.mark.parametrize("config", list(lf_workloads.CONFIGS))
def test_matches_brute_force_on_random_placements(config):
    rng = np.random.default_rng(3)
    p = Problem.from_topology(lf_workloads.synthetic(config), lf_workloads.cluster("lf-high"))
    for d in [(1.0, 40.0, 40.0), (1.0, 5.0, 40.0)] * 2:
        node, worker = rng.integers(0, 3, p.n_tasks), rng.integers(0, 3, p.n_tasks)
        pl = Placement(node=node, worker=worker)
        coh, coup = brute_force(p, node, worker, d)
        assert cohesion(p, pl, same_worker=d[0], same_node=d[1], other_node=d[2]) == pytest.approx(coh)
        assert coupling(p, pl, same_worker=d[0], same_node=d[1], other_node=d[2]) == pytest.approx(coup)


def test_bad_distances_and_record_keys():
    p, pl = small(), Placement(node=NODE, worker=WORKER)
    with pytest.raises(ValueError, match="distances must be finite and > 0"):
        cohesion(p, pl, same_node=0)
    record = evaluation_record(p, pl, include_placement=False)
    assert record["cohesion"] == pytest.approx(1 + 3 / 40) and record["coupling"] == pytest.approx(6 / 40)

"""Plans as Storm runs them: a changed worker goes to a port no worker of the running placement holds."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from streamplace.demo.autopilot_step import embedded_job
from streamplace.evaluate.records import evaluation_record
from streamplace.model import Cluster, Node, Placement
from streamplace.storm.plans import on_fresh_ports


def _workers(placement: Placement) -> set[tuple[int, frozenset]]:
    """(node, the tasks of one worker) for every worker: the plan without its worker indices."""
    return {(int(n), frozenset(np.flatnonzero((placement.node == n) & (placement.worker == w)).tolist()))
            for n, w in set(zip(placement.node.tolist(), placement.worker.tolist()))}


def test_the_demos_plan_by_hand():
    """The embedded demo job (s, k[0..3] on three nodes of two slots, every worker index 0); the
    autopilot moved k[2] from h2 to s's worker on h0. h0's and h2's workers change and go to index
    1; h1's keeps index 0."""
    problem = embedded_job(20.0)
    current = Placement(node=np.array([0, 1, 1, 2, 2]), worker=np.zeros(5, int))
    plan = Placement(node=np.array([0, 1, 1, 0, 2]), worker=np.zeros(5, int))
    fresh = on_fresh_ports(current, plan, problem.cluster)
    assert fresh.node.tolist() == [0, 1, 1, 0, 2] and fresh.worker.tolist() == [1, 0, 0, 1, 1]
    before, after = evaluation_record(problem, plan, include_placement=False), evaluation_record(problem, fresh, include_placement=False)
    assert before == after   # the model sees which tasks share a worker, not its index


def test_without_a_free_slot_a_changed_worker_takes_a_changing_ones_port():
    cluster = Cluster.build("one-slot", [Node("a", 4, slots=1), Node("b", 4, slots=2)])
    current = Placement(node=np.array([0, 0, 1, 1]), worker=np.array([0, 0, 0, 1]))
    plan = Placement(node=np.array([0, 1, 1, 1]), worker=np.array([0, 0, 0, 1]))   # task 1 joins task 2 on b
    fresh = on_fresh_ports(current, plan, cluster)
    # a: {0} on its only slot; b: {1, 2} changed, index 0 is the only one whose worker changes; {3} kept at 1
    assert fresh.worker.tolist() == [0, 0, 0, 1]


@st.composite
def two_placements(draw):
    slots = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    n = draw(st.integers(1, 9))

    def placement():
        node = draw(st.lists(st.integers(0, len(slots) - 1), min_size=n, max_size=n))
        worker = [draw(st.integers(0, slots[v] - 1)) for v in node]
        return Placement(node=np.array(node), worker=np.array(worker))

    cluster = Cluster.build("c", [Node(f"n{i}", 8, slots=s) for i, s in enumerate(slots)])
    return cluster, placement(), placement()


@settings(max_examples=300, deadline=None)
@given(two_placements())
def test_same_workers_kept_indices_and_no_reused_port_while_one_is_free(case):
    cluster, current, plan = case
    fresh = on_fresh_ports(current, plan, cluster)
    assert fresh.node.tolist() == plan.node.tolist() and _workers(fresh) == _workers(plan)
    assert all(0 <= w < cluster.slots[v] for v, w in zip(fresh.node, fresh.worker))
    for v in np.unique(plan.node):
        now = {w: tasks for n, tasks in _workers(current) if n == v for w in
               set(current.worker[list(tasks)].tolist())}
        after = {int(fresh.worker[next(iter(tasks))]): tasks for n, tasks in _workers(fresh) if n == v}
        kept = {w for w, tasks in after.items() if tasks in now.values()}
        assert all(now.get(w) == after[w] for w in kept)   # an unchanged worker keeps its index
        changed = set(after) - kept
        if int(cluster.slots[v]) - len(now) >= len(changed):   # enough slots no worker holds now
            assert not changed & set(now), (now, after)

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamplace.evaluate.metrics import cohesion, coupling
from streamplace.model import Cluster, Node, Operator, Problem, Stream, Topology
from streamplace.schedulers import ParameterError, make_scheduler
from streamplace.schedulers.lf import assign_pipelines, extract_pipelines
from streamplace.workloads import lf as lf_workloads


def hashtags():
    # [LF] Fig. 4: Sample(3) -> Extract(2) -> Count(3)
    return Topology.build("hashtags", [Operator("sample", 3), Operator("extract", 2), Operator("count", 3)],
                          [Stream("sample", "extract"), Stream("extract", "count", grouping="fields")])


def four_slots():
    return Cluster.build("c", [Node(f"n{i}", 10, slots=1) for i in range(4)])


def test_figure4_pipelines_and_one_pipeline_per_slot():
    topo = hashtags()
    # two full pipelines; Extract is then exhausted, so Sample[2] and Count[2] are not contiguous
    assert extract_pipelines(topo).labels(topo) == [["sample[0]", "extract[0]", "count[0]"],
                                                    ["sample[1]", "extract[1]", "count[1]"],
                                                    ["sample[2]"], ["count[2]"]]
    res = make_scheduler("lf").schedule(Problem.from_topology(topo, four_slots()))
    assert res.details["pipelines"][2:] == [["sample[2]"], ["count[2]"]] and res.details["workers_used"] == 4
    assert res.placement.node.tolist() == [0, 1, 2, 0, 1, 0, 1, 3]


def test_start_is_first_declared_operator_and_predecessors_come_before_successors():
    topo = Topology.build("t", [Operator("mid", 2), Operator("snk", 1), Operator("src", 2)],
                          [Stream("src", "mid"), Stream("mid", "snk")])
    assert extract_pipelines(topo).labels(topo) == [["mid[0]", "src[0]", "snk[0]"], ["mid[1]", "src[1]"]]


def test_least_loaded_assignment_with_fewer_workers_and_literal_round_robin():
    # sizes 3, 3, 1, 1 on 2 slots: the third pipeline ties (3, 3) -> earliest slot
    assert assign_pipelines(np.array([3, 3, 1, 1]), 2).tolist() == [0, 1, 0, 1]
    assert assign_pipelines(np.array([3, 1, 1, 1]), 2).tolist() == [0, 1, 1, 1]
    assert assign_pipelines(np.array([3, 1, 1, 1]), 2, "round_robin").tolist() == [0, 1, 0, 1]
    res = make_scheduler("lf", {"workers": "2"}).schedule(Problem.from_topology(hashtags(), four_slots()))
    assert res.details["workers_used"] == 2 and sorted(set(res.placement.node.tolist())) == [0, 1]


def gain(new, old):
    return 100.0 * (new - old) / old


PAPER_COHESION_GAIN = {"linear": 3900.0, "ascent": 71.78, "descent": 71.02, "symmetry": 32.03, "star": 59.45}


@pytest.mark.parametrize("inst", list(lf_workloads.instances()), ids=lambda i: i.name)
def test_section_4_2_cohesion_gains_with_equal_coupling(inst):
    # [LF] Sec. 4.2: the same gains at low and high parallelism, coupling equal everywhere
    p = inst.problem
    even, lf = (make_scheduler(name).schedule(p).placement for name in ("even", "lf"))
    assert gain(cohesion(p, lf), cohesion(p, even)) == pytest.approx(PAPER_COHESION_GAIN[inst.layout], abs=0.005)
    assert coupling(p, lf) == pytest.approx(coupling(p, even))


def test_linear_lf_is_one_worker_and_40_times_even():
    p = Problem.from_topology(lf_workloads.synthetic("linear"), lf_workloads.cluster("lf-low"))
    even, lf = (make_scheduler(name).schedule(p) for name in ("even", "lf"))
    assert lf.details["workers_used"] == 1 and len(set(zip(lf.placement.node.tolist(), lf.placement.worker.tolist()))) == 1
    assert cohesion(p, lf.placement) == pytest.approx(7.0) and cohesion(p, even.placement) == pytest.approx(7 / 40)


def test_literal_round_robin_breaks_star_coupling():
    p = Problem.from_topology(lf_workloads.synthetic("star"), lf_workloads.cluster("lf-low"))
    literal = make_scheduler("lf", {"assignment": "round_robin"}).schedule(p).placement
    assert coupling(p, literal) == pytest.approx(12.7)


def test_ignores_capacity_and_validates_parameters():
    cluster = Cluster.build("c", [Node("a", 1, slots=1)])
    res = make_scheduler("lf").schedule(Problem.from_topology(hashtags(), cluster))
    assert res.status == "heuristic" and res.placement.overloaded_nodes(res.problem.loads, cluster).tolist() == [0]
    with pytest.raises(ParameterError, match="workers must be >= 1"):
        make_scheduler("lf", {"workers": "0"})
    with pytest.raises(ParameterError, match="assignment must be one of"):
        make_scheduler("lf", {"assignment": "random"})


@st.composite
def dags(draw):
    n_ops = draw(st.integers(1, 7))
    par = draw(st.lists(st.integers(1, 6), min_size=n_ops, max_size=n_ops))
    pairs = [(a, b) for a in range(n_ops) for b in range(a + 1, n_ops)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
    perm = draw(st.permutations(range(n_ops)))  # declaration order unrelated to the DAG order
    ops = [Operator(f"o{perm[i]}", par[i]) for i in range(n_ops)]
    topo = Topology.build("rand", ops, [Stream(f"o{perm[a]}", f"o{perm[b]}") for a, b in edges])
    slots = draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))
    cluster = Cluster.build("c", [Node(f"n{i}", 1, slots=s) for i, s in enumerate(slots)])
    workers = draw(st.one_of(st.none(), st.integers(1, sum(slots))))
    return Problem.from_topology(topo, cluster), workers


@settings(max_examples=60, deadline=None)
@given(dags())
def test_pipeline_invariants(case):
    problem, workers = case
    topo = problem.topology
    res = make_scheduler("lf", {"workers": workers}).schedule(problem)
    pipes = extract_pipelines(topo)
    assert sorted(pipes.tasks.tolist()) == list(range(topo.n_tasks))  # every task in exactly one pipeline
    slot = res.placement.slot_ids(problem.cluster)
    linked = {(topo.index[s.src], topo.index[s.dst]) for s in topo.streams}
    linked |= {(b, a) for a, b in linked}
    for p in range(len(pipes)):
        tasks = pipes[p]
        assert np.unique(slot[tasks]).size == 1  # a pipeline lives in one worker
        ops = topo.operator_of_task[tasks].tolist()
        assert len(set(ops)) == len(ops)  # at most one task per operator
        reached = {ops[0]}  # connected through streams between its own operators
        for _ in ops:
            reached |= {b for a, b in linked if a in reached and b in ops}
        assert reached == set(ops)
    r = problem.cluster.slots.sum() if workers is None else min(workers, problem.cluster.slots.sum())
    loads = np.bincount(np.unique(slot, return_inverse=True)[1])
    assert res.details["workers_used"] == loads.size == min(r, len(pipes))
    if len(pipes) >= r:  # least-loaded: slot loads differ by at most one pipeline
        assert loads.max() - loads.min() <= pipes.sizes.max()

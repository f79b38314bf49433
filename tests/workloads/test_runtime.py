import pytest

from streamplace.fit.runs import held_out
from streamplace.workloads import applications, runtime


@pytest.mark.parametrize("layout, tasks, sources", [("linear", 32, {"spout": 8}), ("diamond", 40, {"spout": 8}),
                                                     ("star", 32, {"spout1": 4, "spout2": 4})])
def test_microbench_sizes(layout, tasks, sources):
    topo = runtime.microbench(layout, "io")
    assert topo.n_tasks == tasks
    assert {op.name: op.parallelism for op in topo.operators if op.role == "source"} == sources
    assert {op.parallelism for op in topo.operators if op.role != "source"} == {8}
    assert all(op.source_rate == op.parallelism for op in topo.operators if op.role == "source")  # 1 tuple/s per task


def test_modes_set_the_operator_cost_and_memory():
    io, cpu = runtime.microbench("diamond", "io"), runtime.microbench("diamond", "cpu")
    assert {op.cpu_per_tuple for op in io.operators} == {1e-6}
    assert {op.cpu_per_tuple for op in cpu.operators} == {1e-5}
    assert {op.memory_mb for op in io.operators} == {runtime.COMPONENT_MEMORY_MB}
    assert [(s.src, s.dst) for s in io.streams] == [(s.src, s.dst) for s in cpu.streams]
    with pytest.raises(ValueError, match="unknown mode"):
        runtime.microbench("linear", "gpu")


def test_clusters_capacity_is_slots_times_tasks_per_worker():
    c = runtime.named_cluster("2high+4low")
    assert c.name == "2high+4low"
    assert c.capacities.tolist() == [20, 20, 10, 10, 10, 10]
    assert c.slots.tolist() == [4, 4, 2, 2, 2, 2]
    assert [n.cores for n in c.nodes] == [4, 4, 2, 2, 2, 2]
    assert [n.memory_mb for n in c.nodes] == [4096, 4096, 2048, 2048, 2048, 2048]
    # the 40-task diamond fills the I/O cluster exactly
    assert runtime.named_cluster(runtime.MODE_CLUSTER["io"]).capacities.sum() == runtime.microbench("diamond", "io").n_tasks
    with pytest.raises(ValueError, match="unknown testbed cluster"):
        runtime.named_cluster("huge")
    with pytest.raises(ValueError, match="at least one node"):
        runtime.cluster(0, 0)


def test_applications_keep_their_costs_and_declare_memory():
    ours, theirs = runtime.application("smart-home"), applications.application("smart-home").topology
    assert [op.cpu_per_tuple for op in ours.operators] == [op.cpu_per_tuple for op in theirs.operators]
    assert ours.streams == theirs.streams
    assert {op.memory_mb for op in ours.operators} == {runtime.COMPONENT_MEMORY_MB}
    with pytest.raises(ValueError, match="unknown application"):
        runtime.application("page-view")


def test_scenarios_fit_their_clusters():
    scenarios = runtime.scenarios()
    assert [s.kind for s in scenarios].count("micro-io") == 3 and [s.kind for s in scenarios].count("micro-cpu") == 3
    assert {(s.workload, s.cluster) for s in scenarios if s.kind == s.workload} == {
        ("smart-home", "8high"), ("smart-home", "2high+4low"), ("frequent-routes", "8high"),
        ("frequent-routes", "2high+2low")}
    for s in scenarios + runtime.calibration_scenarios():
        assert s.topology.n_tasks <= runtime.named_cluster(s.cluster).capacities.sum()


def test_calibration_runs_are_beside_the_papers_experiments_and_train_a_fit():
    calibration = runtime.calibration_scenarios()
    assert [(s.workload, s.kind, s.cluster) for s in calibration] == (
        [(layout, f"micro-{mode}", c) for layout, mode, c in runtime.CALIBRATION]
        + [(app, app, c) for app, c in runtime.CALIBRATION_APPS])
    assert not {(s.topology.name, s.cluster) for s in calibration} & {(s.topology.name, s.cluster) for s in runtime.scenarios()}
    # the fit trains on micro-benchmarks and calibration runs, and holds out the papers' applications
    assert not any(held_out(s.kind) for s in calibration)
    assert {s.kind for s in runtime.scenarios() if held_out(s.kind)} == set(runtime.APPLICATIONS)
    tt = next(s for s in calibration if s.workload == "trending-topics")
    assert {op.memory_mb for op in tt.topology.operators} == {runtime.COMPONENT_MEMORY_MB}
    with pytest.raises(ValueError, match="unknown application 'page-view'"):
        runtime.application("page-view")

import pytest

from streamplace.cli import main
from streamplace.model import build_task_graph
from streamplace.model.graph import key_shares
from streamplace.model.specs import load_cluster, load_topology
from streamplace.schedulers import make_scheduler
from streamplace.workloads import lf


def test_table3_parallelism_chain_and_groupings():
    assert [op.parallelism for op in lf.synthetic("symmetry").operators] == [2, 4, 6, 8, 8, 6, 4, 2]
    assert [op.parallelism for op in lf.synthetic("star", high=True).operators] == [80, 60, 40, 20, 20, 40, 60, 80]
    topo = lf.synthetic("descent")
    assert [(s.src, s.dst, s.grouping) for s in topo.streams][:2] == [("po1", "po2", "local_or_shuffle"), ("po2", "po3", "local_or_shuffle")]
    assert len(topo.streams) == 7 and topo.topological_order == [f"po{i}" for i in range(1, 9)]
    assert {s.grouping for s in lf.synthetic("ascent", grouping="shuffle").streams} == {"shuffle"}
    # one 1 KB message per millisecond per po1 task, forwarded unchanged down the chain
    graph = build_task_graph(topo, weight="bytes")
    assert graph.meta["in_rate"][topo.tasks_of("po8").start] == pytest.approx(8000.0)
    assert graph.total_weight == pytest.approx(7 * 8000.0 * 1024)
    with pytest.raises(ValueError, match="unknown \\[LF\\] configuration"):
        lf.synthetic("diamond")
    with pytest.raises(ValueError, match="grouping must be one of"):
        lf.synthetic("linear", grouping="fields")


def test_clusters_and_capacity_never_binds():
    low, high = lf.cluster("lf-low"), lf.cluster("lf-high")
    assert (low.n_nodes, int(low.slots.sum()), high.n_nodes, int(high.slots.sum())) == (8, 8, 8, 80)
    instances = list(lf.instances())
    assert [i.n_tasks for i in instances] == [8, 36, 36, 40, 40, 80, 360, 360, 400, 400]
    for inst in instances:  # even and lf ignore capacity; the presets never make them overload
        for name in ("even", "lf"):
            res = make_scheduler(name).schedule(inst.problem)
            assert res.placement.violations(inst.problem.loads, inst.problem.cluster) == []
    with pytest.raises(ValueError, match="unknown cluster preset"):
        lf.cluster("lf-medium")


def test_page_view_count():
    topo = lf.page_view_count()
    assert [(op.name, op.parallelism) for op in topo.operators] == [("source", 4), ("view", 4), ("count", 4), ("sink", 4)]
    assert [(s.src, s.dst, s.grouping) for s in topo.streams] == [
        ("source", "view", "local_or_shuffle"), ("view", "count", "fields"), ("count", "sink", "local_or_shuffle")]
    shares = sorted(key_shares(topo.streams[1], 4), reverse=True)  # pages clicked 70/20/10 %
    assert shares == pytest.approx([0.70, 0.20, 0.10, 0.0], abs=0.005)


def test_cli_writes_lf_workloads(tmp_path, capsys):
    topo_file, cluster_file = tmp_path / "t.yaml", tmp_path / "c.json"
    for args in (["workload", "lf", "--config", "ascent", "--high", "-o", str(topo_file)],
                 ["workload", "cluster", "--preset", "lf-high", "-o", str(cluster_file)]):
        with pytest.raises(SystemExit) as info:
            main(args)
            raise SystemExit(0)
        assert (info.value.code or 0) == 0
    assert load_topology(topo_file).n_tasks == 360 and int(load_cluster(cluster_file).slots.sum()) == 80
    with pytest.raises(SystemExit) as info:
        main(["workload", "lf", "--config", "page-view-count", "--high", "-o", str(topo_file)])
    assert info.value.code == 2 and "fixed parallelism" in capsys.readouterr().err

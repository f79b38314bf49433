import pytest

from streamplace.workloads import microbench


@pytest.mark.parametrize("n", microbench.SIZES)
def test_sizes_and_edge_counts(n):
    lin, dia, star = (microbench.microbench(layout, n) for layout in microbench.LAYOUTS)
    assert lin.n_tasks == dia.n_tasks == star.n_tasks == n
    from streamplace.model import build_task_graph
    # linear: n/2 - 1 links of 2x2; diamond: k mids each 4x2 twice; star: k arms of 2x4
    assert build_task_graph(lin).total_weight == 4 * (n // 2 - 1)
    assert build_task_graph(dia).total_weight == 16 * ((n - 8) // 2)
    assert build_task_graph(star).total_weight == 8 * ((n - 4) // 2)


def test_star_alternates_sources_and_sinks_source_first():
    star = microbench.microbench("star", 14)
    assert [op.name for op in star.operators] == ["centre", "src00", "snk00", "src01", "snk01", "src02"]
    assert [(s.src, s.dst) for s in star.streams][:2] == [("src00", "centre"), ("centre", "snk00")]


def test_clusters_and_instance_count():
    assert microbench.cluster("heterogeneous").capacities.tolist() == [6, 6, 6, 4, 4, 4, 2, 2, 2, 2]
    assert microbench.cluster("homogeneous").capacities.tolist() == [4] * 10
    assert len(list(microbench.instances())) == 72
    with pytest.raises(ValueError, match="even task count"):
        microbench.microbench("diamond", 9)

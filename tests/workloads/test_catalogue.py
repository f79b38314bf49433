"""One catalogue of workloads: the CLI, the sweep and the demo build the same things by the same names."""

import pytest

from streamplace.demo import run as demo
from streamplace.campaign import sweep
from streamplace.model import build_task_graph
from streamplace.model.specs import cluster_to_dict, load_cluster, load_topology, topology_to_dict
from streamplace.workloads import catalogue
from streamplace.workloads.catalogue import CLUSTER_GENERATORS, PRESETS, REQUIRED, TOPOLOGIES

# one value for each required argument (the rest keep their defaults)
REQUIRED_VALUES = {"tasks": 12, "nodes": 4, "high": 2}


def _args(gen) -> dict:
    return {k: (REQUIRED_VALUES.get(k, arg.choices[0] if arg.choices else None) if arg.default is REQUIRED else arg.default)
            for k, arg in gen.args.items()}


def test_the_sweep_and_the_demo_read_the_catalogue():
    assert sweep.TOPOLOGIES is TOPOLOGIES and sweep.CLUSTER_GENERATORS is CLUSTER_GENERATORS and sweep.PRESETS is PRESETS
    homogeneous, heterogeneous = demo.app_clusters(40)
    assert cluster_to_dict(homogeneous) == cluster_to_dict(catalogue.sized_cluster("homogeneous", 40, demo.SLACK))
    assert homogeneous.capacities.sum() >= demo.SLACK * 40 and heterogeneous.capacities.sum() >= demo.SLACK * 40
    assert sorted(set(heterogeneous.capacities)) == [5.0, 10.0]   # ceil(50 / 12) per low node, twice that per high


@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_every_topology_generator_is_reachable_from_the_cli(name, tmp_path, cli):
    gen = TOPOLOGIES[name]
    args = _args(gen)
    out = tmp_path / "t.yaml"
    code, _, err = cli(["workload", "topology", name, *(f"{k}={v}" for k, v in args.items() if v is not None),
                        "-o", str(out)])
    assert code == 0, err
    assert topology_to_dict(load_topology(out)) == topology_to_dict(gen.build(**args)[0])


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_is_reachable_from_the_cli(name, tmp_path, cli):
    out = tmp_path / "c.yaml"
    assert cli(["workload", "cluster", "--preset", name, "-o", str(out)])[0] == 0
    assert cluster_to_dict(load_cluster(out)) == cluster_to_dict(catalogue.preset(name))


@pytest.mark.parametrize("name", list(CLUSTER_GENERATORS))
def test_every_cluster_generator_is_reachable_from_the_cli(name, tmp_path, cli):
    topo = tmp_path / "t.yaml"
    assert cli(["workload", "topology", "microbench", "layout=star", "tasks=20", "-o", str(topo)])[0] == 0
    gen, args, out = CLUSTER_GENERATORS[name], _args(CLUSTER_GENERATORS[name]), tmp_path / "c.yaml"
    code, _, err = cli(["workload", "cluster", "--generator", name, "--topology", str(topo),
                        *(f"{k}={v}" for k, v in args.items()), "-o", str(out)])
    assert code == 0, err
    expected = gen.build(**args, graph=build_task_graph(load_topology(topo)))
    assert cluster_to_dict(load_cluster(out)) == cluster_to_dict(expected)


@pytest.mark.parametrize("argv, message", [
    (["topology", "runtime", "layout=x", "mode=io"], "runtime: layout: 'x' is not one of linear, diamond, star"),
    (["topology", "runtime", "layout=star"], "runtime: missing argument mode (arguments: layout=linear|diamond|star mode=io|cpu)"),
    (["topology", "microbench", "layout=star", "tasks=ten"], "microbench: tasks: cannot read 'ten' as int"),
    (["topology", "microbench", "layout=star", "tasks=12", "size=3"], "microbench: unknown argument 'size'"),
    (["cluster", "--generator", "sized", "kind=homogeneous"], "sized: give --topology: this generator sizes the cluster to a job"),
    (["cluster", "--preset", "8high", "--generator", "imacs"], "give exactly one of --preset and --generator"),
    (["topology", "synthetic", "tasks=10", "seed=99999999999999999999"], "synthetic: seed: must be a number 0..2,147,483,647"),
    (["topology", "synthetic", "tasks=10", "seed=-1"], "synthetic: seed: must be a number 0..2,147,483,647, got '-1'"),
    (["topology", "microbench", "layout=star", "tasks=-12"], "microbench: tasks: must be a number 0..2,147,483,647"),
])
def test_bad_arguments_are_one_line_exit_2(argv, message, tmp_path, cli):
    code, _, err = cli(["workload", *argv, "-o", str(tmp_path / "x.yaml")])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.yaml").exists()


def test_list_shows_every_name(cli):
    code, out, _ = cli(["workload", "list"])
    assert code == 0 and all(name in out for name in [*TOPOLOGIES, *CLUSTER_GENERATORS, *PRESETS])

"""Storm's ResourceAwareScheduler as the plugin's fallback (``streamplace.fallback.scheduler:
ras``, here in the topology's conf), on a real embedded Storm: a job without a plan is placed by
Storm's RAS on the CPU and memory the spec declares and the capacity each node's supervisor
offers; the same job without the setting gets Storm's EvenScheduler, in the same Nimbus."""

import pytest

from streamplace.model import Cluster, Node, Operator, Problem, Stream, Topology
from streamplace.storm.errors import StormError
from streamplace.storm.run import Job, RunSettings, fallback_conf, run_jobs
from streamplace.storm.testbed import supervisor_capacity

#: each counter declares 0.6 cores, each node offers one: two counters never fit on one node
COUNTER_CORES = 0.6


@pytest.fixture(scope="module")
def ras(storm_ready, tmp_path_factory):
    topo = Topology.build("ras", [Operator("s", 1, role="source", source_rate=100.0),
                                  Operator("k", 4, cpu_demand=COUNTER_CORES, memory_mb=300.0)], [Stream("s", "k")])
    # five nodes: whichever job Nimbus places first, four whole nodes are left for RAS' counters
    # (the EvenScheduler's job declares the same 2.4 cores on one node; RAS counts them there)
    cluster = Cluster.build("five", [Node(f"n{i}", 4, cores=1, memory_mb=2048.0, slots=2) for i in range(5)])
    problem = Problem.from_topology(topo, cluster)
    named = {name: type(topo)(name=name, operators=topo.operators, streams=topo.streams) for name in ("ras", "even")}
    # at once, the even job submitted first: RAS then places around the CPU the even job declares
    jobs = [Job("even", named["even"], None, 1, group=0),
            Job("ras", named["ras"], None, 1, conf=fallback_conf("ras"), group=0)]
    return problem, run_jobs(cluster, jobs, RunSettings(), tmp_path_factory.mktemp("storm-ras"))


def test_storms_ras_places_a_job_without_a_plan_within_each_nodes_declared_cpu(ras):
    """4 counters x 0.6 cores on 1-core nodes: one counter per node, whatever else RAS packs
    (the spout's and Storm's system executors declare Storm's default 10 % each). The job asks for
    one worker (topology.workers 1), where the EvenScheduler would put every executor, on one
    node; RAS sizes workers by the declared memory instead."""
    _, results = ras
    for name, nodes in (("ras", 4), ("even", 1)):
        assignment = results[name]["assignment"]
        assert len({assignment[f"k[{i}]"]["node"] for i in range(4)}) == nodes, (name, assignment)
        status = results[name]["scheduler_status"]   # the plugin's (for RAS, after its "Fully Scheduled by ...")
        want = "ResourceAwareScheduler" if name == "ras" else "EvenScheduler"
        assert status.startswith("streamplace: no plan ") and status.endswith(f"; {want}"), status


def test_only_a_job_for_ras_carries_the_plugins_setting():
    assert fallback_conf("ras") == {"streamplace.fallback.scheduler": "ras"} and fallback_conf("even") == {}
    with pytest.raises(StormError, match="--storm-scheduler: must be one of even, ras"):
        fallback_conf("fifo")


def test_the_nodes_offer_the_specs_cores_and_memory():
    node = Node("n", 4, cores=2.5, memory_mb=3000.0)
    assert supervisor_capacity(node) == {"supervisor.cpu.capacity": 250.0, "supervisor.memory.capacity.mb": 3000.0}
    assert supervisor_capacity(Node("m", 4, cores=1)) == {"supervisor.cpu.capacity": 100.0}   # no memory stated: Storm's

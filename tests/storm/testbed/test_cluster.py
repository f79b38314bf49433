"""The testbed: a real three-node Storm cluster (namespaces, tc, cgroups) runs a topology under a
plan; Storm's assignment is the plan; the wire counters see the placement; teardown leaves nothing."""

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from streamplace.model import Cluster, Node, Operator, Placement, Stream, Topology
from streamplace.model.specs import cluster_to_dict, topology_to_dict, write_document
from streamplace.storm.run import Job, RunSettings, run_jobs
from streamplace.model.cluster import cpu_scale
from streamplace.storm.testbed.cgroups import CpuCgroups
from streamplace.storm.testbed import cluster as testbed_cluster   # not its TestbedSettings: pytest would try to collect it

from .conftest import leftovers, netns_exists

CLI = [sys.executable, "-m", "streamplace"]


def _bed():
    """Three spouts feed three sinks by shuffle; 2 kB tuples, so data dominates Storm's framing."""
    topo = Topology.build("wire", [Operator("S", 3, role="source", source_rate=60.0, tuple_bytes=2000),
                                   Operator("B", 3, role="sink")], [Stream("S", "B", grouping="shuffle")])
    cluster = Cluster.build("three", [Node(f"n{i}", 4, slots=1, cores=1) for i in range(3)])
    return topo, cluster


def _placement(nodes):
    return Placement(node=np.array(nodes), worker=np.zeros(len(nodes), dtype=int))


def _named(topo, name):
    return Topology.build(name, topo.operators, topo.streams)


@pytest.fixture(scope="module")
def runs(testbed_ready, tmp_path_factory):
    """One testbed, two topologies one after another: spread over the three nodes (S[i], B[i] on
    node i), then everything on node n0. A leftover namespace and cgroup of a 'killed earlier
    run' are planted first: the testbed must remove them."""
    topo, cluster = _bed()
    subprocess.run(["ip", "netns", "add", "streamplace-n9"], check=True)
    CpuCgroups.detect().create("streamplace-n9")
    assert topo.task_labels == ["S[0]", "S[1]", "S[2]", "B[0]", "B[1]", "B[2]"]
    spread = _placement([0, 1, 2, 0, 1, 2])
    single = _placement([0] * 6)
    jobs = [Job("spread", _named(topo, "spread"), spread, 3, monitor=True, duration_s=8),
            Job("single", _named(topo, "single"), single, 1, monitor=True, duration_s=8)]
    work = tmp_path_factory.mktemp("testbed")
    # 8 s measured (four windows), not 4: over 4 s the wire was 14 % above the monitor in one
    # clean-clone run on 2026-11-29 (the bound below is 10 %); a difference at the interval's
    # edges, which is what a 4-s interval is most exposed to, weighs half as much over 8 s
    settings = RunSettings(mode="cluster", warmup_s=2, duration_s=8, window_s=2, monitor_via="metrics")
    results = run_jobs(cluster, jobs, settings, work, monitor_dir=work / "monitor")
    return topo, cluster, {"spread": spread, "single": single}, results, work, leftovers()


def test_storms_assignment_is_the_plan(runs):
    topo, cluster, plans, results, _, _ = runs
    for name, plan in plans.items():
        assert results[name]["scheduler_status"].startswith("streamplace: plan applied"), results[name]["scheduler_status"]
        assert results[name]["assignment"] == plan.to_mapping(topo.task_labels, cluster)


def test_supervisors_give_workers_on_small_nodes_time_to_start(runs):
    """Storm's 120-s launch timeout killed workers still starting on 0.19-core nodes; every
    supervisor of the testbed runs with the longer one."""
    work = runs[4]
    confs = sorted((work / "testbed" / "conf").glob("supervisor-*.yaml"))
    assert [c.name for c in confs] == ["supervisor-n0.yaml", "supervisor-n1.yaml", "supervisor-n2.yaml"]
    for conf in confs:
        assert json.loads(conf.read_text())["supervisor.worker.start.timeout.secs"] == testbed_cluster.WORKER_START_TIMEOUT_S > 120


def test_one_node_sends_almost_nothing_over_the_wire(runs):
    _, _, _, results, _, _ = runs
    spread = sum(results["spread"]["wire"].values())
    single = sum(results["single"]["wire"].values())
    assert spread > 100_000, results["spread"]["wire"]   # 2/3 of 2 kB tuples cross: hundreds of kB
    assert single < 0.05 * spread, (single, spread)


def test_wire_bytes_match_the_monitors_cross_node_bytes(runs):
    from streamplace.storm import records
    _, _, _, results, work, _ = runs
    r = results["spread"]
    traffic = records.traffic_records(work / "monitor", r["measure_start"], r["measure_end"])
    node_of = {label: where["node"] for label, where in r["assignment"].items()}
    monitor = records.cross_node_bytes(traffic, node_of)
    wire = sum(r["wire"].values())
    # the wire also carries what Storm sends besides the tuples' bytes (their serialised framing,
    # Netty's, the workers' load and back-pressure messages, the monitor's windows on their way to
    # the metrics consumer), and more of it on a loaded machine: 11.9 % and 14 % over were seen
    # in full test runs, a few per cent on a quiet one. Every monitored byte crosses.
    assert 0.95 * monitor <= wire <= 1.20 * monitor, (wire, monitor)


def test_every_nodes_windows_reach_the_host_only_through_storms_metrics_path(runs):
    """Each node's workers get no monitor directory: every record file is the receiver's, named by
    the worker's node address, and the spread job's windows come from all three nodes."""
    from streamplace.storm import records
    topo, cluster, _, results, work, _ = runs
    for name in ("spread", "single"):
        assert results[name]["records"]["via"] == "metrics" and results[name]["records"]["dropped"] == 0
    # load-<host>-<worker>.jsonl, host a node's address (neither the host's .1 nor the control's .2)
    hosts = {p.name.split("-")[1] for p in (work / "monitor").iterdir()}
    assert len(hosts) == 3 and all(h.startswith("10.213.0.") and h not in ("10.213.0.1", "10.213.0.2") for h in hosts), hosts
    r = results["spread"]
    load = records.load_records(work / "monitor", r["measure_start"], r["measure_end"])
    windows = round((r["measure_end"] - r["measure_start"]) / 2)
    assert sorted(load["task"]) == sorted(topo.task_labels * windows)   # every task, every window, once


def test_node_cpu_stays_within_the_quota_and_follows_the_workers(runs):
    _, cluster, _, results, _, _ = runs
    quota = cpu_scale(cluster, testbed_cluster.TestbedSettings().budget())   # each node has 1 core
    for name in ("spread", "single"):
        cpu = results[name]["node_cpu"]
        assert set(cpu) == {n.name for n in cluster.nodes}
        for node, figures in cpu.items():
            assert 0 <= figures["cores"] <= quota * 1.05 + 0.02, (name, node, figures)
            assert 0 <= figures["throttled"] <= 1
    single = results["single"]["node_cpu"]   # n1 and n2 run only their supervisor
    assert single["n0"]["cores"] > max(single["n1"]["cores"], single["n2"]["cores"]), single


def test_teardown_leaves_nothing(runs):
    *_, left = runs
    assert left == []
    assert not netns_exists("streamplace-n9")   # the planted leftover went too


def test_sigint_mid_run_stops_and_tears_down(testbed_ready, tmp_path):
    topo, cluster = _bed()
    write_document(topology_to_dict(topo), tmp_path / "t.yaml")
    write_document(cluster_to_dict(cluster), tmp_path / "c.yaml")
    proc = subprocess.Popen([*CLI, "storm", "run", str(tmp_path / "t.yaml"), str(tmp_path / "c.yaml"), "--storm-default",
                             "--mode", "cluster", "--warmup", "60", "--duration", "10", "-o", str(tmp_path / "out")],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        for line in proc.stderr:   # interrupt once the supervisors run (daemons, namespaces, cgroups all exist)
            if "supervisors up" in line:
                break
        assert netns_exists("streamplace-n0")
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        code = proc.wait(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 130, rest
    assert "streamplace: interrupted" in rest
    assert took < 10, took
    assert leftovers() == []
    assert not (tmp_path / "out").exists()


def test_a_network_can_be_built_again_right_after_it_was_destroyed(testbed_ready):
    """The kernel drops a deleted namespace's veths in the background; destroy waits for them,
    so back-to-back testbeds (a campaign after a test run) do not meet 'File exists'."""
    from streamplace.storm.testbed.network import Network, NodeLink
    nodes = [NodeLink(i, f"n{i}", 1.25e8) for i in range(4)]
    try:
        for _ in range(3):
            Network(nodes).create()
            Network.destroy()
            assert leftovers() == []
    finally:
        Network.destroy()


def _listening(port: int, within: float) -> bool:
    import socket
    deadline = time.monotonic() + within
    while True:
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex((testbed_cluster.CONTROL_IP, port)) == 0:
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def test_a_killed_daemon_is_gone_and_starts_again_with_its_own_command(testbed_ready, tmp_path):
    """The faults the autopilot is tested against: Nimbus killed stops listening, started again
    listens again; a running daemon is not started twice; the restarted one is torn down too."""
    cluster = Cluster.build("one", [Node("n0", 4, slots=1, cores=1)])
    with testbed_cluster.Testbed(cluster, tmp_path / "bed", tmp_path / "plans") as bed:
        assert testbed_cluster.active() is bed
        assert bed.daemon_names() == ["zookeeper", "nimbus", "supervisor-n0"]
        bed.kill("nimbus")
        assert not _listening(testbed_cluster.NIMBUS_PORT, 0.0)
        with pytest.raises(testbed_cluster.StormError, match="is running; kill it first"):
            bed.start_again("supervisor-n0")
        with pytest.raises(testbed_cluster.StormError, match="no daemon 'nimbus2'"):
            bed.kill("nimbus2")
        bed.start_again("nimbus")
        assert _listening(testbed_cluster.NIMBUS_PORT, testbed_cluster.START_TIMEOUT_S)
    assert testbed_cluster.active() is None
    assert leftovers() == []

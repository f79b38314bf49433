"""Testbed pieces that need no root: cgroup detection on a fake hierarchy, the wire arithmetic,
preflight's one-line refusals."""

import pytest

from streamplace.storm import StormError
from streamplace.storm.testbed import cluster as testbed_cluster
import os

from streamplace.storm.testbed.cgroups import PARENT, CpuCgroups, CpuReading, node_cpu
from streamplace.storm.testbed.network import HEADER_BYTES, NodeLink, wire_data_bytes


def test_cgroup_v2_is_found_by_its_controllers_file(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    groups = CpuCgroups.detect(tmp_path)
    assert groups == CpuCgroups(tmp_path / PARENT, 2)


def test_cgroup_v1_is_found_by_the_cpu_hierarchy(tmp_path):
    (tmp_path / "cpu,cpuacct").mkdir()
    (tmp_path / "cpu,cpuacct" / "cpu.cfs_quota_us").write_text("-1\n")
    assert CpuCgroups.detect(tmp_path) == CpuCgroups(tmp_path / "cpu,cpuacct" / PARENT, 1)


def test_no_cpu_controller_is_none(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("memory pids\n")
    assert CpuCgroups.detect(tmp_path) is None


def test_v1_quota_files_are_written_in_microseconds(tmp_path):
    groups = CpuCgroups(tmp_path / PARENT, 1)
    group = groups.create("n0")
    groups.limit("n0", 0.75)
    assert (group / "cpu.cfs_quota_us").read_text() == "75000"
    assert (group / "cpu.cfs_period_us").read_text() == "100000"
    groups.limit("n0", None)
    assert (group / "cpu.cfs_quota_us").read_text() == "-1"


def test_a_shorter_period_scales_the_quota_with_it(tmp_path):
    groups = CpuCgroups(tmp_path / PARENT, 1)
    group = groups.create("n0")
    groups.limit("n0", 0.25, period_us=10_000)
    assert (group / "cpu.cfs_quota_us").read_text() == "2500" and (group / "cpu.cfs_period_us").read_text() == "10000"
    (tmp_path / "v2").mkdir()
    v2 = CpuCgroups(tmp_path / "v2" / PARENT, 2)
    v2.create("n1")
    v2.limit("n1", 0.5, period_us=20_000)
    assert (tmp_path / "v2" / PARENT / "n1" / "cpu.max").read_text() == "10000 20000"


def test_v2_cpu_max_holds_quota_and_period(tmp_path):
    groups = CpuCgroups(tmp_path / PARENT, 2)
    group = groups.create("n1")
    groups.limit("n1", 1.5)
    assert (group / "cpu.max").read_text() == "150000 100000"
    assert (tmp_path / PARENT / "cgroup.subtree_control").read_text() == "+cpu"


def test_v2_reading_takes_usage_and_throttled_periods_from_cpu_stat(tmp_path):
    groups = CpuCgroups(tmp_path / PARENT, 2)
    group = groups.create("n0")
    (group / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\nnr_periods 40\nnr_throttled 30\nthrottled_usec 9\n")
    assert groups.reading("n0") == CpuReading(2.5, 40, 30)


def test_v1_reading_sums_the_processes_of_the_group_from_proc(tmp_path):
    groups = CpuCgroups(tmp_path / PARENT, 1)
    group = groups.create("n0")
    (group / "cpu.stat").write_text("nr_periods 10\nnr_throttled 2\nthrottled_time 5\n")
    (group / "cgroup.procs").write_text(f"{os.getpid()}\n999999999\n")   # this process, and one that is gone
    sum(i * i for i in range(300_000))   # some CPU of our own
    mine = os.times()
    reading = groups.reading("n0")
    assert reading.periods == 10 and reading.throttled == 2
    assert 0 < reading.cpu_s <= mine.user + mine.system + 0.05


def test_node_cpu_is_cores_and_throttled_share_between_two_readings():
    assert node_cpu(CpuReading(1.0, 100, 10), CpuReading(4.0, 160, 55), 6.0) == {"cores": 0.5, "throttled": 0.75}
    assert node_cpu(CpuReading(1.0, 5, 0), CpuReading(1.0, 5, 0), 6.0) == {"cores": 0.0, "throttled": 0.0}


def test_wire_data_bytes_drop_the_headers_of_every_packet():
    before = {("a", "b"): (1_000, 10), ("b", "a"): (500, 5)}
    after = {("a", "b"): (1_000 + 10 * (1448 + HEADER_BYTES), 20), ("b", "a"): (500 + 10 * HEADER_BYTES, 15)}
    assert wire_data_bytes(before, after) == {("a", "b"): 14_480, ("b", "a"): 0}   # b's packets are pure ACKs


def test_node_links_get_distinct_namespaces_addresses_and_veths():
    links = [NodeLink(i, f"n{i}", 1e6) for i in range(3)]
    assert len({(l.netns, l.ip, l.veth) for l in links}) == 3
    assert [l.ip for l in links] == ["10.213.0.10", "10.213.0.11", "10.213.0.12"]


def test_preflight_refuses_without_root(monkeypatch):
    monkeypatch.setattr(testbed_cluster.os, "geteuid", lambda: 1000)
    with pytest.raises(StormError, match="needs root") as err:
        testbed_cluster.preflight()
    assert "\n" not in str(err.value)


def test_preflight_refuses_without_a_cpu_controller(monkeypatch):
    monkeypatch.setattr(testbed_cluster.os, "geteuid", lambda: 0)
    monkeypatch.setattr(testbed_cluster.shutil, "which", lambda tool: f"/usr/sbin/{tool}")
    monkeypatch.setattr(testbed_cluster.subprocess, "run", lambda *a, **k: type("R", (), {"returncode": 0})())
    monkeypatch.setattr(testbed_cluster.CpuCgroups, "detect", staticmethod(lambda root=None: None))
    with pytest.raises(StormError, match="cgroup cpu controller"):
        testbed_cluster.preflight()


def test_cpu_scale_keeps_relative_speeds_within_the_budget():
    from streamplace.model import Cluster, Node
    from streamplace.storm.testbed import Testbed, TestbedSettings
    cluster = Cluster.build("c", [Node("hi", 4, cores=4), Node("lo", 2, cores=2)])
    bed = Testbed(cluster, "/tmp/unused", "/tmp/unused", TestbedSettings(cpu_budget=1.5))
    assert bed.cpu_scale == pytest.approx(0.25)
    assert bed.node_cpus == {"hi": pytest.approx(1.0), "lo": pytest.approx(0.5)}


def test_scaled_bandwidth_shrinks_every_link_with_the_cpu_scale():
    from streamplace.model import Cluster, Node
    from streamplace.storm.testbed import Testbed, TestbedSettings
    cluster = Cluster.build("c", [Node("hi", 4, cores=4, bandwidth=1.25e8), Node("lo", 2, cores=2, bandwidth=1.25e8)])
    full = Testbed(cluster, "/tmp/unused", "/tmp/unused", TestbedSettings(cpu_budget=1.5))
    scaled = Testbed(cluster, "/tmp/unused", "/tmp/unused", TestbedSettings(cpu_budget=1.5, bandwidth_scaled=True))
    assert [l.bandwidth for l in full.links] == [1.25e8, 1.25e8]
    # 1.5 cores over 6: each node keeps a quarter of its cores, so a quarter of its link
    assert [l.bandwidth for l in scaled.links] == [pytest.approx(1.25e8 / 4), pytest.approx(1.25e8 / 4)]


def test_cpu_period_outside_the_kernels_bounds_is_one_clear_error():
    from streamplace.storm.testbed import TestbedSettings
    assert TestbedSettings(cpu_period_ms=10).cpu_period_ms == 10
    for bad in (0.5, 1500):
        with pytest.raises(StormError, match=r"--cpu-period-ms: must be in \[1, 1000\] ms"):
            TestbedSettings(cpu_period_ms=bad)


def test_a_period_too_short_for_the_slowest_nodes_quota_is_one_clear_error():
    from streamplace.model import Cluster, Node
    from streamplace.storm.testbed import Testbed, TestbedSettings
    cluster = Cluster.build("c", [Node("hi", 4, cores=4), Node("lo", 1, cores=1)])   # lo gets 0.2 cores of 1.0
    assert Testbed(cluster, "/tmp/unused", "/tmp/unused", TestbedSettings(cpu_budget=1.0, cpu_period_ms=5)).node_cpus["lo"] == \
        pytest.approx(0.2)
    with pytest.raises(StormError, match=r"^--cpu-period-ms: node lo's quota of 0.2 cores would be under the kernel's 1 ms "
                                         r"minimum at 4 ms; use at least 5 ms$"):
        Testbed(cluster, "/tmp/unused", "/tmp/unused", TestbedSettings(cpu_budget=1.0, cpu_period_ms=4))

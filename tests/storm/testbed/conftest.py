"""Testbed tests need what the testbed needs (root, ip/tc, network namespaces, the cgroup cpu
controller) besides Java and the built module; where any is missing they skip, saying which."""

import subprocess
from pathlib import Path

import pytest

from streamplace.storm import StormError
from streamplace.storm.testbed import preflight
from streamplace.storm.testbed.cgroups import CpuCgroups
from streamplace.storm.testbed.network import BRIDGE, bridge_exists, leftover_namespaces, leftover_veths


@pytest.fixture(scope="session")
def testbed_ready(storm_ready):
    try:
        preflight()
    except StormError as exc:
        pytest.skip(f"the Storm testbed cannot run here: {exc}")
    return True


def leftovers() -> list[str]:
    """Whatever of a testbed still exists: namespaces, veths, the bridge, cgroups, processes."""
    out = list(leftover_namespaces()) + leftover_veths()
    if bridge_exists():
        out.append(BRIDGE)
    groups = CpuCgroups.detect()
    if groups is not None and groups.parent.exists():
        out.append(str(groups.parent))
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"org.apache.storm.daemon" in cmd or b"ZooKeeperServerMain" in cmd or b"org.streamplace.storm.ClusterRunner" in cmd:
            out.append(f"process {proc.name}: {cmd[:80]!r}")
    return out


def netns_exists(name: str) -> bool:
    return name in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout

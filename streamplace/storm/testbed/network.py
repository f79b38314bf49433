"""The testbed's network: one Linux network namespace per cluster node, joined by a bridge.

Layout (subnet ``10.213.0.0/24``, nothing outside it): the bridge ``spbr0`` holds the host's
address ``.1``; the control namespace (ZooKeeper, Nimbus) has ``.2``; node ``i`` of the cluster
spec has ``.{10+i}``. Each namespace reaches the bridge through a veth pair: ``eth0`` inside,
``spv<i>`` (``spvc`` for control) on the bridge. Nothing is routed beyond the subnet.

Bandwidth: a node's ``bandwidth`` (bytes/s) is enforced by an HTB class on both ends of its veth
pair: egress of ``eth0`` (what the node sends) and egress of ``spv<i>`` (what it receives).

Wire counters: the node side's HTB has one leaf class per other node (a u32 filter on the
destination address) and a default leaf for everything else (the control namespace). The leaves'
byte and packet counters are what crossed from node to node on the wire. Only workers talk
between nodes (supervisors talk to Nimbus and ZooKeeper in the control namespace, and to their
own workers over ``lo``), so the per-destination leaves hold exactly the workers' traffic.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import StormError

SUBNET = "10.213.0"
BRIDGE = "spbr0"
NETNS_PREFIX = "streamplace-"
HOST_IP = f"{SUBNET}.1"
CONTROL_IP = f"{SUBNET}.2"
CONTROL_NS = f"{NETNS_PREFIX}control"
MAX_NODES = 200
# Bytes of headers per packet on the wire: Ethernet 14 + IPv4 20 + TCP 32 (with timestamps, Linux's default)
HEADER_BYTES = 66
_QUANTUM = 60_000  # HTB's default (rate / 10) is far above the MTU at these rates
_CLASS_STATS = re.compile(r"^class htb (?P<handle>\S+) .*\n\s*Sent (?P<bytes>\d+) bytes (?P<packets>\d+) pkt", re.M)


@dataclass(frozen=True)
class NodeLink:
    """One node's namespace, address and shaping."""

    index: int
    name: str
    bandwidth: float  # bytes/s

    @property
    def netns(self) -> str:
        return f"{NETNS_PREFIX}n{self.index}"

    @property
    def ip(self) -> str:
        return f"{SUBNET}.{10 + self.index}"

    @property
    def veth(self) -> str:
        return f"spv{self.index}"


def ip(*args: str, netns: str | None = None) -> str:
    """Run ``ip`` (in ``netns`` if given); its stdout; StormError with its message on failure."""
    cmd = ["ip", *(["-n", netns] if netns else []), *args]
    return _run(cmd)


def tc(*args: str, netns: str | None = None) -> str:
    cmd = ["ip", "netns", "exec", netns, "tc", *args] if netns else ["tc", *args]
    return _run(cmd)


def _run(cmd: Sequence[str]) -> str:
    done = subprocess.run(list(cmd), capture_output=True, text=True)
    if done.returncode != 0:
        raise StormError(f"testbed network: `{' '.join(cmd)}` failed: {done.stderr.strip() or done.returncode}")
    return done.stdout


def _rate(bytes_per_s: float) -> str:
    return f"{max(8, int(bytes_per_s * 8))}bit"


class Network:
    """Creates and removes the namespaces, veths, bridge and shaping of one testbed."""

    def __init__(self, nodes: Sequence[NodeLink]):
        if len(nodes) > MAX_NODES:
            raise StormError(f"the testbed takes at most {MAX_NODES} nodes, the cluster has {len(nodes)}")
        self.nodes = tuple(nodes)

    def create(self) -> None:
        ip("link", "add", BRIDGE, "type", "bridge")
        ip("addr", "add", f"{HOST_IP}/24", "dev", BRIDGE)
        ip("link", "set", BRIDGE, "up")
        self._namespace(CONTROL_NS, "spvc", CONTROL_IP)
        for node in self.nodes:
            self._namespace(node.netns, node.veth, node.ip)
            self._shape(node)

    def _namespace(self, netns: str, veth: str, address: str) -> None:
        ip("netns", "add", netns)
        ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns)
        ip("link", "set", veth, "master", BRIDGE, "up")
        ip("addr", "add", f"{address}/24", "dev", "eth0", netns=netns)
        ip("link", "set", "eth0", "up", netns=netns)
        ip("link", "set", "lo", "up", netns=netns)

    def _shape(self, node: NodeLink) -> None:
        rate = _rate(node.bandwidth)
        # what the node receives: the bridge side's egress
        tc("qdisc", "add", "dev", node.veth, "root", "handle", "1:", "htb", "default", "1")
        tc("class", "add", "dev", node.veth, "parent", "1:", "classid", "1:1", "htb", "rate", rate, "quantum", str(_QUANTUM))
        # what it sends: one leaf per destination node (counters), default leaf 1:2 for control traffic
        ns = node.netns
        tc("qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "2", netns=ns)
        tc("class", "add", "dev", "eth0", "parent", "1:", "classid", "1:1", "htb", "rate", rate, "quantum", str(_QUANTUM), netns=ns)
        share = _rate(node.bandwidth / (len(self.nodes) + 1))
        for peer in [None, *self.nodes]:
            if peer is not None and peer.index == node.index:
                continue
            leaf = "1:2" if peer is None else _leaf(peer.index)
            tc("class", "add", "dev", "eth0", "parent", "1:1", "classid", leaf, "htb", "rate", share, "ceil", rate,
               "quantum", str(_QUANTUM), netns=ns)
            if peer is not None:
                tc("filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                   "match", "ip", "dst", f"{peer.ip}/32", "flowid", leaf, netns=ns)

    def counters(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(sender node, receiver node) -> (bytes, packets) sent so far, from the HTB leaves."""
        out = {}
        for node in self.nodes:
            sent = {m["handle"]: (int(m["bytes"]), int(m["packets"]))
                    for m in _CLASS_STATS.finditer(tc("-s", "class", "show", "dev", "eth0", netns=node.netns))}
            for peer in self.nodes:
                if peer.index != node.index:
                    out[(node.name, peer.name)] = sent[_leaf(peer.index)]
        return out

    @staticmethod
    def destroy(wait_s: float = 10.0) -> None:
        """Remove every testbed namespace, veth and the bridge; never fails. The kernel removes a
        deleted namespace's veths in the background: this waits (up to ``wait_s``) until their
        host ends are gone too, so that a testbed started right after does not find them."""
        for netns in leftover_namespaces():
            subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
        deadline = time.monotonic() + wait_s
        while (veths := leftover_veths()) and time.monotonic() < deadline:
            for veth in veths:
                subprocess.run(["ip", "link", "delete", veth], capture_output=True)
            time.sleep(0.1)
        if bridge_exists():
            subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)


def _leaf(index: int) -> str:
    """The HTB leaf that counts traffic to node ``index`` (tc reads and prints minors in hex)."""
    return f"1:{16 + index:x}"


def leftover_namespaces() -> list[str]:
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in done.stdout.splitlines() if line.startswith(NETNS_PREFIX)]


def leftover_veths() -> list[str]:
    """Host ends of testbed veths (``spvc``, ``spv<i>``) in this namespace."""
    done = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True)
    names = (line.split(":")[1].strip().split("@")[0] for line in done.stdout.splitlines() if line.count(":") >= 2)
    return [n for n in names if re.fullmatch(r"spv(c|\d+)", n)]


def bridge_exists() -> bool:
    return subprocess.run(["ip", "link", "show", BRIDGE], capture_output=True).returncode == 0


def wire_data_bytes(before: dict, after: dict) -> dict[tuple[str, str], int]:
    """Data bytes per node pair between two :meth:`Network.counters` readings: wire bytes minus
    the headers of every packet (:data:`HEADER_BYTES`), so pure ACKs count as nothing."""
    out = {}
    for pair, (b1, p1) in after.items():
        b0, p0 = before.get(pair, (0, 0))
        out[pair] = max(0, (b1 - b0) - HEADER_BYTES * (p1 - p0))
    return out

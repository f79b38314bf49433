"""A distributed Storm 2.8 cluster on one machine: each daemon its own JVM, each node its own
network namespace with a shaped NIC and a CPU quota.

:class:`Testbed` (a context manager) starts, in this order: the network (:mod:`.network`), the
cgroups (:mod:`.cgroups`), ZooKeeper (fresh state every run) and Nimbus with the plan plugin (the
plugin jar alone, as a user installs it) in the control namespace, and one Supervisor per
cluster node in the node's namespace and cgroup, reporting the node's address as its host and
the node's name as ``supervisor.scheduler.meta node``. The supervisors start Storm's real worker
processes, which inherit both. Storm's distribution layout (``lib/``, ``lib-worker/``,
``log4j2/``) is the one the Maven build assembles in ``storm/target/storm-home``.

CPU: node ``i`` gets ``cores_i * scale`` CPUs, with one scale for the whole cluster,
``scale = min(1, (cpu_count - HEADROOM_CORES) / sum(cores))``: the nodes keep their relative
speeds and together leave :data:`HEADROOM_CORES` for ZooKeeper, Nimbus and the supervisors. The
quotas apply from the moment a topology's workers all run (:meth:`Testbed.limit_cpu`): start-up
(JVMs loading classes) runs unthrottled, so it is not slowed to a crawl.

Teardown (:meth:`Testbed.close`) always runs: normal end, error, Ctrl-C, SIGTERM. It kills every
process in the testbed's cgroups and namespaces and removes namespaces, bridge and cgroups. A lock
(``flock`` on :data:`LOCK_FILE`) keeps two testbeds apart; the one that takes it removes whatever
a killed earlier run left behind.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ...model.cluster import Node, cpu_scale
from ...files import quote
from ...interrupt import cleanup
from ...model import Cluster
from .. import jvm
from ..errors import StormError
from .cgroups import PERIOD_US, CpuCgroups
from .network import CONTROL_IP, CONTROL_NS, Network, NodeLink, bridge_exists, leftover_namespaces, leftover_veths

LOCK_FILE = Path("/run/streamplace-testbed.lock")
HEADROOM_CORES = 0.5
ZK_PORT = 2181
NIMBUS_PORT = 6627
FIRST_WORKER_PORT = 6700
CONTROL_GROUP = "control"
START_TIMEOUT_S = 90.0
#: how long a supervisor waits for a worker it launched to heartbeat before killing and
#: relaunching it. Storm's default, 120 s, is less than four workers take to start together on a
#: node of 0.19 cores (8 high at CPU scale 0.047: 110-117 s measured, and a worker killed at
#: 120 s was relaunched into the same crowd, round after round, until the job gave up).
WORKER_START_TIMEOUT_S = 600


@dataclass(frozen=True, kw_only=True)
class TestbedSettings:
    """Sizes of the testbed's JVMs and its CPU budget."""

    worker_heap_mb: int = 256  # Storm's own rule would give each worker 128 MB per executor
    supervisor_heap_mb: int = 160
    nimbus_heap_mb: int = 384
    zookeeper_heap_mb: int = 128
    cpu_budget: float | None = None  # cores for all nodes together; None: cpu_count - HEADROOM_CORES
    #: more options for every daemon's JVM, ``{name}`` replaced by the daemon's (e.g. zookeeper,
    #: nimbus, supervisor-high0); storm/conf/cds/regenerate.py lists the classes they load so
    daemon_jvm_opts: tuple[str, ...] = ()
    #: the CFS period of the nodes' quotas: a node of c cores runs c * period of CPU time per period
    #: and is throttled for the rest of it (at c = 0.2 and 100 ms, stalls of 80 ms)
    cpu_period_ms: float = PERIOD_US / 1000
    #: links shaped to the spec's bandwidth times the CPU scale, so that a miniature keeps the
    #: cluster's CPU:network ratio (False: every link keeps the spec's full bandwidth)
    bandwidth_scaled: bool = False

    def __post_init__(self):
        if min(self.worker_heap_mb, self.supervisor_heap_mb, self.nimbus_heap_mb, self.zookeeper_heap_mb) < 64:
            raise StormError("--worker-heap-mb (and every testbed heap) must be >= 64 MB")
        if self.cpu_budget is not None and not (0.05 <= self.cpu_budget <= 4096):
            raise StormError(f"--cpu-budget: must be a number of cores in [0.05, 4096], got {self.cpu_budget}")
        if not 1.0 <= self.cpu_period_ms <= 1000.0:   # the kernel's bounds on a CFS period
            raise StormError(f"--cpu-period-ms: must be in [1, 1000] ms, got {self.cpu_period_ms}")

    def budget(self) -> float:
        return self.cpu_budget if self.cpu_budget is not None else max(0.5, (os.cpu_count() or 1) - HEADROOM_CORES)


def supervisor_capacity(node: Node) -> dict:
    """What the node's supervisor offers Storm's ResourceAwareScheduler: its cores (100 = one
    core, ``supervisor.cpu.capacity``) and, where the spec states it, its memory; the spec's
    figures, not the testbed's CPU share, as the components' declared demands are the spec's."""
    out = {"supervisor.cpu.capacity": 100.0 * float(node.cores)}
    if node.memory_mb > 0:
        out["supervisor.memory.capacity.mb"] = float(node.memory_mb)
    return out


def preflight() -> CpuCgroups:
    """What the testbed needs from this machine; StormError (one line, exit 2) naming what is missing."""
    if not sys.platform.startswith("linux"):
        raise StormError("the Storm testbed needs Linux (network namespaces, tc, cgroups); use --mode embedded")
    if os.geteuid() != 0:
        raise StormError("the Storm testbed needs root (network namespaces, tc, cgroups); run as root or use --mode embedded")
    for tool in ("ip", "tc"):
        if not shutil.which(tool):
            raise StormError(f"the Storm testbed needs `{tool}` (iproute2), not found on PATH; use --mode embedded")
    if subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        raise StormError("the Storm testbed needs network namespaces: `ip netns list` failed; use --mode embedded")
    groups = CpuCgroups.detect()
    if groups is None:
        raise StormError("the Storm testbed needs the cgroup cpu controller (v1 /sys/fs/cgroup/cpu or v2 with cpu "
                         "in cgroup.controllers); use --mode embedded")
    return groups


def holder() -> str | None:
    """The pid holding the testbed lock (another testbed runs), else None."""
    if not LOCK_FILE.exists():
        return None
    with open(LOCK_FILE, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            return fh.read().strip() or "?"
        fcntl.flock(fh, fcntl.LOCK_UN)
    return None


def storm_home() -> Path:
    home = jvm.module_dir() / "storm-home"
    if not (home / "lib").is_dir() or not (home / "lib-worker").is_dir():
        raise StormError(f"Storm's distribution layout is not built ({home} missing): run `make storm` (Maven)")
    return home


WORKER_ARCHIVE = "worker.jsa"
DAEMON_ARCHIVE = "daemons.jsa"


def archive_opts(name: str) -> list[str]:
    """:func:`~..jvm.archive_opts` for the archive ``name`` the build dumps into ``storm-home``:
    :data:`WORKER_ARCHIVE` of the classes in ``storm/conf/cds/worker.classlist``,
    :data:`DAEMON_ARCHIVE` of ``daemons.classlist``."""
    return jvm.archive_opts(jvm.module_dir() / "storm-home" / name)


def worker_childopts(heap_mb: int) -> str:
    """The JVM options of a testbed worker. The JVM honours the last ``-Xmx`` (Storm's own is
    128 MB per executor). C1 only: under a node's CPU quota C2 compiled on into the measured window
    (25-38 % of the workers' CPU). The workers' archive (:func:`archive_opts`) cut the start of 16
    workers on 2 cores from 59-78 s to 44-49 s (``docs/storm.md``)."""
    return " ".join([f"-Xmx{heap_mb}m", "-XX:TieredStopAtLevel=1", *archive_opts(WORKER_ARCHIVE)])


#: every daemon (ZooKeeper, Nimbus, supervisors) compiles with C1 only and maps the daemons'
#: archive: a testbed of 8 nodes came up in 11-15 s instead of 25-27 s (``docs/storm.md``)
DAEMON_OPTS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")


#: the testbed this process runs (at most one: the lock), for what acts on it from beside a run
_ACTIVE: list["Testbed"] = []


def active() -> "Testbed | None":
    """The testbed running in this process, if any."""
    return _ACTIVE[-1] if _ACTIVE else None


class Testbed:
    """A running testbed for ``cluster``; files (confs, logs, ZooKeeper data) under ``work_dir``."""

    def __init__(self, cluster: Cluster, work_dir: Path, plan_dir: Path, settings: TestbedSettings | None = None, *,
                 log=None):
        self.cluster = cluster
        self.work = Path(work_dir).resolve()   # the daemons and workers run in other directories
        self.plan_dir = Path(plan_dir).resolve()
        self.settings = settings or TestbedSettings()
        self.log = log or (lambda message: None)
        self.cpu_scale = cpu_scale(cluster, self.settings.budget())
        link_scale = self.cpu_scale if self.settings.bandwidth_scaled else 1.0
        self.links = tuple(NodeLink(i, n.name, float(n.bandwidth) * link_scale) for i, n in enumerate(cluster.nodes))
        self.node_cpus = {n.name: float(n.cores) * self.cpu_scale for n in cluster.nodes}
        slowest = min(self.node_cpus, key=self.node_cpus.get)
        if self.node_cpus[slowest] * self.settings.cpu_period_ms < 1.0:   # the kernel's smallest quota is 1 ms
            raise StormError(f"--cpu-period-ms: node {slowest}'s quota of {self.node_cpus[slowest]:.3g} cores would be under "
                             f"the kernel's 1 ms minimum at {self.settings.cpu_period_ms:g} ms; use at least "
                             f"{1.0 / self.node_cpus[slowest]:.3g} ms")
        self.network = Network(self.links)
        self._groups: CpuCgroups | None = None
        self._lock = None
        self._procs: list[subprocess.Popen] = []
        self._daemons: dict[str, tuple[list[str], Path]] = {}   # name -> (its command, its log)
        self._running: dict[str, subprocess.Popen] = {}
        self._cleanup = None

    # -- what runners need -------------------------------------------------------------------
    @property
    def nimbus(self) -> dict:
        return {"host": CONTROL_IP, "port": NIMBUS_PORT}

    def ports(self, node_index: int) -> list[int]:
        return [FIRST_WORKER_PORT + k for k in range(int(self.cluster.nodes[node_index].slots))]

    def job_cluster(self) -> list[dict]:
        """The ``cluster`` entries of a ClusterRunner job file."""
        return [{"node": link.name, "host": link.ip, "slots": len(self.ports(link.index)), "ports": self.ports(link.index)}
                for link in self.links]

    def limit_cpu(self, on: bool) -> None:
        """Apply (or lift) the nodes' CPU quotas."""
        for link in self.links:
            self._groups.limit(link.netns, self.node_cpus[link.name] if on else None,
                               period_us=int(round(self.settings.cpu_period_ms * 1000)))

    def counters(self):
        return self.network.counters()

    def cpu_readings(self) -> dict:
        """Node name -> its cgroup's :class:`~.cgroups.CpuReading` now."""
        return {link.name: self._groups.reading(link.netns) for link in self.links}

    # -- faults ------------------------------------------------------------------------------
    def daemon_names(self) -> list[str]:
        """The daemons this testbed runs: ``zookeeper``, ``nimbus``, ``supervisor-<node>``."""
        return list(self._daemons)

    def kill(self, name: str) -> None:
        """SIGKILL one daemon (a fault: a supervisor or Nimbus dying without a word). The workers a
        supervisor started keep running, as on a real node whose supervisor process died."""
        proc = self._running.get(name)
        if proc is None:
            raise StormError(f"testbed: no daemon {quote(name)} (there are {', '.join(self._daemons)})")
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    def start_again(self, name: str) -> None:
        """Start a killed daemon again with its own command, namespace and cgroup (its log is appended to)."""
        if name not in self._daemons:
            raise StormError(f"testbed: no daemon {quote(name)} (there are {', '.join(self._daemons)})")
        if self._running[name].poll() is None:
            raise StormError(f"testbed: daemon {quote(name)} is running; kill it first")
        self._launch(name, *self._daemons[name])

    # -- life cycle ----------------------------------------------------------------------------
    def __enter__(self) -> "Testbed":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        groups = preflight()
        home = storm_home()
        java = jvm.java()
        self._take_lock()
        _ACTIVE.append(self)
        self._cleanup = cleanup(self.close)
        self._cleanup.__enter__()   # Ctrl-C while anything below runs still tears down
        try:
            self._clean_leftovers(groups)
            self._groups = groups
            self.log(f"testbed: {len(self.links)} node namespaces, CPU scale {self.cpu_scale:.3f}")
            self.network.create()
            groups.create(CONTROL_GROUP)
            for link in self.links:
                groups.create(link.netns)
            self._start_daemons(java, home)
        except BaseException:
            self.close()
            raise

    def _take_lock(self) -> None:
        fh = open(LOCK_FILE, "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "?"
            fh.close()
            raise StormError(f"another Storm testbed is running on this machine (pid {holder}, lock {LOCK_FILE})") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._lock = fh

    def _clean_leftovers(self, groups: CpuCgroups) -> None:
        if leftover_namespaces() or leftover_veths() or bridge_exists() or groups.parent.exists():
            self.log("testbed: removing what an earlier, killed testbed run left behind")
            _teardown(groups)

    def close(self) -> None:
        """Stop every process and remove namespaces, bridge and cgroups (safe to call twice)."""
        if self._lock is None:
            return
        for proc in self._procs:
            if proc.poll() is None:
                proc.terminate()
        _teardown(self._groups or CpuCgroups.detect())
        for proc in self._procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs.clear()
        self._running.clear()
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if self._cleanup is not None:
            self._cleanup.__exit__(None, None, None)
            self._cleanup = None
        self._lock.close()
        self._lock = None

    # -- daemons -------------------------------------------------------------------------------
    def _start_daemons(self, java: str, home: Path) -> None:
        zk_dir = self.work / "zookeeper"
        shutil.rmtree(zk_dir, ignore_errors=True)   # fresh ZooKeeper state every run
        zk_dir.mkdir(parents=True)
        common = {
            "storm.zookeeper.servers": [CONTROL_IP], "storm.zookeeper.port": ZK_PORT,
            "nimbus.seeds": [CONTROL_IP], "nimbus.thrift.port": NIMBUS_PORT,
            "task.heartbeat.frequency.secs": 1, "executor.metrics.frequency.secs": 1,
            "worker.childopts": "-Xmx%HEAP-MEM%m -XX:+UseSerialGC -Djava.net.preferIPv4Stack=true",
            "supervisor.worker.shutdown.sleep.secs": 1,
            "supervisor.worker.start.timeout.secs": WORKER_START_TIMEOUT_S,
        }
        lib = f"{home}/lib/*"
        self._daemon(java, home, "zookeeper", CONTROL_NS, CONTROL_GROUP, self.settings.zookeeper_heap_mb, lib,
                     ["org.apache.storm.shade.org.apache.zookeeper.server.ZooKeeperServerMain", str(ZK_PORT), str(zk_dir)],
                     conf=None)
        _await_port(CONTROL_IP, ZK_PORT, "ZooKeeper", self.work / "logs" / "zookeeper.log")
        nimbus_conf = {**common, "storm.local.dir": str(self.work / "nimbus"), "storm.local.hostname": CONTROL_IP,
                       "storm.scheduler": "org.streamplace.storm.PlanScheduler", "streamplace.plan.dir": str(self.plan_dir),
                       "nimbus.monitor.freq.secs": 2, "topology.stats.sample.rate": 1.0,
                       # Storm's default, storm_rocks, is relative to storm.home: the build directory
                       "storm.metricstore.rocksdb.location": str(self.work / "nimbus" / "storm_rocks")}
        plugin = jvm.jar(jvm.PLUGIN_JAR)   # what a user installs on Nimbus, nothing more
        self._daemon(java, home, "nimbus", CONTROL_NS, CONTROL_GROUP, self.settings.nimbus_heap_mb, f"{lib}:{plugin}",
                     ["org.apache.storm.daemon.nimbus.Nimbus"], conf=nimbus_conf)
        for link in self.links:
            conf = {**common, "storm.local.dir": str(self.work / "nodes" / link.name), "storm.local.hostname": link.ip,
                    "supervisor.slots.ports": self.ports(link.index), "supervisor.scheduler.meta": {"node": link.name},
                    **supervisor_capacity(self.cluster.nodes[link.index])}
            self._daemon(java, home, f"supervisor-{link.name}", link.netns, link.netns, self.settings.supervisor_heap_mb,
                         lib, ["org.apache.storm.daemon.supervisor.Supervisor"], conf=conf)
        _await_port(CONTROL_IP, NIMBUS_PORT, "Nimbus", self.work / "logs" / "nimbus.log")

    def _daemon(self, java, home, name, netns, group, heap_mb, cp, main, *, conf) -> None:
        logs = self.work / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        props = [f"-Dstorm.home={home}", f"-Dstorm.log.dir={logs / name}", f"-Dlogfile.name={name}.log",
                 f"-Dlog4j.configurationFile={home / 'log4j2' / 'cluster.xml'}", f"-Ddaemon.name={name}"]
        if conf is not None:
            conf_file = self.work / "conf" / f"{name}.yaml"
            conf_file.parent.mkdir(parents=True, exist_ok=True)
            conf_file.write_text(json.dumps(conf, indent=1))   # JSON is YAML
            props.append(f"-Dstorm.conf.file={conf_file}")
        cmd = [java, "-server", f"-Xmx{heap_mb}m", *DAEMON_OPTS, *archive_opts(DAEMON_ARCHIVE),
               *(opt.replace("{name}", name) for opt in self.settings.daemon_jvm_opts),
               "-Djava.net.preferIPv4Stack=true", f"-Djava.io.tmpdir={self.work / 'tmp'}", *props, "-cp", cp, *main]
        (self.work / "tmp").mkdir(exist_ok=True)
        # join the cgroup first (ip netns exec remounts /sys, hiding it), then the namespace
        script = 'echo $$ > "$0" && exec ip netns exec "$@"'
        self._daemons[name] = (["sh", "-c", script, str(self._groups.procs_file(group)), netns, *cmd], logs / f"{name}.out")
        self._launch(name, *self._daemons[name])

    def _launch(self, name: str, argv: list[str], log: Path) -> None:
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self._procs.append(proc)
        self._running[name] = proc


def _teardown(groups: CpuCgroups | None) -> None:
    """Kill what runs in the testbed's cgroups and namespaces; remove namespaces, bridge, cgroups."""
    for netns in leftover_namespaces():
        pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), 9)
            except (ProcessLookupError, ValueError):
                pass
    if groups is not None:
        groups.destroy(grace=0.5)
    Network.destroy()


def _await_port(host: str, port: int, what: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.2)
    raise StormError(f"testbed: {what} did not listen on {host}:{port} within {START_TIMEOUT_S:.0f} s (see {log})")

"""Shared by the profile tests: a Spark standalone cluster on loopback, and one real
``streamplace profile`` process run against it (its files, its temporary directory and the Java
processes below it are looked at by tests/profile/test_spark.py and test_standalone.py). The
session-scoped ``spark`` fixture (one local SparkSession for the whole test run) is in
tests/conftest.py.

A Spark master and one worker start on loopback from the installed pyspark package
(``pyspark/sbin/spark-daemon.sh``, logs and pid files in a temporary directory, free ports); the
daemons are stopped in a ``finally`` (also when a test fails); every wait is bounded.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyspark
import pytest

from streamplace.interrupt import descendants
from streamplace.model import Operator, Stream, Topology
from streamplace.model.specs import topology_to_dict, write_document
from streamplace.profile.spark import LOG4J

SPARK_HOME = Path(pyspark.__file__).parent
DAEMON = SPARK_HOME / "sbin" / "spark-daemon.sh"
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    raise TimeoutError(f"{what} not ready after {seconds:g} s")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as response:
            return int(json.load(response).get("aliveworkers", 0))
    except OSError:
        return 0


@pytest.fixture(scope="session")
def standalone(tmp_path_factory):
    """A master and one 2-core worker on 127.0.0.1; yields the master URL; always stopped."""
    root = tmp_path_factory.mktemp("standalone") / "spark"
    conf = root / "conf"
    conf.mkdir(parents=True)
    shutil.copy(LOG4J, conf / "log4j2.properties")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_CONF_DIR=str(conf), SPARK_LOG_DIR=str(root / "logs"),
               SPARK_PID_DIR=str(root / "pids"), SPARK_IDENT_STRING=f"streamplace-test-{os.getpid()}",
               SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="512m",
               SPARK_DAEMON_JAVA_OPTS="-XX:TieredStopAtLevel=1")   # C1 only: the daemons start faster
    port, ui_port, worker_ui = _free_port(), _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    started = []

    def daemon(*args):
        return subprocess.run(["bash", str(DAEMON), *map(str, args)], env=env, capture_output=True, text=True, timeout=90, check=False)

    try:
        started.append(MASTER)
        proc = daemon("start", MASTER, 1, "--host", "127.0.0.1", "--port", port, "--webui-port", ui_port)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        _wait(lambda: _port_open(port), 90, "spark master")
        started.append(WORKER)
        proc = daemon("start", WORKER, 1, "--host", "127.0.0.1", "--cores", 2, "--memory", "2g", "--webui-port", worker_ui,
                      "--work-dir", root / "work", url)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        _wait(lambda: _alive_workers(ui_port) >= 1, 120, "spark worker")
        yield url
    finally:
        for cls in reversed(started):
            daemon("stop", cls, 1)
        for pid_file in (root / "pids").glob("*.pid") if (root / "pids").exists() else ():
            pid = int(pid_file.read_text().strip() or 0)
            try:  # stop waits a bounded time; a daemon still there (its own command line) is killed
                if "org.apache.spark.deploy" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                    os.kill(pid, 9)
            except (OSError, ValueError):
                pass



@dataclass
class ProfileProcess:
    """One ``streamplace profile --spark-master <standalone>`` as a real process."""
    code: int
    stderr: str
    dir: Path          # its inputs, and its output in ``dir / "p"``
    scratch: Path      # its TMPDIR, empty before
    jvms: set          # Java processes seen below it while it ran
    left: list         # those still there the moment it exited
    topology: Topology
    master: str


@pytest.fixture(scope="session")
def cluster_profile(standalone, tmp_path_factory):
    """``streamplace profile`` on 4,000 traffic rows (some negative, some to an unknown task,
    some outside ``--from``) against the standalone cluster, ``TMPDIR`` an empty directory of its
    own; the Java processes below it are read from /proc while it runs."""
    tmp = tmp_path_factory.mktemp("cli-profile")
    topo = Topology.build("t", [Operator("a", 3, role="source"), Operator("b", 4)], [Stream("a", "b")])
    write_document(topology_to_dict(topo), tmp / "t.yaml")
    rng = np.random.default_rng(5)
    n = 4000
    frame = pd.DataFrame({"window_start": 60.0 * rng.integers(0, 20, n), "window_seconds": 60.0,
                          "src_task": [f"a[{i}]" for i in rng.integers(0, 3, n)], "dst_task": [f"b[{i}]" for i in rng.integers(0, 4, n)],
                          "tuples": rng.integers(-2, 500, n).astype(float), "bytes": rng.integers(0, 10_000, n).astype(float)})
    frame.loc[::97, "dst_task"] = "b[9]"
    frame.to_csv(tmp / "traffic.csv", index=False)
    scratch = tmp / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "STREAMPLACE_SPARK_MASTER"}
    env["TMPDIR"] = str(scratch)
    args = ["--topology", tmp / "t.yaml", "--traffic", tmp / "traffic.csv", "--decay", "600", "--from", "120"]
    jvms: set[int] = set()
    with open(tmp / "stderr.txt", "w+") as err:
        proc = subprocess.Popen([sys.executable, "-m", "streamplace", "profile", "--spark-master", standalone,
                                 *map(str, args), "-o", str(tmp / "p")], stdout=subprocess.DEVNULL, stderr=err, env=env)
        try:
            deadline = time.monotonic() + 400
            while proc.poll() is None:
                assert time.monotonic() < deadline, "the profile command did not finish in 400 s"
                jvms.update(pid for pid in descendants(proc.pid) if _command(pid) == "java")
                time.sleep(0.05)
            left = [pid for pid in jvms if os.path.exists(f"/proc/{pid}")]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        err.seek(0)
        return ProfileProcess(proc.returncode, err.read(), tmp, scratch, jvms, left, topo, standalone)


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return ""

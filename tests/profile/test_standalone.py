"""Beyond one machine: `streamplace profile --spark-master spark://...` on a standalone cluster.

A Spark master and one worker start on loopback from the installed pyspark package
(``pyspark/sbin/spark-daemon.sh``, logs and pid files in the test's temporary directory, free
ports), the CLI runs in a subprocess against them, and the profile must equal the local-mode
one. The daemons are stopped in a ``finally`` (also when the test fails); every wait is bounded.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pyspark
import pytest

from streamplace.model import Operator, Stream, Topology
from streamplace.model.specs import topology_to_dict, write_document
from streamplace.profile.metrics import build_profile
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


@pytest.fixture
def standalone(tmp_path):
    """A master and one 2-core worker on 127.0.0.1; yields the master URL; always stopped."""
    root = tmp_path / "spark"
    conf = root / "conf"
    conf.mkdir(parents=True)
    shutil.copy(LOG4J, conf / "log4j2.properties")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_CONF_DIR=str(conf), SPARK_LOG_DIR=str(root / "logs"),
               SPARK_PID_DIR=str(root / "pids"), SPARK_IDENT_STRING=f"streamplace-test-{os.getpid()}",
               SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="512m")
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


def test_profile_on_a_standalone_cluster_equals_local_mode(spark, standalone, tmp_path):
    topo = Topology.build("t", [Operator("a", 3, role="source"), Operator("b", 4)], [Stream("a", "b")])
    write_document(topology_to_dict(topo), tmp_path / "t.yaml")
    rng = np.random.default_rng(5)
    n = 4000
    frame = pd.DataFrame({"window_start": 60.0 * rng.integers(0, 20, n), "window_seconds": 60.0,
                          "src_task": [f"a[{i}]" for i in rng.integers(0, 3, n)], "dst_task": [f"b[{i}]" for i in rng.integers(0, 4, n)],
                          "tuples": rng.integers(-2, 500, n).astype(float), "bytes": rng.integers(0, 10_000, n).astype(float)})
    frame.loc[::97, "dst_task"] = "b[9]"
    frame.to_csv(tmp_path / "traffic.csv", index=False)
    args = ["--topology", tmp_path / "t.yaml", "--traffic", tmp_path / "traffic.csv", "--decay", "600", "--from", "120"]
    env = {k: v for k, v in os.environ.items() if k != "STREAMPLACE_SPARK_MASTER"}
    proc = subprocess.run([sys.executable, "-m", "streamplace", "profile", "--spark-master", standalone, *map(str, args),
                           "-o", str(tmp_path / "remote")], capture_output=True, text=True, env=env, timeout=400, check=False)
    assert proc.returncode == 0, proc.stderr
    local = build_profile(spark, topo, [tmp_path / "traffic.csv"], half_life=600.0, start=120.0)
    remote_summary = json.loads((tmp_path / "remote" / "summary.json").read_text())
    assert remote_summary["spark_master"] == standalone
    for key in ("rows_read", "rows_used", "rows_rejected", "rejected_by_reason"):
        assert remote_summary[key] == local.summary[key]
    assert remote_summary["rejected_by_reason"].keys() == {"negative_value", "unknown_task", "outside_range"}
    remote = pd.read_parquet(tmp_path / "remote" / "edges.parquet")
    pd.testing.assert_frame_equal(remote, local.edges, rtol=1e-12)
    rejected = pd.read_parquet(tmp_path / "remote" / "rejected" / "traffic")
    assert len(rejected) == local.summary["rows_rejected"]

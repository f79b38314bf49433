"""The session factory: Java checks, configuration, reuse of the one session."""

import os
import subprocess
import sys

import pytest

from streamplace.profile import spark as sparkmod
from streamplace.profile.spark import SparkUnavailable, java_version, session_conf, spark_session


def _fake_java(tmp_path, version_line):
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(0o755)
    return home


def test_missing_java_is_one_clear_line(tmp_path):
    with pytest.raises(SparkUnavailable) as info:
        java_version({"PATH": str(tmp_path)})
    message = str(info.value)
    assert message.startswith("java: not found in PATH; Spark needs Java 17 or newer") and "\n" not in message
    with pytest.raises(SparkUnavailable, match=r"java: not found in JAVA_HOME=/nonexistent"):
        java_version({"JAVA_HOME": "/nonexistent", "PATH": ""})


def test_old_java_is_refused_and_new_java_accepted(tmp_path):
    old = _fake_java(tmp_path / "old", 'openjdk version "1.8.0_292"')
    with pytest.raises(SparkUnavailable, match=r"is Java 8; Spark 4 needs Java 17 or newer"):
        java_version({"JAVA_HOME": str(old), "PATH": ""})
    eleven = _fake_java(tmp_path / "eleven", 'openjdk version "11.0.2" 2019-01-15')
    with pytest.raises(SparkUnavailable, match=r"is Java 11;"):
        java_version({"JAVA_HOME": str(eleven), "PATH": ""})
    new = _fake_java(tmp_path / "new", 'openjdk version "21.0.1" 2023-10-17')
    assert java_version({"JAVA_HOME": str(new), "PATH": ""}) == 21


def test_cli_without_java_exits_2_with_one_line(tmp_path):
    topo = tmp_path / "t.yaml"
    topo.write_text("name: t\noperators: [{name: a, parallelism: 1}, {name: b, parallelism: 1}]\nstreams: [{from: a, to: b}]\n")
    traffic = tmp_path / "t.csv"
    traffic.write_text("window_start,window_seconds,src_task,dst_task,tuples,bytes\n0,10,a[0],b[0],1,1\n")
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "STREAMPLACE_SPARK_MASTER")}
    env["JAVA_HOME"] = str(tmp_path / "no-java")
    proc = subprocess.run([sys.executable, "-m", "streamplace", "profile", "--topology", str(topo), "--traffic", str(traffic),
                           "-o", str(tmp_path / "p")], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"streamplace: java: not found in JAVA_HOME={tmp_path / 'no-java'}; "
                                                "Spark needs Java 17 or newer (install a JDK/JRE, e.g. openjdk-17-jre-headless)"]


def test_a_master_spark_does_not_take_is_one_line_before_any_jvm(tmp_path, monkeypatch):
    """Spark printed a Java stack trace for ``bogus://x`` before the one line."""
    for good in ("local", "local[2]", "local[*]", "local[4,2]", "local[4, 2]", "local-cluster[2, 1, 1024]",
                 "spark://h1:7077,h2:7077", "yarn", "k8s://https://h:443"):
        assert sparkmod.resolve_master(good) == good
    with pytest.raises(SparkUnavailable, match=r"spark: --spark-master: 'bogus://x' is not a Spark master URL"):
        sparkmod.resolve_master("bogus://x")
    monkeypatch.setenv(sparkmod.MASTER_ENV, "local[two]")
    with pytest.raises(SparkUnavailable, match=r"spark: STREAMPLACE_SPARK_MASTER: 'local\[two\]' is not"):
        sparkmod.resolve_master()
    topo = tmp_path / "t.yaml"
    topo.write_text("name: t\noperators: [{name: a, parallelism: 1}, {name: b, parallelism: 1}]\nstreams: [{from: a, to: b}]\n")
    traffic = tmp_path / "t.csv"
    traffic.write_text("window_start,window_seconds,src_task,dst_task,tuples,bytes\n0,10,a[0],b[0],1,1\n")
    proc = subprocess.run([sys.executable, "-m", "streamplace", "profile", "--topology", str(topo), "--traffic", str(traffic),
                           "--spark-master", "bogus://x", "-o", str(tmp_path / "p")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "p").exists()


def test_session_defaults(spark):
    conf = session_conf("local[2]")
    assert conf["spark.ui.enabled"] == "false" and conf["spark.sql.shuffle.partitions"] == "4"
    assert conf["spark.sql.session.timeZone"] == "UTC" and conf["spark.driver.host"] == "127.0.0.1"
    assert "log4j2.properties" in conf["spark.driver.extraJavaOptions"]
    remote = session_conf("spark://10.1.2.3:7077")
    assert "spark.driver.host" not in remote and remote["spark.sql.shuffle.partitions"] == "16"
    assert session_conf("spark://127.0.0.1:7077")["spark.executor.extraJavaOptions"].startswith("-Dlog4j2.configurationFile=")
    c1 = "-XX:TieredStopAtLevel=1"
    assert c1 not in conf["spark.driver.extraJavaOptions"]
    assert c1 in session_conf("local[2]", fast_start=True)["spark.driver.extraJavaOptions"].split()
    here = session_conf("spark://127.0.0.1:7077", fast_start=True)
    assert c1 in here["spark.driver.extraJavaOptions"].split() and c1 in here["spark.executor.extraJavaOptions"].split()
    assert c1 not in session_conf("spark://127.0.0.1:7077")["spark.executor.extraJavaOptions"]
    serial = "-XX:+UseSerialGC"   # a small input's driver only
    assert serial in session_conf("local[2]", fast_start=True)["spark.driver.extraJavaOptions"].split()
    assert serial not in conf["spark.driver.extraJavaOptions"] and serial not in here["spark.executor.extraJavaOptions"]
    # adaptive execution only for large inputs; whole-stage code generation off only for short jobs
    assert "spark.sql.adaptive.enabled" not in conf and "spark.sql.codegen.wholeStage" not in conf
    assert session_conf("local[2]", fast_start=True)["spark.sql.adaptive.enabled"] == "false"
    assert session_conf("local[2]", short_jobs=True)["spark.sql.codegen.wholeStage"] == "false"
    running = spark.sparkContext.getConf()
    assert running.get("spark.ui.enabled") == "false" and spark.conf.get("spark.sql.session.timeZone") == "UTC"
    # no Python call site sent to the JVM with every column function (PySpark 4's DataFrame debugging)
    assert spark.conf.get("spark.python.sql.dataFrameDebugging.enabled") == "false"
    assert os.environ["PYSPARK_PYTHON"] == sys.executable


def test_one_session_is_reused_and_another_master_refused(spark, monkeypatch):
    with spark_session() as s:
        assert s.sparkContext is spark.sparkContext
    with spark_session("local[2]") as s:
        assert s.sparkContext is spark.sparkContext
    with pytest.raises(SparkUnavailable, match=r"a session on local\[2\] is already running in this process"):
        with spark_session("spark://127.0.0.1:1"):
            pass
    assert sparkmod.active_session() is not None
    monkeypatch.setenv("STREAMPLACE_SPARK_MASTER", "local[1]")
    assert sparkmod.resolve_master(None) == "local[1]" and sparkmod.resolve_master("local[3]") == "local[3]"


def test_the_jvm_keeps_its_temporary_files_in_a_directory_of_this_process(spark):
    import tempfile
    from pathlib import Path

    from streamplace import interrupt
    local = Path(spark.sparkContext.getConf().get("spark.local.dir"))
    assert local.parent == Path(tempfile.gettempdir()) and local.name.startswith("streamplace-spark-")
    assert spark.sparkContext._jvm.java.lang.System.getProperty("java.io.tmpdir") == str(local)
    assert str(local) in interrupt._temporaries   # removed by an interrupt, which kills the JVM first
    spark.range(1000).repartition(3).groupBy().count().collect()   # a shuffle: Spark writes block files
    assert any(local.glob("blockmgr-*")), sorted(p.name for p in local.iterdir())


def test_a_cli_run_leaves_nothing_in_the_temporary_directory(cluster_profile):
    run = cluster_profile   # tests/profile/conftest.py: one real `profile` process, on a standalone cluster
    assert run.code == 0, run.stderr
    assert (run.dir / "p").is_dir()
    assert list(run.scratch.iterdir()) == []


def test_no_spark_jvm_outlives_the_process_that_started_it(cluster_profile):
    """PySpark's JVM alone would exit a moment after its Python process; a command waits for it."""
    run = cluster_profile
    assert run.code == 0, run.stderr
    assert run.jvms, "no Spark JVM was seen below the command"
    assert run.left == [], [open(f"/proc/{pid}/stat").read() for pid in run.left if os.path.exists(f"/proc/{pid}")]


PY4J_SEND_TO_AN_ENDING_JVM = r'''
import socket, struct, subprocess, sys, threading, types
from py4j.java_gateway import GatewayClient, GatewayParameters
from streamplace.profile import spark as sparkmod

server = socket.create_server(("127.0.0.1", 0))
def reset_every_connection():   # what a JVM that exits mid-command does to py4j's socket
    while True:
        conn, _ = server.accept()
        conn.recv(1024)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()
threading.Thread(target=reset_every_connection, daemon=True).start()

def release():   # py4j's finalizer thread releasing a Java object
    client = GatewayClient(gateway_parameters=GatewayParameters(port=server.getsockname()[1]))
    client.send_command("m\nd\no1\ne\n")

if sys.argv[1] == "ending":
    gateway = types.SimpleNamespace(_gateway_client=GatewayClient(), proc=subprocess.Popen(["cat"], stdin=subprocess.PIPE))
    sparkmod._end_jvm(gateway)
    assert gateway.proc.returncode == 0 and gateway._gateway_client.is_connected is False
release()
'''


@pytest.mark.parametrize("when", ["running", "ending"])
def test_a_release_that_fails_while_the_jvm_ends_prints_nothing(when):
    """py4j logs a send the JVM resets as a traceback; while the JVM is running that is a real
    failure and shows, but once :func:`_end_jvm` ends it the failure is expected and kept off
    stderr (a refused command's one line stays one line)."""
    proc = subprocess.run([sys.executable, "-c", PY4J_SEND_TO_AN_ENDING_JVM, when], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    if when == "running":
        assert "Exception while sending command" in proc.stderr and "Traceback" in proc.stderr
    else:
        assert proc.stderr == ""

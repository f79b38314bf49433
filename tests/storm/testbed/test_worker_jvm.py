"""The testbed workers' JVM options: heap, C1 only, and the class-data-sharing archive the build
dumps, which a worker started the way Storm's supervisors start one really maps."""

import os
import subprocess

import pytest

from streamplace.storm import jvm
from streamplace.storm.testbed import worker_childopts
from streamplace.storm.testbed.cluster import WORKER_ARCHIVE


def test_worker_options_name_the_archive_only_where_it_is_built(tmp_path, monkeypatch):
    monkeypatch.setenv(jvm.HOME_ENV, str(tmp_path))
    assert worker_childopts(300).split() == ["-Xmx300m", "-XX:TieredStopAtLevel=1"]
    (tmp_path / "storm-home").mkdir()
    (tmp_path / "storm-home" / WORKER_ARCHIVE).write_bytes(b"")
    assert worker_childopts(300).split()[-1] == f"-XX:SharedArchiveFile={tmp_path / 'storm-home' / WORKER_ARCHIVE}"


def _worker_class_source(opts: list[str]) -> str:
    """Where a JVM started as a supervisor starts a worker (its class path: lib-worker/*, extlib/*,
    conf, the topology's jar) loads Storm's Worker class from."""
    home = jvm.module_dir() / "storm-home"
    cp = os.pathsep.join([f"{home}/lib-worker/*", f"{home}/extlib/*", f"{home}/conf", str(jvm.module_dir() / jvm.JAR)])
    out = subprocess.run([jvm.java(), *opts, "-Xlog:class+load=info", "-cp", cp, "org.apache.storm.daemon.worker.Worker"],
                         capture_output=True, text=True, timeout=120).stdout   # exits at once: no arguments
    line = next(line for line in out.splitlines() if "org.apache.storm.daemon.worker.Worker source:" in line)
    return line.split("source:", 1)[1].strip()


def test_a_worker_maps_storms_classes_from_the_built_archive(storm_ready):
    opts = worker_childopts(256).split()
    if not any(o.startswith("-XX:SharedArchiveFile=") for o in opts):
        pytest.fail(f"the build did not dump {jvm.module_dir() / 'storm-home' / WORKER_ARCHIVE}")
    assert _worker_class_source(opts) == "shared objects file"
    assert _worker_class_source(opts[:-1]).endswith(".jar")   # without the archive: read from storm-client's jar

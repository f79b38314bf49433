"""The testbed JVMs' options: heap, C1 only, and the class-data-sharing archives the build dumps,
which a worker started the way Storm's supervisors start one, and a daemon started the way the
testbed starts one, really map."""

import pytest

from streamplace.storm import jvm
from streamplace.storm.testbed import worker_childopts
from streamplace.storm.testbed.cluster import DAEMON_ARCHIVE, DAEMON_OPTS, WORKER_ARCHIVE, archive_opts

from ..jvms import class_source


def test_worker_options_name_the_archive_only_where_it_is_built(tmp_path, monkeypatch):
    monkeypatch.setenv(jvm.HOME_ENV, str(tmp_path))
    assert worker_childopts(300).split() == ["-Xmx300m", "-XX:TieredStopAtLevel=1"]
    assert archive_opts(DAEMON_ARCHIVE) == []
    (tmp_path / "storm-home").mkdir()
    (tmp_path / "storm-home" / WORKER_ARCHIVE).write_bytes(b"")
    assert worker_childopts(300).split()[-1] == f"-XX:SharedArchiveFile={tmp_path / 'storm-home' / WORKER_ARCHIVE}"
    assert archive_opts(DAEMON_ARCHIVE) == []


def _built(name: str) -> list[str]:
    opts = archive_opts(name)
    if not opts:
        pytest.fail(f"the build did not dump {jvm.module_dir() / 'storm-home' / name}")
    return opts


def test_a_worker_maps_storms_classes_from_the_built_archive(storm_ready, tmp_path):
    home = jvm.module_dir() / "storm-home"
    # a supervisor's worker class path: lib-worker/*, extlib/*, conf, the topology's jar
    cp = [f"{home}/lib-worker/*", f"{home}/extlib/*", f"{home}/conf", str(jvm.module_dir() / jvm.HARNESS_JAR)]
    opts = worker_childopts(256).split()
    assert opts[-1:] == _built(WORKER_ARCHIVE)
    assert class_source(opts, cp, "org.apache.storm.daemon.worker.Worker", tmp_path) == "shared objects file"
    assert class_source(opts[:-1], cp, "org.apache.storm.daemon.worker.Worker", tmp_path).endswith(".jar")   # without it


def test_nimbus_and_the_supervisors_map_their_classes_from_the_built_archive(storm_ready, tmp_path):
    home = jvm.module_dir() / "storm-home"
    opts = [*DAEMON_OPTS, *_built(DAEMON_ARCHIVE)]
    nimbus_cp = [f"{home}/lib/*", str(jvm.module_dir() / jvm.PLUGIN_JAR)]   # Nimbus also loads the plan plugin
    assert class_source(opts, nimbus_cp, "org.apache.storm.daemon.nimbus.Nimbus", tmp_path) == "shared objects file"
    assert class_source(opts, [f"{home}/lib/*"], "org.apache.storm.daemon.supervisor.Supervisor", tmp_path) == "shared objects file"
    assert class_source(list(DAEMON_OPTS), [f"{home}/lib/*"], "org.apache.storm.daemon.supervisor.Supervisor", tmp_path).endswith(".jar")

"""The runners' JVM: the class-data-sharing archive the build dumps for them (the classes the
embedded runner loads), which a runner started with the runners' class path really maps."""

import os

import pytest

from streamplace.storm import jvm

from .jvms import class_source


def test_an_archive_is_named_only_where_it_exists(tmp_path):
    archive = tmp_path / "some.jsa"
    assert jvm.archive_opts(archive) == []
    archive.write_bytes(b"")
    assert jvm.archive_opts(archive) == [f"-XX:SharedArchiveFile={archive}"]


def test_the_runners_map_their_classes_from_the_built_archive(storm_ready, tmp_path):
    archive = jvm.module_dir() / jvm.RUNNER_ARCHIVE
    opts = jvm.archive_opts(archive)
    if not opts:
        pytest.fail(f"the build did not dump {archive}")
    cp = jvm.classpath().split(os.pathsep)
    assert class_source(opts, cp, "org.streamplace.storm.LocalRunner", tmp_path) == "shared objects file"
    assert class_source([], cp, "org.streamplace.storm.LocalRunner", tmp_path).endswith(".jar")   # without it


def test_the_jdks_archive_given_last_replaces_the_runners(storm_ready, tmp_path):
    """benchmarks/runner_archive.py compares the runners' archive with the JDK's own by giving the
    runner JVM a second ``-XX:SharedArchiveFile``: the last one is the one Java maps."""
    import importlib.util
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "runner_archive.py"
    spec = importlib.util.spec_from_file_location("runner_archive", script)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    jdk = bench.jdk_archive()
    assert jdk.is_file(), jdk
    runners = jvm.archive_opts(jvm.module_dir() / jvm.RUNNER_ARCHIVE)
    cp = jvm.classpath().split(os.pathsep)
    main = "org.streamplace.storm.LocalRunner"
    assert class_source(runners, cp, main, tmp_path) == "shared objects file"
    assert class_source([*runners, f"-XX:SharedArchiveFile={jdk}"], cp, main, tmp_path).endswith(".jar")


def test_a_ctrl_c_while_the_child_starts_still_stops_it(tmp_path, monkeypatch):
    """Ctrl-C raised inside ``Popen`` (as the JVM starts, the moment a test that interrupts a
    testbed run as it comes up once hit) is held until the child runs, then raised where the
    child is stopped: nothing is left running."""
    import signal
    import subprocess

    started = []
    real = subprocess.Popen

    def popen_then_ctrl_c(*args, **kwargs):
        proc = real(*args, **kwargs)
        started.append(proc)
        signal.raise_signal(signal.SIGINT)   # the user's Ctrl-C, before Popen has returned
        return proc

    monkeypatch.setattr(jvm.subprocess, "Popen", popen_then_ctrl_c)
    handler = signal.getsignal(signal.SIGINT)   # Python's, or a SparkContext's where one runs
    with pytest.raises(KeyboardInterrupt):
        with jvm.child(["sleep", "60"], tmp_path / "err"):
            pytest.fail("the Ctrl-C was lost")
    assert started and started[0].poll() is not None, "the child outlived the Ctrl-C"
    assert signal.getsignal(signal.SIGINT) is handler

"""Spark's driver class archive (streamplace/profile/class_archive.py): used when it exists,
harmless when it cannot be used, and the session of this test run started with it."""

import shutil
import subprocess

import pytest

from streamplace.profile import class_archive
from streamplace.profile import spark as sparkmod
from streamplace.profile.spark import CDS_QUIET, SparkUnavailable, session_conf


def _driver_opts(**kw) -> list[str]:
    return session_conf("local[2]", **kw)["spark.driver.extraJavaOptions"].split()


def test_the_driver_maps_the_archive_when_it_exists_and_only_the_driver(tmp_path, monkeypatch):
    archive = tmp_path / "spark-driver.jsa"
    monkeypatch.setattr(sparkmod, "CLASS_ARCHIVE", archive)
    assert not any(o.startswith("-XX:SharedArchiveFile") for o in _driver_opts())
    archive.write_bytes(b"x")
    assert f"-XX:SharedArchiveFile={archive}" in _driver_opts() and CDS_QUIET in _driver_opts()
    here = session_conf("spark://127.0.0.1:7077")   # executors have another class path: never for them
    assert "SharedArchiveFile" not in here["spark.executor.extraJavaOptions"]
    dumping = _driver_opts(dump_classes=str(tmp_path / "new.jsa"))   # a dump never maps the old archive
    assert f"-XX:ArchiveClassesAtExit={tmp_path / 'new.jsa'}" in dumping
    assert not any(o.startswith("-XX:SharedArchiveFile") for o in dumping)
    spaced = tmp_path / "a b" / "spark-driver.jsa"   # Spark splits the options at spaces
    spaced.parent.mkdir()
    spaced.write_bytes(b"x")
    monkeypatch.setattr(sparkmod, "CLASS_ARCHIVE", spaced)
    assert not any("SharedArchiveFile" in o for o in _driver_opts())


def _java_version(java, *options):
    proc = subprocess.run([java, *options, "-version"], capture_output=True, text=True, timeout=60, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def test_an_archive_the_jvm_cannot_use_is_skipped_silently(tmp_path):
    """A damaged archive, or one the JVM cannot use here (made for Spark's class path, used by a
    JVM with another one, as with another Java build): the JVM runs without it and, with the
    options a session gives, prints nothing about it."""
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    damaged = tmp_path / "damaged.jsa"
    damaged.write_bytes(b"not an archive")
    code, said = _java_version(java, f"-XX:SharedArchiveFile={damaged}", CDS_QUIET)
    assert code == 0 and "archive" not in said.lower(), said
    if sparkmod.CLASS_ARCHIVE.is_file():
        code, said = _java_version(java, f"-XX:SharedArchiveFile={sparkmod.CLASS_ARCHIVE}", CDS_QUIET)
        assert code == 0 and "archive" not in said.lower(), said
        code, said = _java_version(java, f"-XX:SharedArchiveFile={sparkmod.CLASS_ARCHIVE}")
        assert code == 0 and "archive" in said.lower(), said   # what CDS_QUIET keeps off a command's output


def test_this_runs_session_started_with_the_archive_make_built(spark):
    if not sparkmod.CLASS_ARCHIVE.is_file():
        pytest.skip(f"no class archive at {sparkmod.CLASS_ARCHIVE}: `make` builds it")
    jvm = spark.sparkContext._jvm
    args = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert f"-XX:SharedArchiveFile={sparkmod.CLASS_ARCHIVE}" in args


def test_a_failed_build_is_one_line_and_leaves_no_part_file(tmp_path, monkeypatch, capsys):
    def no_java(*args, **kwargs):
        raise SparkUnavailable("java: not found in PATH")
    monkeypatch.setattr(class_archive, "start_session", no_java)
    assert class_archive.main([str(tmp_path / "a.jsa")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["streamplace: no class archive for Spark's driver (java: not found in PATH); Spark starts without one"]
    assert list(tmp_path.iterdir()) == []

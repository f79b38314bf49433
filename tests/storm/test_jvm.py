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

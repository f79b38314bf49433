"""The Storm module's two jars: the plugin a user installs on Nimbus holds the plan scheduler and
what it uses, nothing of the harness; the harness holds the runners, the topology, the monitor."""

import re
import subprocess
import zipfile

import pytest

from streamplace.storm import jobfile, jvm

PKG = "org/streamplace/storm/"
# PlanScheduler (IScheduler) -> plan reading (Plan, Documents, SpecException), the mapping to
# slots (PlanAssignment) and task labels (TaskLabels), what it saw across rounds (SlotHistory)
PLUGIN = {"PlanScheduler", "PlanScheduler$CachedPlan", "PlanAssignment", "PlanAssignment$Misfit", "Plan", "Plan$Target",
          "TaskLabels", "Documents", "SpecException", "Assigned", "Json", "SlotHistory", "SlotHistory$Held"}
HARNESS_ONLY = {"JobRunner", "LocalRunner", "ClusterRunner", "JobFile", "JobSchema", "Events", "Submitter",
                "TopologyWatch", "JobReport", "MeasuredWindow", "Engine", "SpecTopology", "SpecComponents",
                "TrafficMonitor", "MonitorWriter", "Spec", "TopologyConf"}


def _entries(name: str) -> list[str]:
    with zipfile.ZipFile(jvm.jar(name)) as jar:
        return jar.namelist()


def _classes(name: str) -> set[str]:
    return {e[len(PKG):-len(".class")] for e in _entries(name) if e.startswith(PKG) and e.endswith(".class")}


def test_the_plugin_jar_holds_the_scheduler_and_what_it_uses_only(storm_ready):
    entries = _entries(jvm.PLUGIN_JAR)
    assert _classes(jvm.PLUGIN_JAR) == PLUGIN
    assert not {c.split("$")[0] for c in _classes(jvm.PLUGIN_JAR)} & HARNESS_ONLY
    # nothing else: no shaded library, no resource (the job schema is the harness')
    assert [e for e in entries if not e.endswith("/") and not e.startswith(("META-INF/", PKG))] == []
    assert [e for e in entries if e.startswith(PKG) and not e.endswith((".class", "/"))] == []


def test_the_harness_jar_holds_the_runners_the_topology_the_monitor_and_the_schema(storm_ready):
    classes = {c.split("$")[0] for c in _classes(jvm.HARNESS_JAR)}
    assert HARNESS_ONLY | PLUGIN <= classes | {c for c in PLUGIN if "$" in c}
    assert PKG + "job.schema.json" in _entries(jvm.HARNESS_JAR)
    with zipfile.ZipFile(jvm.jar(jvm.HARNESS_JAR)) as jar:
        assert jar.read(PKG + "job.schema.json") == jobfile.SCHEMA.read_bytes()   # the file Python checks with


def test_every_class_the_plugin_uses_is_in_it_or_in_storms_daemon_class_path(storm_ready):
    """jdeps over the plugin jar with Storm's lib/ (what Nimbus runs with): nothing "not found",
    and nothing from the plain snakeyaml jar (the plugin reads plans with Storm's relocated copy)."""
    lib = sorted((jvm.module_dir() / "storm-home" / "lib").glob("*.jar"))
    out = subprocess.run(["jdeps", "--multi-release", "17", "-verbose:class", "-cp", ":".join(map(str, lib)),
                          str(jvm.jar(jvm.PLUGIN_JAR))], capture_output=True, text=True, timeout=120)
    if out.returncode != 0 and "not found" not in out.stdout:
        pytest.fail(out.stderr)
    deps = [line.split() for line in out.stdout.splitlines() if line.startswith("   ")]
    assert deps, out.stdout
    assert [d for d in deps if "not found" in " ".join(d)] == []
    sources = {d[-1] for d in deps}
    assert not any(re.match(r"snakeyaml-.*\.jar", s) for s in sources), sources
    assert sources <= {p.name for p in lib} | {"java.base"}, sources

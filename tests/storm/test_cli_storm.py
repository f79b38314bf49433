"""`streamplace storm run` and `storm plan-dir` through the real CLI: its refusals and the plan
directory in this process (the ``cli`` fixture runs ``main``, as ``python -m streamplace`` does),
what involves Storm's JVM (Ctrl-C, settings only Storm can check) as a separate process."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streamplace.model.specs import cluster_to_dict, topology_to_dict, write_document

from .topologies import five_groupings

CLI = [sys.executable, "-m", "streamplace"]


@pytest.fixture
def files(tmp_path):
    topo, cluster = five_groupings()
    write_document(topology_to_dict(topo), tmp_path / "t.yaml")
    write_document(cluster_to_dict(cluster), tmp_path / "c.yaml")
    return tmp_path


def storm_jvms(under: Path) -> set[int]:
    """Live embedded-Storm JVMs whose working files are ``under`` a directory (not those of
    another test worker)."""
    out = set()
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"org.streamplace.storm.LocalRunner" in cmd and str(under).encode() in cmd:
            out.add(int(proc.name))
    return out


def test_missing_module_is_one_line_exit_2(files, cli, monkeypatch):
    monkeypatch.setenv("STREAMPLACE_STORM_HOME", str(files / "nowhere"))
    code, _, err = cli(["storm", "run", files / "t.yaml", files / "c.yaml", "-s", "even", "-o", files / "out"])
    assert code == 2 and err.count("\n") == 1 and "not built" in err, err
    assert not (files / "out").exists()


def test_missing_java_is_one_line_exit_2(files, cli, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(files / "nojava"))
    code, _, err = cli(["storm", "run", files / "t.yaml", files / "c.yaml", "-s", "even", "-o", files / "out"])
    assert code == 2 and err.count("\n") == 1 and "Java 17" in err, err


def test_exactly_one_plan_source(files, cli):
    code, _, err = cli(["storm", "run", files / "t.yaml", files / "c.yaml", "-o", files / "out"])
    assert code == 2 and "exactly one of --plan, --scheduler or --storm-default" in err


def test_plan_dir_writes_the_plan_under_the_topology_name(files, cli):
    assert cli(["schedule", files / "t.yaml", files / "c.yaml", "-s", "metis", "-o", files / "p.json"])[0] == 0
    code, _, err = cli(["storm", "plan-dir", files / "t.yaml", files / "c.yaml", files / "p.json", "-o", files / "plans"])
    assert code == 0, err
    plan = json.loads((files / "plans" / "groupings.json").read_text())
    assert plan["placement"] == json.loads((files / "p.json").read_text())["placement"]
    assert plan["scheduler"] == "metis"


def test_storm_refuses_a_topology_name_with_a_dot(files, cli):
    doc = topology_to_dict(five_groupings()[0])
    doc["name"] = "my.job"
    write_document(doc, files / "dot.yaml")
    code, _, err = cli(["storm", "plan-dir", files / "dot.yaml", files / "c.yaml", files / "p.json", "-o", files / "plans"])
    assert code == 2 and err.count("\n") == 1 and "Storm refuses names" in err, err


def test_ctrl_c_stops_the_run_and_its_jvm(storm_ready, files):
    out = files / "out-interrupted"
    before = storm_jvms(files)
    proc = subprocess.Popen([*CLI, "storm", "run", str(files / "t.yaml"), str(files / "c.yaml"), "-s", "even",
                             "--duration", "600", "--warmup", "0", "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(files)})   # its JVM's files: under ``files``
    try:
        deadline = time.monotonic() + 180
        for line in proc.stderr:
            if "measuring" in line or time.monotonic() > deadline:
                break
        ours = storm_jvms(files) - before
        assert ours, "the run's JVM is up"
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        code = proc.wait(timeout=60)
        left = ours & storm_jvms(files)
    finally:
        proc.kill()
        for pid in storm_jvms(files) - before:   # a failed run's JVM, so that it does not outlive the test
            os.kill(pid, signal.SIGKILL)
    assert code == 130, proc.stderr.read()
    assert time.monotonic() - sent < 10
    assert not left, "no JVM left"
    assert not out.exists() and not list(files.glob(".out-interrupted.*")), "no partial output"


@pytest.mark.parametrize("pair, says", [
    ("topology.workers=3", "--storm-conf topology.workers: set by the plan"),
    ("topology.acker.executors=1", "set by --ackers"),
    ("streamplace.seed=1", "set by streamplace's own settings"),
    ("topology.bolt.wait.progressive.level2.count", "expected KEY=VALUE"),
    ("topology.bolt.wait.progressive.level2.count=", "expected KEY=VALUE"),
    ("topology.worker.childopts=[-Xmx1g", "invalid YAML at line 2 column 1"),
])
def test_storm_conf_mistakes_are_one_line_exit_2_before_storm_starts(files, cli, monkeypatch, pair, says):
    monkeypatch.setenv("JAVA_HOME", str(files / "nojava"))   # the check comes before Java is looked for
    code, _, err = cli(["storm", "run", files / "t.yaml", files / "c.yaml", "-s", "even", "--storm-conf", pair,
                        "-o", files / "out"])
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert not (files / "out").exists()


@pytest.mark.parametrize("pair, says", [
    ("topology.bolt.wait.progresive.level2.count=0",
     "topology.bolt.wait.progresive.level2.count: not a Storm setting (did you mean topology.bolt.wait.progressive.level2.count?)"),
    ("topology.executor.receive.buffer.size=large", "Storm rejects it"),
])
def test_a_setting_storm_does_not_know_or_rejects_is_one_line_exit_2(storm_ready, files, pair, says):
    r = subprocess.run([*CLI, "storm", "run", str(files / "t.yaml"), str(files / "c.yaml"), "-s", "even",
                        "--storm-conf", pair, "-o", str(files / "out")], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and says in r.stderr, r.stderr
    assert not (files / "out").exists()


def test_autopilot_options_reach_the_loop_beside_the_run(files, cli, monkeypatch):
    """``storm run --autopilot`` takes the loop's options the ``autopilot`` command takes; what
    reaches the run is the loop built from them (Storm itself is not started here)."""
    import streamplace.storm.run as storm_run
    seen = {}

    def measure(problem, placement, out_dir, settings, **kwargs):
        seen["beside"] = kwargs["beside"]
        raise SystemExit(0)

    monkeypatch.setattr(storm_run, "measure", measure)
    code, _, err = cli(["storm", "run", files / "t.yaml", files / "c.yaml", "--scheduler", "even", "--window", "2",
                        "--autopilot", "--min-gain", "0.1", "--confirm", "3", "--max-moves", "20", "--migration-cost", "12", "--payback", "60", "--rewarm", "30",
                        "--load-change", "0.25", "--horizon", "4", "--steady-tolerance", "0.3", "--cooldown", "15", "-o", files / "out"])
    assert code == 0, err
    beside = seen["beside"]
    s = beside.settings
    assert (s.window_s, s.horizon_windows, s.max_moves, s.steady_tolerance) == (2.0, 4, 20, 0.3)
    assert (s.migration_s, s.payback_s, s.migration_cost, s.rewarm_s, s.load_change) == (12.0, 60.0, 0.2, 30.0, 0.25)
    assert (beside.policy.min_gain, beside.policy.confirm, beside.policy.cooldown_s) == (0.1, 3, 15.0)
    assert beside.period_s == 2.0

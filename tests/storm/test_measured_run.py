"""A run directory read for calibration, and the commands that take ``--calibrate RUN``."""

import json

import pytest
import yaml

from streamplace.model import Cluster, Node, Operator, Problem, Stream, Topology
from streamplace.model.calibration import SLEEP_OVERSHOOT_S
from streamplace.model.specs import SpecError, cluster_to_dict, topology_to_dict
from streamplace.storm.measured_run import read_run

TOPO = Topology.build("t", [Operator("s", 2, role="source", source_rate=1e5), Operator("b", 2, role="sink")],
                      [Stream("s", "b")])
CLUSTER = Cluster.build("c", [Node("n0", 4, cores=4, slots=2), Node("n1", 4, cores=4, slots=2)])
ONE_WORKER = {label: {"node": "n0", "worker": 0} for label in TOPO.task_labels}
CONF = {"topology.acker.executors": 1, "topology.max.spout.pending": 10,
        "topology.spout.wait.progressive.level3.sleep.millis": 10,
        "topology.bolt.wait.progressive.level3.sleep.millis": 10, "topology.bolt.wait.progressive.level2.count": 0}


def write_run(directory, spout_rate=1000.0, seconds=20.0, conf=CONF, **changes):
    """A run directory as `storm run` writes it: two windows of the monitor's records."""
    directory.mkdir()
    load, traffic = [], []
    for start in (0.0, 10.0):
        for i in range(2):
            load.append({"window_start": start, "window_seconds": 10.0, "task": f"s[{i}]", "executed": spout_rate / 2 * 10,
                         "cpu_seconds": 0.1})
            load.append({"window_start": start, "window_seconds": 10.0, "task": f"b[{i}]", "executed": spout_rate / 2 * 10,
                         "cpu_seconds": 0.2})
            traffic.append({"window_start": start, "window_seconds": 10.0, "src_task": f"s[{i}]", "dst_task": f"b[{i}]",
                            "tuples": spout_rate / 2 * 10, "bytes": spout_rate * 500})
    (directory / "load.jsonl").write_text("".join(json.dumps(r) + "\n" for r in load))
    (directory / "traffic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in traffic))
    doc = {"assignment": ONE_WORKER, "duration_s": seconds, "load_file": "load.jsonl", "traffic_file": "traffic.jsonl",
           "topology_conf": conf, "cpu_budget": 1.5, **changes}
    (directory / "run.json").write_text(json.dumps(doc))
    return directory


def test_a_run_directory_gives_the_rates_the_placement_and_the_operating_point(tmp_path):
    run = read_run(write_run(tmp_path / "run"), Problem.from_topology(TOPO, CLUSTER))
    assert run.source_rate == pytest.approx(1000.0) and run.bolt_throughput == pytest.approx(1000.0)
    assert run.tasks["b[1]"] == (pytest.approx(500.0), pytest.approx(0.4 / 20))
    assert run.streams == {("s", "b"): pytest.approx(1000.0)}
    point = run.point
    assert (point.ackers, point.max_spout_pending, point.sleep_s("spout"), point.cpu_budget) == (1, 10, 0.010, 1.5)
    assert run.placement.node.tolist() == [0, 0, 0, 0]


def test_unset_ackers_are_one_per_worker_as_in_storm(tmp_path):
    conf = {k: v for k, v in CONF.items() if k != "topology.acker.executors"}
    assert read_run(write_run(tmp_path / "run", conf=conf), Problem.from_topology(TOPO, CLUSTER)).point.ackers == 1


@pytest.mark.parametrize("change, field", [
    ({"duration_s": 0}, "duration_s"),
    ({"load_file": "missing.jsonl"}, "load_file"),
    ({"topology_conf": [1]}, "topology_conf"),
    ({"cpu_budget": -1}, "cpu_budget"),
    ({"duration_s": True}, "duration_s"),
    ({"assignment": ["s[0]"]}, "assignment"),
    ({"assignment": {"s[0]": "n0"}}, "assignment"),
    ({"topology_conf": {"topology.max.spout.pending": -1}}, "topology_conf"),
    ({"topology_conf": {"topology.acker.executors": "x"}}, "topology_conf"),
    ({"topology_conf": {"topology.acker.executors": 10**30}}, "topology_conf"),
    ({"topology_conf": {"topology.acker.executors": 1.5}}, "topology_conf"),
    ({"topology_conf": {"topology.max.spout.pending": 2.5}}, "topology_conf"),
    ({"topology_conf": {"topology.bolt.wait.progressive.level2.count": -5}}, "topology_conf"),
    ({"topology_conf": {"topology.spout.wait.progressive.level3.sleep.millis": "ten"}}, "topology_conf"),
    ({"load_file": "../load.jsonl"}, "load_file"),
    ({"assignment": {"x[0]": {"node": "n0", "worker": 0}}}, "x[0]"),
    ({"measured_node_cpu": [0.5]}, "measured_node_cpu"),
    ({"measured_node_cpu": {"zz": {"cores": 0.1}}}, "measured_node_cpu.zz"),
    ({"measured_node_cpu": {"n0": {"cores": -1}}}, "measured_node_cpu.n0.cores"),
    ({"measured_node_cpu": {"n0": 0.5}}, "measured_node_cpu.n0"),
    ({"duration_s": 1e308}, "duration_s"),
    ({"cpu_budget": 1e308}, "cpu_budget"),
    ({"latency_ms": "x"}, "latency_ms"),
    ({"latency_ms": {"mean": "slow"}}, "latency_ms.mean"),
    ({"latency_ms": {"mean": -1}}, "latency_ms.mean"),
    ({"acker_order": "random"}, "acker_order"),
    ({"acker_order": ["interleaved"]}, "acker_order"),
])
def test_a_bad_run_is_refused_naming_its_field(tmp_path, change, field):
    with pytest.raises(SpecError, match=f"run.json: .*{field.replace('[', '.').replace(']', '.')}"):
        read_run(write_run(tmp_path / "run", **change), Problem.from_topology(TOPO, CLUSTER))


def test_a_run_of_another_job_is_refused(tmp_path):
    other = Topology.build("t", [Operator("s", 2, role="source", source_rate=1.0), Operator("z", 2, role="sink")],
                           [Stream("s", "z")])
    with pytest.raises(SpecError):
        read_run(write_run(tmp_path / "run"), Problem.from_topology(other, CLUSTER))


def test_records_that_are_not_monitoring_records_are_refused_naming_the_file(tmp_path):
    problem = Problem.from_topology(TOPO, CLUSTER)
    run = write_run(tmp_path / "run")
    (run / "load.jsonl").write_text('{"window_start": 0, "task": "s[0]", "executed": 5}\n')   # no cpu_seconds
    with pytest.raises(SpecError, match="load.jsonl: cpu_seconds: missing"):
        read_run(run, problem)
    (run / "load.jsonl").write_text("not json\n")
    with pytest.raises(SpecError, match="load.jsonl: load_file: not readable"):
        read_run(run, problem)
    write_run(tmp_path / "other")
    (tmp_path / "other" / "traffic.jsonl").write_text(
        '{"window_start": 0, "src_task": "s[0]", "dst_task": "z[0]", "tuples": 1}\n')
    with pytest.raises(SpecError, match="traffic.jsonl: dst_task: task 'z.0.' is not a task of 't'"):
        read_run(tmp_path / "other", problem)


@pytest.mark.parametrize("line, field", [
    ('{"window_start": 0, "task": "s[0]", "executed": "x", "cpu_seconds": 0.1}', "executed"),
    ('{"window_start": "now", "task": "s[0]", "executed": 5, "cpu_seconds": 0.1}', "window_start"),
    ('{"window_start": 0, "task": "s[0]", "executed": 5, "cpu_seconds": -1}', "cpu_seconds"),
    ('{"window_start": 0, "task": "s[0]", "executed": true, "cpu_seconds": 0.1}', "executed"),
    ('{"window_start": 0, "task": 7, "executed": 5, "cpu_seconds": 0.1}', "task"),
    ('[1, 2]', "load_file"),
])
def test_a_record_of_the_wrong_type_is_refused_naming_file_and_field(tmp_path, line, field):
    run = write_run(tmp_path / "run")
    (run / "load.jsonl").write_text('{"window_start": 0, "task": "s[0]", "executed": 5, "cpu_seconds": 0.1}\n' + line + "\n")
    with pytest.raises(SpecError, match=f"load.jsonl: {field}: "):
        read_run(run, Problem.from_topology(TOPO, CLUSTER))


@pytest.mark.parametrize("src, dst", [("b[0]", "s[0]"), ("s[0]", "s[1]"), ("b[1]", "b[1]")])
def test_traffic_on_a_pair_that_is_no_stream_is_refused(tmp_path, src, dst):
    """Reversed, self-loop or between two tasks of one operator: it was taken in silently."""
    run = write_run(tmp_path / "run")
    with open(run / "traffic.jsonl", "a") as fh:
        fh.write(json.dumps({"window_start": 0, "window_seconds": 10.0, "src_task": src, "dst_task": dst, "tuples": 5,
                             "bytes": 50}) + "\n")
    with pytest.raises(SpecError, match=rf"traffic.jsonl: dst_task: record 5: {src[0]}\[{src[2]}\] -> .* is no stream of 't'"):
        read_run(run, Problem.from_topology(TOPO, CLUSTER))


def test_a_copied_record_is_refused_and_two_of_one_window_are_added_up(tmp_path):
    """A copied line was counted twice; rows of one window with different counts are Storm's
    (a task moved between workers mid-window), as in ``profile``."""
    run = write_run(tmp_path / "run")
    lines = (run / "load.jsonl").read_text().splitlines(keepends=True)
    (run / "load.jsonl").write_text("".join(lines) + lines[0])
    with pytest.raises(SpecError, match=r"load.jsonl: record 9 repeats record 1 in every field \(window \[0, 10\)\): "
                                        "copies would be counted twice"):
        read_run(run, Problem.from_topology(TOPO, CLUSTER))
    extra = {**json.loads(lines[0]), "executed": 1000.0, "cpu_seconds": 0.3}   # s[0] in window [0, 10)
    (run / "load.jsonl").write_text("".join(lines) + json.dumps(extra) + "\n")
    rate, cores = read_run(run, Problem.from_topology(TOPO, CLUSTER)).tasks["s[0]"]
    assert rate == pytest.approx((500.0 * 20 + 1000.0) / 20) and cores == pytest.approx(0.5 / 20)


def test_overlapping_windows_are_refused_naming_both_files(tmp_path):
    run = write_run(tmp_path / "run")
    with open(run / "traffic.jsonl", "a") as fh:   # the first 20 s again, as one window
        fh.write(json.dumps({"window_start": 0, "window_seconds": 20.0, "src_task": "s[0]", "dst_task": "b[0]",
                             "tuples": 5, "bytes": 50}) + "\n")
    with pytest.raises(SpecError, match=r"traffic.jsonl: window_start: window \[0, 20\) overlaps window \[0, 10\) of "
                                        r".*load.jsonl: a calibration needs windows that do not overlap"):
        read_run(run, Problem.from_topology(TOPO, CLUSTER))


def test_a_run_whose_tasks_executed_nothing_is_refused(tmp_path):
    with pytest.raises(SpecError, match="no task executed a tuple"):
        read_run(write_run(tmp_path / "run", spout_rate=0.0), Problem.from_topology(TOPO, CLUSTER))


def test_no_run_json_is_one_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError, match="no run.json here"):
        read_run(tmp_path / "empty", Problem.from_topology(TOPO, CLUSTER))


@pytest.fixture
def files(tmp_path):
    topo, cluster = tmp_path / "t.yaml", tmp_path / "c.yaml"
    topo.write_text(yaml.safe_dump(topology_to_dict(TOPO)))
    cluster.write_text(yaml.safe_dump(cluster_to_dict(CLUSTER)))
    placement = tmp_path / "p.json"
    placement.write_text(json.dumps(ONE_WORKER))
    return topo, cluster, placement, write_run(tmp_path / "run")


def test_evaluate_calibrated_predicts_the_runs_own_rate_back(cli, files):
    """The run's placement, predicted by the model calibrated on it: its measured throughput
    (spouts' 1,000 + bolts' 1,000 tuples/s), bound by flow control."""
    topo, cluster, placement, run = files
    code, out, err = cli(["evaluate", topo, cluster, placement, "--calibrate", run, "--format", "json"])
    assert code == 0, err
    record = json.loads(out)
    assert record["throughput"] == pytest.approx(2000.0) and record["bottleneck"] == "flow control"
    assert "predictions calibrated on" in err and "1 ackers, max spout pending 10, spout sleep 10 ms" in err
    # the round trip: T = 2 spouts x 10 pending / 1,000 per s = 20 ms, less half a spout sleep
    assert record["latency_ms"] == pytest.approx(20.0 - (10.0 + SLEEP_OVERSHOOT_S * 1e3) / 2)


def test_compare_and_schedule_take_the_calibration(cli, files):
    topo, cluster, _, run = files
    code, out, err = cli(["compare", topo, cluster, "--schedulers", "even,lns", "-p", "lns.objective=throughput",
                          "-p", "lns.time_limit=1", "--calibrate", run, "--format", "json"])
    assert code == 0, err
    records = {r["scheduler"]: r for r in json.loads(out)}
    assert records["even"]["bottleneck"] == "flow control"
    assert records["lns"]["throughput"] >= records["even"]["throughput"] * 0.999   # lns maximises the same prediction
    code, out, err = cli(["schedule", topo, cluster, "-s", "even", "--calibrate", run, "--format", "json"])
    assert code == 0 and json.loads(out)["bottleneck"] == "flow control"


def test_several_runs_of_one_placement_calibrate_on_their_mean_and_report_their_spread(cli, files, tmp_path):
    """Runs at 1,000 and 500 spout tuples/s (2,000 and 1,000 tuples/s with the bolts'): at their
    mean, 750, a tree stays pending 2 spouts x 10 / 750 = 26.7 ms, longer than the modelled 15 ms
    (two 5-ms bolt wake-ups and half a 10.08-ms spout sleep), so the residual makes the flow bound
    give the run's placement that mean back: 1,500 tuples/s; the spread is
    (2,000 - 1,000) / 1,500 = 67 %."""
    topo, cluster, placement, run = files
    second = write_run(tmp_path / "run2", spout_rate=500.0)
    code, out, err = cli(["evaluate", topo, cluster, placement, "--calibrate", run, "--calibrate", second, "--format", "json"])
    assert code == 0, err
    assert json.loads(out)["throughput"] == pytest.approx(1500.0)
    assert f"calibrated on {run}, {second}" in err and "2 runs measured 1,000-2,000 tuples/s (mean 1,500, spread 67%" in err


def test_runs_of_two_placements_are_not_averaged(cli, files, tmp_path):
    topo, cluster, placement, run = files
    other = write_run(tmp_path / "other", assignment={label: {"node": "n1", "worker": 0} for label in TOPO.task_labels})
    code, out, err = cli(["evaluate", topo, cluster, placement, "--calibrate", run, "--calibrate", other])
    assert code == 2 and err.count("\n") == 1, err
    assert f"--calibrate {run} {other}" in err and "different placements" in err


def test_a_missing_run_is_exit_2_with_one_line(cli, files, tmp_path):
    topo, cluster, placement, _ = files
    code, out, err = cli(["evaluate", topo, cluster, placement, "--calibrate", tmp_path / "nowhere"])
    assert code == 2 and err.count("\n") == 1 and "no run.json here" in err


def test_a_named_operating_point_needs_the_testbed(cli, files, tmp_path):
    topo, cluster, _, _ = files
    code, out, err = cli(["storm", "run", topo, cluster, "--storm-default", "--operating-point", "acking-msp10",
                          "-o", tmp_path / "out"])
    assert code == 2 and "--operating-point goes with --mode cluster" in err and not (tmp_path / "out").exists()

"""``demo --calibrate RUN``: which of the demo's jobs a run calibrates, refusals naming the file
and field, and the records of that job predicted by the calibrated model."""

import json

import numpy as np
import pytest

from streamplace.demo.calibration import calibration_for
from streamplace.demo.run import DemoRun, Instance, schedule_all
from streamplace.files import SpecError
from streamplace.model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from streamplace.model.calibration import calibrate
from streamplace.model.performance import CostModel, predict
from streamplace.model.specs import placement_from_dict
from streamplace.storm.measured_run import read_run

TOPO = Topology.build("t", [Operator("s", 2, role="source", source_rate=1e5, cpu_per_tuple=1e-6),
                            Operator("b", 2, role="sink", cpu_per_tuple=2e-5)], [Stream("s", "b")])
SMALL = Cluster.build("small", [Node("n0", 4, cores=4, slots=2), Node("n1", 4, cores=4, slots=2)])
LARGE = Cluster.build("large", [Node("n0", 4, cores=4, slots=2), Node("n1", 4, cores=4, slots=2),
                                Node("n2", 4, cores=2, slots=2)])
ONE_WORKER = {label: {"node": "n0", "worker": 0} for label in TOPO.task_labels}


def _instances() -> list[Instance]:
    return [Instance({"workload": "t", "cluster": c.name}, {}, Problem.from_topology(TOPO, c)) for c in (SMALL, LARGE)]


def write_run(directory, **changes):
    """A run directory as `storm run` writes it (acking off, as Nimbus reports it; its spouts held
    back): two windows of the monitor's records, every task on n0's first worker."""
    directory.mkdir()
    load, traffic = [], []
    for start in (0.0, 10.0):
        for i in range(2):
            load.append({"window_start": start, "window_seconds": 10.0, "task": f"s[{i}]", "executed": 5000.0, "cpu_seconds": 0.1})
            load.append({"window_start": start, "window_seconds": 10.0, "task": f"b[{i}]", "executed": 5000.0, "cpu_seconds": 0.2})
            traffic.append({"window_start": start, "window_seconds": 10.0, "src_task": f"s[{i}]", "dst_task": f"b[{i}]",
                            "tuples": 5000.0, "bytes": 500_000.0})
    (directory / "load.jsonl").write_text("".join(json.dumps(r) + "\n" for r in load))
    (directory / "traffic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in traffic))
    doc = {"assignment": ONE_WORKER, "duration_s": 20.0, "load_file": "load.jsonl", "traffic_file": "traffic.jsonl",
           "topology_conf": {"topology.acker.executors": 0}, **changes}
    (directory / "run.json").write_text(json.dumps({k: v for k, v in doc.items() if v is not None}))
    return directory


def test_the_job_the_run_names_is_calibrated_on_it(tmp_path):
    run = write_run(tmp_path / "run", topology="t", cluster="large")
    small, large = _instances()
    got = calibration_for([small, large], run)
    assert got.job == "t@large" and got.document()["run"] == str(run) and got.model.run.point.ackers == 0
    own = calibrate(large.problem, read_run(run, large.problem))   # the same calibration, made directly
    spread = Placement(node=np.array([0, 1, 2, 0]), worker=np.zeros(4, int))
    assert got.model.predict(spread).throughput == pytest.approx(own.predict(spread).throughput)
    assert got.model.predict(spread).throughput != pytest.approx(predict(large.problem, spread, CostModel()).throughput)


def test_a_run_that_names_no_job_must_fit_exactly_one(tmp_path):
    both = write_run(tmp_path / "both")   # every task on n0: both clusters have one
    with pytest.raises(SpecError) as info:
        calibration_for(_instances(), both)
    assert info.value.field_path == "cluster" and "t@small and t@large" in str(info.value)
    on_n2 = write_run(tmp_path / "n2", assignment={label: {"node": "n2", "worker": 0} for label in TOPO.task_labels})
    assert calibration_for(_instances(), on_n2).job == "t@large"


@pytest.mark.parametrize("changes, field, says", [
    ({"topology": "other"}, "topology", "'other' is none of the demo's jobs' (t@small, t@large)"),
    ({"cluster": "huge"}, "cluster", "'huge' is none of the demo's jobs' (t@small, t@large)"),
    ({"assignment": {"x[0]": {"node": "n0", "worker": 0}}}, "placement.x[0]", "unknown task 'x[0]'"),
    ({"assignment": {label: {"node": "n2", "worker": 0} for label in TOPO.task_labels}, "duration_s": -1}, "duration_s",
     "must be a number of seconds > 0"),
    ({"topology": "t", "cluster": "small", "duration_s": -1}, "duration_s", "must be a number of seconds > 0"),
])
def test_a_run_of_no_job_or_a_bad_one_is_refused_naming_the_field(tmp_path, changes, field, says):
    run = write_run(tmp_path / "run", **changes)
    with pytest.raises(SpecError) as info:
        calibration_for(_instances(), run)
    assert info.value.field_path == field and says in str(info.value) and "run.json" in str(info.value)


def test_the_calibrated_jobs_records_carry_the_calibrated_prediction(tmp_path):
    small, large = _instances()
    run = DemoRun(tmp_path)
    run.calibration = calibration_for([small, large], write_run(tmp_path / "run", topology="t", cluster="large"))

    class Steps:   # schedule_all's progress, unseen
        def item(self, text):
            pass

        def advance(self):
            pass

    schedule_all([small, large], tmp_path, Steps(), run, time_limit=2.0)
    assert run.model_for(large) is run.calibration.model and run.model_for(small) is None
    records = {(r.context["cluster"], r.scheduler): r for r in run.records}
    for cluster, inst in (("small", small), ("large", large)):
        for scheduler in ("even", "metis", "lns"):
            ev = records[(cluster, scheduler)].evaluation
            placement = placement_from_dict({"placement": ev.placement}, TOPO, inst.problem.cluster, "record")
            want = (run.calibration.model if cluster == "large" else CostModel()).summary(inst.problem, placement)
            assert ev.throughput == pytest.approx(want["throughput"]) and ev.latency_ms == pytest.approx(want["latency_ms"])
    # the calibrated job's figures are not the bundled model's
    ev = records[("large", "even")].evaluation
    placement = placement_from_dict({"placement": ev.placement}, TOPO, LARGE, "record")
    assert ev.throughput != pytest.approx(predict(large.problem, placement, CostModel()).throughput)


def test_demo_refuses_a_missing_run_before_it_starts(cli, tmp_path):
    code, _, err = cli(["demo", "--quick", "--calibrate", tmp_path / "nowhere", "-o", tmp_path / "out"])
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "nowhere" in lines[0] and "run.json" in lines[0], err
    assert not (tmp_path / "out" / "apps").exists()

"""The typed result record: its JSON form (key order, values) on a hand-worked job, the round trip
through JSON, and the "another job" mark read from the scheduler's declaration."""

import dataclasses
import json

from streamplace.evaluate.decision import eligible
from streamplace.evaluate.records import METRIC_KEYS, ResultRecord, own_job, result_record
from streamplace.model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from streamplace.schedulers import ScheduleResult


def small(parallelism=2):
    # a(p) -> b(2), pair_rate 1; racks r1 = {n0, n1}, r2 = {n2} (tests/evaluate/test_metrics.py's job)
    topo = Topology.build("t", [Operator("a", parallelism), Operator("b", 2, load=2.0)], [Stream("a", "b", pair_rate=1.0)])
    cluster = Cluster.build("c", [Node("n0", 4, slots=2, rack="r1"), Node("n1", 4, rack="r1"), Node("n2", 2, rack="r2")])
    return Problem.from_topology(topo, cluster)


def result(name, problem, placement):
    return ScheduleResult(scheduler=name, params={"seed": 0}, status="heuristic", placement=placement, problem=problem,
                          seconds=0.5, details={"kept": 1, "dropped": object()})


HAND = Placement(node=[0, 0, 0, 2], worker=[0, 1, 0, 0])   # 2 of the 4 unit pairs cross nodes (test_metrics)


def test_json_form_of_a_hand_worked_result():
    record = ResultRecord.of(result("even", small(), HAND), context={"workload": "t"}, extra={"topology_file": "t.yaml"})
    out = record.to_dict()
    assert list(out) == ["workload", "scheduler", "status", "seconds", "lower_bound", "message", "params", *METRIC_KEYS,
                         "valid", "placement", "details", "topology_file"]
    assert (out["inter_node_cost"], out["inter_worker_cost"], out["intra_worker_traffic"]) == (2.0, 1.0, 1.0)
    assert out["valid"] is True and out["overloaded_nodes"] == [] and out["nodes_used"] == 2
    assert out["placement"]["b[1]"] == {"node": "n2", "worker": 0}
    assert out["details"] == {"kept": 1}   # what JSON cannot hold is left out
    assert ResultRecord.from_dict(json.loads(json.dumps(out))) == record


def test_no_placement_and_placement_left_out():
    empty = ScheduleResult(scheduler="optimal", params={}, status="infeasible", placement=None, problem=small(),
                           seconds=0.1, message="no room")
    out = result_record(empty, include_placement=False)
    assert all(out[k] is None for k in METRIC_KEYS) and out["valid"] is False and "placement" not in out
    assert ResultRecord.from_dict(out).to_dict() == out


def test_another_job_is_read_from_the_declaration():
    given, chosen = small(2), small(3)
    placement = Placement(node=[0, 0, 1, 0, 2], worker=[0, 0, 0, 0, 0])
    # throughput declares chooses_parallelism: a result for another job is marked and not a candidate
    mine = ResultRecord.of(result("throughput", chosen, placement), given=given)
    assert mine.own_job and mine.parallelism == {"a": 3, "b": 2}
    assert own_job(mine.to_dict()) and not eligible(mine) and not eligible(ResultRecord.from_dict(mine.to_dict()))
    # the same parallelism as given: the given job
    assert not ResultRecord.of(result("throughput", given, HAND), given=given).own_job
    # a scheduler that does not declare it is never marked, whatever its result's problem
    assert not ResultRecord.of(result("even", chosen, placement), given=given).own_job
    assert eligible(ResultRecord.of(result("even", given, HAND), given=given))


def test_decision_keys_serialise_under_the_output_s_name():
    record = dataclasses.replace(ResultRecord.of(result("t3", small(), HAND)), recommended=True, reason="best",
                                 vs_default={"traffic_pct": 50.0, "throughput_pct": 0.0, "latency_pct": None})
    out = record.to_dict(vs_key="vs_even")
    assert out["vs_even"]["traffic_pct"] == 50.0 and "vs_default" not in out and list(out)[-2:] == ["recommended", "reason"]
    assert ResultRecord.from_dict(out, vs_key="vs_even") == record

"""The decision rule on hand-made records: all tasks on one node, an overloaded placement, ties,
the three objectives, the change against the default and the sentence when they disagree."""

import json

import pytest

from streamplace.cli import main
from streamplace.evaluate.decision import disagreement, recommend, versus
from streamplace.evaluate.records import ResultRecord


def rec(name, traffic, throughput, latency, *, valid=True, nodes=8, bottleneck=None, **more):
    return ResultRecord.from_dict({**more, "scheduler": name, "inter_node_cost": traffic, "throughput": throughput,
                                   "latency_ms": latency, "valid": valid, "placement": {"x[0]": "n0"},
                                   "nodes_used": nodes, "bottleneck": bottleneck})


# the [LF] star case: packing 40 tasks on 1 of 8 nodes sends no traffic but runs on one node's CPU
PACKED = rec("optimal", 0.0, 600_000.0, 2.0, nodes=1, bottleneck="n0:cpu")
EVEN = rec("even", 70.0, 1_460_000.0, 3.0)
T3 = rec("t3", 20.0, 1_460_000.0, 2.5, nodes=3)
OVER = rec("lf", 5.0, 9_000_000.0, 1.0, valid=False)


def test_throughput_first_ties_by_traffic_and_overload_never_wins():
    records = [PACKED, EVEN, T3, OVER]
    decision = recommend(records)
    assert decision.index == 2   # t3 ties even on throughput and sends less traffic; lf is over capacity
    assert "among 3 placements within capacity" in decision.reason and "1 left out" in decision.reason
    assert recommend(records, "traffic").index == 0 and recommend(records, "latency").index == 0
    assert recommend([OVER]).index is None
    assert recommend([rec("even", 70.0, 1_460_000.0, 3.0, parallelism={"a": 3})]).index is None   # another job
    with pytest.raises(ValueError):
        recommend(records, "cost")


def test_change_against_the_default_in_percent():
    assert versus(T3, EVEN) == pytest.approx({"traffic_pct": 100 * 50 / 70, "throughput_pct": 0.0,
                                              "latency_pct": 100 * (2.5 / 3 - 1)})
    assert versus(PACKED, rec("even", 0.0, None, 3.0))["traffic_pct"] is None   # 0 traffic: no percentage


def test_the_sentence_when_least_traffic_is_not_recommended():
    records = [PACKED, EVEN, T3]
    text = disagreement(records, 2, n_tasks=40, n_nodes=8)
    assert text == ("optimal sends the least inter-node traffic (0) but packs 40 tasks on 1 of 8 nodes: n0:cpu "
                    "limits it, so its predicted throughput (600,000/s) is below t3's (1,460,000/s)")
    assert disagreement(records, 0, n_tasks=40, n_nodes=8) is None


def test_compare_marks_one_row_and_evaluates_the_default_when_not_listed(tmp_path, capsys):
    main(["workload", "microbench", "--layout", "diamond", "--tasks", "12", "-o", str(tmp_path / "t.yaml")])
    main(["workload", "cluster", "--preset", "heterogeneous", "-o", str(tmp_path / "c.yaml")])
    capsys.readouterr()
    main(["compare", str(tmp_path / "t.yaml"), str(tmp_path / "c.yaml"), "--schedulers", "t3,metis", "--format", "json"])
    rows = json.loads(capsys.readouterr().out)
    assert sum(r["recommended"] for r in rows) == 1 and all("vs_even" in r for r in rows)
    best = next(r for r in rows if r["recommended"])
    assert best["reason"].startswith("highest predicted throughput")
    assert best["throughput"] == max(r["throughput"] for r in rows if r["valid"])

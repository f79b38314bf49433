"""The testbed campaign's pure parts: experiments, saturation, plans, statistics, rankings, and the
[I]/[T3] statements scored on measured runs (no Storm needed)."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from streamplace.campaign import testbed as campaign
from streamplace.model.operating_point import CAMPAIGN_CONF, OPERATING_POINTS
from streamplace.fit import runs as fit_runs, scores as fit_scores
from streamplace.reproduce import measured
from streamplace.model import Cluster, Node, Operator, Problem, Stream, Topology
from streamplace.model.placement import Placement
from streamplace.storm.run import RunSettings


def _runs(values: dict[tuple[str, str], list[float]]) -> list[dict]:
    return [{"experiment": exp, "scheduler": sched, "rep": i, "bolt_throughput": v, "predicted_bolt_throughput": pred}
            for (exp, sched), vs in values.items() for i, (v, pred) in enumerate(vs)]


def test_experiments_by_workload_and_cluster():
    names = [f"{s.topology.name}@{s.cluster}" for s in campaign.experiments(list(campaign.QUICK_WORKLOADS))]
    assert names == ["linear-io@1high+2low", "diamond-cpu@2high+4low", "smart-home@2high+4low"]
    with pytest.raises(ValueError, match="unknown experiment 'nope'"):
        campaign.experiments(["nope"])


def test_calibration_runs_are_chosen_by_their_full_name_only():
    """``linear-cpu`` stays the papers' experiment; ``linear-cpu@8high`` is the calibration run,
    a training run (kind micro-cpu) that the default campaign leaves out."""
    assert [s.cluster for s in campaign.experiments(["linear-cpu"])] == ["2high+4low"]
    (calibration,) = campaign.experiments(["linear-cpu@8high"])
    assert (calibration.kind, calibration.cluster) == ("micro-cpu", "8high")
    assert all(s.cluster != "8high" or s.kind == s.workload for s in campaign.experiments())
    assert fit_runs.problems()["linear-cpu@8high"].cluster.n_nodes == 8


def test_run_order_interleaves_repetitions_and_continues_a_campaign():
    """Every repetition runs every cell once; repetitions added later (``first_rep``) run in the
    orders a longer campaign would have given them, not again in the first ones'."""
    import random
    cells = list("abcdefgh")
    full = campaign.run_order(cells, 4, random.Random(0))
    assert [rep for rep, _ in full] == [r for r in range(4) for _ in cells]
    for rep in range(4):
        assert sorted(c for r, c in full if r == rep) == cells
    later = campaign.run_order(cells, 2, random.Random(0), first_rep=2)
    assert later == full[2 * len(cells):]
    assert [c for _, c in later[:len(cells)]] != [c for _, c in full[:len(cells)]]


def test_testbeds_one_per_cluster_or_one_per_cluster_and_repetition():
    import random
    from types import SimpleNamespace
    cells = [SimpleNamespace(name=f"{k}{i}", problem=SimpleNamespace(cluster=SimpleNamespace(name=k)))
             for k in ("A", "B") for i in range(3)]
    shared = campaign.testbeds(cells, 2, random.Random(1), first_rep=1)
    assert [name for name, _ in shared] == ["A", "B"]
    assert all(len(order) == 6 and {c.problem.cluster.name for _, c in order} == {name} for name, order in shared)
    fresh = campaign.testbeds(cells, 2, random.Random(1), first_rep=1, per_rep=True)
    assert [name for name, _ in fresh] == ["A/rep1", "A/rep2", "B/rep1", "B/rep2"]
    assert [run for _, order in fresh for run in order] == [run for _, order in shared for run in order]  # same runs, same order
    assert all({rep for rep, _ in order} == {int(name[-1])} and len(order) == 3 for name, order in fresh)


def test_saturated_asks_every_spout_task_for_the_same_rate():
    topo = campaign.saturated(campaign.experiments(["star-cpu"])[0].topology, rate=1000.0)
    for op in topo.operators:
        if op.role == "source":
            assert op.source_rate == 1000.0 * op.parallelism


def test_every_scheduler_places_the_linear_micro_benchmark():
    cells = campaign.plan(campaign.experiments(["linear-io"]),
                          [s for s in campaign.SCHEDULERS if s[0] != "optimal"])
    assert [c.scheduler for c in cells] == [s[0] for s in campaign.SCHEDULERS if s[0] != "optimal"]
    assert all(c.placement is not None for c in cells), [(c.scheduler, c.reason) for c in cells]


def test_cell_stats_mean_sample_sd_and_cv():
    stats = campaign.cell_stats(_runs({("e", "a"): [(90.0, 1), (110.0, 1)], ("e", "b"): [(50.0, 2)]}))
    assert stats[("e", "a")]["mean"] == 100.0 and stats[("e", "a")]["sd"] == pytest.approx(math.sqrt(200))
    assert stats[("e", "a")]["cv"] == pytest.approx(math.sqrt(200) / 100) and stats[("e", "a")]["n"] == 2
    assert stats[("e", "b")]["n"] == 1 and math.isnan(stats[("e", "b")]["sd"])


def test_busiest_node_is_the_one_most_often_out_of_quota():
    runs = [{"node_cpu": {"a": {"cores": 0.5, "throttled": 0.9}, "b": {"cores": 0.2, "throttled": 0.1}}},
            {"node_cpu": {"a": {"cores": 0.4, "throttled": 0.5}, "b": {"cores": 0.3, "throttled": 0.8}}}]
    assert campaign.busiest_node(runs) == "a:70%"
    assert campaign.busiest_node([{"job": "recorded before node CPU was measured"}]) == "-"


def test_rankings_and_kendall_tau():
    runs = _runs({("e", "a"): [(300.0, 30.0)], ("e", "b"): [(200.0, 10.0)], ("e", "c"): [(100.0, 20.0)]})
    rank = campaign.rankings(runs)["e"]
    assert rank["measured"] == ["a", "b", "c"] and rank["model"] == ["a", "c", "b"]
    assert rank["kendall_tau"] == pytest.approx(1 / 3)   # 2 concordant pairs, 1 discordant
    assert math.isnan(rank["repeat_tau"])   # one repetition: nothing to compare


def test_repeat_tau_is_the_mean_tau_between_repetitions():
    # rep 0: a > b > c; rep 1: a > c > b (tau 1/3); rep 2: c > b > a (tau -1 with rep 0, -1/3 with rep 1)
    runs = _runs({("e", "a"): [(300.0, 0), (300.0, 0), (100.0, 0)], ("e", "b"): [(200.0, 0), (100.0, 0), (200.0, 0)],
                  ("e", "c"): [(100.0, 0), (200.0, 0), (300.0, 0)]})
    assert fit_scores.repeat_tau(runs) == pytest.approx((1 / 3 - 1 - 1 / 3) / 3)
    assert campaign.rankings(runs)["e"]["repeat_tau"] == pytest.approx(-1 / 3)
    two = _runs({("e", "a"): [(300.0, 0), (250.0, 0)], ("e", "b"): [(200.0, 0)], ("e", "c"): [(100.0, 0), (90.0, 0)]})
    assert fit_scores.repeat_tau(two) == pytest.approx(1.0)   # b ran once: a and c compared
    pooled = two + _runs({("e", "a"): [(100.0, 0)], ("e", "c"): [(200.0, 0)]})   # a second campaign's rep 0
    assert fit_scores.repeat_tau(pooled) == pytest.approx((1 - 1 - 1) / 3)   # its run is the third of a and c


def test_measured_statements_score_the_ratio_of_means():
    # [I] Fig. 10: I-Scheduler +25 % over R-Storm on the I/O-intensive diamond; OLS +8..46 %
    exp = "diamond-io@1high+2low"
    runs = _runs({(exp, "ischeduler"): [(1250.0, 0), (1250.0, 0)], (exp, "rstorm"): [(1000.0, 0), (1000.0, 0)],
                  (exp, "online"): [(1300.0, 0)]})
    # the I/O-intensive statements are scored at a latency-bound point, as [I] ran them
    point = OPERATING_POINTS["acking-msp10"].document()
    runs = [{**r, "operating_point": point} for r in runs]
    checks = {c.claim: c for c in measured.checks("ischeduler", runs)}
    vs_rstorm = checks["I-Scheduler vs R-Storm, diamond (IO-intensive) [at acking-msp10]"]
    assert (vs_rstorm.ours, vs_rstorm.verdict) == ("+25 %", "agree")
    vs_ols = checks["I-Scheduler vs OLS, diamond (IO-intensive) [at acking-msp10]"]
    assert vs_ols.verdict == "disagree" and "1,300 bolt tuples/s (n=1)" in vs_ols.why
    assert all("linear" not in c for c in checks)   # experiments not measured are not scored


def test_measured_sums_each_nodes_executor_cpu_over_the_measured_windows(tmp_path):
    """Two nodes, a window before the measured interval and two inside it; figures worked by hand."""
    topo = Topology.build("t", [Operator("s", 1, role="source", source_rate=10.0), Operator("b", 2, role="sink")],
                          [Stream("s", "b")])
    cluster = Cluster.build("c", [Node("n0", capacity=1.0, slots=1), Node("n1", capacity=1.0, slots=1)])
    placement = Placement(node=np.array([0, 0, 1]), worker=np.array([0, 0, 0]))
    where = placement.to_mapping(topo.task_labels, cluster)
    rows = []
    for start in (0.0, 10.0, 20.0):   # window 0 is warm-up
        rows += [{"window_start": start, "window_seconds": 10.0, "task": "s[0]", "executed": 100, "cpu_seconds": 0.5},
                 {"window_start": start, "window_seconds": 10.0, "task": "b[0]", "executed": 60, "cpu_seconds": 0.3},
                 {"window_start": start, "window_seconds": 10.0, "task": "b[1]", "executed": 40, "cpu_seconds": 1.0 + start / 10}]
    (tmp_path / "load-t-6700-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = {"measure_start": 10.0, "measure_end": 30.0, "assignment": where, "node_cpu": {"n0": {"cores": 0.1}}}
    rec = campaign.measured(Problem.from_topology(topo, cluster), placement, result, tmp_path, RunSettings(window_s=10.0))
    assert rec["node_executor_cpu"] == {"n0": pytest.approx((0.5 + 0.3) * 2 / 20), "n1": pytest.approx((2.0 + 3.0) / 20)}
    assert rec["bolt_throughput"] == pytest.approx(200 / 20) and rec["source_rate"] == pytest.approx(200 / 20)
    assert rec["windows"] == 2 and rec["node_cpu"] == {"n0": {"cores": 0.1}}
    # what a calibration reads: per task over the two measured windows, per operator pair
    assert rec["tasks"]["b[1]"] == {"executed_per_s": pytest.approx(80 / 20), "cpu_cores": pytest.approx(5.0 / 20)}
    assert rec["tasks"]["s[0]"]["executed_per_s"] == pytest.approx(200 / 20)
    assert rec["streams"] == {}   # no traffic records written


def test_a_run_nimbus_placed_has_no_plan_to_match(tmp_path):
    topo = Topology.build("t", [Operator("s", 1, role="source", source_rate=10.0), Operator("b", 1, role="sink")],
                          [Stream("s", "b")])
    cluster = Cluster.build("c", [Node("n0", capacity=1.0, slots=1)])
    rows = [{"window_start": 0.0, "window_seconds": 10.0, "src_task": "s[0]", "dst_task": "b[0]", "tuples": 50, "bytes": 500}]
    (tmp_path / "traffic-t-6700-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = {"measure_start": 0.0, "measure_end": 10.0, "assignment": {}, "node_cpu": {}}
    rec = campaign.measured(Problem.from_topology(topo, cluster), None, result, tmp_path, RunSettings(window_s=10.0))
    assert rec["plan_matches"] is None and rec["streams"] == {"s>b": {"tuples_per_s": pytest.approx(5.0)}}


def test_a_points_ackers_budget_and_links_reach_the_run_and_its_record():
    point = OPERATING_POINTS["acking-msp50"]
    settings = campaign.point_settings(point, RunSettings(mode="cluster"))
    assert settings.ackers == 3 and settings.testbed.cpu_budget == 1.5 and not settings.testbed.bandwidth_scaled
    rec = campaign.operating_point(settings, point)
    assert rec["storm_conf"]["topology.max.spout.pending"] == 50 and rec["ackers"] == 3
    assert rec["operating_point"]["name"] == "acking-msp50"
    job = campaign.point_job("j", campaign.experiments(["linear-io"])[0].topology, None, 20.0, point, workers=4)
    assert job.placement is None and job.workers == 4 and job.conf["topology.max.spout.pending"] == 50
    assert all(op.source_rate == campaign.SATURATED_RATE * op.parallelism for op in job.topology.operators if op.role == "source")
    assert campaign.point_settings(OPERATING_POINTS["bandwidth-scaled"], RunSettings()).testbed.bandwidth_scaled


def test_runs_before_spouts_applied_selectivity_are_kept_apart_and_scored_as_they_ran(tmp_path):
    probs = fit_runs.problems()
    home, older = probs["smart-home@2high+4low"], probs["smart-home@2high+4low" + fit_runs.UNFILTERED]
    assert home.topology.operators[0].selectivity == 0.5
    assert [op.selectivity for op in older.topology.operators] == [1.0] + [op.selectivity for op in home.topology.operators[1:]]
    assert "linear-io@1high+2low" + fit_runs.UNFILTERED not in probs   # its sources send every record anyway
    run = {"job": "even-r0", "kind": "smart-home", "scheduler": "even", "placement": {}}
    records = [{**run, "experiment": "smart-home@2high+4low", "bolt_throughput": 100.0},
               {**run, "experiment": "smart-home@2high+4low", "bolt_throughput": 300.0, "spout_selectivity": True},
               {**run, "experiment": "linear-io@1high+2low", "kind": "micro-io", "bolt_throughput": 50.0}]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    runs = measured.load_runs(tmp_path)
    assert [r["experiment"] for r in runs] == ["smart-home@2high+4low (sources unfiltered)", "smart-home@2high+4low",
                                               "linear-io@1high+2low"]
    stats = campaign.cell_stats(runs)   # never pooled: one run in each cell
    assert stats[("smart-home@2high+4low", "even")]["mean"] == 300.0
    assert stats[("smart-home@2high+4low" + fit_runs.UNFILTERED, "even")]["mean"] == 100.0
    problem_of = fit_runs.run_problems()
    assert problem_of(runs[0]).topology == older.topology and problem_of(runs[1]).topology == home.topology


def test_a_run_whose_bolts_executed_nothing_is_stalled():
    assert fit_runs.stalled({"bolt_throughput": 0.0})
    assert fit_runs.stalled({"bolt_throughput": float("nan")})   # no window measured at all
    assert not fit_runs.stalled({"bolt_throughput": 3.5})


def test_a_runs_operating_point_is_the_campaigns_storm_settings_under_the_given_ones():
    from streamplace.storm.testbed import TestbedSettings
    given = {"storm.messaging.netty.buffer_size": 65536, "topology.executor.receive.buffer.size": 2048}
    point = campaign.operating_point(RunSettings(mode="cluster", storm_conf=given, testbed=TestbedSettings(cpu_period_ms=50)))
    assert point["storm_conf"] == {**CAMPAIGN_CONF, **given}
    assert point["storm_conf"]["topology.executor.receive.buffer.size"] == 2048   # the given setting wins
    assert point["cpu_period_ms"] == 50 and point["testbed_version"] == campaign.TESTBED_VERSION
    assert campaign.operating_point(RunSettings())["storm_conf"] == CAMPAIGN_CONF


def test_the_docs_command_for_the_campaigns_operating_point_gives_exactly_its_storm_settings():
    """docs/testbed.md shows `storm run` with the campaign's settings as --storm-conf options: they
    must stay what CAMPAIGN_CONF is (read as the CLI reads them: YAML values)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "testbed.md").read_text()
    start = text.index("streamplace storm run TOPOLOGY CLUSTER -s metis")
    block = text[start:text.index("\n\n", start)]
    given = dict(kv.split("=", 1) for kv in re.findall(r"--storm-conf (\S+)", block))
    assert {k: yaml.safe_load(v) for k, v in given.items()} == CAMPAIGN_CONF

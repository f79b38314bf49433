"""``streamplace reproduce``: files, records consistent with evaluate/predict, computed (not copied) checks."""

import json
import re

import numpy as np
import pytest

from streamplace.reproduce import PAPERS, REGISTRY, reproduce
from streamplace.reproduce import lf as lf_repro
from streamplace.reproduce import metis as metis_repro
from streamplace.reproduce import microbench as micro_repro
from streamplace.reproduce import testbed, throughput
from streamplace.reproduce.core import gain_verdict, range_verdict
from streamplace.reproduce.reported import TABLES
from streamplace.cli import REPRODUCE_PAPERS, main
from streamplace.model import performance
from streamplace.evaluate.records import METRIC_KEYS, evaluation_record
from streamplace.model import Cluster, Node, Operator, Problem, Stream, Topology
from streamplace.model.placement import Placement
from streamplace.model.specs import placement_from_dict
from streamplace.workloads import fischer, lf, microbench, runtime

CONTEXT = ("paper", "experiment", "workload", "cluster", "scheduler")
COMPARED = ("inter_node_cost", "inter_worker_cost", "nodes_used", "max_utilisation", "cohesion", "coupling")


#: measured runs as a testbed campaign writes them (only the keys the statements read), at an
#: operating point of the regime [I] and [T3] ran the I/O-intensive micro-benchmarks in
ACKING = {"name": "acking-msp10", "ackers": 3, "max_spout_pending": 10, "source_rate": None}
TESTBED_RUNS = [{"experiment": "diamond-io@1high+2low", "scheduler": s, "rep": i, "bolt_throughput": v,
                 "operating_point": ACKING}
                for s, vs in {"ischeduler": (1240.0, 1260.0), "t3": (1100.0, 1100.0), "rstorm": (1000.0, 1000.0),
                              "online": (1000.0, 1100.0)}.items() for i, v in enumerate(vs)]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    results = reproduce(PAPERS, out, quick=True, testbed_runs=TESTBED_RUNS)
    return out, results, json.loads((out / "results.json").read_text())


def test_testbed_statements_score_the_measured_runs(run):
    out, _, _ = run
    statements = json.loads((out / "statements-testbed.json").read_text())
    assert {s["paper"] for s in statements} == {"I", "T3"}
    assert len(statements) == 4                      # diamond (IO) vs R-Storm and vs OLS, for each paper
    by_claim = {(s["paper"], s["claim"]): s for s in statements}
    i_rstorm = by_claim[("I", "I-Scheduler vs R-Storm, diamond (IO-intensive) [at acking-msp10]")]
    assert (i_rstorm["ours"], i_rstorm["verdict"]) == ("+25 %", "agree")       # published +25 % ([I] Fig. 10)
    assert "1,250 +- 14 bolt tuples/s (n=2)" in i_rstorm["why"] and "latency-bound, as the paper" in i_rstorm["why"]
    assert "measured on the Storm testbed" in (out / "report.html").read_text()


def test_a_statement_is_scored_only_at_the_operating_point_the_paper_ran_it():
    """The same runs, saturated (no ackers, as every campaign before operating points were named):
    the I/O-intensive statements are not run there, and say why."""
    from streamplace.reproduce import measured
    saturated = [{k: v for k, v in r.items() if k != "operating_point"} for r in TESTBED_RUNS]
    checks = measured.checks("ischeduler", saturated)
    assert {c.verdict for c in checks} == {"not_run"} and len(checks) == 2
    assert checks[0].claim.endswith("[at 10ms-sleeps]") and "the paper ran it latency-bound" in checks[0].why
    at_rate = [{**r, "operating_point": {"name": "fixed-rate-10ms-sleeps", "source_rate": 600.0}} for r in TESTBED_RUNS]
    checks = measured.checks("ischeduler", at_rate)   # every placement emitted what it asked: no throughput claim
    assert {c.verdict for c in checks} == {"not_run"} and "fixed-rate-10ms-sleeps is at-rate" in checks[0].why


def _problem(rec):
    """Rebuild a record's problem from the workload modules (all deterministic)."""
    if rec["paper"] in ("ischeduler", "t3") and rec["experiment"] == "microbench":
        return Problem.from_topology(microbench.microbench(rec["layout"], rec["n_tasks"]), microbench.cluster(rec["cluster"]))
    if rec["paper"] == "metis":
        return Problem.from_topology(fischer.topology(rec["workload"], rec["nodes"]), fischer.cluster(rec["nodes"]))
    if rec["paper"] == "lf":
        return next(i.problem for i in lf.instances() if i.layout == rec["workload"] and i.cluster == rec["cluster"])
    scenario = next(s for s in runtime.scenarios() if (s.kind, s.workload) == (rec["experiment"], rec["workload"]))
    nodes = re.fullmatch(r"online \((\d+) nodes\)", rec["scheduler"])
    cluster = runtime.cluster(int(nodes.group(1)), 0) if nodes else runtime.named_cluster(rec["cluster"])
    return Problem.from_topology(scenario.topology, cluster)


def test_files_and_record_keys(run):
    out, results, records = run
    for name in ("report.html", "results.csv", "results.json", "summary.md"):
        assert (out / name).stat().st_size > 0
    assert [r.paper for r in results] == list(PAPERS)
    assert {r["paper"] for r in records} == set(PAPERS)
    for rec in records:
        assert all(rec.get(k) is not None for k in CONTEXT), rec
        assert all(k in rec for k in METRIC_KEYS)
    html = (out / "report.html").read_text()
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert len(pngs) >= 12 and html.count("data:image/png;base64,") == len(pngs)
    header = (out / "results.csv").read_text().splitlines()[0].split(",")
    assert header[:5] == list(CONTEXT)


def test_records_match_evaluate_and_predict_run_separately(run):
    _, _, records = run
    checked = set()
    for rec in records:
        if rec["paper"] == "throughput" or rec["placement"] is None:
            continue
        problem = _problem(rec)
        placement = placement_from_dict(rec["placement"], problem.topology, problem.cluster)
        again = evaluation_record(problem, placement, include_placement=False)
        for key in COMPARED:
            assert rec[key] == pytest.approx(again[key]), (rec["paper"], rec["workload"], rec["scheduler"], key)
        perf = performance.predict(problem, placement, performance.CostModel())
        assert rec["throughput"] == pytest.approx(perf.throughput)
        if rec.get("cost_model") == "testbed":
            light = performance.predict(problem, placement, performance.CostModel(), offered_scale=1.0)
            assert rec["latency_light_ms"] == pytest.approx(light.latency_ms)
        if rec["paper"] == "metis":
            assert rec["spout_throughput"] == pytest.approx(perf.max_scale * fischer.spout_rate(problem.topology))
            assert rec["acking"] == fischer.ACKING[rec["workload"]]
        checked.add((rec["paper"], rec["experiment"]))
    assert {p for p, _ in checked} == {"ischeduler", "t3", "metis", "lf"}
    assert {e for p, e in checked if p == "t3"} == {"microbench", "micro-io", "micro-cpu", "smart-home", "frequent-routes"}


def test_throughput_records_match_a_fresh_run(run):
    _, _, records = run
    rec = next(r for r in records if r["paper"] == "throughput" and r["scheduler"] == "throughput"
               and r["variant"] == "max_batch=200" and r["workload"] == "star" and r["cluster"] == "nasiri-small")
    sc = throughput.scenario("nasiri-small", "star", max_batch=200)
    assert (rec["low"], rec["mid"], rec["high"]) == sc.instances
    assert rec["n_throughput"] == pytest.approx(sc.ours.throughput)
    assert rec["throughput"] == pytest.approx(performance.predict(sc.result.problem, sc.result.placement).throughput)


def test_summary_states_every_check_and_the_reported_tables(run):
    out, results, _ = run
    summary = (out / "summary.md").read_text()
    for res in results:
        assert res.title in summary
        for c in res.checks:
            assert f"| {c.claim} | {c.source} |" in summary
        for rep in TABLES[res.paper].values():
            assert rep.source in summary and rep.key in summary
    lf_res = next(r for r in results if r.paper == "lf")
    assert {c.verdict for c in lf_res.checks} == {"agree"}  # [LF] Fig. 6 is reproduced exactly


def test_lf_checks_are_computed_from_the_records(run):
    _, results, _ = run
    recs = [dict(r) for r in next(r for r in results if r.paper == "lf").records]
    even = next(r for r in recs if r["scheduler"] == "even" and r["workload"] == "ascent" and r["cluster"] == "lf-low")
    lfr = next(r for r in recs if r["scheduler"] == "lf" and r["workload"] == "ascent" and r["cluster"] == "lf-low")
    lfr["cohesion_gain_pct"] = lf_repro.gain(2 * even["cohesion"], even["cohesion"])
    check = next(c for c in lf_repro.checks(recs) if c.claim == "L/F cohesion gain over even, ascent on lf-low")
    assert check.ours == "+100.00 %" and check.reported == "+71.78 %" and check.verdict == "direction"


def _micro(workload, cluster, scheduler, cost, optimum):
    return {"workload": workload, "cluster": cluster, "scheduler": scheduler, "inter_node_cost": cost,
            "status": "optimal" if scheduler == "optimal" else "heuristic", "lower_bound": None, "valid": True,
            "seconds": 0.2}


@pytest.mark.parametrize("diamond, verdict", [(148.0, "agree"), (150.0, "disagree")])
def test_ischeduler_checks_against_hand_made_records(diamond, verdict):
    from streamplace.report.render import add_gaps
    recs = add_gaps([_micro("diamond-30", "heterogeneous", "optimal", 146.0, None),
                     _micro("diamond-30", "heterogeneous", "ischeduler", diamond, None),
                     _micro("star-30", "heterogeneous", "optimal", 86.0, None),
                     _micro("star-30", "heterogeneous", "ischeduler", 90.0, None),
                     _micro("linear-30", "heterogeneous", "optimal", 20.0, None),
                     _micro("linear-30", "heterogeneous", "ischeduler", 20.0, None)])
    checks = {c.claim: c for c in micro_repro.ischeduler_checks(recs)}
    assert checks["optimum inter-node cost, diamond-30@heterogeneous"].verdict == "agree"
    assert checks["ischeduler inter-node cost, diamond-30@heterogeneous"].verdict == verdict
    assert checks["ischeduler inter-node cost, diamond-30@heterogeneous"].ours == f"{diamond:g}"
    off = checks["I-Scheduler reaches the optimum on every instance but the two listed"]
    assert off.verdict == "agree" and "2 of 3 above" in off.ours  # the same two instances, whatever the size
    assert checks["every I-Scheduler run finishes within theta"].ours == "slowest 0.20 s"


def test_testbed_gains_follow_the_records():
    recs = []
    for exp, workload, cluster in {(s.kind, s.workload, s.cluster) for s in runtime.scenarios()}:
        for sched, thr, lat, nodes in (("t3", 200.0, 1.0, 3), ("rstorm", 100.0, 2.0, 3), ("online", 400.0, 4.0, 8),
                                       ("online (3 nodes)", 100.0, 1.0, 3), ("online (4 nodes)", 100.0, 2.0, 4)):
            recs.append({"experiment": exp, "workload": workload, "cluster": cluster, "scheduler": sched,
                         "throughput": thr, "latency_light_ms": lat, "nodes_used": nodes, "inter_node_cost": 10.0 * nodes,
                         "bottleneck": f"{sched}:cpu"})
    checks = {c.claim: c for c in testbed.checks("t3", recs)}
    c = checks["T3 vs R-Storm, diamond (IO-intensive)"]
    assert (c.reported, c.ours, c.verdict, c.alt, c.alt_verdict) == ("+20 %", "+100 %", "direction", "+100 %", "direction")
    c = checks["T3 vs OLS, linear (CPU-intensive)"]
    assert (c.ours, c.verdict, c.alt, c.alt_verdict) == ("-50 %", "disagree", "+300 %", "direction")
    assert c.why == ("T3: 3 node(s), inter-node traffic 30, bottleneck t3:cpu; "
                     "OLS: 8 node(s), inter-node traffic 80, bottleneck online:cpu")
    assert checks["nodes used, frequent-routes on 8high"].verdict == "agree"
    assert checks["nodes used, smart-home on 8high"].verdict == "disagree"  # [T3] reports 4, 4, 8
    assert c.reading == testbed.SATURATED  # [T3] 6.1: CPU-intensive runs load the operators fully
    assert checks["T3 vs OLS, linear (IO-intensive)"].reading == testbed.OPERATING_POINT
    c = checks["OLS on 4 nodes: above OLS on 8, below T3"]
    # operating point (primary): latency 4 > 2 > 1 ms; saturated (second): throughput 100 < 400
    assert (c.verdict, c.alt_verdict, c.reading) == ("agree", "disagree", testbed.OPERATING_POINT)


def test_acking_demand_by_hand():
    """One spout task on node 0 emitting 10/s to one bolt task on node 1, two nodes: 20 acks/s + 10 completions."""
    topo = Topology.build("t", [Operator("s", 1, role="source", source_rate=10.0), Operator("b", 1, role="sink")],
                          [Stream("s", "b")])
    cluster = Cluster.build("c", [Node(f"n{i}", 4, slots=1) for i in range(2)])
    problem = Problem.from_topology(topo, cluster)
    placement = Placement(node=np.array([0, 1]), worker=np.array([0, 0]))
    model = performance.CostModel()
    cpu, nic_in, nic_out = metis_repro.acking_demand(problem, placement, performance.predict(problem, placement), model)
    send = np.array([10 + 5, 10 + 5])      # own acks + half the completions (acker per node)
    recv = np.array([10 + 10, 10 + 0])     # half of 20 acks + completions to the spout on node 0
    ser = model.ser_cpu_per_tuple + model.ser_cpu_per_byte * fischer.ACK_BYTES
    wire = fischer.ACK_BYTES + model.header_bytes
    np.testing.assert_allclose(cpu, fischer.ACK_CPU * 10 + ser * 0.5 * (send + recv))
    np.testing.assert_allclose(nic_in, 0.5 * recv * wire)
    np.testing.assert_allclose(nic_out, 0.5 * send * wire)


def test_verdict_rules():
    assert gain_verdict(12.0, 20.0) == "agree" and gain_verdict(45.0, 20.0) == "direction"
    assert gain_verdict(-5.0, 20.0) == "disagree" and gain_verdict(None, 20.0) == "not_run"
    assert gain_verdict(4.0, 0) == "agree" and gain_verdict(-15.0, 0) == "direction" and gain_verdict(30.0, 0) == "disagree"
    assert range_verdict([10.0, 30.0], 8, 46) == "agree" and range_verdict([70.0], 8, 46) == "direction"
    assert range_verdict([10.0, -1.0], 8, 46) == "disagree"


def test_every_paper_has_one_reported_table_with_sources():
    assert set(TABLES) == set(PAPERS) == set(REGISTRY) and REPRODUCE_PAPERS == PAPERS
    tags = {"ischeduler": "[I]", "t3": "[T3]", "metis": "[F]", "lf": "[LF]", "throughput": "[N]"}
    for paper, table in TABLES.items():
        assert table and all(r.source.startswith(tags[paper]) for r in table.values())


def test_cli_reproduce_one_paper(tmp_path):
    main(["reproduce", "--paper", "lf", "--quick", "-o", str(tmp_path)])
    records = json.loads((tmp_path / "results.json").read_text())
    assert {r["paper"] for r in records} == {"lf"} and len(records) == 20
    assert "lf" in (tmp_path / "summary.md").read_text()


STATEMENT_KEYS = {"paper", "claim", "source", "published", "ours", "verdict", "tolerance", "reading", "why"}


def test_statements_json_has_every_statement_with_its_reason(run):
    out, results, _ = run
    statements = json.loads((out / "statements.json").read_text())
    assert len(statements) == sum(len(r.checks) for r in results)
    assert {s["paper"] for s in statements} == {"I", "T3", "F", "LF", "N"}
    for s in statements:
        assert STATEMENT_KEYS <= set(s), s
        assert s["verdict"] in ("agree", "direction", "disagree", "not_comparable", "not_run")
        assert s["tolerance"] and s["reading"]
        if s["verdict"] != "agree":
            assert s["why"].strip(), s
    summary = (out / "summary.md").read_text()
    assert "before -> after issue 17" in summary and "7/1/18/5 ->" in summary  # [T3]'s counts before the issue
    assert summary.count("| claim | source | paper | ours | verdict | tolerance |") == len(results)
    for s in statements:  # every not comparable statement is listed with its reason
        if s["verdict"] == "not_comparable":
            assert f"**{s['claim']}** ({s['source']})" in summary


def test_a_verdict_other_than_agree_needs_a_why():
    from streamplace.reproduce.core import Check
    with pytest.raises(ValueError, match="needs a why"):
        Check("throughput", "x", "claim", "[N] Table 4", "1", "2", "not_comparable")
    assert Check("throughput", "x", "claim", "[N] Table 4", "1", "1", "agree").statement()["paper"] == "N"


def test_table4_counts_are_not_comparable_and_name_the_missing_quantities(run):
    _, results, _ = run
    recs = next(r for r in results if r.paper == "throughput").records
    table4 = [c for c in throughput.checks(recs) if c.claim.startswith("instances L/M/H")]
    assert table4 and all(c.verdict == "not_comparable" for c in table4 if c.ours != "not_run")
    assert all("MET" in c.why and "R0" in c.why for c in table4)
    # the counts are still ours, computed from the records
    rec = next(r for r in recs if r["scheduler"] == "throughput")
    claim = f"instances L/M/H, {rec['workload']} on {rec['cluster']} ({rec['variant']})"
    assert next(c for c in table4 if c.claim == claim).ours == f"{rec['low']}/{rec['mid']}/{rec['high']}"


def test_fischer_throughput_tolerance_is_table_i_spread():
    spread = TABLES["metis"]["throughput/spread"].value
    assert metis_repro.spread_tolerance("payload", "metis", "even") == max(spread["metis"]["payload"],
                                                                           spread["even"]["payload"])
    recs = []
    for nodes in (10, 20):
        for sched, thr in (("even", 100.0), ("online", 100.0), ("metis", 140.0)):
            recs.append({"workload": "payload", "nodes": nodes, "scheduler": sched, "spout_throughput": thr,
                         "spout_throughput_acking": thr, "network_reduction_pct": 0.0, "inter_node_cost": 1.0,
                         "total_traffic": 2.0, "imbalance": 1.0})
    c = next(c for c in metis_repro.checks(recs) if c.claim.startswith("Metis vs Default throughput, payload"))
    # +40 % against [F]'s +52 %: outside 10 points, inside Table I's payload spread (Metis 26)
    assert c.ours == "+40 %" and c.verdict == "agree" and "Table I" in c.tolerance
    assert gain_verdict(40.0, 52.0) == "direction"


def test_a_statement_on_a_relaxed_ols_run_says_so():
    from streamplace.reproduce.core import OLS_RELAX_WHY
    recs = []
    for exp, workload, cluster in {(s.kind, s.workload, s.cluster) for s in runtime.scenarios()}:
        for sched, relaxed in (("t3", False), ("rstorm", False), ("online", workload == "star"),
                               ("online (3 nodes)", False), ("online (4 nodes)", False)):
            recs.append({"experiment": exp, "workload": workload, "cluster": cluster, "scheduler": sched,
                         "throughput": 100.0, "latency_light_ms": 2.0 if sched == "online" else 1.0, "nodes_used": 3,
                         "inter_node_cost": 10.0, "bottleneck": "cpu", "details": {"gamma_relaxed": relaxed}})
    checks = {c.claim: c for c in testbed.checks("t3", recs)}
    assert OLS_RELAX_WHY in checks["T3 vs OLS, star (IO-intensive)"].why
    assert OLS_RELAX_WHY not in checks["T3 vs OLS, linear (IO-intensive)"].why
    assert OLS_RELAX_WHY not in checks["T3 vs R-Storm, star (IO-intensive)"].why


def test_campaigns_pool_and_one_given_twice_is_refused(tmp_path):
    from streamplace.reproduce.measured import load_campaigns
    from streamplace.model.specs import SpecError
    run = {"experiment": "linear-io@1high+2low", "kind": "micro-io", "placement": {}}
    first = [{**run, "scheduler": "a", "job": "a-r0", "finished_s": 10.0, "bolt_throughput": 5.0},
             {**run, "scheduler": "b", "job": "b-r0", "finished_s": 20.0, "bolt_throughput": 6.0}]
    # a later campaign of the same experiment reuses job names: different runs all the same
    second = [{**run, "scheduler": "a", "job": "a-r0", "finished_s": 12.0, "bolt_throughput": 7.0}]
    for name, recs in (("one", first), ("two", second)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert load_campaigns([tmp_path / "one", tmp_path / "two" / "runs.jsonl"]) == first + second
    with pytest.raises(SpecError, match="run a-r0 is also in .*one: a campaign given twice"):
        load_campaigns([tmp_path / "one", tmp_path / "two", tmp_path / "one" / "runs.jsonl"])


def test_a_line_that_is_not_a_run_is_named_with_its_field(tmp_path):
    from streamplace.reproduce.measured import RUN_KEYS, load_runs
    from streamplace.model.specs import SpecError
    run = {key: "x" for key in RUN_KEYS}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(run) + "\n\n" + '{"job": "a"\n')
    with pytest.raises(SpecError, match=f"{path}: line 3: invalid JSON at column 12"):
        load_runs(path)
    path.write_text(json.dumps(run) + "\n" + json.dumps({k: v for k, v in run.items() if k != "placement"}) + "\n")
    with pytest.raises(SpecError, match=f"{path}: line 2: placement: missing"):
        load_runs(path)
    path.write_text(json.dumps(run) + "\n[1]\n")
    with pytest.raises(SpecError, match="line 2: not a JSON object"):
        load_runs(path)


def test_pooled_runs_of_one_cell_must_share_their_placement(tmp_path):
    from streamplace.reproduce.measured import load_campaigns
    from streamplace.model.specs import SpecError
    run = {"experiment": "linear-io@1high+2low", "kind": "micro-io", "scheduler": "even", "job": "even-r0",
           "bolt_throughput": 5.0, "placement": {"spout[0]": {"node": "high0", "worker": 0}}}
    moved = {**run, "job": "even-r2", "placement": {"spout[0]": {"node": "low0", "worker": 0}}}
    same = {**run, "job": "even-r3"}
    for name, rec in (("one", run), ("two", same), ("three", moved)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "runs.jsonl").write_text(json.dumps(rec) + "\n")
    assert len(load_campaigns([tmp_path / "one", tmp_path / "two"])) == 2
    with pytest.raises(SpecError, match="placement.*even-r2 of linear-io@1high\\+2low / even ran another placement"):
        load_campaigns([tmp_path / "one", tmp_path / "three"])
    # the same placement on another testbed version: not pooled either (runs without the field are version 1)
    (tmp_path / "four").mkdir()
    (tmp_path / "four" / "runs.jsonl").write_text(json.dumps({**run, "job": "even-r4", "testbed_version": 2}) + "\n")
    with pytest.raises(SpecError, match="testbed_version: run even-r4 .* on testbed version 2, .*one on version 1"):
        load_campaigns([tmp_path / "one", tmp_path / "four"])
    assert len(load_campaigns([tmp_path / "four"])) == 1
    assert len(load_campaigns([tmp_path / "one", tmp_path / "four"], mixed_operating_points=True)) == 2   # compared, not pooled
    # nor with other Storm settings (storm_conf), the differing key named
    conf = {"topology.executor.receive.buffer.size": 1024}
    for name, rec in (("five", {**run, "job": "even-r5", "storm_conf": conf}),
                      ("six", {**run, "job": "even-r6", "storm_conf": {**conf, "storm.messaging.netty.buffer_size": 65536}})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "runs.jsonl").write_text(json.dumps(rec) + "\n")
    with pytest.raises(SpecError, match="storm_conf: run even-r6 .* other Storm settings .*five.*"
                                        "\\(storm.messaging.netty.buffer_size\\)"):
        load_campaigns([tmp_path / "five", tmp_path / "six"])
    with pytest.raises(SpecError, match="storm_conf: run even-r5 .*\\(topology.executor.receive.buffer.size\\)"):
        load_campaigns([tmp_path / "one", tmp_path / "five"])
    assert len(load_campaigns([tmp_path / "five", tmp_path / "six"], mixed_operating_points=True)) == 2

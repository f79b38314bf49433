"""The library API: what the README shows, through ``import streamplace``."""

import subprocess
import sys

import pytest

import streamplace as sp
from streamplace.model.specs import cluster_to_dict, topology_to_dict
from streamplace.workloads import microbench


def test_the_readme_example_runs(tmp_path):
    sp.write_document(topology_to_dict(microbench.microbench("diamond", 12)), tmp_path / "t.yaml")
    sp.write_document(cluster_to_dict(microbench.cluster("heterogeneous")), tmp_path / "c.yaml")
    problem = sp.load_problem(tmp_path / "t.yaml", tmp_path / "c.yaml")
    result = sp.schedule(problem, "optimal", time_limit=10)
    even = sp.schedule(problem, "even")
    record = sp.evaluate_placement(problem, result.placement)
    assert result.status == "optimal" and record["valid"] is True
    assert record["inter_node_cost"] == pytest.approx(result.lower_bound)   # proven: cost = bound
    assert record["inter_node_cost"] <= sp.evaluate_placement(problem, even.placement)["inter_node_cost"]
    assert sp.predict(problem, result.placement).throughput > 0
    assert sp.diff_placements(problem, even.placement, result.placement).traffic_delta == pytest.approx(
        record["inter_node_cost"] - sp.evaluate_placement(problem, even.placement)["inter_node_cost"])
    assert "optimal" in sp.available() and set(sp.api.__all__) <= set(dir(sp))


def test_import_streamplace_loads_no_scheduler_until_asked():
    code = "import sys, streamplace; print('streamplace.schedulers' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        sp.nothing


# ---------------------------------------------------------------- the use cases moved out of the CLI
from streamplace.model import Cluster, Node, Operator, Problem, Stream, Topology  # noqa: E402


def _pair_job():
    """Two operators of 2 tasks each, a shuffle of 5 tuples/s per task pair, on nodes a, b, c of capacity 4."""
    topo = Topology.build("pair", [Operator("src", 2), Operator("dst", 2)], [Stream("src", "dst", pair_rate=5.0)])
    return Problem.from_topology(topo, Cluster.build("abc", [Node(n, capacity=4) for n in "abc"]))


def test_key_value_pairs_have_one_reader_and_one_boolean_spelling():
    assert sp.parse_pairs(["tasks=30", " layout = diamond"]) == {"tasks": "30", "layout": "diamond"}
    with pytest.raises(sp.InputError, match="--param: 'tasks' given twice \\('30' and '12'\\)"):
        sp.parse_pairs(["tasks=30", " layout = diamond", "tasks = 12"])   # which was meant cannot be told
    with pytest.raises(sp.InputError, match="--param: expected key=value, got 'tasks'"):
        sp.parse_pairs(["tasks"])
    assert sp.per_scheduler({"metis.repair": "false"}, ["even", "metis"]) == {"even": {}, "metis": {"repair": "false"}}
    with pytest.raises(sp.InputError, match="SCHEDULER one of even, got 'metis.repair'"):
        sp.per_scheduler({"metis.repair": "false"}, ["even"])
    assert [sp.parse_bool(t) for t in ("true", "False", "TRUE")] == [True, False, True]
    for other in ("yes", "1", "on", "maybe", ""):
        with pytest.raises(ValueError):
            sp.parse_bool(other)
    # the same spelling reaches scheduler parameters and catalogue arguments
    assert sp.make_scheduler("metis", {"repair": "false"}).repair is False
    with pytest.raises(sp.ParameterError, match="cannot read 'yes'"):
        sp.make_scheduler("metis", {"repair": "yes"})
    high = sp.generate(sp.TOPOLOGIES, "lf", ["config=star", "high=true"])[0]
    assert high.n_tasks == 80 + 60 + 40 + 20 + 20 + 40 + 60 + 80     # [LF] Table 3, star, x10
    with pytest.raises(sp.InputError, match="lf: high: cannot read 'maybe' as bool"):
        sp.generate(sp.TOPOLOGIES, "lf", ["config=star", "high=maybe"])


def test_compare_recommends_against_storm_default():
    problem = _pair_job()
    result = sp.compare(problem, ["even", "optimal"], time_limit=10)
    even, optimal = result.documents()
    # even spreads 4 tasks on 3 nodes; optimal puts each src task with a dst task: 2 x 5 tuples/s cross at most
    assert optimal["status"] == "optimal" and optimal["inter_node_cost"] < even["inter_node_cost"]
    assert even["vs_even"] == {"traffic_pct": 0.0, "throughput_pct": 0.0, "latency_pct": 0.0}
    saved = 100 * (even["inter_node_cost"] - optimal["inter_node_cost"]) / even["inter_node_cost"]
    assert optimal["vs_even"]["traffic_pct"] == pytest.approx(saved)
    chosen = [r.scheduler for r in result.records if r.recommended]
    assert len(chosen) == 1 and result.verdict.startswith(f"recommended: {chosen[0]} (")
    # the reports' per-job decision (report.choice.decide) takes the same rule: the same record
    from streamplace.report.choice import decide
    jobs = decide([{"workload": "pair", "cluster": "abc", **r} for r in result.documents()])
    assert [r["scheduler"] for r in jobs if r["recommended"]] == chosen


def test_compare_runs_storm_default_when_it_is_not_listed():
    result = sp.compare(_pair_job(), ["optimal"], time_limit=10)
    (optimal,) = result.documents()
    assert optimal["recommended"] is True and "vs_even" in optimal
    assert "against even: traffic saved" in result.verdict


def test_reschedule_moves_the_tasks_of_a_node_that_is_gone():
    problem = _pair_job()
    current = {"src[0]": ("a", 0), "dst[0]": ("a", 0), "src[1]": ("gone", 0), "dst[1]": ("gone", 0)}
    run = sp.reschedule(problem, current, "lns", time_limit=5, max_moves=0)
    record = run.document()
    assert run.result.ok and record["forced_moves"] == 2            # the two tasks of the lost node
    moved = {d["task"] for d in record["diff"]}
    assert {"src[1]", "dst[1]"} <= moved
    assert all(record["placement"][t]["node"] != "gone" for t in record["placement"])
    assert record["placement"]["src[0]"]["node"] == "a" and record["placement"]["dst[0]"]["node"] == "a"  # budget 0


def test_reschedule_refuses_a_running_task_on_a_worker_its_node_lacks(tmp_path):
    """Evaluate refused such a placement; reschedule echoed the worker into its diff."""
    problem = _pair_job()
    slots = int(problem.cluster.slots[problem.cluster.index["a"]])
    current = {"src[0]": ("a", slots), "dst[0]": ("a", 0), "src[1]": ("a", 0), "dst[1]": ("a", 0)}
    with pytest.raises(sp.SpecError, match=rf"<current>: src\[0\].worker: worker {slots} of node 'a', which has {slots}"):
        sp.reschedule(problem, current, "lns", time_limit=5)
    path = tmp_path / "current.json"
    sp.write_document({label: {"node": n, "worker": -1 if label == "dst[1]" else w} for label, (n, w) in current.items()}, path)
    with pytest.raises(sp.SpecError, match=r"current.json: src\[0\].worker|current.json: dst\[1\].worker"):
        sp.reschedule(problem, path, "lns", time_limit=5)


def test_diff_files_takes_the_traffic_change_from_the_files_or_the_job(tmp_path):
    first, second = tmp_path / "one.json", tmp_path / "two.json"
    sp.write_document({"inter_node_cost": 20.0, "placement": {"src[0]": {"node": "a", "worker": 0},
                       "src[1]": {"node": "b", "worker": 0}, "dst[0]": {"node": "a", "worker": 0},
                       "dst[1]": {"node": "c", "worker": 0}}}, first)
    sp.write_document({"inter_node_cost": 10.0, "placement": {"src[0]": {"node": "a", "worker": 0},
                       "src[1]": {"node": "b", "worker": 0}, "dst[0]": {"node": "a", "worker": 0},
                       "dst[1]": {"node": "b", "worker": 0}}}, second)
    from_files = sp.diff_files(first, second)
    assert (from_files.node_moves, from_files.traffic_delta) == (1, -10.0)
    bad = tmp_path / "bad.json"
    for cost in ("abc", [1], -5):   # taken as "unknown", or used as it was
        sp.write_document({**sp.read_document(second), "inter_node_cost": cost}, bad)
        with pytest.raises(sp.SpecError, match="bad.json: inter_node_cost: must be a finite number >= 0"):
            sp.diff_files(first, bad)
    sp.write_document({**sp.read_document(second), "inter_node_cost": 3e12}, bad)   # a sum: beyond one number's bound
    assert sp.diff_files(first, bad).traffic_delta == 3e12 - 20.0
    # with the job: each src task sends 5 tuples/s to each dst task; first crosses 3 x 5, second 2 x 5
    with_job = sp.diff_files(first, second, _pair_job())
    assert with_job.traffic_delta == pytest.approx(10.0 - 15.0)
    sp.write_document({"placement": {"src[0]": {"node": "a", "worker": 0}}}, tmp_path / "short.json")
    with pytest.raises(sp.InputError, match="short.json"):
        sp.diff_files(first, tmp_path / "short.json")


def test_export_and_storm_plan_of_a_placement_file(tmp_path):
    problem = _pair_job()
    run = sp.run_scheduler(problem, "optimal", time_limit=10)
    path = tmp_path / "optimal.json"
    sp.write_document(run.document(), path)
    assert sp.evaluate_placement(problem, path)["inter_node_cost"] == run.record.evaluation.inter_node_cost
    plan = sp.export_placement(path, "storm-plan", problem, output=tmp_path / "plans")
    assert plan.written == tmp_path / "plans" / "pair.json" and sp.read_document(plan.written) == plan.document
    assert plan.document["scheduler"] == "optimal" and plan.document["placement"] == run.record.evaluation.placement
    with pytest.raises(sp.InputError, match="--to storm-plan needs --topology and --cluster"):
        sp.export_placement(path, "storm-plan")
    heron = sp.export_placement(path, "heron", problem)
    nodes = {where["node"] for where in run.record.evaluation.placement.values()}
    assert set(heron.containers.values()) == nodes and heron.written is None
    flink = sp.export_placement(path, "flink", output=tmp_path / "flink.json")
    assert flink.containers == {} and flink.document and sp.read_document(tmp_path / "flink.json") == flink.document
    with pytest.raises(sp.InputError, match="--to: expected one of storm-plan, heron, flink"):
        sp.export_placement(path, "spark")


def test_a_job_given_as_its_files_is_the_problem_they_hold(tmp_path):
    """Every use case takes the job as its files (``JobFiles``) as it takes the problem."""
    problem = _pair_job()
    sp.write_document(sp.topology_to_dict(problem.topology), tmp_path / "t.yaml")
    sp.write_document(sp.cluster_to_dict(problem.cluster), tmp_path / "c.yaml")
    files = sp.JobFiles(tmp_path / "t.yaml", tmp_path / "c.yaml")
    by_files, by_problem = sp.run_scheduler(files, "optimal", time_limit=10), sp.run_scheduler(problem, "optimal", time_limit=10)
    timings = {"seconds": 0, "details": {}}   # the rest is the same placement with the same figures
    assert by_files.document() | timings == by_problem.document() | timings and by_files.result.status == "optimal"
    sp.write_document(by_files.document(), tmp_path / "optimal.json")
    assert sp.evaluate_placement(files, tmp_path / "optimal.json") == sp.evaluate_placement(problem, tmp_path / "optimal.json")
    assert [r.scheduler for r in sp.compare(files, ["even", "optimal"], time_limit=10).records] == ["even", "optimal"]


def test_run_scheduler_records_a_chosen_parallelism(tmp_path):
    nasiri = sp.nasiri_workload("diamond", preset="nasiri-small")
    problem = Problem.from_topology(nasiri[0], sp.cluster_preset("nasiri-small"))
    run = sp.run_scheduler(problem, "throughput", profiling=nasiri[1])
    chosen = run.record.parallelism
    assert chosen == {op.name: op.parallelism for op in run.result.problem.topology.operators}
    assert run.document()["parallelism"] == chosen and sum(chosen.values()) == len(run.record.evaluation.placement)
    assert "parallelism" not in sp.run_scheduler(problem, "even").document()


def test_compare_reads_another_job_from_the_declaration_and_never_recommends_it():
    nasiri = sp.nasiri_workload("diamond", preset="nasiri-small")
    problem = Problem.from_topology(nasiri[0], sp.cluster_preset("nasiri-small"))
    even, chosen = sp.compare(problem, ["even", "throughput"], profiling=nasiri[1]).records
    # throughput declares chooses_parallelism and chose another job: marked, not compared, not recommended
    assert chosen.own_job and chosen.parallelism != {op.name: op.parallelism for op in problem.topology.operators}
    assert chosen.recommended is False and chosen.vs_default is None
    assert even.recommended is True and even.vs_default == {"traffic_pct": 0.0, "throughput_pct": 0.0, "latency_pct": 0.0}


def test_no_subpackage_shadows_a_public_name():
    """``sp.NAME`` is the API's NAME even once every subpackage is imported (a package named
    like a function, e.g. ``streamplace.reproduce``, would replace it as an attribute)."""
    import importlib
    import pkgutil
    import streamplace as sp
    for module in pkgutil.iter_modules(sp.__path__):
        if module.name != "__main__":   # that one runs the command
            importlib.import_module(f"streamplace.{module.name}")
    assert [name for name in sp.api.__all__ if getattr(sp, name) is not getattr(sp.api, name)] == []


def test_a_named_operating_point_sets_what_a_storm_run_runs_with():
    settings = sp.storm_settings(duration_s=30, mode="cluster", operating_point="acking-msp50",
                                 storm_conf=["topology.bolt.wait.progressive.level3.sleep.millis=2"])
    assert settings.ackers == 3 and settings.testbed.cpu_budget == 1.5 and not settings.testbed.bandwidth_scaled
    assert settings.storm_conf["topology.max.spout.pending"] == 50
    assert settings.storm_conf["topology.bolt.wait.progressive.level3.sleep.millis"] == 2   # the option wins
    assert settings.storm_conf["topology.spout.wait.progressive.level3.sleep.millis"] == 10   # the point's
    assert sp.storm_settings(mode="cluster", operating_point="cpu-1.0", cpu_budget=0.5).testbed.cpu_budget == 0.5
    assert sp.storm_settings(mode="cluster", operating_point="bandwidth-scaled").testbed.bandwidth_scaled
    with pytest.raises(sp.InputError, match="--operating-point: unknown operating point 'fast'"):
        sp.storm_settings(mode="cluster", operating_point="fast")
    with pytest.raises(sp.InputError, match="--operating-point goes with --mode cluster"):
        sp.storm_settings(operating_point="cpu-1.0")
    with pytest.raises(sp.InputError, match="--ackers: set by --operating-point acking-msp50"):
        sp.storm_settings(mode="cluster", operating_point="acking-msp50", ackers=3)

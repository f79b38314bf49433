"""The autopilot's period on synthetic monitor windows: gaps, partial windows and a changed
topology keep the plan; a confirmed gain writes one; a restart resumes from the log."""

import json

import numpy as np
import pytest

from streamplace.autopilot.loop import Autopilot, BesideRun, Settings, key_shares, load_moved
from streamplace.autopilot.policy import Greedy, Hysteresis
from streamplace.model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from streamplace.model.specs import load_placement

TOPO = Topology.build("job", [Operator("s", 2, role="source", source_rate=4000.0, cpu_per_tuple=1e-4),
                              Operator("b", 2, role="sink", cpu_per_tuple=1e-4)], [Stream("s", "b")])
CLUSTER = Cluster.build("c", [Node("n0", 4, cores=1, slots=2), Node("n1", 4, cores=1, slots=2)])
PROBLEM = Problem.from_topology(TOPO, CLUSTER)
#: every task on n0: its one core does all the work while n1 idles
PACKED = Placement(node=np.array([0, 0, 0, 0]), worker=np.array([0, 0, 0, 0]))
WINDOW = 10.0


def window_rows(w, rate=1000.0, tasks=TOPO.task_labels):
    """One window's load and traffic records: every task executing ``rate``/s, spout i sending to bolt i."""
    load = [{"window_start": w, "window_seconds": WINDOW, "task": label, "executed": rate * WINDOW,
             "cpu_seconds": 1e-4 * rate * WINDOW} for label in tasks]
    traffic = [{"window_start": w, "window_seconds": WINDOW, "src_task": f"s[{i}]", "dst_task": f"b[{i}]",
                "tuples": rate * WINDOW, "bytes": 100 * rate * WINDOW} for i in range(2)]
    return load, traffic


def write_windows(monitor, starts, rate=1000.0, tasks=TOPO.task_labels):
    """One worker's load and traffic files with the windows starting at ``starts``."""
    monitor.mkdir(exist_ok=True)
    load, traffic = [], []
    for w in starts:
        rows = window_rows(w, rate, tasks)
        load += rows[0]
        traffic += rows[1]
    with open(monitor / "load-job-6700-1.jsonl", "a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in load)
    with open(monitor / "traffic-job-6700-1.jsonl", "a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in traffic)


def pilot(tmp_path, policy=None, **settings):
    return Autopilot.resume(PROBLEM, tmp_path / "monitor", tmp_path / "plans", tmp_path / "autopilot.jsonl", PACKED,
                            policy or Hysteresis(min_gain=0.05, confirm=2, cooldown_s=0),
                            Settings(window_s=WINDOW, horizon_windows=2, time_limit=1.0, **settings))


def test_a_confirmed_gain_writes_the_plan_and_the_log_says_why(tmp_path):
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    ap = pilot(tmp_path)
    first = ap.step(32.0)   # the window at 20 ended 2 s ago: written by every worker by now
    # spreading the packed job over both nodes doubles its CPU: a gain far above 5 %, not yet confirmed
    assert first.decision == "keep" and "period 1 of 2 to confirm" in first.reason
    assert first.predicted_new > 1.5 * first.predicted_now and first.windows == (10.0, 20.0)
    second = ap.step(42.0)
    assert second.decision == "apply" and second.moves > 0
    plan = tmp_path / "plans" / "job.json"
    applied = load_placement(plan, TOPO, CLUSTER)
    assert applied == ap.current and set(applied.node.tolist()) == {0, 1}
    log = [json.loads(line) for line in (tmp_path / "autopilot.jsonl").read_text().splitlines()]
    assert [r["decision"] for r in log] == ["keep", "apply"] and log[1]["placement"] == second.placement
    assert set(log[0]) == {"t", "windows", "predicted_now", "predicted_new", "moves", "decision", "reason", "above",
                           "last_change", "storm_runs_plan"}
    assert log[0]["storm_runs_plan"] is None   # no record of what Storm runs: not known
    # after the change, the horizon's windows ran the old placement: nothing is decided on them
    assert "settling" in ap.step(52.0).reason



@pytest.mark.parametrize("payback_s", [300.0, 15.0])
def test_one_migration_cost_per_plan_repaid_within_the_payback_time(tmp_path, payback_s):
    """The gain ours sees is the predicted one less migration_s / payback_s, whatever the
    moves: spreading the packed job (predicted about +100 %) repays 19 s of its rate within 300 s
    (a cost of 6.3 %), a zero threshold applies it; not within 15 s (127 %), it keeps the placement."""
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    ap = pilot(tmp_path, policy=Hysteresis(min_gain=0.0, confirm=1, cooldown_s=0.0), migration_s=19.0, payback_s=payback_s)
    d = ap.step(32.0)
    raw = d.predicted_new / d.predicted_now - 1
    assert d.moves > 0 and 0.7 < raw < 1.3
    gain = raw - 19.0 / payback_s
    assert (d.decision == "apply") == (gain > 0) == (payback_s == 300.0)
    if d.decision == "apply":
        document = json.loads((tmp_path / "plans" / "job.json").read_text())
        assert document["streamplace_autopilot"]["gain"] == pytest.approx(gain, rel=1e-12)


def test_greedy_judges_the_gain_before_the_migration_cost(tmp_path):
    """[F]'s Greedy has no migration cost: with one of 127 % (19 s within 15 s) it still applies
    the +100 % spread, and the gain in its plan is the prediction's own."""
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    d = pilot(tmp_path, policy=Greedy(), migration_s=19.0, payback_s=15.0).step(32.0)
    assert d.decision == "apply"
    document = json.loads((tmp_path / "plans" / "job.json").read_text())
    assert document["streamplace_autopilot"]["gain"] == pytest.approx(d.predicted_new / d.predicted_now - 1, rel=1e-12)


def test_a_migration_cost_or_payback_out_of_range_is_refused():
    with pytest.raises(ValueError, match="payback"):
        Settings(payback_s=0.0)
    with pytest.raises(ValueError, match="migration cost"):
        Settings(migration_s=-1.0)

def test_a_rising_rate_is_a_transient_nothing_is_decided_on(tmp_path):
    """The job still warming up (its rate doubled over the horizon): no calibration on it; once two
    windows run at one rate the loop decides again."""
    write_windows(tmp_path / "monitor", [0.0, 10.0], rate=500.0)
    write_windows(tmp_path / "monitor", [20.0], rate=1000.0)
    ap = pilot(tmp_path)
    rising = ap.step(32.0)
    assert rising.decision == "keep" and rising.reason.startswith("settling: the rate rose 100% over the horizon")
    assert rising.predicted_now is None and ap.history.above == 0
    write_windows(tmp_path / "monitor", [30.0], rate=1040.0)   # 4 % above the window before: within 5 %
    assert "period 1 of 2 to confirm" in ap.step(42.0).reason
    with pytest.raises(ValueError, match="steady tolerance"):
        Settings(steady_tolerance=-0.1)



def test_after_a_change_the_restarted_workers_warm_up_before_a_decision(tmp_path):
    """A plan applied at t=32 restarts workers; the first horizon after it that every task
    reported (windows 40 and 50) starts the re-warm clock at t=40: no calibration on windows
    before t=40 + rewarm_s (20 s here), whatever they show; the horizon of windows 60 and 70 is
    decided on again."""
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    ap = pilot(tmp_path, policy=Greedy(), rewarm_s=20.0)
    assert ap.step(32.0).decision == "apply"
    write_windows(tmp_path / "monitor", [40.0, 50.0])
    first = ap.step(62.0)
    assert first.decision == "keep" and first.windows == (40.0, 50.0)
    assert first.reason == "settling: the workers restarted by the change at t=32 have run 0 of the 20 s they need to warm up"
    write_windows(tmp_path / "monitor", [60.0])
    assert "have run 10 of the 20 s" in ap.step(72.0).reason
    write_windows(tmp_path / "monitor", [70.0])
    again = ap.step(82.0)
    assert again.windows == (60.0, 70.0) and not again.reason.startswith("settling"), again.reason
    with pytest.raises(ValueError, match="re-warm"):
        Settings(rewarm_s=-1.0)

KEYED = Topology.build("job", [Operator("s", 2, role="source", source_rate=4000.0, cpu_per_tuple=1e-4),
                               Operator("b", 2, cpu_per_tuple=1e-4), Operator("c", 2, role="sink", cpu_per_tuple=1e-4)],
                       [Stream("s", "b", grouping="fields", key="k"), Stream("b", "c")])


def keyed_rows(monitor, w, b_shares):
    """One window of KEYED: every operator executing 2,000 tuples/s, b's split between its tasks as
    ``b_shares`` (its keys), s and c evenly."""
    monitor.mkdir(exist_ok=True)
    executed = {"s[0]": 1000, "s[1]": 1000, "b[0]": 2000 * b_shares[0], "b[1]": 2000 * b_shares[1], "c[0]": 1000, "c[1]": 1000}
    with open(monitor / "load-job-6700-1.jsonl", "a") as fh:
        fh.writelines(json.dumps({"window_start": w, "window_seconds": WINDOW, "task": label, "executed": rate * WINDOW,
                                  "cpu_seconds": 1e-4 * rate * WINDOW}) + "\n" for label, rate in executed.items())
    with open(monitor / "traffic-job-6700-1.jsonl", "a") as fh:
        pairs = [(f"s[{i}]", f"b[{j}]", 1000 * b_shares[j]) for i in range(2) for j in range(2)]
        pairs += [(f"b[{i}]", f"c[{j}]", 1000 * b_shares[i]) for i in range(2) for j in range(2)]
        fh.writelines(json.dumps({"window_start": w, "window_seconds": WINDOW, "src_task": a, "dst_task": b,
                                  "tuples": rate * WINDOW, "bytes": 100 * rate * WINDOW}) + "\n" for a, b, rate in pairs)


def test_key_shares_are_those_of_operators_routed_by_key_and_the_move_is_their_total_variation():
    """b (fields from s) executed 300 and 100 tuples: shares 0.75 and 0.25; s (a spout) and c
    (shuffle from b, which Storm routes by the tasks' load) have none. From even shares a quarter
    of b's tuples moved: (|0.75 - 0.5| + |0.25 - 0.5|) / 2."""
    import pandas as pd
    load = pd.DataFrame({"task": ["s[0]", "s[1]", "b[0]", "b[1]", "c[0]", "c[1]"], "executed": [200, 200, 300, 100, 0, 400]})
    shares = key_shares(load, KEYED)
    assert list(shares) == ["b"] and shares["b"].tolist() == [0.75, 0.25]
    assert load_moved({"b": np.array([0.5, 0.5])}, shares) == ("b", 0.25)
    assert load_moved(None, shares) is None and load_moved({"x": np.array([1.0])}, shares) is None


@pytest.mark.parametrize("shifted", [False, True])
def test_a_load_change_cuts_the_re_warm_wait_short(tmp_path, shifted):
    """A plan applied at t=32 on even keys; in the first horizon after it 30 % of b's tuples moved
    between its tasks (shares 0.8 / 0.2), above load_change 0.1: the loop decides at once, and
    says why. With b's keys as before the workers wait their re-warm time."""
    problem = Problem.from_topology(KEYED, CLUSTER)
    packed = Placement(node=np.zeros(6, dtype=int), worker=np.zeros(6, dtype=int))
    for w in (0.0, 10.0, 20.0):
        keyed_rows(tmp_path / "monitor", w, (0.5, 0.5))
    ap = Autopilot.resume(problem, tmp_path / "monitor", tmp_path / "plans", tmp_path / "autopilot.jsonl", packed, Greedy(),
                          Settings(window_s=WINDOW, horizon_windows=2, time_limit=1.0, rewarm_s=60.0, load_change=0.1))
    assert ap.step(32.0).decision == "apply"
    for w in (40.0, 50.0):
        keyed_rows(tmp_path / "monitor", w, (0.8, 0.2) if shifted else (0.5, 0.5))
    after = ap.step(62.0)
    if shifted:
        assert after.reason.endswith("; the load changed (30% of b's tuples moved between its tasks): re-warm wait cut short")
        assert after.predicted_now is not None
    else:
        assert after.reason.startswith("settling: the workers restarted by the change at t=32 have run 0 of the 60 s")
    with pytest.raises(ValueError, match="load change"):
        Settings(load_change=0.0)


def test_a_horizon_whose_load_changed_within_it_is_not_decided_on(tmp_path):
    """b's keys shift between windows 10 and 20: in the horizon of windows 10 and 20, 30 % of b's
    tuples moved between its tasks (0.5 / 0.5 to 0.8 / 0.2), above load_change 0.1: no decision on
    a horizon holding two loads. The next horizon (20 and 30) holds one: the loop decides."""
    problem = Problem.from_topology(KEYED, CLUSTER)
    packed = Placement(node=np.zeros(6, dtype=int), worker=np.zeros(6, dtype=int))
    for w, shares in ((0.0, (0.5, 0.5)), (10.0, (0.5, 0.5)), (20.0, (0.8, 0.2))):
        keyed_rows(tmp_path / "monitor", w, shares)
    ap = Autopilot.resume(problem, tmp_path / "monitor", tmp_path / "plans", tmp_path / "autopilot.jsonl", packed, Greedy(),
                          Settings(window_s=WINDOW, horizon_windows=2, time_limit=1.0, load_change=0.1))
    mixed = ap.step(32.0)
    assert mixed.decision == "keep" and mixed.windows == (10.0, 20.0) and mixed.predicted_now is None
    assert mixed.reason == ("settling: the load is changing (30% of b's tuples moved between its tasks within the horizon, "
                            "above 10%)")
    keyed_rows(tmp_path / "monitor", 30.0, (0.8, 0.2))
    one = ap.step(42.0)
    assert one.windows == (20.0, 30.0) and one.predicted_now is not None and not one.reason.startswith("settling"), one.reason


#: two spreads of the packed job: A moves s[1] and b[1] to n1 (2 moves), B also s[0] (3 moves)
SPREAD_A = Placement(node=np.array([0, 1, 0, 1]), worker=np.array([0, 0, 0, 0]))
SPREAD_B = Placement(node=np.array([1, 1, 0, 1]), worker=np.array([0, 0, 0, 0]))
#: A as the loop applies it from PACKED: n0's worker keeps s[0] and b[0] (tasks 0, 2), a change, so
#: they go to worker index 1; n1 runs no worker now: index 0
A_APPLIED = Placement(node=np.array([0, 1, 0, 1]), worker=np.array([1, 0, 1, 0]))
#: B as the loop applies it from PACKED: n0's worker loses three tasks, so the one left (b[0]) goes
#: to worker index 1, a port the running worker does not hold; n1 runs no worker now: index 0
B_APPLIED = Placement(node=np.array([1, 1, 0, 1]), worker=np.array([0, 0, 1, 0]))


def proposing(monkeypatch, tmp_path, *placements):
    """``lns`` replaced by the given placements, one per call (the calls counted in a file: the
    candidate is computed in a forked child, which cannot count in this process)."""
    from streamplace.autopilot import loop
    calls = tmp_path / "calls"

    def candidate(*args):
        n = len(calls.read_text()) if calls.exists() else 0
        calls.write_text("x" * (n + 1))
        return placements[min(n, len(placements) - 1)], "", ""
    monkeypatch.setattr(loop, "_candidate", candidate)
    return lambda: len(calls.read_text()) if calls.exists() else 0


def test_the_plan_applied_is_the_one_confirmed_not_the_last_proposed(tmp_path, monkeypatch):
    """lns would propose A, then B: the count confirms A, so A is applied at the second period,
    and lns is not asked again while A holds."""
    calls = proposing(monkeypatch, tmp_path, SPREAD_A, SPREAD_B)
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    ap = pilot(tmp_path)
    first = ap.step(32.0)
    assert "period 1 of 2 to confirm" in first.reason and first.moves == 2
    second = ap.step(42.0)
    assert second.decision == "apply" and second.reason.endswith("for 2 periods (the plan proposed at t=32)")
    assert ap.current == A_APPLIED and calls() == 1


@pytest.mark.parametrize("share, limits", [(1.0, [1.0]), (0.25, [1.0, 4.0]), (0.05, [1.0, 4.0]), (0.5, [1.0, 2.0])])
def test_a_search_starved_of_cpu_runs_again_with_its_wall_limit_stretched(monkeypatch, share, limits):
    """lns counts wall-clock seconds: a search that got a quarter of a core over its 1 s runs
    again with 1 / 0.25 = 4 s, one that got half a core with 2 s, one that got 5 % with the cap
    of 4 s; a search on a free core runs once. The stretched run's placement is the one kept."""
    from types import SimpleNamespace
    from streamplace.autopilot import loop
    clock = {"cpu": 0.0, "wall": 0.0}
    asked = []

    def reschedule(problem, mapping, name, params, *, time_limit, max_moves, model):
        asked.append(time_limit)
        clock["wall"] += time_limit
        clock["cpu"] += time_limit * share
        return SimpleNamespace(result=SimpleNamespace(placement=SPREAD_A if len(asked) == 1 else SPREAD_B))
    monkeypatch.setattr(loop, "reschedule", reschedule)
    monkeypatch.setattr(loop, "cpu_seconds", lambda: clock["cpu"])
    monkeypatch.setattr(loop.time, "perf_counter", lambda: clock["wall"])
    placement, why, note = loop._candidate(PROBLEM, PACKED, None, Settings(time_limit=1.0, max_moves=4), False)
    assert asked == limits and why == ""
    assert placement is (SPREAD_A if len(limits) == 1 else SPREAD_B)
    assert note == ("" if len(limits) == 1 else f"; the search got {share:.0%} of a core, so it ran again with {limits[1]:.1f} s")
    asked.clear()
    loop._candidate(PROBLEM, PACKED, None, Settings(time_limit=1.0, max_moves=4, search_stretch=1.0), False)
    assert asked == [1.0], "never stretched"
    with pytest.raises(ValueError, match="search stretch"):
        Settings(search_stretch=0.5)


def test_a_plan_that_no_longer_holds_starts_the_count_again_on_a_new_candidate(tmp_path, monkeypatch):
    """A (2 moves) falls below the threshold at the second period (a policy that says so): lns is
    asked again, B's count starts at 1, and B, holding at the third period, is applied."""

    class TwoMovesFallBehind(Hysteresis):
        def decide(self, gain, moves, t, history):
            return super().decide(-1.0 if (t >= 42.0 and moves == 2) else gain, moves, t, history)

    calls = proposing(monkeypatch, tmp_path, SPREAD_A, SPREAD_B)
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0, 30.0])
    ap = pilot(tmp_path, policy=TwoMovesFallBehind(min_gain=0.05, confirm=2, cooldown_s=0))
    assert "period 1 of 2" in ap.step(32.0).reason
    again = ap.step(42.0)
    assert again.decision == "keep" and again.moves == 3 and "period 1 of 2" in again.reason and calls() == 2
    third = ap.step(42.5)
    assert third.decision == "apply" and "(the plan proposed at t=42)" in third.reason and ap.current == B_APPLIED


def test_a_restart_resumes_from_the_log(tmp_path):
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    ap = pilot(tmp_path, policy=Greedy())
    assert ap.step(32.0).decision == "apply"
    again = pilot(tmp_path, policy=Greedy())
    assert again.current == ap.current and again.history.last_change == 32.0
    # a plan written but not logged (stopped between the two writes): the plan file is the running placement
    lines = (tmp_path / "autopilot.jsonl").read_text().splitlines()
    (tmp_path / "autopilot.jsonl").write_text("\n".join(lines[:-1]) + ("\n" if lines[:-1] else ""))
    third = pilot(tmp_path, policy=Greedy())
    assert third.current == ap.current and third.history.last_change == 32.0


def test_a_restart_keeps_the_confirmation_count(tmp_path):
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    ap = pilot(tmp_path, policy=Hysteresis(min_gain=0.05, confirm=3, cooldown_s=0))
    assert "period 1 of 3" in ap.step(32.0).reason
    assert ap.step(100.0).reason.startswith("monitor gap")   # a period the policy did not see
    again = pilot(tmp_path, policy=Hysteresis(min_gain=0.05, confirm=3, cooldown_s=0))
    assert "period 2 of 3" in again.step(32.0).reason


def test_a_monitor_gap_a_partial_window_and_a_changed_topology_write_no_plan(tmp_path):
    write_windows(tmp_path / "monitor", [0.0, 10.0])
    ap = pilot(tmp_path, policy=Greedy())
    gap = ap.step(60.0)   # the last window ended at t=20: four windows without one
    assert gap.decision == "keep" and gap.reason.startswith("monitor gap")
    write_windows(tmp_path / "monitor", [40.0], tasks=["s[0]", "s[1]", "b[0]"])
    write_windows(tmp_path / "monitor", [50.0])
    partial = ap.step(62.0)   # a worker's records of the window at 40 never came
    assert partial.decision == "keep" and "partial window at t=40: 3 of 4 tasks reported" in partial.reason
    write_windows(tmp_path / "monitor", [60.0], tasks=["s[0]", "s[1]", "b[0]", "b[1]", "c[0]"])
    changed = ap.step(72.0)
    assert changed.decision == "keep" and "the topology changed shape: task 'c[0]'" in changed.reason
    assert not (tmp_path / "plans").exists()
    assert len((tmp_path / "autopilot.jsonl").read_text().splitlines()) == 3


def test_a_line_still_being_written_is_left_for_the_next_period(tmp_path):
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    with open(tmp_path / "monitor" / "load-job-6700-1.jsonl", "a") as fh:
        fh.write('{"window_start": 30.0, "window_seconds": 10.0, "ta')
    assert pilot(tmp_path, policy=Greedy()).step(32.0).decision == "apply"


def test_a_window_that_just_ended_waits_for_the_next_period(tmp_path):
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    # at 30.5 the window at 20 ended half a second ago: some worker may not have written it yet
    assert pilot(tmp_path).step(30.5).windows == (0.0, 10.0)


def test_a_log_that_is_not_decision_records_is_refused(tmp_path):
    (tmp_path / "autopilot.jsonl").write_text("garbage\n{}\n")
    with pytest.raises(ValueError, match="line 1: not a decision record"):
        pilot(tmp_path)


def test_the_command_runs_periods_and_prints_one_line_each(cli, tmp_path):
    import time

    import yaml
    from streamplace.model.specs import cluster_to_dict, topology_to_dict
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(topology_to_dict(TOPO)))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cluster_to_dict(CLUSTER)))
    (tmp_path / "packed.json").write_text(json.dumps(PACKED.to_mapping(TOPO.task_labels, CLUSTER)))
    now = time.time()
    write_windows(tmp_path / "monitor", [now - 40])
    write_windows(tmp_path / "monitor", [now - 30], rate=1150.0)   # 15 % above the window before
    command = ["autopilot", tmp_path / "t.yaml", tmp_path / "c.yaml", "--monitor", tmp_path / "monitor",
               "--plan-dir", tmp_path / "plans", "--current", tmp_path / "packed.json", "--policy", "greedy",
               "--periods", "1", "--period", "0.1", "--time-limit", "0.5"]
    code, out, err = cli([*command, "--log", tmp_path / "first.jsonl"])
    assert code == 0 and " keep: settling: the rate rose 15% over the horizon" in out, err + out
    code, out, err = cli([*command, "--steady-tolerance", "0.2"])
    assert code == 0, err
    assert out.count("\n") == 1 and " apply: improves" in out
    assert (tmp_path / "plans" / "job.json").is_file() and (tmp_path / "plans" / "job.autopilot.jsonl").is_file()
    code, out, err = cli(["autopilot", tmp_path / "t.yaml", tmp_path / "c.yaml", "--monitor", tmp_path / "monitor",
                          "--plan-dir", tmp_path / "nowhere", "--periods", "1"])
    assert code == 2 and "no running placement" in err
    code, out, err = cli(["autopilot", tmp_path / "t.yaml", tmp_path / "c.yaml", "--monitor", tmp_path / "t.yaml",
                          "--plan-dir", tmp_path / "plans", "--periods", "1"])
    assert code == 2 and "'--monitor': Directory" in err and "is a file" in err   # it ran, each period a monitor gap


def test_the_library_call_takes_the_loops_settings_and_the_policys_thresholds_by_name(tmp_path):
    """``sp.run_autopilot``'s options are :class:`AutopilotSettings` and :class:`Hysteresis` fields:
    a steady tolerance of 0.2 lets the 15 % rise through, a min gain of 5.0 (500 %) keeps the
    packed job that spreading would double; a name of neither is refused, a bad value is one line."""
    import time

    import streamplace as sp
    (tmp_path / "packed.json").write_text(json.dumps(PACKED.to_mapping(TOPO.task_labels, CLUSTER)))
    now = time.time()
    write_windows(tmp_path / "monitor", [now - 40])
    write_windows(tmp_path / "monitor", [now - 30], rate=1150.0)
    call = dict(current=tmp_path / "packed.json", periods=1, period_s=0.1, time_limit=0.5, window_s=WINDOW)
    assert sp.run_autopilot(PROBLEM, tmp_path / "monitor", tmp_path / "plans", steady_tolerance=0.2, min_gain=5.0,
                            confirm=1, **call) == 1
    record = json.loads((tmp_path / "plans" / "job.autopilot.jsonl").read_text())
    assert record["decision"] == "keep" and record["reason"].startswith("gain +") and "below 500%" in record["reason"]
    with pytest.raises(TypeError, match="unknown option 'rewarm'"):
        sp.run_autopilot(PROBLEM, tmp_path / "monitor", tmp_path / "plans", rewarm=30.0, **call)
    with pytest.raises(sp.InputError, match="re-warm"):
        sp.run_autopilot(PROBLEM, tmp_path / "monitor", tmp_path / "plans", rewarm_s=-1.0, **call)


def test_the_command_receives_the_windows_a_topology_sends_through_storms_metrics_path(cli, tmp_path):
    """``--receive``: the windows arrive over HTTP as the records consumer sends them (no file of
    the workers' is read), land in --monitor, and the loop decides on them."""
    import socket
    import threading
    import time
    import urllib.request

    import yaml
    from streamplace.model.specs import cluster_to_dict, topology_to_dict
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(topology_to_dict(TOPO)))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cluster_to_dict(CLUSTER)))
    (tmp_path / "packed.json").write_text(json.dumps(PACKED.to_mapping(TOPO.task_labels, CLUSTER)))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    now = time.time()
    body = ""
    for w in (now - 30, now - 20):   # the last ended 10 s ago: seconds of slack before it counts as a gap
        load, traffic = window_rows(w)
        body += json.dumps({"host": "node-a", "worker": "job-1-6700-9", "window_start": w, "latency": "", "dropped": 0,
                            "load": "".join(json.dumps(r) + "\n" for r in load),
                            "traffic": "".join(json.dumps(r) + "\n" for r in traffic)}) + "\n"
    answers = []

    def send():   # as the consumer does: again until the receiver takes it
        for _ in range(100):
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/records", data=body.encode(), method="POST")
                answers.append(urllib.request.urlopen(request, timeout=5).status)
                return
            except OSError:
                time.sleep(0.05)
    sender = threading.Thread(target=send)
    sender.start()
    code, out, err = cli(["autopilot", tmp_path / "t.yaml", tmp_path / "c.yaml", "--monitor", tmp_path / "monitor",
                          "--plan-dir", tmp_path / "plans", "--current", tmp_path / "packed.json", "--policy", "greedy",
                          "--periods", "3", "--period", "0.5", "--time-limit", "1", "--receive", f"127.0.0.1:{port}"])
    sender.join()
    assert code == 0, err
    assert answers == [204] and " apply: improves" in out
    assert sorted(p.name for p in (tmp_path / "monitor").iterdir()) == ["load-node-a-job-1-6700-9.jsonl",
                                                                         "traffic-node-a-job-1-6700-9.jsonl"]
    code, out, err = cli(["autopilot", tmp_path / "t.yaml", tmp_path / "c.yaml", "--monitor", tmp_path / "monitor",
                          "--plan-dir", tmp_path / "plans", "--periods", "1", "--receive", "7071"])
    assert code == 2 and "--receive: expected HOST:PORT, got '7071'" in err


def test_a_solver_that_aborts_fails_one_period_and_the_loop_goes_on(tmp_path, monkeypatch):
    """The candidate is computed in a child process: a native abort there (CP-SAT once ended a
    whole campaign run with a failed internal check) is one logged failed period, no plan."""
    import os
    import signal

    from streamplace.autopilot import loop
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    ap = pilot(tmp_path)
    monkeypatch.setattr(loop, "_candidate", lambda *args: os.kill(os.getpid(), signal.SIGKILL))   # as an abort ends it
    decisions = []
    assert loop.run(ap, period_s=10.0, periods=1, on_decision=decisions.append, clock=lambda: 32.0) == 1
    assert decisions[0].decision == "keep" and "period failed: ChildFailed" in decisions[0].reason
    assert "ended without an answer" in decisions[0].reason and not (tmp_path / "plans" / "job.json").exists()
    monkeypatch.undo()
    assert ap.step(42.0).reason.startswith("gain")   # the next period computes a candidate again


def test_a_record_of_the_wrong_type_fails_the_period_naming_file_and_field(tmp_path):
    """A monitor record whose count is a string (the loop used to end in a TypeError) is one
    failed period, logged; no plan."""
    from streamplace.autopilot import loop
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    with open(tmp_path / "monitor" / "load-job-6700-1.jsonl", "a") as fh:
        fh.write(json.dumps({"window_start": 20.0, "window_seconds": WINDOW, "task": "s[0]", "executed": "x",
                             "cpu_seconds": 0.1}) + "\n")
    decisions = []
    assert loop.run(pilot(tmp_path), period_s=10.0, periods=1, on_decision=decisions.append, clock=lambda: 32.0) == 1
    assert decisions[0].decision == "keep" and "period failed: SpecError" in decisions[0].reason
    assert "load-job-6700-1.jsonl: executed: must be a finite number >= 0, got 'x' in record 13" in decisions[0].reason
    assert not (tmp_path / "plans" / "job.json").exists()


def test_a_plan_file_someone_else_replaced_is_left_alone_and_the_log_says_so(tmp_path):
    """After the loop applied a plan, garbage in the plan file, then another placement, then the
    loop's own again: no plan is written over someone else's, and each period says why."""
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    ap = pilot(tmp_path, Greedy())
    assert ap.step(32.0).decision == "apply"
    plan = tmp_path / "plans" / "job.json"
    ours = plan.read_text()
    plan.write_text("{not json")
    garbage = ap.step(42.0)
    assert garbage.decision == "keep" and "not a plan" in garbage.reason and plan.read_text() == "{not json"
    other = json.loads(ours)
    other["placement"] = PACKED.to_mapping(TOPO.task_labels, CLUSTER)
    plan.write_text(json.dumps(other))
    assert "another placement than the loop's plan" in ap.step(52.0).reason
    assert json.loads(plan.read_text())["placement"] == other["placement"]
    plan.write_text(ours)
    assert "someone else" not in ap.step(62.0).reason


SPREAD = Placement(node=np.array([0, 1, 0, 1]), worker=np.array([0, 0, 0, 0]))


def storm_ran(tmp_path, placement, *, round_s, alive=("n0", "n1"), dead=(), plan_read_s=None, status="streamplace: plan applied"):
    """The plugin's record of what Storm runs (``plans/assigned/job.json``), as its ``Assigned`` writes it."""
    doc = {"topology": "job", "id": "job-1-1", "round_ms": round_s * 1000, "round_every_s": 10.0, "status": status,
           "plan_modified_ms": None if plan_read_s is None else plan_read_s * 1000,
           "alive_nodes": list(alive), "dead_nodes": list(dead),
           "assignment": placement.to_mapping(TOPO.task_labels, CLUSTER) if placement is not None else {}}
    (tmp_path / "plans" / "assigned").mkdir(parents=True, exist_ok=True)
    (tmp_path / "plans" / "assigned" / "job.json").write_text(json.dumps(doc))


def test_no_plan_while_a_node_is_dead_nimbus_is_silent_or_storm_has_not_assigned_every_task(tmp_path):
    """The packed job would gain from spreading (the first test), but Storm's own view forbids a
    plan: each period says what it saw, and no plan file is written."""
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0, 30.0, 40.0])
    ap = pilot(tmp_path, Greedy())
    storm_ran(tmp_path, PACKED, round_s=31.0, alive=("n0",), dead=("n1",))
    dead = ap.step(32.0)
    assert dead.decision == "keep" and "node n1 has no live supervisor" in dead.reason
    storm_ran(tmp_path, PACKED, round_s=2.0)
    assert "Nimbus has not scheduled for 40 s (3 rounds of 10 s)" in ap.step(42.0).reason
    storm_ran(tmp_path, Placement(node=np.array([0, 0, 0, 0]), worker=np.array([0, 0, 0, 0])), round_s=41.0)
    (tmp_path / "plans" / "assigned" / "job.json").write_text(
        (tmp_path / "plans" / "assigned" / "job.json").read_text().replace(', "b[1]": {"node": "n0", "worker": 0}', ""))
    assert "Storm has assigned 3 of 4 tasks" in ap.step(42.0).reason
    assert not (tmp_path / "plans" / "job.json").exists()
    storm_ran(tmp_path, PACKED, round_s=51.0)
    assert ap.step(52.0).decision == "apply"   # the same windows, Storm's view in order: the gain stands


def test_storm_running_another_placement_becomes_the_running_one_once_nimbus_read_the_plan(tmp_path):
    write_windows(tmp_path / "monitor", [0.0, 10.0, 20.0])
    ap = pilot(tmp_path, Hysteresis(min_gain=0.05, confirm=5, cooldown_s=0))
    plan = tmp_path / "plans" / "job.json"
    plan.parent.mkdir()
    plan.write_text(json.dumps({"placement": PACKED.to_mapping(TOPO.task_labels, CLUSTER)}))   # the loop's starting plan
    storm_ran(tmp_path, SPREAD, round_s=31.0, plan_read_s=plan.stat().st_mtime - 5)
    waiting = ap.step(32.0)
    assert waiting.reason == "waiting for Nimbus' next round to read the plan" and ap.current == PACKED
    assert waiting.storm_runs_plan is False
    storm_ran(tmp_path, SPREAD, round_s=31.0, plan_read_s=plan.stat().st_mtime, status="streamplace: plan rejected: x")
    adopted = ap.step(32.0)
    assert "Storm runs another placement than the loop's plan (streamplace: plan rejected: x)" in adopted.reason
    assert ap.current == SPREAD
    assert "someone else" not in ap.step(32.0).reason   # the plan file is still the loop's own


def test_a_plan_counts_as_run_by_storm_when_a_period_before_the_next_plan_saw_it(tmp_path):
    """run.json's ``plans[].matched`` from the periods' ``storm_runs_plan``: the first plan was
    seen running, the second never was; without any observation the last plan falls back to
    Storm's assignment at the end of the run."""
    a, b = PACKED.to_mapping(TOPO.task_labels, CLUSTER), SPREAD.to_mapping(TOPO.task_labels, CLUSTER)
    rows = [{"t": 10.0, "decision": "apply", "placement": a, "storm_runs_plan": None},
            {"t": 15.0, "decision": "keep", "storm_runs_plan": False}, {"t": 20.0, "decision": "keep", "storm_runs_plan": True},
            {"t": 25.0, "decision": "apply", "placement": b, "storm_runs_plan": True},
            {"t": 30.0, "decision": "keep", "storm_runs_plan": False}, {"t": 35.0, "decision": "keep", "storm_runs_plan": False}]
    beside = BesideRun(PROBLEM, PACKED, Greedy(), Settings(window_s=WINDOW), WINDOW)
    beside.pilot = pilot(tmp_path)
    beside.pilot.log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [p["matched"] for p in beside.summary({"assignment": b})["plans"]] == [True, False]
    beside.pilot.log.write_text("".join(json.dumps({**r, "storm_runs_plan": None}) + "\n" for r in rows))
    assert [p["matched"] for p in beside.summary({"assignment": b})["plans"]] == [None, True]


def test_beside_a_run_the_loop_joins_the_job_after_the_delay_it_is_given(tmp_path):
    """``after_s``: no period before it (an operator starting the loop beside a running job);
    without it the periods start one period after the workers run. A negative delay is refused."""
    import time
    logs = {}
    for after in (0.0, 3600.0):
        out = tmp_path / f"after-{after:g}"
        out.mkdir()
        beside = BesideRun(PROBLEM, PACKED, Greedy(), Settings(window_s=WINDOW), 0.05, after_s=after)
        beside.start(tmp_path / "monitor", tmp_path / "plans", out)
        logs[after] = (beside, out / "autopilot.jsonl")
    time.sleep(0.4)
    for beside, _ in logs.values():
        beside.stop()
    assert len(logs[0.0][1].read_text().splitlines()) >= 2   # periods ran: no windows yet, kept
    assert not logs[3600.0][1].exists()
    with pytest.raises(ValueError, match=">= 0 s"):
        BesideRun(PROBLEM, PACKED, Greedy(), Settings(window_s=WINDOW), WINDOW, after_s=-1.0)

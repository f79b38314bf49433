"""The faults injected beside a testbed run: the monitor relay's outage, and refusals. (The
testbed's own kill and restart are in tests/storm/testbed/.)"""

import json
import threading
import time

import pytest

from streamplace.storm.errors import StormError
from streamplace.storm import faults as faults_module
from streamplace.storm.faults import Fault, Faults, relay_monitor
from streamplace.storm.run import Beside


def _line(start: float, task: str = "a[0]") -> str:
    return json.dumps({"window_start": start, "window_seconds": 5.0, "task": task, "executed": 10}) + "\n"


def _starts(path):
    return [json.loads(line)["window_start"] for line in path.read_text().splitlines()] if path.exists() else []


def _relayed(path, count: int, within: float = 20.0) -> list[float]:
    """The window starts relayed once at least ``count`` lines are there (or ``within`` s passed)."""
    deadline = time.monotonic() + within
    while len(_starts(path)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return _starts(path)


def test_the_relay_drops_the_windows_that_start_in_an_outage_and_waits_for_whole_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(faults_module, "RELAY_EVERY_S", 0.05)
    monitor, relay = tmp_path / "monitor", tmp_path / "relay"
    monitor.mkdir()
    load = monitor / "load-job-6700-1.jsonl"
    load.write_text("".join(_line(t) for t in (0.0, 5.0, 10.0, 15.0)) + _line(20.0)[:15])   # the last still being written
    stop = threading.Event()
    thread = threading.Thread(target=relay_monitor, args=(monitor, relay, [(5.0, 15.0)], stop))
    thread.start()
    try:
        assert _relayed(relay / load.name, 2) == [0.0, 15.0]   # 5 and 10 started in [5, 15)
        time.sleep(0.3)   # six more copies: the line of window 20 is not whole, so it is not relayed
        assert _starts(relay / load.name) == [0.0, 15.0]
        with open(load, "a") as fh:
            fh.write(_line(20.0)[15:])
        assert _relayed(relay / load.name, 3) == [0.0, 15.0, 20.0]
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("kwargs, message", [({"kind": "disk-full", "at": 1.0}, "expected one of"),
                                             ({"kind": "supervisor-kill", "at": 1.0}, "name the node"),
                                             ({"kind": "nimbus-restart", "at": -1.0}, ">= 0")])
def test_a_fault_that_cannot_be_injected_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Fault(**kwargs)


def test_faults_outside_the_testbed_are_refused_before_anything_runs(tmp_path):
    faults = Faults(Beside(), [Fault("garbage-plan", 1.0)])
    with pytest.raises(StormError, match="faults need the testbed"):
        faults.start(tmp_path / "monitor", tmp_path / "plans", tmp_path)


def test_the_kill_during_a_move_targets_the_node_the_new_plan_moves_the_most_tasks_to(tmp_path, monkeypatch):
    monkeypatch.setattr(faults_module, "PLAN_POLL_S", 0.01)
    plan = tmp_path / "job.json"
    old = {"a[0]": {"node": "n0", "worker": 0}, "a[1]": {"node": "n0", "worker": 0}, "b[0]": {"node": "n1", "worker": 0}}
    plan.write_text(json.dumps({"placement": old}))
    faults = Faults(Beside(), [Fault("supervisor-kill-on-apply", 0.0)])
    found = []
    thread = threading.Thread(target=lambda: found.append(faults._next_plan_target(plan)))
    thread.start()
    time.sleep(0.1)
    # a[0] and a[1] move to n2, b[0] to n0: n2 receives the most
    plan.write_text(json.dumps({"placement": {"a[0]": {"node": "n2", "worker": 0}, "a[1]": {"node": "n2", "worker": 1},
                                              "b[0]": {"node": "n0", "worker": 0}}}))
    thread.join(timeout=10)
    assert found == ["n2"]

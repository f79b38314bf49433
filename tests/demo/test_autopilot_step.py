"""The demo's autopilot step around its Storm run: when embedded Storm stops itself (its
reassignment race, or a halt: :class:`StormHalted`) the step runs once more; any other failure is
the step's error."""

import json

import pytest

from streamplace.demo import autopilot_step
from streamplace.storm import StormError
from streamplace.storm.run import StormHalted

RACE = StormHalted('embedded Storm failed in its reassignment race (exit 1: java.lang.NullPointerException: Cannot '
                  'invoke "org.apache.storm.utils.JCQueue.isEmptyOverflow()" because "queue" is null '
                  '(at org.apache.storm.daemon.worker.WorkerState.transferLocalBatch(WorkerState.java:575)))', {})


def _measure(failures):
    """A stand-in for Storm's measured run: raises ``failures`` one by one, then writes a run."""
    calls = []

    def measure(problem, start, target, settings, *, beside):
        calls.append(beside)
        assert not target.exists()   # every attempt starts from an empty directory
        if len(calls) <= len(failures):
            target.mkdir(parents=True)
            (target / "autopilot.jsonl").write_text("half a run\n")
            failure = failures[len(calls) - 1]
            raise failure if isinstance(failure, StormError) else StormError(failure)
        target.mkdir(parents=True)
        (target / "autopilot.jsonl").write_text(json.dumps({"t": 12.0, "decision": "keep"}) + "\n")
        return {"submitted_at": 10.0, "timeline": [{"t": 12.0, "throughput": 5.0}], "plans": []}
    return measure, calls


HALT = StormHalted("embedded Storm halted itself (exit 20: worker died)", {})


@pytest.mark.parametrize("failure, said_of_it", [(RACE, "transferLocalBatch"), (HALT, "halted itself")])
def test_the_reassignment_race_runs_the_step_once_more(tmp_path, monkeypatch, failure, said_of_it):
    measure, calls = _measure([failure])
    monkeypatch.setattr(autopilot_step, "measure", measure)
    said = []
    doc = autopilot_step.run_autopilot_step(tmp_path, quick=True, log=said.append)
    assert len(calls) == 2 and calls[0] is not calls[1]   # a new loop for the second run
    assert doc["decisions"] == 1 and doc["timeline"] == [{"t": 2.0, "throughput": 5.0}]
    assert any("running the step once more" in line and said_of_it in line for line in said)


@pytest.mark.parametrize("failures", [[RACE, RACE], ["the embedded Storm run failed (exit 1): out of memory"]])
def test_other_failures_and_a_second_race_are_the_steps_error(tmp_path, monkeypatch, failures):
    measure, calls = _measure(failures)
    monkeypatch.setattr(autopilot_step, "measure", measure)
    with pytest.raises(StormError, match="exit 1"):
        autopilot_step.run_autopilot_step(tmp_path, quick=True, log=lambda line: None)
    assert len(calls) == len(failures)

"""How a failed Storm run is reported: an embedded Storm that halts itself (exit 20) mid-run has its
reason read from its log and only the jobs it had not finished run again (the retry logic, with the
JVM replaced); a JVM that dies is summed up by the root cause of its stack trace."""

import pytest

from streamplace.storm import run as storm_run
from streamplace.storm.run import Job, RunSettings, StormHalted, run_jobs
from streamplace.workloads.microbench import cluster, microbench

LOG = """\
16:06:08.211 INFO  [timer] o.s.s.PlanScheduler streamplace: applied plan
16:06:09.392 ERROR [SLOT_1024] o.a.s.d.s.Slot Error when processing event
java.lang.IllegalStateException: worker gone
\tat org.apache.storm.daemon.supervisor.Slot.run(Slot.java:1100)
16:06:09.393 ERROR [SLOT_1024] o.a.s.u.Utils Halting process: Error when processing an event
java.lang.RuntimeException: Halting process: Error when processing an event
"""


def test_halt_reason_is_the_error_logged_before_the_halt(tmp_path):
    log = tmp_path / "storm.log"
    log.write_text(LOG)
    assert storm_run._halt_reason(log) == ("[SLOT_1024] o.a.s.d.s.Slot Error when processing event: "
                                           "java.lang.IllegalStateException: worker gone")
    assert storm_run._halt_reason(tmp_path / "missing.log") == "no log"


def test_only_unfinished_jobs_run_again_once(tmp_path, monkeypatch):
    calls = []

    def fake_drive(java, cp, runner, document, settings, jobs, work_dir, on_event, bed):
        calls.append([entry["name"] for entry in document["jobs"]])
        assert [job.name for job in jobs] == calls[-1]
        (work_dir / "storm.log").write_text(LOG)
        if len(calls) == 1:   # the first JVM finished job "a" and then halted
            raise StormHalted(f"embedded Storm halted itself (exit 20: {storm_run._halt_reason(work_dir / 'storm.log')})",
                              {"a": {"job": "a"}})
        return {name: {"job": name} for name in calls[-1]}

    monkeypatch.setattr(storm_run, "_drive", fake_drive)
    monkeypatch.setattr(storm_run.jvm, "java", lambda: "java")
    monkeypatch.setattr(storm_run.jvm, "classpath", lambda: "cp")
    topology = microbench("linear", 12)
    jobs = [Job(name, topology, None, 2, duration_s=0) for name in ("a", "b", "c")]
    notes = []
    results = run_jobs(cluster("homogeneous"), jobs, RunSettings(), tmp_path, on_event=notes.append)
    assert calls == [["a", "b", "c"], ["b", "c"]]
    assert sorted(results) == ["a", "b", "c"]
    assert (tmp_path / "storm-halted.log").read_text() == LOG
    assert [n["event"] for n in notes] == ["note"] and "worker gone" in notes[0]["message"]
    assert "2 unfinished jobs" in notes[0]["message"]


def test_a_halt_is_raised_not_retried_when_asked(tmp_path, monkeypatch):
    """retry_halted=False (measure() with an autopilot beside the job): the halt is the caller's."""
    calls = []

    def fake_drive(java, cp, runner, document, settings, jobs, work_dir, on_event, bed):
        calls.append(1)
        raise StormHalted("embedded Storm halted itself (exit 20: worker gone)", {})

    monkeypatch.setattr(storm_run, "_drive", fake_drive)
    monkeypatch.setattr(storm_run.jvm, "java", lambda: "java")
    monkeypatch.setattr(storm_run.jvm, "classpath", lambda: "cp")
    job = Job("a", microbench("linear", 12), None, 2, duration_s=0)
    with pytest.raises(StormHalted, match="worker gone"):
        run_jobs(cluster("homogeneous"), [job], RunSettings(), tmp_path, retry_halted=False)
    assert calls == [1]


# stderr of a LocalRunner that died in a CI run (Storm's local blob store race, now retried in Java)
STDERR = """\
java.lang.RuntimeException: java.lang.RuntimeException: java.io.IOException: No such file or directory
\tat org.apache.storm.daemon.nimbus.Nimbus.submitTopologyWithOpts(Nimbus.java:3411)
\tat org.streamplace.storm.LocalRunner.submit(LocalRunner.java:70)
Caused by: java.lang.RuntimeException: java.io.IOException: No such file or directory
\tat org.apache.storm.blobstore.LocalFsBlobStore.createBlob(LocalFsBlobStore.java:226)
\t... 8 more
Caused by: java.io.IOException: No such file or directory
\tat java.base/java.io.UnixFileSystem.createFileExclusively(Native Method)
\tat java.base/java.io.File.createNewFile(File.java:1043)
\tat org.apache.storm.blobstore.LocalFsBlobStoreFile.getOutputStream(LocalFsBlobStoreFile.java:112)
\t... 12 more
"""


def test_a_dead_jvm_is_summed_up_by_its_root_cause_and_where():
    assert storm_run._java_failure(STDERR.splitlines()) == (
        "java.io.IOException: No such file or directory "
        "(at org.apache.storm.blobstore.LocalFsBlobStoreFile.getOutputStream(LocalFsBlobStoreFile.java:112))")
    assert storm_run._java_failure(["SLF4J: a warning", "streamplace: job.json: jobs: must be a list"]) == \
        "streamplace: job.json: jobs: must be a list"
    assert storm_run._java_failure(["", "killed"]) == "killed"
    assert storm_run._java_failure([]) is None


RACE_STDERR = """\
java.lang.NullPointerException: Cannot invoke "org.apache.storm.utils.JCQueue.isEmptyOverflow()" because "queue" is null
\tat org.apache.storm.daemon.worker.WorkerState.transferLocalBatch(WorkerState.java:575)
\tat org.apache.storm.messaging.local.Context$LocalClient.send(Context.java:191)
"""


def test_embedded_storms_reassignment_races_are_a_halt_elsewhere_an_error(tmp_path):
    """exit 1 with the race's NPE: embedded, StormHalted (so callers restart it as they restart a
    halt); on the testbed a plain StormError; a clean exit with every result: no failure."""
    (tmp_path / "runner.stderr").write_text(RACE_STDERR)
    embedded = storm_run._failure(1, {"a": {}}, 2, tmp_path, embedded=True, what="the embedded Storm run")
    assert isinstance(embedded, StormHalted) and embedded.results == {"a": {}}
    assert "reassignment race (exit 1" in str(embedded) and "transferLocalBatch" in str(embedded)
    bed = storm_run._failure(1, {}, 1, tmp_path, embedded=False, what="the Storm testbed run")
    assert type(bed) is storm_run.StormError and str(bed).startswith("the Storm testbed run failed (exit 1)")
    assert storm_run._failure(0, {"a": {}}, 1, tmp_path, embedded=True, what="x") is None
    # the other race seen: a local connection asked for back-pressure status
    (tmp_path / "runner.stderr").write_text(
        "java.lang.RuntimeException: Local Server connection should not send BackPressure status\n"
        "\tat org.apache.storm.messaging.local.Context$LocalServer.sendBackPressureStatus(Context.java:111)\n")
    assert isinstance(storm_run._failure(1, {}, 1, tmp_path, embedded=True, what="x"), StormHalted)
    (tmp_path / "runner.stderr").write_text(STDERR)   # any other death stays an error
    other = storm_run._failure(1, {}, 1, tmp_path, embedded=True, what="the embedded Storm run")
    assert type(other) is storm_run.StormError and "No such file or directory" in str(other)

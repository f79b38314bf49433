"""The job file between ``storm run`` and the Java runners: one schema, checked on both sides.

The Python checker's messages are hand-written here (the same strings JobFileTest expects from the
Java checker), and the last test hands the same bad files to the Java runner and compares."""

import copy
import json
import subprocess

import pytest

from streamplace.storm import StormError, jobfile, jvm
from streamplace.storm import run as storm_run
from streamplace.storm.run import Job, RunSettings, run_jobs
from streamplace.workloads.microbench import cluster, microbench

# a job file as run_jobs writes one for the embedded runner
GOOD = {"plan_dir": "/w/plans", "start_timeout_s": 120,
        "cluster": [{"node": "big", "slots": 2}, {"node": "small", "slots": 1}],
        "jobs": [{"name": "a", "topology": "/w/topology-a.json", "workers": 3, "ackers": 0, "load_aware": False,
                  "window_s": 10.0, "monitor_dir": None, "warmup_s": 0, "duration_s": 0,
                  "conf": {"streamplace.seed": 0}, "group": None}]}


def changed(path: str, value=None, *, drop=False) -> dict:
    """GOOD with the field at ``path`` (dot-separated, list indices as numbers) set or dropped."""
    doc = copy.deepcopy(GOOD)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    at = doc
    for p in parents:
        at = at[p]
    if drop:
        del at[last]
    else:
        at[last] = value
    return doc


BAD = [  # (document, the message both checkers give)
    (changed("jobs.0.topology", drop=True), "jobs[0].topology: required"),
    (changed("plan_dir", drop=True), "plan_dir: required"),
    (changed("jobs.0.duration_s", "60"), 'jobs[0].duration_s: must be a number, got "60"'),
    (changed("jobs.0.workers", 2.5), "jobs[0].workers: must be an integer, got 2.5"),
    (changed("jobs.0.workers", True), "jobs[0].workers: must be an integer, got true"),
    (changed("jobs.0.group", "g"), 'jobs[0].group: must be an integer or null, got "g"'),
    (changed("jobs.0.conf", [1, 2]), "jobs[0].conf: must be an object, got [1,2]"),
    (changed("cluster.1.slots", 0), "cluster[1].slots: must be >= 1, got 0"),
    (changed("jobs.0.window_s", 0), "jobs[0].window_s: must be > 0, got 0"),
    (changed("jobs.0.name", ""), "jobs[0].name: must not be empty"),
]


def test_the_file_run_jobs_writes_passes():
    assert jobfile.problem(GOOD) is None


@pytest.mark.parametrize("doc, message", BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_a_missing_or_mistyped_field_is_refused_by_name(doc, message):
    assert jobfile.problem(doc) == message


def test_an_unknown_field_is_refused_so_a_typo_does_not_pass():
    assert jobfile.problem(changed("jobs.0.duraton_s", 60)).startswith(
        "jobs[0].duraton_s: unknown field (known: name, topology, workers,")


def test_a_refused_document_is_not_written(tmp_path):
    target = tmp_path / "job.json"
    with pytest.raises(StormError, match=r"job\.json: jobs\[0\]\.topology: required$"):
        jobfile.write(target, changed("jobs.0.topology", drop=True))
    assert not target.exists()
    jobfile.write(target, GOOD)
    assert json.loads(target.read_text()) == GOOD


def test_a_schema_keyword_the_checkers_do_not_implement_is_an_error(monkeypatch):
    schema = copy.deepcopy(jobfile.schema())
    schema["properties"]["plan_dir"]["pattern"] = "^/"
    monkeypatch.setattr(jobfile, "schema", lambda: schema)
    with pytest.raises(ValueError, match="keyword pattern at plan_dir"):
        jobfile.problem(GOOD)


@pytest.mark.parametrize("mode", ["embedded", "cluster"])
def test_run_jobs_builds_documents_the_schema_accepts(mode, tmp_path, monkeypatch):
    documents = []

    def fake_drive(java, cp, runner, document, settings, jobs, work_dir, on_event, bed):
        documents.append(copy.deepcopy(document))
        return {job.name: {"job": job.name} for job in jobs}

    class FakeTestbed:   # what run_jobs reads from a testbed: its address and cluster entries
        def __init__(self, cluster, *args, **kwargs):
            self.nodes = cluster.nodes

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        nimbus = {"host": "10.0.0.1", "port": 6627}

        def job_cluster(self):
            return [{"node": n.name, "host": f"10.0.1.{i}", "slots": int(n.slots), "ports": [6700 + k for k in range(n.slots)]}
                    for i, n in enumerate(self.nodes)]

    monkeypatch.setattr(storm_run, "_drive", fake_drive)
    monkeypatch.setattr(storm_run.jvm, "java", lambda: "java")
    monkeypatch.setattr(storm_run.jvm, "classpath", lambda: "cp")
    monkeypatch.setattr(storm_run.jvm, "jar", lambda name: tmp_path / name)
    monkeypatch.setattr("streamplace.storm.testbed.Testbed", FakeTestbed)
    topology = microbench("linear", 12)
    jobs = [Job("placed", topology, None, 2, conf={"topology.max.spout.pending": 10}, group=0),
            Job("measured", topology, None, 3, monitor=True, duration_s=20, group=0)]
    run_jobs(cluster("homogeneous"), jobs, RunSettings(mode=mode), tmp_path / "w", monitor_dir=tmp_path / "m")
    assert len(documents) == 1
    assert jobfile.problem(documents[0]) is None
    assert [j["name"] for j in documents[0]["jobs"]] == ["placed", "measured"]
    assert ("nimbus" in documents[0]) == (mode == "cluster")


def test_the_java_runner_refuses_the_same_files_with_the_same_messages(storm_ready, tmp_path):
    """One JVM per file (about a second each: the runner stops before any cluster starts)."""
    for i, (doc, message) in enumerate(BAD[:4]):
        job = tmp_path / f"job-{i}.json"
        job.write_text(json.dumps(doc))
        done = subprocess.run([jvm.java(), "-cp", jvm.classpath(), "org.streamplace.storm.LocalRunner", str(job)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines()[-1] == f"streamplace: {job}: {message}"

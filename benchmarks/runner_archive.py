"""What the runners' class archive (storm/target/runner.jsa) saves: one place-only job of [LF]'s
page-view on its five nodes on embedded Storm (the JVM starts a LocalCluster, Storm assigns the
job, the runner reads it back and kills it), with the runners' archive against the JDK's own
default archive, interleaved.

    .venv/bin/python benchmarks/runner_archive.py --pairs 5

Prints per run the JVM's CPU seconds (user + system, the runner's children) and wall time, then
the range of each variant. Needs Java and the built module (``make storm``), not root.
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import tempfile
import time
from pathlib import Path

from streamplace.model import Cluster, Problem
from streamplace.schedulers import make_scheduler
from streamplace.storm import jvm
from streamplace.storm.plans import plan_document, workers_of
from streamplace.storm.run import Job, RunSettings, run_jobs
from streamplace.workloads.applications import application


def jdk_archive() -> Path:
    """The JDK's default class-data-sharing archive (``lib/server/classes.jsa``)."""
    home = Path(jvm.java()).resolve().parents[1]
    return home / "lib" / "server" / "classes.jsa"


def place_only_job() -> tuple[Cluster, Job]:
    """[LF]'s page-view count (16 tasks) on its five nodes, two slots each, placed by even: a job
    Storm assigns and the runner kills without measuring."""
    app = application("page-view")
    topo, cluster = app.topology, Cluster.build("app", [dataclasses.replace(n, slots=2) for n in app.cluster().nodes])
    placement = make_scheduler("even", {}).schedule(Problem.from_topology(topo, cluster)).placement
    return cluster, Job("place", topo, None, workers_of(placement), plan=plan_document(topo, cluster, placement))


def one_run(cluster: Cluster, job: Job, runner_opts: tuple[str, ...]) -> tuple[float, float]:
    """(CPU s, wall s) of one run of ``job``; ``runner_opts`` come after the runners' own options,
    so a second ``-XX:SharedArchiveFile`` replaces the runners' archive."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="streamplace-runner-archive-") as work:
        run_jobs(cluster, [job], RunSettings(runner_jvm_opts=runner_opts), Path(work))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, time.monotonic() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5, help="runs of each variant, interleaved (default 5)")
    args = ap.parse_args()
    if not jvm.archive_opts(jvm.module_dir() / jvm.RUNNER_ARCHIVE):
        print(f"error: {jvm.module_dir() / jvm.RUNNER_ARCHIVE} is not built: run `make storm`", file=sys.stderr)
        return 2
    variants = {"runners' archive": (), "JDK's archive": (f"-XX:SharedArchiveFile={jdk_archive()}",)}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    cluster, job = place_only_job()
    for i in range(args.pairs):
        for name, opts in variants.items():
            cpu, wall = one_run(cluster, job, opts)
            figures[name].append((cpu, wall))
            print(f"pair {i + 1}: {name:16} {cpu:5.2f} CPU s {wall:5.2f} s", flush=True)
    for name, runs in figures.items():
        cpus, walls = [c for c, _ in runs], [w for _, w in runs]
        print(f"{name:16} CPU {min(cpus):.2f}-{max(cpus):.2f} s, wall {min(walls):.2f}-{max(walls):.2f} s ({len(runs)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

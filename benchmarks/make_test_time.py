"""How long ``make test`` takes on a clean clone, as CI runs it, and where the time goes.

    .venv/bin/python benchmarks/make_test_time.py [--runs N] [--source REPO]

Each run clones REPO (default: this checkout's repository, its committed state) into a temporary
directory, runs ``make test`` there and prints one line: wall seconds, the set-up before pytest
and pytest's own seconds, the CPU seconds of ``make`` and everything it waited for, and the CPU
seconds of the whole machine over the run (from ``/proc/stat``: this also counts what the
suite starts as daemons, the testbed's Storm JVMs, which no process waits for; meaningful on an
otherwise quiet machine). Then pytest's slowest 15 of the last run. A machine probe comes first
(the best of five timings of a fixed pure-Python loop): figures taken on different days compare
only as far as the probe does. The clone is removed on every exit path; a failing ``make test``
keeps its log (the path is printed) and ends this with its exit code.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: pytest's closing line, e.g. "1528 passed, 1 warning in 466.51s (0:07:46)" or "1 failed, 1532 passed, ..."
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ [a-z]+(?:, \d+ [a-z]+)*) in (?P<seconds>[\d.]+)s\b", re.M)
#: one line of pytest's ``--durations`` block, e.g. "214.50s setup    tests/demo/test_run.py::test_x@testbed"
DURATION = re.compile(r"^(?P<seconds>[\d.]+)s (?P<phase>setup|call|teardown)\s+(?P<test>\S+)$", re.M)


def probe_ms() -> float:
    """Milliseconds for ``sum(range(10**6))``, the best of five (a measure of this machine's speed)."""
    return min(timeit.repeat("sum(range(10**6))", number=10, repeat=5)) / 10 * 1e3


def machine_cpu_s() -> float:
    """CPU seconds every core has spent outside idle and I/O wait since boot (``/proc/stat``)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = map(int, fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")   # in clock ticks (USER_HZ)


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pytest_figures(log: str) -> tuple[str, float | None, tuple[tuple[float, str, str], ...]]:
    """(pytest's counts, its seconds or None, its slowest tests as (seconds, phase, test)) from a log."""
    summary = SUMMARY.search(log)
    slowest = tuple((float(m["seconds"]), m["phase"], m["test"]) for m in DURATION.finditer(log))
    if summary is None:
        return "no pytest summary", None, slowest
    return summary["counts"], float(summary["seconds"]), slowest


@dataclasses.dataclass(frozen=True)
class Run:
    """One ``make test``: its exit code, seconds, CPU seconds and what pytest said."""
    code: int
    wall_s: float
    pytest_s: float | None   # None: pytest printed no closing line
    counts: str              # pytest's counts ("1528 passed, 1 warning"), or "no pytest summary"
    cpu_s: float             # make and every process it waited for
    machine_cpu_s: float     # every core outside idle over the run
    slowest: tuple           # (seconds, phase, test), slowest first
    log: str

    def line(self, i: int) -> str:
        setup = (f"{self.wall_s - self.pytest_s:.0f} s set-up + {self.pytest_s:.0f} s pytest" if self.pytest_s is not None
                 else "no pytest time")
        return (f"run {i}: {self.wall_s:.0f} s ({setup}), {self.cpu_s:.0f} CPU s waited for, {self.machine_cpu_s:.0f} "
                f"CPU s on the machine ({self.machine_cpu_s / self.wall_s:.2f} cores); {self.counts}")


class CloneFailed(Exception):
    pass


def one_run(source: str, work: Path) -> Run:
    """``make test`` on a fresh clone of ``source`` under ``work``."""
    clone = work / "clone"
    cloned = subprocess.run(["git", "clone", "-q", source, str(clone)], capture_output=True, text=True)
    if cloned.returncode != 0:
        raise CloneFailed(f"cannot clone {source}: {(cloned.stderr.strip().splitlines() or ['git failed'])[-1]}")
    log_path = work / "make-test.log"
    # as CI starts it: not as a sub-make of a make this may run under (which would print its
    # directories and share that make's job slots)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    cpu0, machine0, start = children_cpu_s(), machine_cpu_s(), time.monotonic()
    with log_path.open("w") as log:
        code = subprocess.run(["make", "test"], cwd=clone, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    wall = time.monotonic() - start
    text = log_path.read_text(errors="replace")
    counts, pytest_s, slowest = pytest_figures(text)
    return Run(code, wall, pytest_s, counts, children_cpu_s() - cpu0, machine_cpu_s() - machine0, slowest, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="clean-clone runs, one after another (default 1)")
    parser.add_argument("--source", default=str(ROOT), help="repository to clone (default: this checkout's)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs: must be >= 1, got {args.runs}")
    print(f"machine probe: sum(range(10**6)) in {probe_ms():.1f} ms (best of 5)", flush=True)
    run = None
    for i in range(1, args.runs + 1):
        work = Path(tempfile.mkdtemp(prefix="make-test-time-"))
        try:
            run = one_run(args.source, work)
        except CloneFailed as exc:
            print(f"make_test_time: {exc}", file=sys.stderr)
            return 2
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(run.line(i), flush=True)
        if run.code != 0:
            kept = Path(tempfile.mkstemp(prefix="make-test-failed-", suffix=".log")[1])
            kept.write_text(run.log)
            print(f"make test failed (exit {run.code}); its log: {kept}", file=sys.stderr)
            return run.code
    print("slowest 15 of the last run:")
    for seconds, phase, test in run.slowest[:15]:
        print(f"  {seconds:7.1f} s {phase:8} {test}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:   # make and its children had the same SIGINT; the clone is gone (finally)
        sys.exit(130)

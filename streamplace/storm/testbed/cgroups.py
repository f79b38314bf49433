"""CPU limits for the testbed's nodes: one cgroup per node with a CFS quota, v1 or v2.

cgroup v1 (``/sys/fs/cgroup/cpu``): ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``; v2 (a
``cgroup.controllers`` listing ``cpu``): ``cpu.max`` = ``"<quota> <period>"``. Either way the
testbed's groups live under one parent, ``streamplace-testbed``, so that everything it started is
found (``cgroup.procs``), killed and removed, also after a run that was itself killed: every
process started in a group, and every process those start (Storm's workers), stays in it.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PARENT = "streamplace-testbed"
PERIOD_US = 100_000
CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class CpuCgroups:
    """The testbed's cgroups under ``parent`` (a directory of the cpu hierarchy), version 1 or 2."""

    parent: Path
    version: int

    @classmethod
    def detect(cls, root: Path = CGROUP_ROOT) -> "CpuCgroups | None":
        """The cpu controller of this machine, v2 first (unified hierarchy), else v1; None if neither."""
        controllers = root / "cgroup.controllers"
        if controllers.is_file() and "cpu" in controllers.read_text().split():
            return cls(root / PARENT, 2)
        for name in ("cpu", "cpu,cpuacct"):
            if (root / name / "cpu.cfs_quota_us").is_file():
                return cls(root / name / PARENT, 1)
        return None

    def create(self, name: str) -> Path:
        """The group ``name`` (no limit yet)."""
        if not self.parent.is_dir():
            self.parent.mkdir()
            if self.version == 2:  # let the parent hand the cpu controller to its children
                _write(self.parent.parent / "cgroup.subtree_control", "+cpu")
                _write(self.parent / "cgroup.subtree_control", "+cpu")
        group = self.parent / name
        group.mkdir(exist_ok=True)
        return group

    def limit(self, name: str, cores: float | None, period_us: int = PERIOD_US) -> None:
        """At most ``cores`` CPUs of time per ``period_us`` for the group; None lifts the limit."""
        group = self.parent / name
        quota = None if cores is None else max(1000, int(round(cores * period_us)))
        if self.version == 2:
            _write(group / "cpu.max", f"{'max' if quota is None else quota} {period_us}")
        else:
            _write(group / "cpu.cfs_period_us", str(period_us))
            _write(group / "cpu.cfs_quota_us", str(-1 if quota is None else quota))

    def procs_file(self, name: str) -> Path:
        return self.parent / name / "cgroup.procs"

    def pids(self) -> list[int]:
        """Every process in any of the testbed's groups."""
        out = []
        if self.parent.is_dir():
            for group in self.parent.iterdir():
                procs = group / "cgroup.procs"
                if procs.is_file():
                    out += [int(p) for p in procs.read_text().split()]
        return out

    def reading(self, name: str) -> "CpuReading":
        """The group's CPU counters now: CPU time used (v2 ``cpu.stat`` ``usage_usec``; v1
        ``cpuacct.usage`` where cpuacct shares the hierarchy, else the user + system time of the
        processes in the group from ``/proc``, which misses processes that exited) and the quota
        periods elapsed and throttled (``nr_periods``, ``nr_throttled``, both versions)."""
        group = self.parent / name
        stat = dict(line.split()[:2] for line in (group / "cpu.stat").read_text().splitlines() if line.strip())
        if "usage_usec" in stat:
            cpu_s = int(stat["usage_usec"]) / 1e6
        elif (group / "cpuacct.usage").is_file():
            cpu_s = int((group / "cpuacct.usage").read_text()) / 1e9
        else:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
            cpu_s = sum(_process_cpu_s(pid) for pid in pids)
        return CpuReading(cpu_s, int(stat.get("nr_periods", 0)), int(stat.get("nr_throttled", 0)))

    def destroy(self, grace: float = 3.0) -> None:
        """Kill every process in the groups (SIGTERM, SIGKILL after ``grace``), then remove them."""
        pids = self.pids()
        for pid in pids:
            _kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        for _ in range(50):
            left = self.pids()
            if not left:
                break
            for pid in left:
                _kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        if self.parent.is_dir():
            for group in self.parent.iterdir():
                if group.is_dir():
                    _rmdir(group)
            _rmdir(self.parent)


@dataclass(frozen=True)
class CpuReading:
    """One group's CPU counters at one moment (:meth:`CpuCgroups.reading`)."""

    cpu_s: float       # CPU seconds its processes used
    periods: int       # CFS periods with runnable work
    throttled: int     # of those, periods in which the group ran out of quota


def node_cpu(before: CpuReading, after: CpuReading, seconds: float) -> dict:
    """Between two readings: ``cores`` used on average and the ``throttled`` share of the CFS
    periods (near 1: the node ran into its quota all the time, i.e. it was CPU-bound)."""
    periods = after.periods - before.periods
    return {"cores": (after.cpu_s - before.cpu_s) / seconds if seconds > 0 else 0.0,
            "throttled": (after.throttled - before.throttled) / periods if periods > 0 else 0.0}


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process (all its threads); 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK   # utime, stime: fields 14 and 15 of stat(5)


def _write(path: Path, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _rmdir(path: Path) -> None:
    for _ in range(40):  # a killed process leaves its cgroup a moment after it is reaped
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
    path.rmdir()

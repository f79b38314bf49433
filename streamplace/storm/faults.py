"""Faults injected into a measured testbed run, beside the autopilot: what the loop must survive.

A :class:`Fault` acts at ``at`` seconds after the job's workers run (the moment what runs beside a
job starts) and, for those with a duration, undoes itself ``for_s`` seconds later:

- ``monitor-stop``: the monitor's windows stop reaching the autopilot for ``for_s`` seconds. The
  autopilot reads a relay of the monitor directory (complete lines copied every half second) that
  drops the records of windows starting in the outage, as a monitor that stopped writing would
  leave them missing; the run's own figures still come from every record.
- ``supervisor-kill``: SIGKILL the supervisor of node ``target`` (its workers keep running, as on a
  real node whose supervisor process died; Nimbus declared it dead 19-21 s later on the testbed).
- ``nimbus-restart``: SIGKILL Nimbus, start it again ``for_s`` seconds later.
- ``garbage-plan``: someone else replaces the job's plan file with bytes that are not a plan.
- ``supervisor-kill-on-apply``: from ``at`` on, wait for the next plan written into the plan file
  and SIGKILL, at once, the supervisor of the node that plan moves the most tasks to (a supervisor
  dying during a move: before Nimbus' next round has applied the plan).

Each action is appended to ``faults.jsonl`` in the run's directory (``t`` in seconds since the
epoch, ``fault``, ``action``), and :meth:`Faults.summary` adds them to ``run.json`` as ``faults``.
Every scheduling round of Nimbus the plugin records (:func:`~streamplace.storm.plans.read_assigned`)
is appended to ``rounds.jsonl`` (``round_s``, ``status``, ``dead``, the nodes the assignment uses,
its number of tasks, and the ``assignment`` itself when it changed):
what Storm did about the fault. ``plan-at-end.bin`` holds the plan file's bytes when the job's
result came in.
Testbed only: the daemons are the testbed's (:func:`~streamplace.storm.testbed.active`).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import StormError
from .plans import ASSIGNED_DIR
from .run import Beside

KINDS = ("monitor-stop", "supervisor-kill", "nimbus-restart", "garbage-plan", "supervisor-kill-on-apply")
#: how often the plan file is looked at for a new plan (s): well under Nimbus' 2-s rounds on the testbed
PLAN_POLL_S = 0.05
#: how often the relay copies the monitor's new lines (s): well under a window
RELAY_EVERY_S = 0.5


@dataclass(frozen=True)
class Fault:
    kind: str
    at: float                  # seconds after the job's workers run
    for_s: float = 0.0         # monitor-stop: the outage; nimbus-restart: the time Nimbus is down
    target: str | None = None  # supervisor-kill: the node

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"fault: expected one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.kind == "supervisor-kill" and not self.target:
            raise ValueError("fault supervisor-kill: name the node (target)")
        if not (self.at >= 0 and self.for_s >= 0):
            raise ValueError("fault: at and for_s must be >= 0")


class Faults(Beside):
    """``inner`` (the autopilot beside the run) with ``faults`` injected while the job runs."""

    def __init__(self, inner: Beside, faults: list[Fault]):
        self.inner, self.faults = inner, list(faults)
        self.events: list[dict] = []
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._log: Path | None = None
        self._plan: Path | None = None

    def start(self, monitor: Path, plan_dir: Path, out_dir: Path) -> None:
        from .testbed import active
        bed = active()
        if bed is None:
            raise StormError("faults need the testbed (--mode cluster): there is no daemon to act on in embedded Storm")
        self._log = Path(out_dir) / "faults.jsonl"
        begun = time.time()
        seen = monitor
        outages = [(begun + f.at, begun + f.at + f.for_s) for f in self.faults if f.kind == "monitor-stop"]
        if outages:
            seen = Path(out_dir) / "relay"
            self._spawn(relay_monitor, monitor, seen, outages, self._stop)
        plan = self._plan = Path(plan_dir) / f"{_plan_name(plan_dir)}.json"
        self._spawn(self._rounds, Path(plan_dir) / ASSIGNED_DIR / plan.name, Path(out_dir) / "rounds.jsonl")
        for fault in self.faults:
            self._spawn(self._inject, fault, begun, bed, plan)
        self.inner.start(seen, plan_dir, out_dir)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60.0)
        self._threads.clear()
        self.inner.stop()
        if self._plan is not None and self._plan.is_file():   # what the plan file held at the end, as bytes
            (self._log.parent / "plan-at-end.bin").write_bytes(self._plan.read_bytes())
            self._plan = None

    def summary(self, run: dict) -> dict:
        return {**self.inner.summary(run), "faults": list(self.events)}

    # -- the threads ---------------------------------------------------------------------------
    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, name="fault", daemon=True)
        thread.start()
        self._threads.append(thread)

    def _note(self, fault: Fault, action: str) -> None:
        event = {"t": time.time(), "fault": fault.kind, "action": action}
        self.events.append(event)
        with open(self._log, "a") as fh:
            fh.write(json.dumps(event) + "\n")

    def _wait_until(self, t: float) -> bool:
        """Sleep until epoch time ``t``; False when the run ended first."""
        return not self._stop.wait(max(0.0, t - time.time()))

    def _inject(self, fault: Fault, begun: float, bed, plan: Path) -> None:
        if not self._wait_until(begun + fault.at):
            return
        if fault.kind == "monitor-stop":
            self._note(fault, f"the monitor's windows stop reaching the autopilot for {fault.for_s:g} s")
            if self._wait_until(begun + fault.at + fault.for_s):
                self._note(fault, "the monitor's windows reach the autopilot again")
        elif fault.kind == "supervisor-kill":
            bed.kill(f"supervisor-{fault.target}")
            self._note(fault, f"SIGKILL the supervisor of node {fault.target}")
        elif fault.kind == "nimbus-restart":
            bed.kill("nimbus")
            self._note(fault, "SIGKILL Nimbus")
            if self._wait_until(begun + fault.at + fault.for_s):
                bed.start_again("nimbus")
                self._note(fault, "Nimbus started again")
        elif fault.kind == "supervisor-kill-on-apply":
            node = self._next_plan_target(plan)
            if node is not None:
                bed.kill(f"supervisor-{node}")
                self._note(fault, f"SIGKILL the supervisor of node {node}, which the new plan moves the most tasks to")
        else:
            plan.write_bytes(b"\x00 this is not a plan {")
            self._note(fault, f"{plan.name} replaced with bytes that are not a plan")

    def _next_plan_target(self, plan: Path) -> str | None:
        """Wait for the plan file to change; the node its new placement moves the most tasks to."""
        before = json.loads(plan.read_bytes())["placement"]
        while not self._stop.wait(PLAN_POLL_S):
            try:
                now = json.loads(plan.read_bytes())["placement"]
            except (OSError, ValueError, KeyError):
                continue
            if now != before:
                moved = Counter(where["node"] for label, where in now.items() if before.get(label, {}).get("node") != where["node"])
                return moved.most_common(1)[0][0] if moved else None
        return None

    def _rounds(self, record: Path, out: Path) -> None:
        """Append each new round of the plugin's record of what Storm runs."""
        last, assignment = None, None
        while not self._stop.wait(RELAY_EVERY_S):
            try:
                doc = json.loads(record.read_bytes())
            except (OSError, ValueError):
                continue
            if doc.get("round_ms") == last:
                continue
            last = doc.get("round_ms")
            nodes = sorted({where["node"] for where in doc.get("assignment", {}).values()})
            row = {"round_s": last / 1000.0, "status": doc.get("status"), "dead": doc.get("dead_nodes"), "nodes": nodes,
                   "tasks": len(doc.get("assignment", {}))}
            if doc.get("assignment") != assignment:   # the assignment only when it changed
                assignment = row["assignment"] = doc.get("assignment")
            with open(out, "a") as fh:
                fh.write(json.dumps(row) + "\n")

def relay_monitor(monitor: Path, relay: Path, outages: list[tuple[float, float]], stop: threading.Event) -> None:
    """Until ``stop`` is set, copy the monitor's complete new lines into ``relay`` every
    :data:`RELAY_EVERY_S`, dropping the records of windows that start in an outage (``[lo, hi)``,
    epoch seconds); a line still being written waits for the next copy."""
    relay.mkdir(parents=True, exist_ok=True)
    offsets: dict[str, int] = {}
    while not stop.wait(RELAY_EVERY_S):
        for source in sorted(monitor.glob("*.jsonl")) if monitor.is_dir() else []:
            with open(source, "rb") as fh:
                fh.seek(offsets.get(source.name, 0))
                data = fh.read()
            end = data.rfind(b"\n") + 1
            if end == 0:
                continue
            offsets[source.name] = offsets.get(source.name, 0) + end
            kept = [line for line in data[:end].splitlines(keepends=True)
                    if not any(lo <= _window_start(line) < hi for lo, hi in outages)]
            with open(relay / source.name, "ab") as out:
                out.writelines(kept)


def _window_start(line: bytes) -> float:
    try:
        return float(json.loads(line)["window_start"])
    except (ValueError, KeyError, TypeError):
        return float("nan")   # kept: the autopilot says what it makes of a line it cannot read


def _plan_name(plan_dir: Path) -> str:
    """The job's plan file's name (the run's only plan in its plan directory)."""
    plans = sorted(p.stem for p in Path(plan_dir).glob("*.json"))
    if len(plans) != 1:
        raise StormError(f"faults: expected one plan in {plan_dir}, found {len(plans)}")
    return plans[0]

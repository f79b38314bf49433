"""Plan files: what the Nimbus plugin reads, one ``<topology name>.json`` per topology, and what
it writes back: what Storm runs, ``assigned/<topology name>.json`` in the same directory.

A plan is the JSON ``streamplace schedule -o`` writes; the plugin uses its ``placement`` (task
label -> ``{node, worker}``) and ignores every other key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..files import parse_document, quote
from ..model import Cluster, Placement, Topology
from ..model.specs import atomic_write_text
from .errors import StormError

#: Storm's rule for topology names (``Utils.validateTopologyName``); the name is also the plan's file name.
STORM_NAME = re.compile(r"^[^/.:\\]+$")


def storm_name(topology: Topology) -> str:
    """The topology's name as Storm will take it, or a clear error."""
    if not STORM_NAME.match(topology.name):
        raise StormError(f"topology name {quote(topology.name)}: Storm refuses names with '/', '.', ':' or '\\' "
                         "(rename it in the topology file)")
    return topology.name


def plan_document(topology: Topology, cluster: Cluster, placement: Placement, **extra) -> dict:
    """``{"placement": {label: {node, worker}}, "topology": name, ...extra}``."""
    return {"topology": topology.name, **extra, "placement": placement.to_mapping(topology.task_labels, cluster)}


def on_fresh_ports(current: Placement, new: Placement, cluster: Cluster) -> Placement:
    """``new`` with every worker whose tasks change on a worker index that no worker of
    ``current`` holds on its node, where the node has such a slot free (else on one whose worker
    changes anyway); a worker with the same tasks as one of ``current`` on the same node keeps
    that one's index, which Storm leaves running.

    A worker index is a port (the plugin maps index i to the node's i-th port), and Storm
    delivers by port: a worker sending to a task that moved learns of the move only at its next
    connection refresh (``task.refresh.poll.secs``, 10 s by default; ``WorkerState.
    refreshConnections``), and a worker being stopped sends until it stops. If the task's old
    port now holds a new worker without that task, the tuples fail there: ``WorkerState.
    transferLocalBatch`` finds no receive queue for the task (a NullPointerException, which in
    embedded Storm ends the JVM). On a fresh port they reach the stopping worker or nobody.
    The model sees which tasks share a worker, not its index: every cost and prediction is the same.
    """
    worker = new.worker.copy()
    slots = cluster.slots
    for n in np.unique(new.node):
        now = workers_on(current, n)
        held = {tasks: w for w, tasks in now.items()}
        planned = workers_on(new, n)
        index = {w: held[tasks] for w, tasks in planned.items() if tasks in held}
        kept = set(index.values())
        free = [w for w in range(int(slots[n])) if w not in now] + [w for w in sorted(now) if w not in kept]
        for w in sorted(planned):
            if w not in index:
                index[w] = free.pop(0)
        for w, tasks in planned.items():
            worker[list(tasks)] = index[w]
    return Placement(new.node, worker)


def workers_on(placement: Placement, node: int) -> dict[int, frozenset]:
    """Worker index -> the set of its tasks, for the workers on ``node``."""
    tasks = np.flatnonzero(placement.node == node)
    return {int(w): frozenset(tasks[placement.worker[tasks] == w].tolist()) for w in np.unique(placement.worker[tasks])}


def workers_of(placement: Placement) -> int:
    """Distinct (node, worker) pairs: the ``topology.workers`` a plan needs."""
    return len(set(zip(placement.node.tolist(), placement.worker.tolist())))


def write_plan(plan_dir: Path, name: str, document: dict) -> Path:
    """Writes ``plan_dir/<name>.json`` atomically (the plugin re-reads it when it changes)."""
    plan_dir.mkdir(parents=True, exist_ok=True)
    path = plan_dir / f"{name}.json"
    atomic_write_text(path, json.dumps(document, indent=2) + "\n")
    return path


#: the plugin's directory, inside the plan directory, of what Storm runs (Java: ``Assigned.DIR``)
ASSIGNED_DIR = "assigned"


@dataclass(frozen=True)
class Assigned:
    """What Storm ran at the end of Nimbus' last scheduling round, as the plugin wrote it: the
    round's time, Nimbus' time between rounds (``nimbus.monitor.freq.secs``) and the round's
    scheduler status, the modification time of the plan the round read (None:
    no plan), the nodes with a live supervisor and those seen alive before but not now, and the
    assignment in a plan's own form (task label -> ``{node, worker}``; tasks Storm has not
    assigned are absent)."""
    round_s: float
    round_every_s: float
    status: str
    plan_modified_s: float | None
    alive: tuple[str, ...]
    dead: tuple[str, ...]
    assignment: dict


def read_assigned(plan_dir: Path, topology: Topology) -> Assigned | None:
    """The plugin's record of what Storm runs for ``topology`` (None: there is none, as with a
    plugin older than the record or before Nimbus' first round). Read without recording it as an
    input: the plugin replaces it as Nimbus schedules."""
    path = Path(plan_dir) / ASSIGNED_DIR / f"{storm_name(topology)}.json"
    if not path.is_file():
        return None
    doc = parse_document(path.read_bytes(), path, "json")
    fields = {"round_ms": (int, float), "round_every_s": (int, float), "status": (str, type(None)), "alive_nodes": list, "dead_nodes": list, "assignment": dict}
    for name, kind in fields.items():
        if not isinstance(doc, dict) or not isinstance(doc.get(name), kind):
            raise ValueError(f"{path}: {name}: missing or of the wrong type (not the plugin's record of what Storm runs)")
    modified = doc.get("plan_modified_ms")
    return Assigned(doc["round_ms"] / 1000.0, float(doc["round_every_s"]), doc["status"] or "", None if modified is None else modified / 1000.0,
                    tuple(map(str, doc["alive_nodes"])), tuple(map(str, doc["dead_nodes"])), doc["assignment"])

"""Plan files: what the Nimbus plugin reads, one ``<topology name>.json`` per topology.

A plan is the JSON ``streamplace schedule -o`` writes; the plugin uses its ``placement`` (task
label -> ``{node, worker}``) and ignores every other key.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..files import quote
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


def workers_of(placement: Placement) -> int:
    """Distinct (node, worker) pairs: the ``topology.workers`` a plan needs."""
    return len(set(zip(placement.node.tolist(), placement.worker.tolist())))


def write_plan(plan_dir: Path, name: str, document: dict) -> Path:
    """Writes ``plan_dir/<name>.json`` atomically (the plugin re-reads it when it changes)."""
    plan_dir.mkdir(parents=True, exist_ok=True)
    path = plan_dir / f"{name}.json"
    atomic_write_text(path, json.dumps(document, indent=2) + "\n")
    return path

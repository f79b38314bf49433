"""Topology, cluster and placement files (YAML or JSON) <-> model objects.

Files are read and written through :mod:`streamplace.files` (size limits, strict parsing,
atomic writes that never replace an input). Every problem is raised as
:class:`SpecError` carrying the file, the field path (``operators[2].parallelism``) and the
problem, so the CLI can print the one line ``streamplace: FILE: FIELD: problem``. Sizes are
checked before anything large is allocated (docs/safety.md).
"""

from __future__ import annotations

import math
import os
from dataclasses import fields as dc_fields
from pathlib import Path
from typing import Any, Callable

from ..files import SpecError, atomic_write_bytes, atomic_write_text, quote, read_document, write_document
from .cluster import DEFAULT_SLOTS, Cluster, ClusterError, Node, check_cluster_size
from .placement import Placement, PlacementError
from .topology import PHASE_OPERATOR_FIELDS, PHASE_STREAM_FIELDS, Operator, Phase, Stream, Topology, TopologyError

MAX_TASKS = 10_000_000
MAX_NODES = 1_000_000
MAX_NUMBER = 1e12  # every number in a spec: finite, 0..10^12 (larger ones overflow the metrics to inf/NaN)
MAX_INT = 2**31 - 1  # the largest integer a 32-bit solver seed or a Java int holds


# ---------------------------------------------------------------------- field checking
def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _number(v, where, fail):
    if not _is_number(v):
        fail(where, f"must be a number, got {quote(v)}")
    if v < 0:
        fail(where, f"must be >= 0, got {quote(v)}")
    if v > MAX_NUMBER:
        fail(where, f"must be at most {MAX_NUMBER:g}, got {quote(v)}")
    return float(v)


def _integer(v, where, fail):
    if isinstance(v, bool) or not isinstance(v, int):
        if not (isinstance(v, float) and v.is_integer()):
            fail(where, f"must be an integer, got {quote(v)}")
    if abs(v) > MAX_NUMBER:
        fail(where, f"must be at most {MAX_NUMBER:g} in size, got {quote(v)}")
    return int(v)


def _string(v, where, fail):
    if not isinstance(v, str) or not v:
        fail(where, f"must be a non-empty string, got {quote(v)}")
    return v


def _operator_name(v, where, fail):
    """Task labels are ``name[i]``: a name with brackets or surrounding spaces would not read back."""
    _string(v, where, fail)
    if any(ch in v for ch in "[]") or v != v.strip():
        fail(where, f"an operator name may not contain '[' or ']' or start or end with a space, got {quote(v)}")
    return v


def _cpu(v, where, fail):
    if isinstance(v, dict):
        return {_string(k, f"{where}.{k}", fail): _number(x, f"{where}.{k}", fail) for k, x in v.items()}
    return _number(v, where, fail)


Check = Callable[[Any, str, Callable], Any]

OPERATOR_FIELDS: dict[str, Check] = {
    "name": _operator_name, "parallelism": _integer, "role": _string, "selectivity": _number,
    "tuple_bytes": _number, "cpu_per_tuple": _cpu, "memory_mb": _number, "cpu_demand": _number,
    "cpu_percent": _number, "load": _number, "source_rate": _number,
}
STREAM_FIELDS: dict[str, Check] = {
    "from": _string, "to": _string, "grouping": _string, "key": _string, "pair_rate": _number,
    "key_distribution": _string, "zipf_s": _number, "num_keys": _integer,
}
NODE_FIELDS: dict[str, Check] = {
    "name": _string, "capacity": _number, "slots": _integer, "machine_type": _string,
    "cores": _number, "cpu_percent": _number, "memory_mb": _number, "bandwidth": _number, "rack": _string,
}
PHASE_FIELDS: dict[str, Check] = {"at": _number, "operators": lambda v, where, fail: v, "streams": lambda v, where, fail: v}
#: a phase's operator and stream entries: the key fields, then what a phase may change (a phase's
#: ``cpu_per_tuple`` is one number: a running task does not look up its machine type again)
PHASE_OPERATOR_SCHEMA: dict[str, Check] = {"name": _operator_name,
                                           **{k: _number for k in PHASE_OPERATOR_FIELDS}}
PHASE_STREAM_SCHEMA: dict[str, Check] = {"from": _string, "to": _string,
                                         **{k: STREAM_FIELDS[k] for k in PHASE_STREAM_FIELDS}}
GROUP_FIELDS: dict[str, Check] = {**{k: v for k, v in NODE_FIELDS.items() if k != "name"}, "count": _integer, "prefix": _string}


def _record(item, where: str, schema: dict[str, Check], required: tuple[str, ...], fail) -> dict:
    if not isinstance(item, dict):
        fail(where, f"must be a mapping, got {type(item).__name__}")
    for key in item:
        if key not in schema:
            fail(f"{where}.{key}", f"unknown field (expected one of {', '.join(schema)})")
    for key in required:
        if key not in item or item[key] is None:
            fail(f"{where}.{key}", "missing required field")
    return {k: schema[k](v, f"{where}.{k}", fail) for k, v in item.items() if v is not None}


def _cores_from_percent(rec: dict, where: str, cores: str, fail) -> dict:
    """Storm states CPU in percent of a core (``topology.component.cpu.pcore.percent``,
    ``supervisor.cpu.capacity``; 100 = one core): ``cpu_percent`` is read into the ``cores`` field."""
    if "cpu_percent" in rec:
        if cores in rec:
            fail(f"{where}.cpu_percent", f"give {cores}{'' if cores == 'cores' else ' (cores)'} or cpu_percent "
                                         "(Storm's percent of a core), not both")
        rec[cores] = rec.pop("cpu_percent") / 100.0
    return rec


def _list(doc: dict, key: str, fail) -> list:
    value = doc.get(key)
    if value is None:
        fail(key, "missing required field")
    if not isinstance(value, list):
        fail(key, f"must be a list, got {type(value).__name__}")
    return value


def _failer(path):
    def fail(field_path: str, problem: str):
        raise SpecError(path, field_path, problem)
    return fail


def _named_mapping(doc: Any, path, kind: str, keys: tuple[str, ...], fail) -> str:
    """Check the top level of a spec document (a mapping with only ``keys``); return its name
    (default: the file's stem)."""
    if not isinstance(doc, dict):
        fail("", f"a {kind} must be a mapping with {', '.join(keys)}, got {type(doc).__name__}")
    for key in doc:
        if key not in keys:
            fail(key, f"unknown field (expected {', '.join(keys)})")
    return _string(doc.get("name", Path(str(path)).stem), "name", fail)


# ---------------------------------------------------------------------- topology
def topology_from_dict(doc: Any, path: str | os.PathLike = "<topology>") -> Topology:
    fail = _failer(path)
    name = _named_mapping(doc, path, "topology", ("name", "operators", "streams", "phases"), fail)
    ops = [_cores_from_percent(_record(o, f"operators[{i}]", OPERATOR_FIELDS, ("name", "parallelism"), fail),
                               f"operators[{i}]", "cpu_demand", fail) for i, o in enumerate(_list(doc, "operators", fail))]
    total = sum(o["parallelism"] for o in ops if o["parallelism"] > 0)
    if total > MAX_TASKS:
        fail("operators", f"the topology has {total:,} tasks (limit {MAX_TASKS:,})")
    raw_streams = doc.get("streams") or []
    if not isinstance(raw_streams, list):
        fail("streams", f"must be a list, got {type(raw_streams).__name__}")
    streams = []
    for i, s in enumerate(raw_streams):
        rec = _record(s, f"streams[{i}]", STREAM_FIELDS, ("from", "to"), fail)
        rec["src"], rec["dst"] = rec.pop("from"), rec.pop("to")
        streams.append(Stream(**rec))
    phases = _phases(doc.get("phases"), fail)
    try:
        return Topology.build(name, [Operator(**o) for o in ops], streams, phases)
    except TopologyError as exc:
        raise SpecError(path, exc.field_path, exc.problem) from None


def _phases(raw: Any, fail) -> list[Phase]:
    """``phases: [{at, operators: [{name, FIELD: VALUE...}], streams: [{from, to, FIELD: VALUE...}]}]``."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        fail("phases", f"must be a list, got {type(raw).__name__}")
    out = []
    for k, item in enumerate(raw):
        where = f"phases[{k}]"
        rec = _record(item, where, PHASE_FIELDS, ("at",), fail)
        entries = {}
        for part, schema, key in (("operators", PHASE_OPERATOR_SCHEMA, ("name",)),
                                  ("streams", PHASE_STREAM_SCHEMA, ("from", "to"))):
            value = rec.get(part) or []
            if not isinstance(value, list):
                fail(f"{where}.{part}", f"must be a list, got {type(value).__name__}")
            changes = {}
            for i, entry in enumerate(value):
                fields = _record(entry, f"{where}.{part}[{i}]", schema, key, fail)
                name = tuple(fields.pop(k) for k in key)
                name = name[0] if len(name) == 1 else name
                if name in changes:
                    fail(f"{where}.{part}[{i}]", f"{quote(name)} is named twice in this phase")
                if not fields:
                    fail(f"{where}.{part}[{i}]", "changes nothing (give a field to change)")
                changes[name] = fields
            entries[part] = changes
        out.append(Phase(rec["at"], entries["operators"], entries["streams"]))
    return out


def topology_to_dict(topo: Topology) -> dict:
    defaults_op = {f.name: f.default for f in dc_fields(Operator)}
    defaults_st = {f.name: f.default for f in dc_fields(Stream)}
    ops = [{k: getattr(op, k) for k in defaults_op if k in ("name", "parallelism") or getattr(op, k) != defaults_op[k]} for op in topo.operators]
    streams = []
    for s in topo.streams:
        rec = {"from": s.src, "to": s.dst, "grouping": s.grouping}
        rec.update({k: getattr(s, k) for k in defaults_st if k not in ("src", "dst", "grouping") and getattr(s, k) != defaults_st[k]})
        streams.append(rec)
    doc = {"name": topo.name, "operators": ops, "streams": streams}
    if topo.phases:
        doc["phases"] = [{"at": ph.at,
                          "operators": [{"name": name, **changes} for name, changes in ph.operators.items()],
                          "streams": [{"from": src, "to": dst, **changes} for (src, dst), changes in ph.streams.items()]}
                         for ph in topo.phases]
    topology_from_dict(doc, f"topology {topo.name[:60]!r} as written")   # what streamplace writes, it can read
    return doc


def load_topology(path: str | os.PathLike) -> Topology:
    return topology_from_dict(read_document(path), path)


# ---------------------------------------------------------------------- cluster
def cluster_from_dict(doc: Any, path: str | os.PathLike = "<cluster>") -> Cluster:
    fail = _failer(path)
    name = _named_mapping(doc, path, "cluster", ("name", "nodes", "groups"), fail)
    if ("nodes" in doc) == ("groups" in doc):
        fail("", "give exactly one of nodes or groups")
    nodes: list[Node] = []
    if "nodes" in doc:
        for i, n in enumerate(_list(doc, "nodes", fail)):
            nodes.append(Node(**_cores_from_percent(_record(n, f"nodes[{i}]", NODE_FIELDS, ("name", "capacity"), fail),
                                                    f"nodes[{i}]", "cores", fail)))
    else:
        groups = [_cores_from_percent(_record(g, f"groups[{i}]", GROUP_FIELDS, ("capacity", "count"), fail), f"groups[{i}]",
                                      "cores", fail) for i, g in enumerate(_list(doc, "groups", fail))]
        total = 0
        for i, g in enumerate(groups):
            if g["count"] < 0:
                fail(f"groups[{i}].count", f"must be >= 0, got {g['count']}")
            total += g["count"]
        if total > MAX_NODES:
            fail("groups", f"the cluster has {total:,} nodes (limit {MAX_NODES:,})")
        try:
            check_cluster_size(total, sum(g["count"] * g.get("slots", DEFAULT_SLOTS) for g in groups), "groups")
        except ClusterError as exc:
            fail(exc.field_path, exc.problem)
        width = max(2, len(str(max(total - 1, 0))))
        for g in groups:
            count, prefix = g.pop("count"), g.pop("prefix", "node")
            for _ in range(count):
                nodes.append(Node(name=f"{prefix}{len(nodes):0{width}d}", **g))
    try:
        return Cluster.build(name, nodes)
    except ClusterError as exc:
        raise SpecError(path, exc.field_path, exc.problem) from None


def cluster_to_dict(cluster: Cluster) -> dict:
    defaults = {f.name: f.default for f in dc_fields(Node)}
    doc = {"name": cluster.name, "nodes": [
        {k: getattr(n, k) for k in defaults if k in ("name", "capacity") or getattr(n, k) != defaults[k]} for n in cluster.nodes]}
    cluster_from_dict(doc, f"cluster {cluster.name[:60]!r} as written")   # what streamplace writes, it can read
    return doc


def load_cluster(path: str | os.PathLike) -> Cluster:
    return cluster_from_dict(read_document(path), path)


# ---------------------------------------------------------------------- placement
def placement_targets(doc: Any, path: str | os.PathLike = "<placement>") -> dict[str, tuple[str, int]]:
    """Task label -> (node, worker) of a placement document: ``{label: {node, worker}}`` (``worker``
    defaults to 0, a bare node name works too), ``{"placement": {...}}`` or a ``schedule`` JSON
    result. Labels are checked against a topology by :func:`placement_from_dict`."""
    fail = _failer(path)
    if isinstance(doc, dict) and "placement" in doc and not isinstance(doc["placement"], dict):
        status = f" (the result's status: {quote(doc['status'])})" if "status" in doc else ""
        fail("placement", f"must map task labels op[i] to {{node, worker}}, got {quote(doc['placement'])}{status}")
    if isinstance(doc, dict) and "placement" not in doc and {"scheduler", "status"} <= set(doc):
        fail("placement", f"missing: a result of status {quote(doc['status'])} without a placement")
    if isinstance(doc, dict) and "placement" not in doc and {"operators", "streams"} & set(doc):
        fail("", "a topology spec, not a placement (task labels op[i] mapped to {node, worker})")
    if isinstance(doc, dict) and isinstance(doc.get("placement"), dict):
        doc = doc["placement"]
        prefix = "placement."
    else:
        prefix = ""
    if not isinstance(doc, dict) or not doc:
        fail(prefix.rstrip("."), "a placement must map task labels op[i] to {node, worker}")
    targets = {}
    for label, entry in doc.items():
        where = f"{prefix}{label}"
        if isinstance(entry, str):
            entry = {"node": entry}
        rec = _record(entry, where, {"node": _string, "worker": _integer}, ("node",), fail)
        targets[str(label)] = (rec["node"], rec.get("worker", 0))
    return targets


def _check_worker(where: str, node: str, worker: int, cluster: Cluster, fail) -> None:
    """``worker`` is one of node ``node``'s worker slots (0..slots-1)."""
    slots = int(cluster.slots[cluster.index[node]])
    if not 0 <= worker < slots:
        fail(f"{where}.worker", f"worker {worker} of node {quote(node)}, which has {slots} worker slot(s): 0..{slots - 1}")


def check_target_workers(targets: dict[str, tuple[str, int]], cluster: Cluster, path: str | os.PathLike) -> None:
    """Every target of a running placement (:func:`placement_targets`) on a node of ``cluster``
    names one of its workers; a node the cluster no longer has is the caller's to handle."""
    fail = _failer(path)
    for label, (name, w) in targets.items():
        if name in cluster.index:
            _check_worker(label, name, w, cluster, fail)


def placement_from_dict(doc: Any, topo: Topology, cluster: Cluster, path: str | os.PathLike = "<placement>") -> Placement:
    """The :class:`Placement` of a placement document (:func:`placement_targets`) for ``topo`` on ``cluster``."""
    fail = _failer(path)
    prefix = "placement." if isinstance(doc, dict) and isinstance(doc.get("placement"), dict) else ""
    n = topo.n_tasks
    node = [-1] * n
    worker = [0] * n
    for label, (name, w) in placement_targets(doc, path).items():
        where = f"{prefix}{label}"
        try:
            t = topo.task_id(label)
        except KeyError:
            fail(where, f"unknown task {quote(label)} (labels are op[i] with op an operator of {quote(topo.name)})")
        if name not in cluster.index:
            fail(f"{where}.node", f"unknown node {quote(name)}")
        _check_worker(where, name, w, cluster, fail)
        node[t] = cluster.index[name]
        worker[t] = w
    missing = [topo.task_labels[t] for t in range(n) if node[t] < 0]
    if missing:
        fail(prefix.rstrip(".") or "placement", f"{len(missing)} task(s) not placed, first {missing[0]}")
    placement = Placement(node=node, worker=worker)
    errors = placement.structural_errors(n, cluster)
    if errors:
        fail(prefix.rstrip(".") or "placement", errors[0])
    return placement


def load_placement(path: str | os.PathLike, topo: Topology, cluster: Cluster) -> Placement:
    return placement_from_dict(read_document(path), topo, cluster, path)


__all__ = [
    "SpecError", "read_document", "write_document", "atomic_write_bytes", "atomic_write_text", "topology_from_dict",
    "topology_to_dict", "load_topology", "cluster_from_dict", "cluster_to_dict", "load_cluster",
    "placement_targets", "placement_from_dict", "load_placement", "check_target_workers", "PlacementError",
]

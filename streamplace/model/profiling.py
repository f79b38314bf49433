"""Profiling input of the throughput scheduler ([N] Sec. 5.2, Eq. 5; docs/schedulers.md#throughput).

A profiling spec says, for every (operator type, machine type), how much CPU one tuple costs
(``e``, seconds per tuple; [N] Table 3 lists them, in ms as :mod:`streamplace.workloads.nasiri`
explains) and how much a task costs regardless of its rate
(``MET``, percent of a machine), plus the machine types (with counts) and the initial
topology input rate ``R0``. The scheduler predicts the CPU use of a task in percent of its
machine ([N] Eq. 5 with the units made explicit)::

    TCU = 100 * e * IR / cores + MET          (e in s/tuple, IR in tuples/s)

``cores`` (default 1) says how many CPU-seconds per second the machine offers; with the
default, ``e`` is read as a share of the whole machine, which is how [N]'s Table 3 values are
used in its simulations. [N] publishes no MET values: ``met_default`` (1 %) applies to every
pair the ``MET`` table leaves out.

YAML/JSON form (loaded with :func:`load_profiling`; errors are one-line :class:`SpecError`)::

    machine_types:
      - {name: machine1, count: 2, cores: 1, max_tasks: 10}   # count, cores, max_tasks optional
      - {name: machine2, count: 2}
    operators: {spout: lowCompute, bolt3: highCompute}         # optional: operator -> e row
    e:                                                         # seconds per tuple
      lowCompute:  {machine1: 0.0581, machine2: 0.107}
      highCompute: {machine1: 0.1915, machine2: 0.3449}
    MET: {highCompute: {machine1: 2.5}}                        # optional, percent per task
    met_default: 1.0
    R0: 1.0

An operator uses the ``e``/``MET`` row named by ``operators`` or, if absent there, the row
named like the operator. ``max_tasks`` is [N] Eq. 1's k_j: at most that many tasks per machine
of the type. A zero MET on a type without ``max_tasks`` is refused: the search could then keep
adding ever smaller instances without end.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..files import quote
from .cluster import Cluster, Node
from .specs import SpecError, _failer, _integer, _number, _record, _string, read_document
from .topology import Topology

DEFAULT_MET = 1.0  # percent of a machine per task; [N] gives no values
DEFAULT_R0 = 1.0   # tuples/s
MACHINE_FIELDS = {"name": _string, "count": _integer, "cores": _number, "max_tasks": _integer, "description": _string}
TOP_FIELDS = ("machine_types", "operators", "e", "MET", "met_default", "R0")


@dataclass(frozen=True)
class MachineType:
    name: str
    count: int | None = None
    cores: float = 1.0
    max_tasks: int | None = None
    description: str | None = None


@dataclass(frozen=True, eq=False)
class Profiling:
    """Machine types, ``e[row][type]`` (s/tuple), ``met[row][type]`` (%), ``r0`` (tuples/s)."""

    machine_types: tuple[MachineType, ...]
    e: dict[str, dict[str, float]]
    met: dict[str, dict[str, float]] = field(default_factory=dict)
    met_default: float = DEFAULT_MET
    r0: float = DEFAULT_R0
    operators: dict[str, str] = field(default_factory=dict)
    source: str = "<profiling>"

    @property
    def type_names(self) -> list[str]:
        return [m.name for m in self.machine_types]

    def machine_type(self, name: str) -> MachineType:
        return next(m for m in self.machine_types if m.name == name)

    def row_of(self, operator: str) -> str:
        """The e/MET row (operator type) an operator uses."""
        return self.operators.get(operator, operator)

    def e_of(self, row: str, machine_type: str) -> float:
        return self.e[row][machine_type]

    def met_of(self, row: str, machine_type: str) -> float:
        return self.met.get(row, {}).get(machine_type, self.met_default)

    def check_topology(self, topology: Topology) -> None:
        """SpecError if an operator of ``topology`` has no ``e`` row."""
        for op in topology.operators:
            row = self.row_of(op.name)
            if row not in self.e:
                where = f"operators.{op.name}" if op.name in self.operators else "e"
                raise SpecError(self.source, where, f"no e row {quote(row)} for operator {quote(op.name)} of topology {quote(topology.name)}")

    def cluster(self, name: str = "profiling", *, capacity: float = 100.0) -> Cluster:
        """One node per machine from the types' counts, named ``<type>-NN``, one worker slot each."""
        missing = [m.name for m in self.machine_types if m.count is None]
        if missing:
            raise SpecError(self.source, "machine_types",
                            f"type {missing[0]!r} has no count, so no cluster can be built from the profiling")
        nodes = [Node(name=f"{m.name}-{i:02d}", capacity=capacity, slots=1, machine_type=m.name, cores=m.cores)
                 for m in self.machine_types for i in range(m.count)]
        if not nodes:
            raise SpecError(self.source, "machine_types", "every count is 0: no machines")
        return Cluster.build(name, nodes)


def profiling_from_dict(doc: Any, path: str | os.PathLike = "<profiling>") -> Profiling:
    fail = _failer(path)
    if not isinstance(doc, dict):
        fail("", f"a profiling spec must be a mapping with machine_types and e, got {type(doc).__name__}")
    for key in doc:
        if key not in TOP_FIELDS:
            fail(str(key), f"unknown field (expected one of {', '.join(TOP_FIELDS)})")
    raw_types = doc.get("machine_types")
    if not isinstance(raw_types, list) or not raw_types:
        fail("machine_types", "must be a non-empty list of {name, count, cores, max_tasks}")
    types = []
    for i, item in enumerate(raw_types):
        where = f"machine_types[{i}]"
        rec = _record(item, where, MACHINE_FIELDS, ("name",), fail)
        if rec.get("count", 0) < 0:
            fail(f"{where}.count", f"must be >= 0, got {rec['count']}")
        if "cores" in rec and rec["cores"] <= 0:
            fail(f"{where}.cores", f"must be > 0, got {rec['cores']}")
        if rec.get("max_tasks", 1) < 1:
            fail(f"{where}.max_tasks", f"must be >= 1, got {rec['max_tasks']}")
        if any(t.name == rec["name"] for t in types):
            fail(f"{where}.name", f"duplicate machine type {quote(rec['name'])}")
        types.append(MachineType(**rec))
    names = [t.name for t in types]
    e = _table(doc.get("e"), "e", names, fail, positive=True, complete=True)
    if not e:
        fail("e", "needs at least one operator row")
    met = _table(doc.get("MET") or {}, "MET", names, fail, positive=False, complete=False)
    for row in met:
        if row not in e:
            fail(f"MET.{row}", f"no e row {quote(row)} for this MET row")
    met_default = _number(doc.get("met_default", DEFAULT_MET), "met_default", fail)
    r0 = _number(doc.get("R0", DEFAULT_R0), "R0", fail)
    if r0 <= 0:
        fail("R0", f"must be > 0, got {r0:g}")
    operators = doc.get("operators") or {}
    if not isinstance(operators, dict):
        fail("operators", f"must map operator names to e rows, got {type(operators).__name__}")
    operators = {_string(k, f"operators.{k}", fail): _string(v, f"operators.{k}", fail) for k, v in operators.items()}
    for op, row in operators.items():
        if row not in e:
            fail(f"operators.{op}", f"unknown e row {quote(row)} (rows: {', '.join(e)})")
    prof = Profiling(machine_types=tuple(types), e=e, met=met, met_default=met_default, r0=r0,
                     operators=operators, source=str(path))
    for t in types:
        if t.max_tasks is None:
            for row in e:
                if prof.met_of(row, t.name) == 0:
                    where = f"MET.{row}.{t.name}" if t.name in met.get(row, {}) else "met_default"
                    fail(where, f"MET 0 on machine type {quote(t.name)} needs max_tasks on that type "
                                "(else instances could be added forever)")
    return prof


def _table(value, key, names, fail, *, positive: bool, complete: bool) -> dict[str, dict[str, float]]:
    if not isinstance(value, dict):
        fail(key, f"must map operator types to {{machine type: value}}, got {type(value).__name__}")
    table = {}
    for row, cells in value.items():
        where = f"{key}.{row}"
        _string(row, where, fail)
        if not isinstance(cells, dict):
            fail(where, f"must map machine types to numbers, got {type(cells).__name__}")
        out = {}
        for mtype, v in cells.items():
            if mtype not in names:
                fail(f"{where}.{mtype}", f"unknown machine type (declared: {', '.join(names)})")
            out[mtype] = _number(v, f"{where}.{mtype}", fail)
            if positive and out[mtype] <= 0:
                fail(f"{where}.{mtype}", f"must be > 0, got {quote(v)}")
        if complete:
            for mtype in names:
                if mtype not in out:
                    fail(where, f"missing machine type {quote(mtype)}")
        table[row] = out
    return table


def profiling_to_dict(prof: Profiling) -> dict:
    types = [{k: v for k, v in vars(t).items() if v is not None and not (k == "cores" and v == 1.0)} for t in prof.machine_types]
    doc: dict[str, Any] = {"machine_types": types}
    if prof.operators:
        doc["operators"] = dict(prof.operators)
    doc["e"] = {row: dict(cells) for row, cells in prof.e.items()}
    if prof.met:
        doc["MET"] = {row: dict(cells) for row, cells in prof.met.items()}
    doc["met_default"] = prof.met_default
    doc["R0"] = prof.r0
    return doc


def load_profiling(path: str | os.PathLike) -> Profiling:
    return profiling_from_dict(read_document(path), path)


def derive_profiling(topology: Topology, cluster: Cluster, *, met_default: float = DEFAULT_MET,
                     r0: float = DEFAULT_R0) -> Profiling:
    """A profiling built from the operators' ``cpu_per_tuple`` and the cluster's machine types.

    ``cpu_per_tuple`` is CPU seconds per tuple (a number, or a map machine type -> seconds);
    ``cores`` per type come from the nodes (the first node of each type). Raises ValueError
    naming the first operator or machine type that lacks a value.
    """
    counts: dict[str, int] = {}
    cores: dict[str, float] = {}
    for node in cluster.nodes:
        counts[node.machine_type] = counts.get(node.machine_type, 0) + 1
        cores.setdefault(node.machine_type, node.cores)
    e: dict[str, dict[str, float]] = {}
    for op in topology.operators:
        cpu = op.cpu_per_tuple
        if cpu is None:
            raise ValueError(f"operator {quote(op.name)} has no cpu_per_tuple "
                             "(give a profiling spec or cpu_per_tuple on every operator)")
        row = {t: (cpu.get(t) if isinstance(cpu, dict) else cpu) for t in counts}
        missing = [t for t, v in row.items() if v is None]
        if missing:
            raise ValueError(f"operator {quote(op.name)}: cpu_per_tuple has no value for machine type {quote(missing[0])}")
        if min(row.values()) <= 0:
            raise ValueError(f"operator {quote(op.name)}: cpu_per_tuple must be > 0")
        e[op.name] = row
    if met_default <= 0:
        raise ValueError("met_default must be > 0 when the profiling is derived (no max_tasks)")
    types = tuple(MachineType(name=t, count=n, cores=cores[t] or 1.0) for t, n in counts.items())
    return Profiling(machine_types=types, e=e, met_default=met_default, r0=r0, source=f"<cpu_per_tuple of {topology.name}>")


__all__ = ["DEFAULT_MET", "DEFAULT_R0", "MachineType", "Profiling", "derive_profiling", "load_profiling",
           "profiling_from_dict", "profiling_to_dict"]

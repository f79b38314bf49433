"""Logical streaming topologies: operators, streams and the tasks they expand to.

docs/definitions.md. A topology is a DAG of operators; each operator runs ``parallelism``
tasks. Tasks are numbered ``0..n-1``, contiguous per operator in declaration order, and
labelled ``op[i]``. Streams connect an upstream operator to a downstream one with a
grouping that decides which downstream task receives each tuple.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

import numpy as np

from ..files import quote
from .errors import FieldError, check_non_negative, index_names
from ..memory import describe_limit, memory_limit

GROUPINGS = ("shuffle", "fields", "global", "all", "local_or_shuffle")
ROLES = ("source", "compute", "sink")
KEY_DISTRIBUTIONS = ("uniform", "zipf")


MAX_KEYS = 10_000_000
KEY_BYTES = 40  # per key of a zipf fields stream: key, probability, hash and target arrays (graph.key_shares)


class TopologyError(FieldError):
    """A topology that violates a structural rule; ``field`` names the offending path."""


def _phase_fields(changes: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in changes:
        if key not in allowed:
            raise TopologyError(f"{where}.{key}", f"a phase cannot change this field (it can change "
                                                 f"{', '.join(allowed)})")


@dataclass(frozen=True)
class Operator:
    """One logical operator (Storm component).

    ``load`` is the per-task load in the same unit as node capacity (the papers use 1 per
    task). ``cpu_per_tuple`` is CPU seconds per input tuple on a reference machine, or a
    mapping machine type -> seconds. ``source_rate`` is the total tuples/s a source operator
    emits (split evenly across its tasks); it defaults to 1.
    """

    name: str
    parallelism: int
    role: str = "compute"
    selectivity: float = 1.0
    tuple_bytes: float = 100.0
    cpu_per_tuple: float | dict[str, float] | None = None
    memory_mb: float = 0.0
    cpu_demand: float = 0.0
    load: float = 1.0
    source_rate: float = 1.0


@dataclass(frozen=True)
class Stream:
    """A directed stream ``src -> dst`` with its grouping.

    ``pair_rate`` fixes the rate between every communicating task pair (the papers'
    micro-benchmarks use 1); without it rates follow the flow (docs/definitions.md).
    For ``fields`` grouping the key distribution decides the shares: ``uniform`` (exact
    equal shares) or ``zipf`` with exponent ``zipf_s`` over ``num_keys`` keys hashed stably
    to downstream tasks. ``shares``, when set, is the fraction each downstream task was measured to
    receive, and replaces the key distribution's (calibration sets it from a run; it is not a spec
    field: Storm routes by key, so a spec states keys).
    """

    src: str
    dst: str
    grouping: str = "shuffle"
    key: str | None = None
    pair_rate: float | None = None
    key_distribution: str = "uniform"
    zipf_s: float = 1.0
    num_keys: int = 1000
    shares: tuple[float, ...] | None = None


#: the fields a phase may change: what a running spec topology can switch without redeploying
#: (a task's output fields and the grouping stay as submitted)
PHASE_OPERATOR_FIELDS = ("source_rate", "selectivity", "cpu_per_tuple", "tuple_bytes")
PHASE_STREAM_FIELDS = ("key_distribution", "zipf_s", "num_keys")


@dataclass(frozen=True)
class Phase:
    """From ``at`` seconds after the topology's submission on, the named operators and streams
    take the given field values (changes accumulate over the phases before it).

    ``operators`` maps an operator name to its changed fields; ``streams`` maps a
    ``(from, to)`` pair to its changed fields (copied on construction; treat them as read-only).
    """

    at: float
    operators: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    streams: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "operators", {k: dict(v) for k, v in self.operators.items()})
        object.__setattr__(self, "streams", {tuple(k): dict(v) for k, v in self.streams.items()})


@dataclass(frozen=True)
class Topology:
    """A validated operator DAG. Construct through :meth:`build` to get validation.

    ``phases`` change some fields while the job runs (:class:`Phase`); the operators and streams
    are the first phase, which is what the model and the schedulers read. :meth:`at` is the
    topology of a later moment.
    """

    name: str
    operators: tuple[Operator, ...]
    streams: tuple[Stream, ...] = field(default_factory=tuple)
    phases: tuple[Phase, ...] = field(default_factory=tuple)

    @classmethod
    def build(cls, name: str, operators, streams=(), phases=()) -> "Topology":
        topo = cls(name=name, operators=tuple(operators), streams=tuple(streams), phases=tuple(phases))
        topo.validate()
        return topo

    def at(self, seconds: float) -> "Topology":
        """The topology as it runs ``seconds`` after submission: every phase that has begun
        applied, in order, and no phases left."""
        ops = {op.name: op for op in self.operators}
        streams = {(st.src, st.dst): st for st in self.streams}
        for phase in self.phases:
            if phase.at > seconds:
                break
            for name, changes in phase.operators.items():
                ops[name] = dataclasses.replace(ops[name], **changes)
            for pair, changes in phase.streams.items():
                streams[pair] = dataclasses.replace(streams[pair], **changes)
        return Topology.build(self.name, ops.values(), streams.values())

    def without_phases(self) -> "Topology":
        """The first phase alone."""
        return dataclasses.replace(self, phases=()) if self.phases else self

    # ------------------------------------------------------------------ validation
    def validate(self) -> None:
        """Raise :class:`TopologyError` naming the first offending field."""
        seen = index_names(self.operators, "operators", "operator", "topology", TopologyError)
        for i, op in enumerate(self.operators):
            where = f"operators[{i}]"
            if isinstance(op.parallelism, bool) or not isinstance(op.parallelism, int):
                raise TopologyError(f"{where}.parallelism", "must be an integer")
            if op.parallelism < 1:
                raise TopologyError(f"{where}.parallelism", f"must be >= 1, got {op.parallelism}")
            if op.role not in ROLES:
                raise TopologyError(f"{where}.role", f"unknown role {quote(op.role)} (expected one of {', '.join(ROLES)})")
            check_non_negative(op, ("selectivity", "tuple_bytes", "memory_mb", "cpu_demand", "load", "source_rate"), where,
                               TopologyError)
        pairs = set()
        for i, s in enumerate(self.streams):
            where = f"streams[{i}]"
            for end in ("src", "dst"):
                name = getattr(s, end)
                if name not in seen:
                    label = "from" if end == "src" else "to"
                    raise TopologyError(f"{where}.{label}", f"unknown operator {quote(name)}")
            if s.src == s.dst:
                raise TopologyError(f"{where}", f"self-loop on operator {quote(s.src)}")
            if (s.src, s.dst) in pairs:
                raise TopologyError(f"{where}", f"duplicate stream {quote(s.src)} -> {quote(s.dst)}")
            pairs.add((s.src, s.dst))
            if s.grouping not in GROUPINGS:
                raise TopologyError(f"{where}.grouping", f"unknown grouping {quote(s.grouping)} (expected one of {', '.join(GROUPINGS)})")
            if s.pair_rate is not None and (not np.isfinite(s.pair_rate) or s.pair_rate < 0):
                raise TopologyError(f"{where}.pair_rate", f"must be a finite number >= 0, got {s.pair_rate}")
            if s.key_distribution not in KEY_DISTRIBUTIONS:
                raise TopologyError(f"{where}.key_distribution", f"unknown distribution {quote(s.key_distribution)} (expected one of {', '.join(KEY_DISTRIBUTIONS)})")
            if s.num_keys < 1:
                raise TopologyError(f"{where}.num_keys", f"must be >= 1, got {s.num_keys}")
            if s.num_keys > MAX_KEYS:
                raise TopologyError(f"{where}.num_keys", f"must be at most {MAX_KEYS:,} (zipf shares no longer change "
                                                         f"by then), got {s.num_keys:,}")
            if s.shares is not None:
                n_dst = self.operators[seen[s.dst]].parallelism
                if s.grouping != "fields" or len(s.shares) != n_dst or not all(np.isfinite(s.shares)) \
                        or min(s.shares) < 0 or abs(sum(s.shares) - 1) > 1e-6:
                    raise TopologyError(f"{where}.shares", f"must be {n_dst} fractions >= 0 summing to 1, one per "
                                                           f"task of {quote(s.dst)}, on a fields stream")
            if s.grouping == "fields" and s.key_distribution != "uniform":
                need, limit = KEY_BYTES * s.num_keys, memory_limit()
                if need > limit:
                    raise TopologyError(f"{where}.num_keys", f"{s.num_keys:,} keys need about {need / 2**30:.1f} GiB "
                                                             f"of memory; the limit is {describe_limit(limit)}")
        cycle = self._find_cycle()
        if cycle:
            raise TopologyError("streams", "cycle " + " -> ".join(cycle) + " (a topology must be a DAG)")
        self._validate_phases(seen, pairs)

    def _validate_phases(self, names: dict[str, int], pairs: set) -> None:
        """Each phase starts after the one before (and after 0), names operators and streams the
        topology has and fields a phase may change, and leaves a valid topology."""
        previous = 0.0
        for k, phase in enumerate(self.phases):
            where = f"phases[{k}]"
            if not (np.isfinite(phase.at) and phase.at > previous):
                raise TopologyError(f"{where}.at", f"must be a number of seconds > {previous:g} (phases start in "
                                                   f"order, after submission), got {phase.at}")
            previous = phase.at
            for name, changes in phase.operators.items():
                if name not in names:
                    raise TopologyError(f"{where}.operators", f"unknown operator {quote(name)}")
                _phase_fields(changes, PHASE_OPERATOR_FIELDS, f"{where}.operators[{quote(name)}]")
            for (src, dst), changes in phase.streams.items():
                if (src, dst) not in pairs:
                    raise TopologyError(f"{where}.streams", f"no stream {quote(src)} -> {quote(dst)}")
                _phase_fields(changes, PHASE_STREAM_FIELDS, f"{where}.streams[{quote(src)} -> {quote(dst)}]")
        for k, phase in enumerate(self.phases):
            try:
                self.at(phase.at)
            except TopologyError as exc:
                raise TopologyError(f"phases[{k}]", f"leaves {exc.field_path}: {exc.problem}") from None

    def _find_cycle(self) -> list[str] | None:
        children: dict[str, list[str]] = {op.name: [] for op in self.operators}
        for s in self.streams:
            children[s.src].append(s.dst)
        state: dict[str, int] = {}
        for root in children:
            if root in state:
                continue
            stack = [(root, iter(children[root]))]
            path = [root]
            state[root] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[node] = 2
                    stack.pop()
                    path.pop()
                elif state.get(nxt) == 1:
                    return path[path.index(nxt):] + [nxt]
                elif nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, iter(children[nxt])))
                    path.append(nxt)
        return None

    # ------------------------------------------------------------------ tasks
    @cached_property
    def index(self) -> dict[str, int]:
        """Operator name -> position in declaration order."""
        return {op.name: i for i, op in enumerate(self.operators)}

    @cached_property
    def offsets(self) -> np.ndarray:
        """Task id of each operator's first task; ``offsets[-1]`` is the task count."""
        return np.concatenate([[0], np.cumsum([op.parallelism for op in self.operators])]).astype(np.int64)

    @property
    def n_tasks(self) -> int:
        return int(self.offsets[-1])

    def tasks_of(self, name: str) -> range:
        i = self.index[name]
        return range(int(self.offsets[i]), int(self.offsets[i + 1]))

    @cached_property
    def operator_of_task(self) -> np.ndarray:
        """Operator index of every task."""
        return np.repeat(np.arange(len(self.operators)), [op.parallelism for op in self.operators])

    @cached_property
    def task_labels(self) -> list[str]:
        return [f"{op.name}[{i}]" for op in self.operators for i in range(op.parallelism)]

    def task_id(self, label: str) -> int:
        """Task id of a label ``op[i]``; raises KeyError with the label if unknown."""
        name, sep, rest = label.partition("[")
        if not sep or not rest.endswith("]") or name not in self.index:
            raise KeyError(label)
        digits = rest[:-1]
        if not digits.isascii() or not digits.isdigit() or str(int(digits)) != digits:  # one form: op[0], never op[00], op[ 0]
            raise KeyError(label)
        i = int(digits)
        op = self.operators[self.index[name]]
        if not 0 <= i < op.parallelism:
            raise KeyError(label)
        return int(self.offsets[self.index[name]]) + i

    @cached_property
    def task_loads(self) -> np.ndarray:
        return np.repeat([float(op.load) for op in self.operators], [op.parallelism for op in self.operators])

    # ------------------------------------------------------------------ operator graph
    @cached_property
    def operator_links(self) -> np.ndarray:
        """Operator x operator (declaration order): 1.0 where a stream runs from the first to the second."""
        links = np.zeros((len(self.operators), len(self.operators)))
        for s in self.streams:
            links[self.index[s.src], self.index[s.dst]] = 1.0
        return links

    def upstream(self, name: str) -> list[Stream]:
        return [s for s in self.streams if s.dst == name]

    def downstream(self, name: str) -> list[Stream]:
        return [s for s in self.streams if s.src == name]

    @cached_property
    def topological_order(self) -> list[str]:
        """Operators in a topological order, ties by declaration order (Kahn)."""
        indeg = {op.name: 0 for op in self.operators}
        for s in self.streams:
            indeg[s.dst] += 1
        ready = [op.name for op in self.operators if indeg[op.name] == 0]
        order: list[str] = []
        while ready:
            ready.sort(key=self.index.__getitem__)
            name = ready.pop(0)
            order.append(name)
            for s in self.downstream(name):
                indeg[s.dst] -= 1
                if indeg[s.dst] == 0:
                    ready.append(s.dst)
        return order

    def is_source(self, name: str) -> bool:
        op = self.operators[self.index[name]]
        return op.role == "source" or not self.upstream(name)

    @cached_property
    def source_task_mask(self) -> np.ndarray:
        """Per task: whether its operator is a source (read-only)."""
        mask = np.array([self.is_source(op.name) for op in self.operators], dtype=bool)[self.operator_of_task]
        mask.setflags(write=False)
        return mask

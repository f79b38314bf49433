"""What changes between two placements of one job: the tasks that move (to another node, or to
another worker of the same node), the nodes touched and the change in inter-node traffic.

Works on task label -> (node, worker) maps (:func:`~streamplace.model.specs.placement_targets`),
so two plan files can be compared without their topology; given the problem, the traffic change
is computed from the task graph (:func:`~streamplace.evaluate.metrics.inter_node_cost`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass

from ..model import Placement, Problem
from .metrics import inter_node_cost

Targets = dict[str, tuple[str, int]]


class DiffError(ValueError):
    """The two placements are not of the same tasks."""


@dataclass(frozen=True)
class Move:
    task: str
    before: tuple[str, int]   # (node, worker)
    after: tuple[str, int]

    def to_dict(self) -> dict:
        return {"task": self.task, "from": {"node": self.before[0], "worker": self.before[1]},
                "to": {"node": self.after[0], "worker": self.after[1]}}


@dataclass(frozen=True)
class PlanDiff:
    """``moves``: every task whose node or worker differs, in task order; ``node_moves`` of them
    change node, ``worker_moves`` stay on their node in another worker; ``nodes_touched``: the
    nodes a task leaves, reaches or changes worker on; ``traffic_delta``: inter-node traffic of
    the second placement minus the first's (None when it cannot be known: without the job, or when
    a placement's traffic exceeds what a double holds; ``notes`` then says why)."""

    moves: tuple[Move, ...]
    nodes_touched: tuple[str, ...]
    traffic_delta: float | None = None
    notes: tuple[str, ...] = ()

    @property
    def node_moves(self) -> int:
        return sum(m.before[0] != m.after[0] for m in self.moves)

    @property
    def worker_moves(self) -> int:
        return len(self.moves) - self.node_moves

    def to_dict(self) -> dict:
        record = {"node_moves": self.node_moves, "worker_moves": self.worker_moves,
                  "nodes_touched": list(self.nodes_touched), "traffic_delta": self.traffic_delta,
                  "moves": [m.to_dict() for m in self.moves]}
        if self.notes:
            record["notes"] = list(self.notes)
        return record


def _natural(label: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.*)\[(\d+)\]", label)
    return (match.group(1), int(match.group(2))) if match else (label, -1)


def diff_targets(first: Targets, second: Targets, *, order: list[str] | None = None,
                 traffic_delta: float | None = None, names: tuple[str, str] = ("first", "second")) -> PlanDiff:
    """The diff of two label maps of the same tasks (``order``: the task order; default by
    operator name, then index). Raises :class:`DiffError` naming a task only one of them places."""
    for a, b, name in ((first, second, names[1]), (second, first, names[0])):
        extra = sorted(set(a) - set(b), key=_natural)
        if extra:
            raise DiffError(f"{extra[0]} is not placed by {name} ({len(extra)} task(s) differ): not the same job")
    labels = order if order is not None else sorted(first, key=_natural)
    moves = tuple(Move(t, first[t], second[t]) for t in labels if first[t] != second[t])
    touched = sorted({m.before[0] for m in moves} | {m.after[0] for m in moves})
    return PlanDiff(moves=moves, nodes_touched=tuple(touched), traffic_delta=traffic_delta)


def targets_of(problem: Problem, placement: Placement) -> Targets:
    names = [node.name for node in problem.cluster.nodes]
    return {label: (names[int(n)], int(w))
            for label, n, w in zip(problem.topology.task_labels, placement.node, placement.worker)}


def diff_placements(problem: Problem, first: Placement, second: Placement) -> PlanDiff:
    """The diff of two placements of ``problem``, with the inter-node traffic change (None, with a
    note, when it is not a finite number)."""
    delta = inter_node_cost(problem, second) - inter_node_cost(problem, first)
    diff = diff_targets(targets_of(problem, first), targets_of(problem, second), order=list(problem.topology.task_labels),
                        traffic_delta=delta if math.isfinite(delta) else None)
    if math.isfinite(delta):
        return diff
    return dataclasses.replace(diff, notes=("traffic_delta: the inter-node traffic of a placement exceeds the largest "
                                            "number a double holds (rates multiplied along the job), so its change is unknown",))


def diff_files(first: str | os.PathLike, second: str | os.PathLike, problem: Problem | None = None) -> PlanDiff:
    """The diff of two placement files (schedule results or label maps; ``streamplace diff``).
    With the job's ``problem`` both are checked against it and the traffic change comes from its
    task graph; without, from the files' ``inter_node_cost`` when both have one (else None).
    :class:`~..model.errors.InputError` when the files do not place the same tasks.

    >>> diff_files("even.json", "metis.json").node_moves      # doctest: +SKIP
    17
    """
    from ..model.errors import InputError
    from ..files import quote
    from ..model.specs import SpecError, load_placement, placement_targets, read_document
    try:
        if problem is not None:
            return diff_placements(problem, load_placement(first, problem.topology, problem.cluster),
                                   load_placement(second, problem.topology, problem.cluster))
        docs = [read_document(first), read_document(second)]
        costs = [d.get("inter_node_cost") if isinstance(d, dict) else None for d in docs]
        for path, cost in zip((first, second), costs):   # a result's own figure: a finite number >= 0, or none
            if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float))
                                     or not 0 <= cost < math.inf):   # a sum over streams: beyond any one number's bound
                raise SpecError(path, "inter_node_cost", f"must be a finite number >= 0, got {quote(cost)}")
        delta = costs[1] - costs[0] if all(c is not None for c in costs) else None
        return diff_targets(placement_targets(docs[0], first), placement_targets(docs[1], second),
                            traffic_delta=delta, names=(str(first), str(second)))
    except DiffError as exc:
        raise InputError(f"{first}, {second}: {exc}") from None

"""The L/F (locality/fairness-aware) job scheduler ([LF] Son & Moon 2020, Sec. 3.2, Alg. 3-5).

Two steps (docs/schedulers.md#lf):

1. **Pipeline extraction** ([LF] Alg. 3-4). While operators with unused tasks remain, start
   from the first of them in declaration order (the paper takes an "arbitrary" one; declaration
   order makes the result deterministic) and visit the operator graph depth first, predecessors
   before successors (each in stream declaration order), through operators that still have
   unused tasks, taking the lowest-index unused task of every visited operator. An operator
   whose tasks are all used is removed, so it splits the pipelines extracted after it: each
   extraction yields one connected run with at most one task per operator.
2. **Pipeline assignment** ([LF] Alg. 5). Slots in Storm's order (:func:`sort_slots`), the first
   ``workers`` of them; each pipeline, in extraction order, goes whole into one slot.

Deliberate deviation: Alg. 5 line 14 sends pipeline ``i`` to slot ``i mod r``. We send it to the
slot holding the fewest tasks so far (ties: earliest in the sorted slot order), which equals
``i mod r`` while there are no more pipelines than slots. With ``i mod r`` the star
configuration (parallelism 8,6,4,2,2,4,6,8 on 8 slots, 14 pipelines) puts pipelines 9-14 back
onto slots 1-6 next to instances of the same operators: coupling 12.7 against even's 1.0,
while [LF] Sec. 4.2 reports equal coupling everywhere. Least-loaded assignment reproduces
every Sec. 4.2 figure, at low and high parallelism (cohesion +3900 %, +71.78 %, +71.02 %,
+32.03 %, +59.45 %; equal coupling; ``benchmarks/lf_cohesion.py``).
The literal rule stays available as ``assignment="round_robin"``.

Which operator starts an extraction does not change the Sec. 4.2 figures under least-loaded
assignment (starting from the last remaining operator gives the same numbers); under
``i mod r`` it does (star: +71.34 % instead of +59.45 %).

Like ``even``, L/F ignores capacity (overloads are reported by the metrics, not refused).

Running time: at most one distinct run per operator, each a depth-first visit of the o operators
and s streams, O(o (o + s)); assigning the (at most n) pipelines to S slots through a heap,
O(n log S).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..files import quote
from ..model import Placement, Problem, Topology
from .base import Outcome, Scheduler, register
from .slots import sort_slots

ASSIGNMENTS = ("least_loaded", "round_robin")


@dataclass(frozen=True)
class Pipelines:
    """Pipelines as one flat task array: pipeline ``p`` is ``tasks[bounds[p]:bounds[p + 1]]``
    (tasks in visit order)."""

    tasks: np.ndarray
    bounds: np.ndarray

    def __len__(self) -> int:
        return int(self.bounds.shape[0] - 1)

    def __getitem__(self, p: int) -> np.ndarray:
        return self.tasks[self.bounds[p]:self.bounds[p + 1]]

    @cached_property
    def sizes(self) -> np.ndarray:
        return np.diff(self.bounds)

    @cached_property
    def pipeline_of_task(self) -> np.ndarray:
        owner = np.empty(self.tasks.shape[0], dtype=np.int64)
        owner[self.tasks] = np.repeat(np.arange(len(self)), self.sizes)
        return owner

    def labels(self, topo: Topology) -> list[list[str]]:
        names = topo.task_labels
        return [[names[t] for t in self[p].tolist()] for p in range(len(self))]


def _visit_order(start: int, alive: np.ndarray, neighbours: list[list[int]]) -> list[int]:
    """Operators one extraction visits: [LF] Alg. 4's recursion, written iteratively."""
    order: list[int] = []
    seen = np.zeros(alive.shape[0], dtype=bool)
    stack = [iter((start,))]
    while stack:
        op = next(stack[-1], None)
        if op is None:
            stack.pop()
        elif alive[op] and not seen[op]:
            seen[op] = True
            order.append(op)
            stack.append(iter(neighbours[op]))
    return order


def extract_pipelines(topo: Topology) -> Pipelines:
    """[LF] Alg. 3-4 with the first remaining operator as the start of every extraction.

    An extraction's visit order depends only on which operators are still alive, so the same
    run repeats until one of its operators is exhausted: each distinct run is computed once and
    repeated as a block (at most one block per operator).
    """
    index = topo.index
    neighbours = [[index[s.src] for s in topo.upstream(op.name)] + [index[s.dst] for s in topo.downstream(op.name)]
                  for op in topo.operators]
    left = np.array([op.parallelism for op in topo.operators], dtype=np.int64)
    offsets = topo.offsets
    blocks: list[np.ndarray] = []
    while (left > 0).any():
        run = np.array(_visit_order(int(np.flatnonzero(left)[0]), left > 0, neighbours), dtype=np.int64)
        repeat = int(left[run].min())
        first = offsets[run + 1] - left[run]  # lowest unused task of each operator in the run
        blocks.append(first[None, :] + np.arange(repeat)[:, None])
        left[run] -= repeat
    sizes = np.concatenate([np.full(b.shape[0], b.shape[1], dtype=np.int64) for b in blocks])
    return Pipelines(tasks=np.concatenate([b.ravel() for b in blocks]), bounds=np.concatenate([[0], np.cumsum(sizes)]))


def assign_pipelines(sizes: np.ndarray, r: int, assignment: str = "least_loaded") -> np.ndarray:
    """Slot rank (0..r-1 in sorted slot order) of every pipeline, in extraction order."""
    if assignment == "round_robin":
        return np.arange(sizes.shape[0]) % r
    heap = [(0, rank) for rank in range(r)]
    slot = np.empty(sizes.shape[0], dtype=np.int64)
    for p, size in enumerate(sizes.tolist()):
        load, rank = heapq.heappop(heap)
        slot[p] = rank
        heapq.heappush(heap, (load + size, rank))
    return slot


@register
@dataclass(frozen=True, kw_only=True)
class LFScheduler(Scheduler):
    """``workers``: number of worker slots the job requests (default: every slot);
    ``assignment``: ``least_loaded`` (ours, docs/schedulers.md#lf) or ``round_robin`` (the literal ``i mod r``)."""

    name = "lf"
    complexity = "O(o (o + s) + n log S)"
    respects_capacity = False
    workers: int | None = None
    assignment: str = "least_loaded"

    def __post_init__(self):
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        if self.assignment not in ASSIGNMENTS:
            raise ValueError(f"assignment must be one of {', '.join(ASSIGNMENTS)}, got {quote(self.assignment)}")

    def _schedule(self, problem: Problem) -> Outcome:
        slots = sort_slots(problem.cluster)
        r = len(slots) if self.workers is None else min(self.workers, len(slots))
        pipelines = extract_pipelines(problem.topology)
        chosen = slots[assign_pipelines(pipelines.sizes, r, self.assignment)[pipelines.pipeline_of_task]]
        placement = Placement(node=chosen[:, 0], worker=chosen[:, 1])
        return Outcome(placement=placement, details={"workers_used": int(min(r, len(pipelines))),
                                                     "pipelines": pipelines.labels(problem.topology)})

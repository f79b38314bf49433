"""Storm's default EvenScheduler ([LF] Alg. 1-2; docs/schedulers.md#even).

Slots sorted by :func:`sort_slots`; the first ``workers`` slots are used; the i-th task in
Storm's task order goes to slot ``i mod r``. Capacity is ignored, exactly as in Storm:
overloads are reported by the metrics, not refused.

Running time: sorting the tasks into Storm's order and the S worker slots, O(n log n + S log S)
for n tasks; the assignment itself is one vectorised step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import Placement, Problem
from .base import Outcome, Scheduler, register
from ..model.storm_ids import storm_task_order
from .slots import sort_slots


@register
@dataclass(frozen=True, kw_only=True)
class EvenScheduler(Scheduler):
    """``workers``: number of worker slots the job requests (default: every slot)."""

    name = "even"
    complexity = "O(n log n + S log S)"
    respects_capacity = False
    storm_default = True
    workers: int | None = None

    def __post_init__(self):
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")

    def _schedule(self, problem: Problem) -> Outcome:
        slots = sort_slots(problem.cluster)
        r = len(slots) if self.workers is None else min(self.workers, len(slots))
        order = storm_task_order(problem.topology)
        chosen = slots[np.arange(order.size) % r]
        node = np.empty(order.size, dtype=np.int64)
        worker = np.empty(order.size, dtype=np.int64)
        node[order], worker[order] = chosen[:, 0], chosen[:, 1]
        return Outcome(placement=Placement(node=node, worker=worker), details={"workers_used": int(min(r, order.size))})

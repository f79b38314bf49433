"""What a scheduling result's ``status`` says: one fixed set of values, each with its meaning.

A :class:`Status` is a ``str`` (``StrEnum``): JSON, CSV, Parquet and comparisons see its value,
``"optimal"`` and so on. Adding a status is one line here, its meaning beside it.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    HEURISTIC = "heuristic"
    INFEASIBLE = "infeasible"

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]


_MEANINGS = {
    Status.OPTIMAL: "proven: no placement sends less inter-node traffic",
    Status.FEASIBLE: "the best placement found when the time limit ran out; the lower bound is proven",
    Status.HEURISTIC: "a placement from a heuristic: no optimality claim",
    Status.INFEASIBLE: "no placement: the message says why (capacity, or the scheduler's limits)",
}

"""What a scheduling result's ``status`` says: one fixed set of values, each with its meaning.

A :class:`Status` is a ``str`` (``StrEnum``): JSON, CSV, Parquet and comparisons see its value,
``"optimal"`` and so on. Three statuses come with a placement (``optimal``, ``feasible``,
``heuristic``); the five others say why there is none, and the result's message says it in
words. Adding a status is one line here, its meaning beside it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class Status(StrEnum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    HEURISTIC = "heuristic"
    INFEASIBLE = "infeasible"
    NO_SOLUTION = "no_solution"
    NOT_APPLICABLE = "not_applicable"
    TOO_LARGE = "too_large"
    TIMED_OUT = "timed_out"

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]

    @property
    def placed(self) -> bool:
        """Whether a result with this status carries a placement."""
        return self in _PLACED


_PLACED = frozenset({Status.OPTIMAL, Status.FEASIBLE, Status.HEURISTIC})

_MEANINGS = {
    Status.OPTIMAL: "proven: no placement sends less inter-node traffic",
    Status.FEASIBLE: "the best placement found when the time limit ran out; the lower bound is proven",
    Status.HEURISTIC: "a placement from a heuristic: no optimality claim",
    Status.INFEASIBLE: "proven: no placement fits the nodes; the message names the resource",
    Status.NO_SOLUTION: "the heuristic found no placement within capacity; one may still exist",
    Status.NOT_APPLICABLE: "the scheduler's model does not cover this job; the message says what it needs",
    Status.TOO_LARGE: "the job exceeds the exact solver's size limit; the message names a scheduler that scales",
    Status.TIMED_OUT: "no placement was found within the time limit",
}


def has_placement(status: str) -> bool:
    """Whether a record's ``status`` value (a plain string in JSON, CSV or Parquet) comes with a placement."""
    return Status(status).placed


class NoPlacement(Exception):
    """Raised inside a scheduler that ends without a placement; the class says which status."""

    status: ClassVar[Status] = Status.NO_SOLUTION


class NoSolution(NoPlacement):
    """The scheduler's search found no placement within capacity (another one may exist)."""


class Infeasible(NoPlacement):
    """Proven: no placement of these tasks fits these nodes (the message names the resource)."""

    status = Status.INFEASIBLE


class NotApplicable(NoPlacement):
    """The scheduler's model does not cover this job (the message says what it needs)."""

    status = Status.NOT_APPLICABLE

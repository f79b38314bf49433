"""What a Storm run or a plan file is made of, and the record of where it came from.

:func:`plan_for_run` gives the placement a ``storm run`` applies and its provenance (``source``
in ``run.json``): a plan file (``{"kind": "plan", "file": ...}``), a scheduler run first
(``{"kind": "scheduler", "scheduler", "params", "status"}``; a scheduler that chose its own
parallelism runs its own job) or none at all, Storm's own EvenScheduler
(``{"kind": "storm-default"}``). :func:`plan_of` is the plugin's plan for a placement file (the
scheduler's name kept when the file is a schedule result).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..model import Placement, Problem
from ..model.specs import load_placement, read_document
from ..schedulers import make_scheduler, time_limit_note
from .errors import StormError
from .plans import plan_document, storm_name


def plan_for_run(problem: Problem, plan: str | os.PathLike | None = None, scheduler: str | None = None,
                 params: dict | None = None, *, seed: int | None = None, time_limit: float | None = None,
                 profiling: Any = None, on_note: Callable[[str], None] | None = None
                 ) -> tuple[Problem, Placement | None, dict]:
    """``(problem, placement, source)``: the job to run, its placement (None: Storm's default)
    and the provenance record. At most one of ``plan`` and ``scheduler``; :class:`StormError`
    when the scheduler finds no placement."""
    if plan is not None:
        return problem, load_placement(plan, problem.topology, problem.cluster), {"kind": "plan", "file": str(plan)}
    if scheduler is None:
        return problem, None, {"kind": "storm-default"}
    note = time_limit_note([scheduler], time_limit)
    if note and on_note:
        on_note(note)
    result = make_scheduler(scheduler, params, seed=seed, time_limit=time_limit, profiling=profiling).schedule(problem)
    if result.placement is None:
        raise StormError(f"{scheduler}: {result.status}: {result.message}")
    return result.problem, result.placement, {"kind": "scheduler", "scheduler": result.scheduler,
                                              "params": result.params, "status": result.status}


def plan_of(problem: Problem, placement: str | os.PathLike) -> tuple[str, dict]:
    """``(name, document)``: the plugin's plan for the placement file ``placement`` of ``problem``,
    to be written as ``<plan dir>/<name>.json`` (:func:`.plans.write_plan`)."""
    name = storm_name(problem.topology)
    placed = load_placement(placement, problem.topology, problem.cluster)
    doc = read_document(placement)
    extra = {"scheduler": doc["scheduler"]} if isinstance(doc, dict) and isinstance(doc.get("scheduler"), str) else {}
    return name, plan_document(problem.topology, problem.cluster, placed, **extra)

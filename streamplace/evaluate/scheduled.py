"""One scheduler run and the record ``streamplace schedule`` / ``reschedule`` print and write.

:func:`schedule` runs a scheduler built by :func:`~..schedulers.make_scheduler` and adds to
its :class:`.records.ResultRecord` the operators' ``parallelism`` when the scheduler chose it
(the result is then another job). :func:`reschedule` runs ``Scheduler.reschedule`` from a running
placement and adds its move list: ``moves`` (tasks that change node within the budget),
``forced_moves`` (tasks that must move: their node is gone or over capacity) and ``diff``, each
task that changes node with where it was and where it goes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..model import Problem
from ..model.performance import Predictor
from ..schedulers import ScheduleResult, make_scheduler, time_limit_note
from .diff import Targets, diff_targets, targets_of
from .records import ResultRecord


@dataclass(frozen=True)
class Scheduled:
    result: ScheduleResult
    record: ResultRecord

    def document(self) -> dict:
        """The record's JSON form: what ``--format json`` prints and ``-o`` writes."""
        return self.record.to_dict()


def build(name: str, params: dict | None, *, seed: int | None, time_limit: float | None, profiling: Any = None,
          on_note: Callable[[str], None] | None = None):
    """The scheduler ``name`` (:func:`~..schedulers.make_scheduler`); ``on_note`` hears that it
    takes no time budget when ``time_limit`` was given."""
    scheduler = make_scheduler(name, params, seed=seed, time_limit=time_limit, profiling=profiling)
    note = time_limit_note([name], time_limit)   # after the parameters are checked: a refusal is the one line
    if note and on_note:
        on_note(note)
    return scheduler


def schedule(problem: Problem, name: str, params: dict | None = None, *, seed: int | None = None,
             time_limit: float | None = None, profiling: Any = None, model: Predictor | None = None,
             on_note: Callable[[str], None] | None = None) -> Scheduled:
    """``name`` run on ``problem``, with its record.

    >>> from streamplace.workloads.microbench import microbench
    >>> from streamplace.workloads.catalogue import preset
    >>> run = schedule(Problem.from_topology(microbench("star", 12), preset("heterogeneous")), "even")
    >>> run.record.scheduler, len(run.record.evaluation.placement)
    ('even', 12)
    """
    scheduler = build(name, params, seed=seed, time_limit=time_limit, profiling=profiling, on_note=on_note)
    if model is not None:   # a scheduler that predicts performance (lns' throughput objective) uses the same model
        scheduler = scheduler.with_predictor(model)
    result = scheduler.schedule(problem)
    return Scheduled(result, ResultRecord.of(result, given=problem, model=model))


def current_targets(current: str | os.PathLike | Mapping) -> Targets:
    """A running placement: a file (schedule result or label map) or a label -> (node, worker) map."""
    if isinstance(current, Mapping):
        return dict(current)
    from ..model.specs import placement_targets, read_document
    return placement_targets(read_document(current), str(current))


def reschedule(problem: Problem, current: str | os.PathLike | Mapping, name: str = "lns", params: dict | None = None, *,
               seed: int | None = None, time_limit: float | None = None, max_moves: int | None = None,
               migration_weight: float = 0.0, model: Predictor | None = None,
               on_note: Callable[[str], None] | None = None) -> Scheduled:
    """A new placement for the job running as ``current``, with its move list (module docstring);
    ``model`` predicts the record's performance figures (and lns' throughput objective's)."""
    from ..model.specs import check_target_workers
    running = current_targets(current)
    check_target_workers(running, problem.cluster, "<current>" if isinstance(current, Mapping) else current)
    scheduler = build(name, params, seed=seed, time_limit=time_limit, on_note=on_note)
    if model is not None:
        scheduler = scheduler.with_predictor(model)
    result = scheduler.reschedule(problem, running, max_moves=max_moves, migration_weight=migration_weight)
    extra = {}
    if result.placement is not None:
        moved = result.details["reschedule"]
        extra = dict(moves=moved["moves"], forced_moves=moved["forced_moves"],
                     diff=[m.to_dict() for m in diff_targets(running, targets_of(problem, result.placement)).moves
                           if m.before[0] != m.after[0]])
    return Scheduled(result, ResultRecord.of(result, extra=extra, model=model))

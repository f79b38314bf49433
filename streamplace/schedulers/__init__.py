"""Schedulers: one registered class per algorithm, all with ``schedule(problem)``."""

from . import even, ischeduler, lf, lns, metis, online, optimal, rstorm, t3, throughput  # noqa: F401  (registration side effect)
from .base import (REGISTRY, Infeasible, NoPlacement, NoSolution, NotApplicable, Outcome, ParameterError, Scheduler, ScheduleResult, available, make_scheduler,
                   read_profiling, register, storm_default, time_limit_note)

__all__ = ["REGISTRY", "Infeasible", "NoPlacement", "NoSolution", "NotApplicable", "Outcome", "ParameterError", "Scheduler", "ScheduleResult", "available", "make_scheduler",
           "read_profiling", "register", "storm_default", "time_limit_note"]

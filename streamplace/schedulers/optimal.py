"""``optimal``: the exact minimum inter-node traffic placement, then workers (the second level).

The job's task graph goes to :func:`streamplace.exact.solve_min_inter_node` ([I] Sec. 3, Eq. 1-5:
class-count model, configuration bound and program on CP-SAT; the :mod:`streamplace.exact`
package documents the model, its bounds, its search and their measurements), with the operators
as the starting task classes; the nodes' tasks are then split into workers by
:func:`~.second_level.assign_workers`. Deviation from [I]: Eq. 4's ``< C`` is ``<= C``.

Running time: CP-SAT's branch and bound is exponential in the worst case; the run stops at
``time_limit`` with the best placement and bound found, and jobs above ``max_tasks`` are refused
before a model is built (the dense weight matrix is n x n).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Placement, Problem
from .base import Outcome, Scheduler, register
from .second_level import DEFAULT_TASKS_PER_WORKER, assign_workers
from .status import Status


@register
@dataclass(frozen=True, kw_only=True)
class OptimalScheduler(Scheduler):
    """``optimal``: :func:`solve_min_inter_node` on the problem's task graph, then the second level.

    ``time_limit`` (s) bounds the solve: when it runs out the best placement found is returned
    with status ``feasible`` and the proven ``lower_bound``. The dense weight matrix limits the
    exact solver to ``max_tasks`` tasks; larger problems are refused with a message (use
    ``ischeduler``, which fuses tasks until the exact solver can take them).
    """

    name = "optimal"
    fits_resources = True   # stated CPU and memory are constraints of the exact model
    complexity = "exponential; bounded by time_limit and max_tasks"
    budget_param = "time_limit"
    native_solver = True   # CP-SAT: the search runs in a child process (Scheduler.native_solver)
    time_limit: float = 10.0
    num_workers: int = 8
    tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER
    max_tasks: int = 2000

    def __post_init__(self):
        if self.time_limit <= 0:
            raise ValueError(f"time_limit must be > 0, got {self.time_limit}")
        if self.num_workers < 1 or self.tasks_per_worker < 1 or self.max_tasks < 1:
            raise ValueError("num_workers, tasks_per_worker and max_tasks must be >= 1")

    def too_large(self, problem: Problem) -> str | None:
        n = problem.n_tasks
        return f"{n} tasks exceed the exact solver's limit max_tasks={self.max_tasks}; use ischeduler" if n > self.max_tasks else None

    def _schedule(self, problem: Problem) -> Outcome:
        from ..exact import solve_min_inter_node   # imports OR-Tools on first use
        sol = solve_min_inter_node(problem.graph.weights.toarray(), problem.graph.loads, problem.cluster.capacities,
                                   groups=problem.topology.operator_of_task, time_limit=self.time_limit,
                                   num_workers=self.num_workers, seed=self.seed, extra=problem.resources.extra)
        details = {"model": sol.model, "solver_seconds": sol.seconds}
        if sol.node_of_task is None:
            if sol.status == Status.INFEASIBLE:
                return Outcome(placement=None, status=Status.INFEASIBLE, details=details,
                               message="proven: no placement keeps every node within its " + " and ".join(
                                   "capacity" if name == "load" else name for name in problem.resources.names))
            return Outcome(placement=None, status=Status.TIMED_OUT, details=details,
                           message=f"no placement within capacity found in the time limit of {self.time_limit:g} s")
        worker = assign_workers(problem, sol.node_of_task, tasks_per_worker=self.tasks_per_worker, seed=self.seed)
        return Outcome(placement=Placement(node=sol.node_of_task, worker=worker), status=Status(sol.status),
                       lower_bound=sol.lower_bound, details=details)

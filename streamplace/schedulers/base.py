"""The scheduler interface, the registry and the result type (docs/definitions.md).

Every scheduler is a frozen keyword-only dataclass (its fields are its parameters, like a
scikit-learn estimator's constructor) with one verb, ``schedule(problem) -> ScheduleResult``.
The base class times the call and refuses, before the scheduler runs, a job too large for it
(``too_large``), one its model does not cover (``not_applicable``) and, for schedulers that
respect capacity, one no placement can fit (``infeasible``); a :class:`NoPlacement` raised
inside a scheduler becomes a result with its status and message instead of a traceback.
"""

from __future__ import annotations

import dataclasses
import signal
import time
import typing
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..files import quote
from ..interrupt import ChildFailed, in_child
from ..model import Placement, Problem
from ..model.errors import Notice
from ..model.keyvalue import parse_bool
from ..model.profiling import Profiling, load_profiling
from ..model.specs import MAX_INT, MAX_NUMBER
from .status import Infeasible, NoPlacement, NoSolution, NotApplicable, Status  # noqa: F401  (re-exported)

MAX_TIME_LIMIT = 1e6  # seconds, the largest solve budget any caller accepts (~11.5 days)


class ParameterError(ValueError):
    """Unknown scheduler name or parameter, or a value of the wrong type."""


@dataclass(frozen=True)
class Outcome:
    """What a scheduler's ``_schedule`` returns; the base class adds timing and identity."""

    placement: Placement | None
    status: Status = Status.HEURISTIC
    lower_bound: float | None = None
    details: dict = field(default_factory=dict)
    message: str = ""
    problem: Problem | None = None  # set when the scheduler changed the problem (e.g. parallelism)


@dataclass(frozen=True)
class ScheduleResult:
    """An immutable scheduling result.

    ``problem`` is the problem the placement belongs to: the input problem, or the one the
    scheduler derived from it (the throughput scheduler chooses the parallelism).
    """

    scheduler: str
    params: dict
    status: str
    placement: Placement | None
    problem: Problem
    seconds: float
    lower_bound: float | None = None
    message: str = ""
    details: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.placement is not None


@dataclass(frozen=True, kw_only=True)
class Scheduler:
    """Base class: subclasses declare ``name`` and their parameters as dataclass fields."""

    name: ClassVar[str] = ""
    respects_capacity: ClassVar[bool] = True
    # The parameter a solve-time budget sets (the CLI's --time-limit, the demo's and the sweep's
    # time_limit): ``time_limit``, I-Scheduler's ``theta``. None: the scheduler runs to completion,
    # and the CLI says so before starting. ``honours_time_limit`` is derived from it.
    budget_param: ClassVar[str | None] = None
    honours_time_limit: ClassVar[bool] = False
    # Worst-case running time in n tasks, m task edges, k nodes, o operators, s streams, S worker
    # slots, as the module docstring derives it (benchmarks/scale.py prints it beside the
    # measured growth).
    complexity: ClassVar[str] = ""
    # Whether the scheduler needs each operator's CPU cost per tuple (a profiling, given as its
    # ``profiling`` parameter) to run at all.
    needs_profiling: ClassVar[bool] = False
    # Whether the scheduler chooses each operator's parallelism (its result's problem is a new job)
    # rather than placing the given tasks.
    chooses_parallelism: ClassVar[bool] = False
    # Whether the scheduler itself fits every resource a job states (task units, CPU cores, memory:
    # model.resources). A capacity-respecting scheduler that packs by task units alone gets its
    # placement repaired by :func:`~.fill.fit_resources` when the job states CPU or memory.
    fits_resources: ClassVar[bool] = False
    # Whether this is Storm's own default scheduler: the reference every other placement is
    # compared with.
    storm_default: ClassVar[bool] = False
    # Whether the scheduler calls OR-Tools' CP-SAT, native code that can end the whole process
    # (OR-Tools 9.15.6755, the newest release, aborts now and then on a failed internal check with
    # several workers and a solution hint: google/or-tools#5025, fixed on its main branch). Such a
    # scheduler's search runs in a forked child process (:func:`~streamplace.interrupt.in_child`),
    # so that an abort ends the child, not the caller: the search runs once more (``_in_child``),
    # and a second abort ends this one run as ``no_solution`` with the reason.
    native_solver: ClassVar[bool] = False
    seed: int = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.honours_time_limit = cls.budget_param is not None

    def applicable(self, problem: Problem) -> str | None:
        """Why this scheduler's model does not cover ``problem`` (one sentence), or None if it does.
        :meth:`schedule` checks it first (status ``not_applicable``); callers may ask before
        scheduling (to skip, or to say why)."""
        return None

    def too_large(self, problem: Problem) -> str | None:
        """Why ``problem`` exceeds this scheduler's size limit (one sentence naming a scheduler
        that scales), or None. :meth:`schedule` checks it before anything else (``too_large``)."""
        return None

    def refusal(self, problem: Problem) -> tuple[Status, str] | None:
        """The status and reason for which :meth:`schedule` refuses ``problem`` before running, or None."""
        for status, reason in ((Status.TOO_LARGE, self.too_large(problem)),
                               (Status.NOT_APPLICABLE, self.applicable(problem)),
                               (Status.INFEASIBLE, problem.infeasibility() if self.respects_capacity else None)):
            if reason:
                return status, reason
        return None

    def get_params(self) -> dict:
        """The parameters (the dataclass fields set at construction)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}

    def with_predictor(self, predictor) -> "Scheduler":
        """This scheduler predicting performance with ``predictor`` (a
        :class:`~streamplace.model.performance.Predictor`, e.g. a model calibrated on the job's
        run) where it uses the performance model; the same scheduler where it does not."""
        return self

    def schedule(self, problem: Problem) -> ScheduleResult:
        start = time.perf_counter()
        refused = self.refusal(problem)
        if refused is None:
            try:
                outcome = self._in_child(self._schedule, problem) if self.native_solver else self._schedule(problem)
                if self.respects_capacity and not self.fits_resources:
                    outcome = _fit_resources(outcome, problem)
            except NoPlacement as exc:
                outcome = Outcome(placement=None, status=exc.status, message=str(exc))
            except ChildFailed as exc:
                outcome = Outcome(placement=None, status=Status.NO_SOLUTION, message=solver_ended(exc))
        else:
            outcome = Outcome(placement=None, status=refused[0], message=refused[1])
        return ScheduleResult(
            scheduler=self.name, params=self.get_params(), status=outcome.status,
            placement=outcome.placement, problem=outcome.problem or problem,
            seconds=time.perf_counter() - start, lower_bound=outcome.lower_bound,
            message=outcome.message, details=outcome.details)

    @staticmethod
    def _in_child(fn, *args):
        """``fn(*args)`` in a forked child (``native_solver``), OR-Tools imported here first: the
        children of one process then share it instead of each importing it again (0.6 s). A child
        that the solver aborts (google/or-tools#5025, which comes with CP-SAT's parallel workers
        rather than with the input) runs once more, with a warning; a second abort raises."""
        from ..exact import solve  # noqa: F401  (imports OR-Tools)
        try:
            return in_child(fn, *args)
        except ChildFailed as exc:
            if exc.signal != signal.SIGABRT:
                raise
            warnings.warn(f"{_aborted(exc)}; running the search once more", SolverRetried)
        return in_child(fn, *args)

    def reschedule(self, problem: Problem, current: dict[str, tuple[str, int]], *, max_moves: int | None = None,
                   migration_weight: float = 0.0) -> ScheduleResult:
        """A new placement for a running job placed as ``current`` (task label -> (node, worker)).

        This default schedules from scratch and reports the moves; a scheduler that can stay near
        the running placement (``lns``) overrides it to move at most ``max_moves`` tasks (None:
        any number) and to minimise traffic + ``migration_weight`` x tasks moved. Tasks whose node
        left the cluster or is over capacity must move whatever the budget (``forced_moves``)."""
        from .migration import current_of
        state = current_of(problem, current)
        return with_moves(self.schedule(problem), state, max_moves, migration_weight, honoured=False)

    def _schedule(self, problem: Problem) -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError


class SolverRetried(Notice):
    """The solver aborted a search's process and the search ran once more (said on stderr)."""


def _aborted(exc: ChildFailed) -> str:
    """What a search's process that the solver aborted said."""
    check = f" ({exc.said})" if exc.said else ""
    return f"the solver aborted its process{check}, a known OR-Tools 9.15 failure (google/or-tools#5025)"


def solver_ended(exc: ChildFailed) -> str:
    """The reason a search whose process ended without an answer gives (one sentence)."""
    if exc.signal == signal.SIGABRT:   # (the second abort: Scheduler._in_child ran the search twice)
        return f"{_aborted(exc)}, twice: no placement; run again, or with another --seed"
    return f"the search's process ended without a placement ({exc})"


def _fit_resources(outcome: Outcome, problem: Problem) -> Outcome:
    """``outcome`` with its placement moved off any node short of a stated CPU or memory
    (:func:`~.fill.fit_resources`); a moved task joins the destination's fullest worker (worker 0
    on an empty node). The moves are in ``details["resource_repair"]`` and the message. A proof of
    optimality in task units no longer holds for the moved placement: ``optimal`` becomes
    ``feasible`` (the lower bound stays valid: the stated resources only remove placements), or
    ``heuristic`` without a bound."""
    placement, res = outcome.placement, problem.resources
    if placement is None or not res.over(placement.node)[:, 1:].any():
        return outcome
    from .fill import fit_resources
    node, moved = fit_resources(problem.graph.weights, res, placement.node, [n.name for n in problem.cluster.nodes])
    worker = placement.worker.copy()
    for t in moved:
        on = worker[(node == node[t]) & (np.arange(node.size) != t)]
        worker[t] = int(np.bincount(on).argmax()) if on.size else 0
    note = f"{len(moved)} task(s) moved to fit {'/'.join(res.names[1:])}"
    status = outcome.status
    if status == Status.OPTIMAL:
        status = Status.FEASIBLE if outcome.lower_bound is not None else Status.HEURISTIC
    return dataclasses.replace(outcome, placement=Placement(node=node, worker=worker), status=status,
                               details={**outcome.details, "resource_repair": {"moves": len(moved), "resources": list(res.names)}},
                               message=f"{outcome.message}; {note}" if outcome.message else note)


def with_moves(result: ScheduleResult, state, max_moves: int | None, migration_weight: float, *,
               honoured: bool) -> ScheduleResult:
    """``result`` with ``details["reschedule"]``: tasks moved (``moves``, forced ones apart as
    ``forced_moves``), the budget and whether the scheduler ``honoured`` it."""
    if result.placement is None:
        return result
    moves = state.moves(result.placement.node)
    info = {"moves": moves, "forced_moves": int(state.forced.sum()), "max_moves": max_moves,
            "migration_weight": migration_weight, "budget_honoured": honoured}
    message = result.message
    if max_moves is not None and moves > max_moves and not honoured:
        message = (f"{message}; " if message else "") + (f"{result.scheduler} schedules from scratch: {moves} tasks move, "
                                                          f"over the budget of {max_moves} (lns keeps to it)")
    return dataclasses.replace(result, details={**result.details, "reschedule": info}, message=message)


REGISTRY: dict[str, type[Scheduler]] = {}


def register(cls: type[Scheduler]) -> type[Scheduler]:
    if not cls.name or cls.name in REGISTRY:
        raise ValueError(f"scheduler name {quote(cls.name)} missing or already registered")
    REGISTRY[cls.name] = cls
    return cls


def available() -> list[str]:
    return list(REGISTRY)


def time_limit_note(names, time_limit: float | None) -> str | None:
    """The note that the named schedulers without a time budget ignore ``time_limit`` (None if
    none of them does, or no limit was given)."""
    unbudgeted = [n for n in names if time_limit is not None and n in REGISTRY and not REGISTRY[n].honours_time_limit]
    if not unbudgeted:
        return None
    verb = "takes" if len(unbudgeted) == 1 else "take"
    return (f"{', '.join(unbudgeted)} {verb} no time limit and run{'s' * (verb == 'takes')} to completion "
            f"(--time-limit applies to {', '.join(n for n, c in REGISTRY.items() if c.honours_time_limit)})")


def _convert(value: str, annotation: Any, key: str):
    kinds = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    if type(None) in typing.get_args(annotation) and value.lower() in ("none", "null"):
        return None
    if float in kinds and value.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise ParameterError(f"parameter {key}: must be a finite number, got {quote(value)}")
    for kind in kinds:
        try:
            if kind is bool:
                return parse_bool(value)
            if kind in (int, float, str):
                return kind(value)
        except ValueError:
            continue
    raise ParameterError(f"parameter {key}: cannot read {quote(value)} as {' or '.join(getattr(k, '__name__', str(k)) for k in kinds)}")


MAX_SEED = MAX_INT   # CP-SAT and METIS take 32-bit seeds


def _check_ranges(cls, kwargs: dict, hints: dict) -> None:
    """The ranges every scheduler shares, wherever the value comes from: a time budget within
    0..:data:`MAX_TIME_LIMIT` seconds, a seed within 0..:data:`MAX_SEED`, any other integer
    parameter at most :data:`MAX_SEED` in size (the native solvers take 32-bit integers), any other
    number parameter at most :data:`MAX_NUMBER` (the specs' bound), by the parameter's declared type
    (``hints``: the class's type hints)."""
    budget = kwargs.get(cls.budget_param) if cls.budget_param else None
    if budget is not None and not (isinstance(budget, (int, float)) and 0 <= budget <= MAX_TIME_LIMIT):
        raise ParameterError(f"parameter {cls.budget_param}: must be between 0 and {MAX_TIME_LIMIT:g} seconds, "
                             f"got {quote(budget)}")
    seed = kwargs.get("seed")
    if seed is not None and not (isinstance(seed, int) and 0 <= seed <= MAX_SEED):
        raise ParameterError(f"parameter seed: must be an integer between 0 and {MAX_SEED}, got {quote(seed)}")
    for key, value in kwargs.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        declared = hints.get(key)
        number = declared is float or float in typing.get_args(declared)   # by the parameter's type, not the value's
        most = int(MAX_NUMBER) if number else MAX_SEED
        if abs(value) > most:
            raise ParameterError(f"parameter {key}: must be at most {most:,} in size, got {quote(value)}")


def read_profiling(profiling: Any) -> Any:
    """A profiling spec given as a file, read (and refused if missing or bad) whether or not the
    schedulers it is given to use it; a :class:`Profiling` or None as it is."""
    return load_profiling(profiling) if profiling is not None and not isinstance(profiling, Profiling) else profiling


def make_scheduler(name: str, params: dict[str, Any] | None = None, *, seed: int | None = None,
                   time_limit: float | None = None, profiling: Any = None) -> Scheduler:
    """Instantiate a registered scheduler; string values are converted to the field types.

    The one path every caller (CLI, demo, sweep, reproduce) takes: ``seed``, ``time_limit`` (set as
    the class's :attr:`~Scheduler.budget_param`, if it has one) and ``profiling`` (for a scheduler
    that :attr:`~Scheduler.needs_profiling`) fill in what ``params`` does not set itself.
    """
    if name not in REGISTRY:
        raise ParameterError(f"unknown scheduler {quote(name)} (available: {', '.join(available())})")
    cls = REGISTRY[name]
    profiling = read_profiling(profiling)
    params = dict(params or {})
    for key, value, wanted in (("seed", seed, True), (cls.budget_param, time_limit, cls.budget_param is not None),
                               ("profiling", profiling, cls.needs_profiling)):
        if value is not None and wanted:
            params.setdefault(key, value)
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in params.items():
        if key not in known:
            raise ParameterError(f"scheduler {quote(name)} has no parameter {quote(key)} (parameters: {', '.join(sorted(known))})")
        kwargs[key] = _convert(value, hints[key], key) if isinstance(value, str) else value
    _check_ranges(cls, kwargs, hints)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"scheduler {quote(name)}: {exc}") from None


def storm_default() -> str:
    """The name of the scheduler that is Storm's default (:attr:`Scheduler.storm_default`)."""
    return next(name for name, cls in REGISTRY.items() if cls.storm_default)

"""Several schedulers on one job, side by side, and the one to use (``streamplace compare``).

Every scheduler runs on the problem (built by :func:`~..schedulers.make_scheduler`), its record
evaluated with the cost model; the records are then judged against Storm's default
(:mod:`.verdict`): ``recommended`` and ``reason`` on the chosen one, ``vs_<default>`` (traffic
saved, throughput and latency change in %) on every record with a placement. The default is run
for the comparison when it was not listed, and the verdict says if it would have done better.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ContextManager

from ..model import Problem
from ..model.performance import Predictor
from ..schedulers import available, make_scheduler, read_profiling, storm_default, time_limit_note
from .records import ResultRecord
from .verdict import default_reference, judge, verdict


@dataclass(frozen=True)
class Comparison:
    records: tuple[ResultRecord, ...]   # one per scheduler, in order, marked by the decision rule
    verdict: str                        # the recommendation in one line

    def documents(self) -> list[dict]:
        """The records' JSON form (``--format json`` / ``csv``): the change against the default
        under ``vs_<default's name>``."""
        return [record.to_dict(vs_key=f"vs_{storm_default()}") for record in self.records]


def compare(problem: Problem, schedulers: Sequence[str] | None = None, params: dict[str, dict] | None = None, *,
            seed: int | None = None, time_limit: float | None = None, profiling: Any = None,
            objective: str = "throughput", model: Predictor | None = None,
            on_note: Callable[[str], None] | None = None,
            running: Callable[[str], ContextManager] | None = None) -> Comparison:
    """Runs ``schedulers`` (default: all) on ``problem`` with their ``params`` (scheduler name ->
    parameters); ``running(name)`` wraps each run (a progress display); ``on_note`` hears which
    schedulers ignore ``time_limit``.

    >>> from streamplace.workloads.microbench import microbench
    >>> from streamplace.workloads.catalogue import preset
    >>> job = Problem.from_topology(microbench("star", 12), preset("heterogeneous"))
    >>> result = compare(job, ["even", "metis"])
    >>> result.verdict.startswith("recommended: "), sum(r.recommended for r in result.records)
    (True, 1)
    """
    names = list(schedulers) if schedulers is not None else available()
    params = params or {}
    profiling = read_profiling(profiling)   # once for all of them
    built = [make_scheduler(n, params.get(n), seed=seed, time_limit=time_limit, profiling=profiling) for n in names]
    note = time_limit_note(names, time_limit)   # after the parameters are checked: a refusal is the one line
    if note and on_note:
        on_note(note)
    if model is not None:   # schedulers that predict performance (lns' throughput objective) use the same model
        built = [sched.with_predictor(model) for sched in built]
    records = []
    for sched in built:
        with (running or (lambda _: contextlib.nullcontext()))(sched.name):
            records.append(ResultRecord.of(sched.schedule(problem), given=problem, model=model))
    reference = default_reference(records) or \
        ResultRecord.of(make_scheduler(storm_default(), {}, seed=seed).schedule(problem), model=model)
    judged = judge(records, reference, objective, n_tasks=problem.n_tasks, n_nodes=problem.cluster.n_nodes)
    return Comparison(judged.records, verdict(judged, reference, objective))

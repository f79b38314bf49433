"""CPU a node spends outside its executor threads, against the messages its workers exchange.

A testbed run records, per node, the cores its cgroup used (``node_cpu``), and per task the cores
of its executor thread (operator work, emits, queues, idle waits). What is left
is the workers' other threads (the transfer thread and Netty sending and receiving batches of
tuples, timers, the JVM) and the supervisor. This module puts that remainder beside what could
explain it: the node's workers and the messages crossing a worker boundary at the node, per
second, both ends counted (:func:`~streamplace.model.calibration.run_messages`): data tuples between tasks of different
workers, and with acking Storm's ack messages (a spout's emit to the acker, each bolt's ack of
the tuple it executed, the acker's ack back to the spout; Storm picks the acker by hashing the
tuple tree's root id, so uniformly over the ackers, which a plan deals over its workers in the
order its record names, :func:`~streamplace.model.calibration.ack_slots`).

:func:`regress` is an ordinary least-squares fit of ``cores = a + b x workers + c x messages/s``
over nodes and runs; it is a reading of campaign data (``benchmarks/acking_cpu.py``), not part of
any model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from ..model import Problem
from ..model.calibration import executor_cores, run_from_record, run_messages


@dataclass(frozen=True)
class NodeRow:
    """One node of one run: its cores outside executor threads and what might explain them."""

    job: str              # the run (its record's ``job``)
    scheduler: str
    node: str
    workers: int
    messages: float       # per second, both ends (:func:`~streamplace.model.calibration.run_messages`)
    cores: float          # the node's cgroup's cores over the run
    other_cores: float    # those less its executor threads' cores
    throttled: float      # share of the run's CFS periods in which the node was throttled


def node_rows(records: Iterable[dict], problem_of: Callable[[dict], Problem]) -> list[NodeRow]:
    """A :class:`NodeRow` per node hosting a worker, of every run record that measured its nodes'
    CPU (``benchmarks/storm_testbed.py`` records)."""
    rows = []
    for record in records:
        problem = problem_of(record)
        run = run_from_record(record, problem)
        if not run.node_cores:
            continue
        messages = run_messages(problem, run)
        executors = executor_cores(problem, run)
        workers = run.placement.workers_used(problem.cluster)
        throttled = record.get("node_cpu") or {}
        for k, node in enumerate(problem.cluster.nodes):
            if workers[k] and node.name in run.node_cores:
                rows.append(NodeRow(str(record.get("job", "")), record["scheduler"], node.name, int(workers[k]),
                                    float(messages[k]), run.node_cores[node.name],
                                    run.node_cores[node.name] - float(executors[k]),
                                    float(throttled.get(node.name, {}).get("throttled", 0.0))))
    return rows


@dataclass(frozen=True)
class Regression:
    """``other_cores = base + per_worker x workers + per_message x messages/s`` over ``n`` rows."""

    base: float
    per_worker: float
    per_message: float
    r2: float
    n: int


def executor_shares(rows: Sequence[NodeRow]) -> list[float]:
    """Per run (:attr:`NodeRow.job`): the share of its nodes' cores that executor threads used."""
    used: dict[str, list[float]] = {}
    for r in rows:
        totals = used.setdefault(r.job, [0.0, 0.0])
        totals[0] += r.cores - r.other_cores
        totals[1] += r.cores
    return [executors / cores for executors, cores in used.values() if cores > 0]


def regress(rows: Sequence[NodeRow]) -> Regression:
    """Ordinary least squares of :attr:`NodeRow.other_cores` on workers and messages."""
    if len(rows) < 4:
        raise ValueError(f"{len(rows)} node rows: at least 4 are needed for three coefficients")
    x = np.array([[1.0, r.workers, r.messages] for r in rows])
    y = np.array([r.other_cores for r in rows])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    residual = float(((y - x @ coef) ** 2).sum())
    total = float(((y - y.mean()) ** 2).sum())
    return Regression(float(coef[0]), float(coef[1]), float(coef[2]), 1.0 - residual / total if total > 0 else 1.0, len(rows))

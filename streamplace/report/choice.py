"""Which placement to use, per job, on a report page: the decision rule applied to every job of
a set of result records, every scheduler's gain or loss against Storm's default, the trade-off
between traffic and throughput, and the recommended placement itself.

A *job* is one workload on one cluster (:data:`~.report.INSTANCE_KEYS`). Per job:

* :func:`decide` marks the recommended record (``recommended``, ``reason``;
  :func:`streamplace.evaluate.decision.recommend`: highest predicted throughput within capacity,
  ties by traffic) and gives every record ``vs_default`` = traffic saved, throughput and latency
  change in % against Storm's default scheduler's record of the same job, flattened as
  ``traffic_saved_pct``, ``throughput_gain_pct`` and ``latency_change_pct`` for plots and tables.
* :func:`plot_vs_default` draws one of those percentages per job: jobs of very different size
  share one axis because each is relative to its own default (0 = the default).
* :func:`plot_pareto` draws traffic against throughput, one panel per job, the Pareto front
  (placements within capacity no other beats on both) joined by a line, the recommended one ringed.
* :func:`plot_placement` draws the recommended placement: one row per node, one cell per task,
  coloured by operator, workers separated by white gaps.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from ..evaluate.decision import eligible
from ..evaluate.records import ResultRecord
from ..evaluate.verdict import default_reference, judge
from ..schedulers import storm_default
from .display import metric
from .render import INSTANCE_KEYS, new_figure, figure_legend, set_scale, colours, plot_metric_by_scheduler

GAINS = {"traffic_saved_pct": "traffic_pct", "throughput_gain_pct": "throughput_pct", "latency_change_pct": "latency_pct"}


def job_of(rec: dict) -> str:
    return "@".join(str(rec.get(k)) for k in INSTANCE_KEYS)


def _jobs(records: Sequence[dict]) -> dict[str, list[int]]:
    jobs: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        jobs.setdefault(job_of(rec), []).append(i)
    return jobs


def decide(records: Sequence[dict], objective: str = "throughput") -> list[dict]:
    """Copies of ``records`` with ``job``, ``recommended``, ``reason`` (on the recommended record:
    the rule, and why the least-traffic placement was not chosen when it was not), ``vs_default``
    and the three flat percentages (None where the job has no default record). Each job's rows
    are judged as typed records (:class:`~streamplace.evaluate.records.ResultRecord`, read by
    its ``from_dict``), the one rule of :func:`streamplace.evaluate.verdict.judge`."""
    out = [{**rec, "job": job_of(rec), "vs_default": None} for rec in records]
    for members in _jobs(records).values():
        group = [ResultRecord.from_dict(records[i]) for i in members]
        judged = judge(group, default_reference(group), objective)
        for i, marked in zip(members, judged.records):
            out[i].update(vs_default=marked.vs_default, recommended=marked.recommended,
                          **{flat: (marked.vs_default or {}).get(key) for flat, key in GAINS.items()})
            if marked.recommended:
                out[i]["reason"] = marked.reason + (f". {judged.why}" if judged.why else "")
    return out


def recommended(records: Sequence[dict]) -> list[dict]:
    """The recommended record of each job, in job order."""
    return [rec for rec in records if rec.get("recommended")]


def plot_vs_default(records: Sequence[dict], key: str = "throughput_gain_pct"):
    """Bars of ``key`` (a :data:`GAINS` percentage) per job and scheduler, the default at 0."""
    rows = [r for r in records if r.get(key) is not None]
    fig = plot_metric_by_scheduler(rows, key, group_by="job", facet=None,
                                   title=f"{metric(key).long} against Storm's default ({storm_default()}), per job")
    for ax in fig.axes:
        ax.axhline(0, color="black", linewidth=0.8)
    return fig


def _front(points: np.ndarray) -> np.ndarray:
    """Indices of the Pareto-optimal points (traffic low, throughput high), by traffic."""
    order = np.lexsort((-points[:, 1], points[:, 0]))
    front, best = [], -np.inf
    for i in order:
        if points[i, 1] > best:
            front.append(i)
            best = points[i, 1]
    return np.array(front, dtype=int)


def plot_pareto(records: Sequence[dict]):
    """Inter-node traffic (x) against predicted throughput (y), one panel per job."""
    rows = [r for r in records if r.get("inter_node_cost") is not None and r.get("throughput") is not None]
    jobs = list(dict.fromkeys(r["job"] for r in rows))
    palette = colours(r["scheduler"] for r in rows)
    fig, axes = new_figure(len(jobs), 4.2, "Traffic against throughput, per job (up and left is better)")
    for ax, job in zip(axes, jobs):
        group = [r for r in rows if r["job"] == job]
        points = np.array([[r["inter_node_cost"], r["throughput"]] for r in group], dtype=float)
        ok = np.array([eligible(ResultRecord.from_dict(r)) for r in group])
        for r, (x, y), valid in zip(group, points, ok):
            ax.scatter([x], [y], s=46, color=palette[r["scheduler"]] if valid else "white",
                       edgecolors=palette[r["scheduler"]] if not valid else "black", linewidths=1.0, zorder=3)
            if r.get("recommended"):
                ax.scatter([x], [y], s=230, facecolors="none", edgecolors="black", linewidths=1.4, zorder=4)
        if ok.any():
            front = np.flatnonzero(ok)[_front(points[ok])]
            ax.plot(points[front, 0], points[front, 1], color="#555555", linewidth=1.0, linestyle="--", zorder=2)
        set_scale(ax, False)
        ax.set_title(job)
        ax.set_xlabel(metric("inter_node_cost").label)
        ax.set_ylabel(metric("throughput").label)
    handles = [Line2D([], [], marker="o", color=c, linestyle="none", markeredgecolor="black", label=s)
               for s, c in palette.items()]
    handles += [Line2D([], [], marker="o", markersize=12, markerfacecolor="none", markeredgecolor="black",
                       linestyle="none", label="recommended"),
                Line2D([], [], color="#555555", linestyle="--", label="Pareto front (within capacity)"),
                Line2D([], [], marker="o", markerfacecolor="white", markeredgecolor="#888888", linestyle="none",
                       label="hollow: exceeds node capacity")]
    figure_legend(fig, handles)
    return fig


def plot_placement(rec: dict):
    """The placement of ``rec`` (its ``placement`` mapping): a row per node used, tasks as cells
    coloured by operator, in worker order, a white gap between workers."""
    placement = rec["placement"]
    operators = list(dict.fromkeys(label.rsplit("[", 1)[0] for label in placement))
    palette = dict(zip(operators, colours(f"op:{o}" for o in operators).values()))
    by_node: dict[str, list[tuple[int, str]]] = {}
    for label, where in placement.items():
        by_node.setdefault(where["node"], []).append((int(where["worker"]), label.rsplit("[", 1)[0]))
    nodes = sorted(by_node)
    width = max(sum(1 for _ in cells) + len({w for w, _ in cells}) - 1 for cells in by_node.values())
    fig, (ax,) = new_figure(1, min(13.0, 2.5 + 0.22 * width), f"Recommended placement for {rec['job']}: "
                                                            f"{rec['scheduler']}, tasks by node and worker")
    fig.set_figheight(1.6 + 0.32 * len(nodes))
    for row, node in enumerate(nodes):
        x, last = 0, None
        for worker, op in sorted(by_node[node]):
            if last is not None and worker != last:
                x += 1   # the gap between two workers
            ax.add_patch(Rectangle((x, row), 1, 0.85, facecolor=palette[op], edgecolor="white", linewidth=0.5))
            x, last = x + 1, worker
    ax.set_xlim(0, width)
    ax.set_ylim(len(nodes), -0.15)
    ax.set_yticks(np.arange(len(nodes)) + 0.42, nodes)
    ax.set_xticks([])
    ax.grid(False)
    ax.set_xlabel("tasks (a white gap separates workers)")
    figure_legend(fig, [Patch(facecolor=c, label=o) for o, c in palette.items()])
    return fig

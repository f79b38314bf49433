"""The standard report page of the main job and the sweeps (``report.html`` plus its PNGs).

What a reader sees first is the decision (:mod:`.choice`): per job (workload x cluster) the
recommended placement, the rule that chose it and what it gains over Storm's default; then every
scheduler against that default (per-job percentages, so jobs of any size share an axis), traffic
against throughput with the Pareto front, and the recommended placements themselves. The
per-metric sections follow (traffic with its pivot table, gap to the optimum, solve time,
throughput, latency: lines against the task count when a family has several sizes, bars
otherwise), and last every result in one table the reader can sort and filter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from matplotlib.figure import Figure

from .choice import decide, plot_pareto, plot_placement, plot_vs_default, recommended
from .display import metric, summary_table
from .timeline import AUTOPILOT_HOW, plot_autopilot
from .render import (INSTANCE_KEYS, Section, check_keys, number, add_gaps, html_report, pivot_table, plot_gap_to_optimum,
                     plot_lines, plot_metric_by_scheduler, plot_time, write_png)

PLACEMENT_PLOTS = 6          # recommended placements drawn (the first jobs)
PLACEMENT_MAX_TASKS = 400    # larger placements are not drawn (one cell per task)
DECISION_COLUMNS = ("job", "scheduler", "throughput", "throughput_gain_pct", "traffic_saved_pct", "latency_change_pct",
                    "inter_node_cost", "reason")


_STANDARD = (  # (record key, heading, how to read)
    ("inter_node_cost", "Inter-node traffic",
     "Traffic between tasks on different nodes, the objective of [I] Eq. 1-5 and [T3] Eq. 1: lower is better."),
    ("seconds", "Solve time", "Wall time of each scheduler, log scale: every gridline is ten times the previous one."),
    ("throughput", "Predicted throughput",
     "Tuples executed per second at the placement's bottleneck (CPU or NIC) under the analytic performance model: "
     "higher is better."),
    ("latency_ms", "Predicted latency", "End-to-end latency at 70 % of the sustainable load under the analytic model: "
                                        "lower is better."),
)
_GAP_HOW = ("Inter-node traffic above the proven optimum of the same instance, in % of the optimum; 0 = optimal. "
            "Instances whose optimum was not proven within the time limit are left out here; the table above "
            "shows their gap to the best lower bound as an upper bound.")
_MARKS_HOW = (" Hatched bars or hollow markers are placements that exceed node capacity; a filled X at the foot of the "
              "axis is a scheduler that returned no placement.")


def _standard_figure(records: list[dict], key: str) -> Figure:
    """Lines against the task count when an instance family has several sizes, else bars."""
    if all(rec.get("n_tasks") is not None and rec.get("layout") is not None for rec in records) and \
            len({rec["n_tasks"] for rec in records}) > 2:
        return plot_lines(records, "n_tasks", key, facet=("layout", "cluster"), log=key == "seconds",
                          title=f"{metric(key).long} against task count")
    if key == "seconds":
        return plot_time(records)
    return plot_metric_by_scheduler(records, key, title=f"{metric(key).long} by scheduler")


_DECISION_TEXT = ("Per job, the placement to use: the highest predicted throughput among placements within every "
                  "node's capacity, ties by inter-node traffic. The gains are against Storm's default scheduler on "
                  "the same job (traffic saved: positive is less traffic; throughput: positive is more; latency: "
                  "negative is faster).")
_VS_DEFAULT_HOW = ("Each bar is one scheduler on one job, relative to Storm's default on that job (the line at 0), so "
                   "small and large jobs share the axis. Hatched bars exceed node capacity: they are never "
                   "recommended.")
_PARETO_HOW = ("One panel per job: each point a scheduler's placement. Up and to the left is better (more "
               "throughput, less traffic). The dashed line joins the placements within capacity that no other "
               "beats on both; the ringed point is the recommended one. Least traffic is not most throughput "
               "when it packs the job on few nodes.")
_PLACEMENT_HOW = ("One row per node the placement uses, one cell per task coloured by its operator, grouped by "
                  "worker process (a white gap between two workers).")


_MEASURED_TEXT = ("Measured on Storm: what runs now (Storm's even placement) was run first, the model was calibrated "
                  "on that run at its operating point, and the placement it recommends was run next. Predicted gain: "
                  "the calibrated prediction of that placement against the even run's measured throughput; measured "
                  "gain: the two runs' measured throughputs (every task's tuples per second, as run.json counts them).")
MEASURED_COLUMNS = ("job", "scheduler", "operating_point", "calibrated_throughput", "measured_throughput",
                    "predicted_gain_pct", "measured_gain_pct")


def measured_rows(storm: dict) -> list[dict]:
    """The demo's Storm step (its ``run.json``) as one row: the placement it ran after even's,
    its calibrated prediction and measured throughput, both gains over even's measured run."""
    chosen, now = storm["jobs"][0], storm["jobs"][-1]

    def gain(value: float) -> float | None:
        return 100.0 * (value - now["throughput"]) / now["throughput"] if now["throughput"] else None
    return [{"job": f"{storm['workload']}@{storm['cluster']}", "scheduler": chosen["scheduler"],
             "operating_point": storm["operating_point"]["name"] + ("" if storm["mode"] == "cluster" else " (embedded Storm)"),
             "calibrated_throughput": chosen["calibrated_throughput"], "measured_throughput": chosen["throughput"],
             "predicted_gain_pct": gain(chosen["calibrated_throughput"]), "measured_gain_pct": gain(chosen["throughput"])}]


def decision_sections(records: list[dict], out_dir: Path, measured: Sequence[dict] = ()) -> list[Section]:
    """The decision first: recommended placement per job (and, for jobs run on Storm, the
    predicted gain beside the measured one), gains over the default, the trade-off, and the
    recommended placements drawn."""
    chosen = recommended(records)
    tables = [summary_table(chosen, DECISION_COLUMNS, footnote="reason")] if chosen else []
    if measured:
        tables.append(summary_table(list(measured), MEASURED_COLUMNS, title="Measured on Storm"))
    sections = [Section("Which placement to use", text=_DECISION_TEXT + (" " + _MEASURED_TEXT if measured else ""),
                        tables=tables)]
    figures = [write_png(plot_vs_default(records, key), out_dir / f"{key}.png")
               for key in ("throughput_gain_pct", "traffic_saved_pct") if any(r.get(key) is not None for r in records)]
    if figures:
        sections.append(Section("Against Storm's default", how_to_read=_VS_DEFAULT_HOW, figures=figures))
    if any(r.get("throughput") is not None for r in records):
        sections.append(Section("Traffic against throughput", how_to_read=_PARETO_HOW,
                                figures=[write_png(plot_pareto(records), out_dir / "pareto.png")]))
    drawn = [r for r in chosen if len(r["placement"]) <= PLACEMENT_MAX_TASKS][:PLACEMENT_PLOTS]
    if drawn:
        left = len(chosen) - len(drawn)
        sections.append(Section("The recommended placements", how_to_read=_PLACEMENT_HOW,
                                text=f"{left} more not drawn (over {PLACEMENT_MAX_TASKS} tasks, or beyond the first "
                                     f"{PLACEMENT_PLOTS} jobs)." if left else "",
                                figures=[write_png(plot_placement(r), out_dir / f"placement-{i}.png")
                                         for i, r in enumerate(drawn, 1)]))
    return sections


def write_report(records: Sequence[dict], out_dir: str | Path, *, title: str = "streamplace report",
                 intro: str = "", measured: Sequence[dict] = (), autopilot: dict | None = None) -> Path:
    """The standard report of ``records`` (each with ``workload`` and ``cluster``) in ``out_dir``:
    one PNG per figure and ``report.html`` embedding them; returns the HTML path. ``autopilot``:
    a run with the autopilot beside it (:func:`~streamplace.report.timeline.plot_autopilot`),
    shown after the decision."""
    records = decide(add_gaps(check_keys(records, *INSTANCE_KEYS, "scheduler")))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sections = decision_sections(records, out_dir, measured)
    if autopilot:
        sections.append(Section("The autopilot through a workload shift", how_to_read=AUTOPILOT_HOW,
                                figures=[write_png(plot_autopilot(autopilot), out_dir / "autopilot.png")]))
    for key, heading, how in _STANDARD:
        if not any(number(rec.get(key)) is not None for rec in records):
            continue
        png = write_png(_standard_figure(records, key), out_dir / f"{key}.png")
        tables = [pivot_table(records, key)] if key == "inter_node_cost" else []
        sections.append(Section(heading, how_to_read=how + _MARKS_HOW, figures=[png], tables=tables))
        if key == "inter_node_cost" and any(rec["reference_proven"] for rec in records):
            png = write_png(plot_gap_to_optimum(records, proven_only=True), out_dir / "gap_to_optimum.png")
            sections.append(Section("Gap to the optimum", how_to_read=_GAP_HOW, figures=[png]))
    sections.append(Section("All results", text=f"{len(records)} results. Click a column's header to sort by it; type "
                                                "in the box to keep the rows that contain the text.",
                            tables=[summary_table(records, filterable=True)]))
    path = out_dir / "report.html"
    html_report(title, sections, out_path=path, intro=intro)
    return path

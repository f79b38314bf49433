"""How results are shown: the one place for cell formatting, metric names with their units, the
marks every table and plot uses (one legend for the terminal, the HTML reports and the figures)
and the results table itself, used by the CLI, the demo, the reports and the paper reproductions.
"""

from __future__ import annotations

import html
import math
import numbers
from dataclasses import dataclass
from typing import Mapping, Sequence

from rich import box
from rich.markup import escape as rich_escape
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ..schedulers.status import has_placement


@dataclass(frozen=True)
class Metric:
    """How a record key is named: ``short`` in table headers, ``long (unit)`` on plot axes."""

    short: str
    long: str
    unit: str = ""

    @property
    def label(self) -> str:
        return f"{self.long} ({self.unit})" if self.unit else self.long


METRICS: dict[str, Metric] = {
    "workload": Metric("workload", "workload"),
    "layout": Metric("layout", "layout"),
    "cluster": Metric("cluster", "cluster"),
    "scheduler": Metric("scheduler", "scheduler"),
    "status": Metric("status", "status"),
    "seed": Metric("seed", "seed"),
    "n_tasks": Metric("tasks", "tasks", "count"),
    "inter_node_cost": Metric("inter-node", "inter-node traffic", "tuples/s"),
    "inter_worker_cost": Metric("inter-worker", "inter-worker traffic within nodes", "tuples/s"),
    "intra_worker_traffic": Metric("intra-worker", "intra-worker traffic", "tuples/s"),
    "total_traffic": Metric("total traffic", "total traffic", "tuples/s"),
    "lower_bound": Metric("bound", "lower bound on inter-node traffic", "tuples/s"),
    "reference": Metric("optimum", "optimum inter-node traffic", "tuples/s"),
    "gap": Metric("gap", "gap to optimum", "tuples/s"),
    "gap_pct": Metric("gap", "gap to optimum", "%"),
    "seconds": Metric("solve time", "solve time", "s"),
    "nodes_used": Metric("nodes", "nodes used", "count"),
    "max_utilisation": Metric("max util", "max node utilisation", "share of capacity, cores or memory"),
    "imbalance": Metric("imbalance", "load imbalance", "max / mean"),
    "overloaded_nodes": Metric("overloaded", "overloaded nodes"),
    "network_distance": Metric("net distance", "network distance", "0 worker .. 3 rack"),
    "cohesion": Metric("cohesion", "cohesion", "sum of closeness"),
    "coupling": Metric("coupling", "coupling", "sum of closeness"),
    "throughput": Metric("throughput", "predicted throughput", "tuples/s"),
    "bottleneck": Metric("bottleneck", "bottleneck"),
    "latency_ms": Metric("latency", "end-to-end latency", "ms"),
    "valid": Metric("valid", "within capacity"),
    "message": Metric("message", "message"),
    "job": Metric("job", "job (workload@cluster)"),
    "reason": Metric("why", "why it is recommended"),
    "traffic_saved_pct": Metric("traffic saved", "inter-node traffic saved against Storm's default", "%"),
    "throughput_gain_pct": Metric("throughput gain", "predicted throughput against Storm's default", "%"),
    "latency_change_pct": Metric("latency change", "predicted latency against Storm's default", "%"),
    "operating_point": Metric("operating point", "operating point"),
    "predicted_gain_pct": Metric("predicted gain", "predicted throughput against what runs now", "%"),
    "measured_gain_pct": Metric("measured gain", "measured throughput against what runs now", "%"),
    "measured_throughput": Metric("measured", "measured throughput", "tuples/s"),
    "calibrated_throughput": Metric("predicted", "predicted throughput, calibrated on the run", "tuples/s"),
}


def metric(key: str) -> Metric:
    """The naming of ``key`` (unknown keys get their own name and no unit)."""
    return METRICS.get(key) or Metric(key, key.replace("_", " "))


def format_value(value) -> str:
    """A table cell: integers as such, 4 significant digits, thousands separators from 10^4."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{value:,}"
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            return str(value)
        if abs(value) >= 1e4:
            return f"{value:,.0f}"
        return f"{value:.0f}" if value.is_integer() else f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "-"
    if isinstance(value, dict):
        return ", ".join(f"{k}={format_value(v)}" for k, v in value.items()) or "-"
    return str(value)


def compact(value: float | None, key: str) -> str:
    """A narrow cell for the terminal summary: seconds with 2 decimals, others as 1.23M / 45.6k / 789."""
    if value is None:
        return "-"
    if key == "seconds":
        return f"{value:.2f}"
    size = abs(value)
    if size >= 1e6:
        return f"{value / 1e6:.3g}M"
    if size >= 1e4:
        return f"{value / 1e3:.3g}k"
    return f"{value:.0f}" if size >= 100 else f"{value:.3g}"


def format_pct(value: float | None) -> str:
    """A signed percentage with no decimals (``+12 %``); ``-`` when unknown."""
    return "-" if value is None or not math.isfinite(value) else f"{value:+.0f} %"


def format_tau(value: float | None, missing: str = "-") -> str:
    """A Kendall tau, signed with 2 decimals (``+0.83``); ``missing`` when unknown (nan: fewer
    than two repetitions or schedulers to rank)."""
    return missing if value is None or not math.isfinite(value) else f"{value:+.2f}"


def format_taus(taus: Mapping[str, float], missing: str = "-") -> str:
    """Kendall taus by experiment, as ``exp-a +0.83, exp-b -0.10`` (:func:`format_tau` each)."""
    return ", ".join(f"{name} {format_tau(tau, missing)}" for name, tau in taus.items())


# ---------------------------------------------------------------------------- marks


@dataclass(frozen=True)
class Mark:
    """What a table row or cell is flagged with: the ``symbol`` after its name or value, the
    ``meaning`` every legend gives, the terminal ``style`` and the HTML row class (``key``)."""

    key: str
    symbol: str
    meaning: str
    style: str


BEST = Mark("best", "*", "best within capacity", "bold green")
OVERLOADED = Mark("overloaded", "!", "exceeds node capacity", "yellow")
NO_PLACEMENT = Mark("none", "-", "no placement (the status and message say why)", "dim")
OWN_JOB = Mark("own-job", "†", "chose its own parallelism: another job, not compared", "")
MARKS = (BEST, OVERLOADED, NO_PLACEMENT, OWN_JOB)


def row_mark(rec: dict) -> Mark | None:
    """The mark of a result record: no placement, over capacity, recommended, or None."""
    status = rec.get("status")
    if status is not None and status != "error" and not has_placement(status):
        return NO_PLACEMENT
    if rec.get("valid") is False:
        return OVERLOADED
    return BEST if rec.get("recommended") else None


def legend(marks) -> str:
    """One line explaining the ``marks`` that occur (in :data:`MARKS` order)."""
    used = {m.key for m in marks if m is not None}
    return "   ".join(f"{m.symbol} {m.meaning}" for m in MARKS if m.key in used)


# ---------------------------------------------------------------------------- tables


KEEP_WHOLE = 20   # characters: a terminal cell up to this long is never wrapped


@dataclass(frozen=True)
class ReportTable:
    """Formatted cells plus what renders them: ``rich()`` for the terminal, ``html()`` for pages.
    ``marks`` flags rows (:class:`Mark` keys) for styling."""

    title: str
    headers: tuple[Metric, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]
    marks: tuple[str, ...] = ()
    note: str = ""
    filterable: bool = False   # html(): a box above the table that keeps the rows containing its text

    def _marked_rows(self):
        return zip(self.rows, self.marks or ("",) * len(self.rows))

    def rich(self, *, compact: bool = False) -> Table:
        """Headers wrap at spaces (name, then unit on its own line); cells of up to
        ``KEEP_WHOLE`` characters stay on one line and longer ones wrap at spaces, never inside a
        word. ``compact``: every column at that least width (see :meth:`fitted`)."""
        styles = {m.key: m.style for m in MARKS}
        table = Table(title=self.title or None, caption=self.note or None, caption_justify="left", box=box.SIMPLE_HEAD,
                      show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
        for i, (head, num) in enumerate(zip(self.headers, self.numeric)):
            unit = f"\n[dim]{rich_escape(head.unit)}[/dim]" if head.unit else ""
            words = [*head.short.split(), *head.unit.split(),
                     *(w for row in self.rows for w in ([row[i]] if len(row[i]) <= KEEP_WHOLE else row[i].split()))]
            least = max(map(len, words), default=1)
            table.add_column(rich_escape(head.short) + unit, justify="right" if num else "left", min_width=least,
                             width=least if compact else None)
        for row, mark in self._marked_rows():
            table.add_row(*map(rich_escape, row), style=styles.get(mark) or None)
        return table

    def vertical(self) -> list[Table]:
        """One two-column table (metric with unit, value) per row: the layout for a terminal too
        narrow for :meth:`rich`."""
        out = []
        for row, _ in self._marked_rows():
            table = Table(title=" ".join(row[:1]) or None, box=box.SIMPLE_HEAD, show_header=False)
            table.add_column("metric")
            table.add_column("value", justify="right")
            for head, value in zip(self.headers[1:], row[1:]):
                table.add_row(rich_escape(head.label), rich_escape(value))
            out.append(table)
        if self.note:
            out.append(Text(self.note))
        return out

    def fitted(self, console: Console) -> list:
        """:meth:`rich` at its natural widths if that fits ``console``'s width, else compact, else
        :meth:`vertical`: never a cut header or cell."""
        wide = console.options.update_width(1 << 16)
        table = self.rich()
        if Measurement.get(console, wide, table).maximum <= console.width:
            return [table]
        table = self.rich(compact=True)
        return [table] if Measurement.get(console, wide, table).maximum <= console.width else self.vertical()

    def html(self) -> str:
        esc = html.escape
        cls = [' class="num"' if num else "" for num in self.numeric]
        head = "".join(f"<th{c}>{esc(h.short)}" + (f' <br><span class="unit">{esc(h.unit)}</span>' if h.unit else "") + "</th>"
                       for h, c in zip(self.headers, cls))
        body = "\n".join(
            (f'<tr class="{esc(mark)}">' if mark else "<tr>") + "".join(f"<td{c}>{esc(v)}</td>" for v, c in zip(row, cls))
            + "</tr>" for row, mark in self._marked_rows())
        caption = f"<caption>{esc(self.title)}</caption>" if self.title else ""
        note = f'<p class="note">{esc(self.note)}</p>' if self.note else ""
        box = '<input type="search" class="filter" placeholder="filter rows" aria-label="filter rows">' \
            if self.filterable else ""
        return (f'{box}<div class="table-wrap"><table class="sortable">{caption}<thead><tr>{head}</tr></thead>\n'
                f'<tbody>\n{body}\n</tbody></table></div>{note}')


SUMMARY_COLUMNS = ("workload", "cluster", "scheduler", "status", "inter_node_cost", "gap_pct", "lower_bound",
                   "inter_worker_cost", "nodes_used", "max_utilisation", "throughput", "latency_ms", "seconds")


def _cell(rec: dict, key: str, mark: Mark | None) -> str:
    if key == "valid" and mark is NO_PLACEMENT:
        return "-"
    text = format_value(rec.get(key))
    if key in ("gap", "gap_pct") and rec.get(key) is not None and rec.get("reference_proven") is False:
        return "≤ " + text
    if key == "scheduler" and mark is not None:
        return f"{text} {mark.symbol}"
    return text


def is_numeric_column(values: list) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in present)


def summary_table(records: Sequence[dict], columns: Sequence[str] = SUMMARY_COLUMNS, *, title: str = "",
                  footnote: str | None = None, filterable: bool = False) -> ReportTable:
    """One row per record with ``columns`` (those no record has are left out); the scheduler's
    name carries its row's mark, and the note is the legend of the marks that occur. A gap
    measured against a lower bound (no proven optimum) reads ``≤ x``: the true gap is at most x.

    ``footnote``: a text column (e.g. ``message``) shown below the table instead, numbered, so
    long texts do not widen every row; a row with one carries ``[n]`` after its status."""
    keys = [k for k in columns if any(k in rec for rec in records) and k != footnote]
    marks = [row_mark(rec) for rec in records]
    rows = [[_cell(rec, k, m) for k in keys] for rec, m in zip(records, marks)]
    notes = []
    if footnote is not None:
        at = keys.index("status") if "status" in keys else 0
        for rec, row in zip(records, rows):
            if rec.get(footnote):
                n = len(notes) + 1
                notes.append(f"[{n}] {rec['scheduler']}: {rec[footnote]}" if rec.get("scheduler") else f"[{n}] {rec[footnote]}")
                row[at] += f" [{n}]"
    if any(marks):
        notes.insert(0, legend(marks))
    if any(rec.get("reference_proven") is False for rec in records) and ("gap" in keys or "gap_pct" in keys):
        notes.append("≤ gap: no proven optimum, measured against the best lower bound")
    return ReportTable(title=title, headers=tuple(metric(k) for k in keys), rows=tuple(map(tuple, rows)),
                       numeric=tuple(is_numeric_column([rec.get(k) for rec in records]) for k in keys),
                       marks=tuple(m.key if m else "" for m in marks),
                       note=("\n" if footnote else "; ").join(notes), filterable=filterable)

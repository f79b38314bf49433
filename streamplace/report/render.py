"""Tables, PNG plots and a self-contained HTML page from result records (docs/cli.md, "Tables and marks"; docs/demo.md).

Input: flat records as made by :func:`streamplace.evaluate.records.result_record` plus context
keys (``workload``, ``cluster``, ``layout``, ``n_tasks``, ``seed`` ...). Values may be ``None``
(an infeasible result has no metrics); ``valid`` is False when a placement exceeds node capacity.

* :func:`add_gaps` adds the gap to the optimum per instance. [I] Sec. 5 and [T3] Sec. 5 measure
  heuristics against the exact optimum of the min inter-node cost problem ([I] Eq. 1-5):
  ``gap_pct = 100 x (cost / optimum - 1)``. The optimum of an instance is the cost of a record with
  status ``optimal`` (the ``optimal`` scheduler, or I-Scheduler when its optimiser solved the
  whole problem); failing that, when the best valid cost meets the best proven lower bound, that
  cost; otherwise the best lower bound stands in (``reference_proven`` False: the gap is then an
  upper bound on the true gap). Relative gaps to an optimum of 0 are undefined (``None``) unless
  the cost is 0 too; ``gap`` keeps the absolute difference.
* Plots (:func:`plot_metric_by_scheduler`, :func:`plot_gap_to_optimum`, :func:`plot_time`,
  :func:`plot_lines`) return Matplotlib figures built without pyplot on the Agg canvas: title,
  axis labels with units, one legend per figure, a colour-blind-safe palette (Okabe-Ito for the
  known schedulers, Paul Tol's "muted" for anything else) with fixed colours and order per
  scheduler. Several records in one cell (seeds) are averaged and drawn with a min-max range;
  hatched bars / hollow markers are placements that exceed capacity; an ``x`` at the foot of the
  axis marks a scheduler that produced no value (infeasible).
* :func:`summary_table` / :func:`pivot_table` build a :class:`ReportTable` that renders to a Rich
  table (terminal) or HTML; :func:`html_report` writes one HTML file with the figures embedded as
  base64 PNG and no external resource, so it opens offline. Every file is written to a temporary
  name and renamed (docs/safety.md).
* The standard page of the main job and the sweeps is :func:`streamplace.report.page.write_report`.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import math
import numbers
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import StrMethodFormatter
from matplotlib.transforms import blended_transform_factory

from ..files import quote
from .. import __version__
from ..evaluate.records import own_job
from ..model.specs import atomic_write_bytes
from ..schedulers.status import has_placement
from .display import (NO_PLACEMENT, OVERLOADED, Metric, ReportTable, format_value, legend, metric,
                      summary_table)

# ---------------------------------------------------------------------------- metrics and labels


def number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        return None
    return float(value)


# ---------------------------------------------------------------------------- order and colours

SCHEDULER_ORDER = ("even", "online", "rstorm", "metis", "t3", "ischeduler", "throughput", "lf", "optimal", "lns")
# Okabe & Ito (2008) colour-blind-safe palette, one colour per known scheduler (optimal: black), and
# for our own lns Paul Tol's magenta, the one strong hue the palette lacks.
_FIXED_COLOURS = dict(zip(SCHEDULER_ORDER, ("#999999", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2",
                                            "#D55E00", "#CC79A7", "#000000", "#EE3377")))
# Paul Tol's "muted" scheme for other schedulers and non-scheduler series, in sorted order.
_EXTRA_COLOURS = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499")
_MARKERS = ("o", "s", "^", "D", "v", "P", "h", "*", "p", "<", ">")  # "X" is reserved for "no result"


def _sort_key(value):
    return (0, value, "") if isinstance(value, numbers.Real) and not isinstance(value, bool) else (1, 0, str(value))


def ordered(values: Iterable) -> list:
    """Distinct ``values`` in display order: known schedulers first in :data:`SCHEDULER_ORDER`,
    then the rest sorted (numbers before strings)."""
    distinct = set(values)
    known = [s for s in SCHEDULER_ORDER if s in distinct]
    return known + sorted(distinct.difference(known), key=_sort_key)


def colours(values: Iterable) -> dict:
    """A fixed colour per known scheduler; other values take the extra palette in order."""
    extra = itertools.cycle(_EXTRA_COLOURS)
    return {v: _FIXED_COLOURS[v] if v in _FIXED_COLOURS else next(extra) for v in ordered(values)}


def markers(values: Iterable) -> dict:
    """A fixed line marker per known scheduler; other values take the next ones in order."""
    unknown = itertools.count(len(SCHEDULER_ORDER))
    return {v: _MARKERS[(SCHEDULER_ORDER.index(v) if v in SCHEDULER_ORDER else next(unknown)) % len(_MARKERS)]
            for v in ordered(values)}


# ---------------------------------------------------------------------------- gap to optimum

INSTANCE_KEYS = ("workload", "cluster")
COST_REL_TOL = 1e-9   # two costs within this (relative, absolute below 1) are equal: ties and gaps


def add_gaps(records: Sequence[dict], *, keys: Sequence[str] = INSTANCE_KEYS, cost: str = "inter_node_cost") -> list[dict]:
    """Copies of ``records`` with ``reference``, ``reference_proven``, ``gap`` and ``gap_pct``
    (the module docstring defines them); instances are the distinct values of ``keys``. A record
    with its own ``parallelism`` (the throughput scheduler chose another job) has no gap and is
    never a reference; neither has a placement that exceeds capacity (``valid`` False: it may
    send less than the optimum, and a negative gap would read as better than optimal)."""
    by_instance: dict[tuple, list[dict]] = {}
    for rec in records:
        if not own_job(rec):
            by_instance.setdefault(tuple(rec.get(k) for k in keys), []).append(rec)
    reference = {inst: _reference(recs, cost) for inst, recs in by_instance.items()}
    out = []
    for rec in records:
        ref, proven = reference.get(tuple(rec.get(k) for k in keys), (None, None))
        # an overloaded placement can send less than the optimum: it has no gap, never a negative one
        value = number(rec.get(cost)) if not own_job(rec) and rec.get("valid") is not False else None
        gap = value - ref if value is not None and ref is not None else None
        if gap is None or (ref == 0 and gap != 0):
            pct = None
        else:
            pct = 0.0 if ref == 0 else 100.0 * gap / ref
        out.append({**rec, "reference": ref, "reference_proven": proven, "gap": gap, "gap_pct": pct})
    return out


def _reference(records: list[dict], cost: str) -> tuple[float | None, bool | None]:
    optimal = [c for r in records if r.get("status") == "optimal" and (c := number(r.get(cost))) is not None]
    if optimal:
        return min(optimal), True
    bounds = [b for r in records if (b := number(r.get("lower_bound"))) is not None]
    if not bounds:
        return None, None
    bound = max(bounds)
    valid = [c for r in records if r.get("valid", True) and (c := number(r.get(cost))) is not None]
    if valid and min(valid) <= bound + COST_REL_TOL * max(1.0, abs(bound)):
        return min(valid), True
    return bound, False


# ---------------------------------------------------------------------------- plots

STYLE = {
    "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "figure.titlesize": 13,
    "figure.titleweight": "bold", "xtick.labelsize": 9, "ytick.labelsize": 9, "legend.fontsize": 9,
    "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True, "axes.grid.axis": "y",
    "grid.color": "#d9d9d9", "grid.linewidth": 0.6, "axes.axisbelow": True,
}
DPI = 110
_MAX_WIDTH = 13.0   # inches: 1430 px at DPI, the width of a report page
_PANEL_HEIGHT = 3.4
_INVALID_HATCH = "////"


@dataclass
class _Cell:
    """The records behind one bar or point."""

    values: list[float]
    invalid: bool

    @property
    def mean(self) -> float:
        return float(np.mean(self.values)) if self.values else math.nan

    @property
    def spread(self) -> tuple[float, float]:
        return (min(self.values), max(self.values)) if self.values else (math.nan, math.nan)


def _cells(records: Sequence[dict], keys: tuple[str, ...], value_key: str) -> dict[tuple, _Cell]:
    cells: dict[tuple, _Cell] = {}
    for rec in records:
        cell = cells.setdefault(tuple(rec.get(k) for k in keys), _Cell([], False))
        value = number(rec.get(value_key))
        if value is not None:
            cell.values.append(value)
            cell.invalid |= rec.get("valid") is False and has_placement(rec.get("status", "heuristic"))
    return cells


Facet = str | tuple[str, ...] | None


def _key_of(rec: dict, key: Facet):
    """``rec``'s value of ``key``; a tuple of its values for a tuple of keys."""
    if isinstance(key, tuple):
        return tuple(rec.get(k) for k in key)
    return rec.get(key) if key else None


def _distinct(records: Sequence[dict], key: Facet) -> list:
    """Values of ``key`` in order of first appearance ([None] without a key)."""
    return list(dict.fromkeys(_key_of(rec, key) for rec in records))


def check_keys(records: Sequence[dict], *keys: Facet) -> list[dict]:
    records = list(records)
    if not records:
        raise ValueError("no records to plot")
    for key in (k for key in keys for k in (key if isinstance(key, tuple) else (key,))):
        if key and not any(key in rec for rec in records):
            raise ValueError(f"no record has the key {quote(key)} (keys: {', '.join(sorted(records[0]))})")
    return records


def new_figure(n_panels: int, panel_width: float, title: str, extra_height: float = 0.0):
    """A constrained-layout Agg figure with ``n_panels`` axes, side by side while they fit."""
    ncols = max(1, min(n_panels, int(_MAX_WIDTH // panel_width)))
    nrows = math.ceil(n_panels / ncols)
    width = min(_MAX_WIDTH, max(6.5, ncols * panel_width))
    with rc_context(STYLE):
        fig = Figure(figsize=(width, 1.1 + nrows * (_PANEL_HEIGHT + extra_height)), layout="constrained")
        FigureCanvasAgg(fig)
        axes = list(fig.subplots(nrows, ncols, squeeze=False).ravel())
        fig.suptitle(title)
    for ax in axes[n_panels:]:
        ax.remove()
    return fig, axes[:n_panels]


def set_scale(ax, log: bool) -> None:
    """Log scale, or plain numbers with thousands separators instead of a "1e6" offset."""
    if log:
        ax.set_yscale("log")
    elif max(abs(v) for v in ax.get_ylim()) >= 1e4:
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))


def _panel_title(facet: Facet, value) -> str:
    if isinstance(facet, tuple):
        return ", ".join(f"{metric(k).short}: {v}" for k, v in zip(facet, value))
    return f"{metric(facet).short}: {value}" if facet else ""


def figure_legend(fig: Figure, handles: list) -> None:
    """One legend under the panels, with as many columns as fit the figure's width."""
    entry = 0.55 + 0.07 * max(len(h.get_label()) for h in handles)   # inches: key + label at 9 pt
    ncols = max(1, min(len(handles), 6, int(fig.get_figwidth() // entry)))
    with rc_context(STYLE):
        fig.legend(handles=handles, loc="outside lower center", ncols=ncols, frameon=False)


def _marker_handles(invalid: bool, missing: bool, *, bars: bool) -> list:
    handles = []
    if invalid:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch=_INVALID_HATCH, label=OVERLOADED.meaning)
                       if bars else Line2D([], [], color="black", marker="o", markerfacecolor="white",
                                           linestyle="none", label=OVERLOADED.meaning))
    if missing:
        handles.append(Line2D([], [], marker="X", markerfacecolor="white", markeredgecolor="black", linestyle="none",
                              label=NO_PLACEMENT.meaning))
    return handles


def _mark_missing(ax, xs, colour: str) -> None:
    """A filled X at the foot of the axis for each x without a value."""
    ax.plot(xs, np.full(len(xs), 0.03), marker="X", markersize=7, markerfacecolor=colour, markeredgecolor="black",
            markeredgewidth=0.6, linestyle="none", transform=blended_transform_factory(ax.transData, ax.transAxes),
            clip_on=False)


def plot_metric_by_scheduler(records: Sequence[dict], key: str, *, title: str | None = None, ylabel: str | None = None,
                             group_by: str = "workload", facet: Facet = "cluster", hue: str = "scheduler",
                             log: bool = False, legend_extra: Sequence = ()) -> Figure:
    """Grouped bars of ``key``: one group per ``group_by`` value, one bar per ``hue`` value
    (scheduler), one panel per ``facet`` value; ``legend_extra`` adds legend entries."""
    records = check_keys(records, key, group_by, facet, hue)
    hues = ordered(rec.get(hue) for rec in records)
    palette = colours(hues)
    panels = _distinct(records, facet)
    n_groups = max(len(_distinct([r for r in records if _key_of(r, facet) == p], group_by)) for p in panels)
    panel_width = 0.9 + n_groups * (0.15 * len(hues) + 0.3)
    rotate = n_groups * max(len(str(g)) for g in _distinct(records, group_by)) * 0.075 > 0.8 * min(_MAX_WIDTH, panel_width)
    fig, axes = new_figure(len(panels), panel_width, title or f"{metric(key).long} by {hue}", extra_height=0.5 if rotate else 0.0)
    width = 0.8 / len(hues)
    any_invalid = any_missing = False
    for ax, panel in zip(axes, panels):
        rows = [r for r in records if _key_of(r, facet) == panel]
        groups = _distinct(rows, group_by)
        cells = _cells(rows, (group_by, hue), key)
        missing_x = []
        for j, h in enumerate(hues):
            present = [(i, cells[(g, h)]) for i, g in enumerate(groups) if (g, h) in cells]
            x = np.array([i for i, _ in present], dtype=float) + (j - (len(hues) - 1) / 2) * width
            stats = [c for _, c in present]
            heights = np.array([c.mean for c in stats])
            bars = ax.bar(x, heights, width, color=palette[h], edgecolor="black", linewidth=0.4, label=str(h))
            for patch, cell in zip(bars, stats):
                if cell.invalid:
                    patch.set_hatch(_INVALID_HATCH)
                    any_invalid = True
            spread = [(xi, c) for xi, c in zip(x, stats) if len(c.values) > 1]
            if spread:
                xs, cs = zip(*spread)
                lo, hi = np.array([c.spread for c in cs]).T
                mean = np.array([c.mean for c in cs])
                ax.errorbar(xs, mean, yerr=[mean - lo, hi - mean], fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
            missing_x += [(xi, h) for xi, c in zip(x, stats) if not c.values]
            for xi, height in zip(x, heights if not log else ()):
                if height == 0:  # a zero bar is invisible: say so
                    ax.annotate("0", (xi, 0), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                                fontsize=7, color="#444444")
        set_scale(ax, log)
        for xi, h in missing_x:
            _mark_missing(ax, [xi], palette[h])
        any_missing |= bool(missing_x)
        if not log and key in ("gap_pct", "gap"):
            ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(groups)), [str(g) for g in groups], rotation=30 if rotate else 0,
                      ha="right" if rotate else "center")
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set_xlabel(metric(group_by).label)
        ax.set_ylabel(ylabel or metric(key).label)
        ax.set_title(_panel_title(facet, panel))
    handles = [Patch(facecolor=palette[h], edgecolor="black", linewidth=0.4, label=str(h)) for h in hues]
    figure_legend(fig, handles + _marker_handles(any_invalid, any_missing, bars=True) + list(legend_extra))
    return fig


def plot_gap_to_optimum(records: Sequence[dict], *, title: str | None = None, keys: Sequence[str] = INSTANCE_KEYS,
                        group_by: str = "workload", facet: Facet = "cluster", proven_only: bool = False) -> Figure:
    """Bars of the inter-node cost's gap to the optimum (%) per scheduler and instance; instances
    without a proven optimum are measured against the best lower bound and starred, or left out
    with ``proven_only`` (a weak bound makes such bars meaningless)."""
    gapped = [r for r in add_gaps(check_keys(records, "inter_node_cost"), keys=keys)
              if r["reference"] is not None and (r["reference_proven"] or not proven_only) and not own_job(r)]
    if not gapped:
        raise ValueError("no instance has an optimum or a lower bound: run the optimal scheduler too")
    starred = [r if r["reference_proven"] else {**r, group_by: f"{r.get(group_by)}*"} for r in gapped]
    extra = [Patch(facecolor="none", edgecolor="none", label="* vs lower bound (optimum not proven)")
             ] if any(not r["reference_proven"] for r in gapped) else []
    return plot_metric_by_scheduler(starred, "gap_pct", title=title or "gap to the optimum inter-node traffic",
                                    group_by=group_by, facet=facet, legend_extra=extra)


def plot_time(records: Sequence[dict], *, title: str | None = None, group_by: str = "workload",
              facet: Facet = "cluster") -> Figure:
    """Bars of the solve time per scheduler, log scale."""
    return plot_metric_by_scheduler(records, "seconds", title=title or "solve time by scheduler", group_by=group_by,
                                    facet=facet, log=True)


def plot_lines(records: Sequence[dict], x: str, y: str, *, hue: str = "scheduler", facet: Facet = None,
               title: str | None = None, xlabel: str | None = None, ylabel: str | None = None, log: bool = False) -> Figure:
    """One line of ``y`` against ``x`` per ``hue`` value, one panel per ``facet`` value (e.g. cost
    against task count per scheduler). Numeric ``x`` is a numeric axis, anything else categorical."""
    records = check_keys(records, x, y, hue, facet)
    hues = ordered(rec.get(hue) for rec in records)
    palette, marker = colours(hues), markers(hues)
    numeric_x = all(number(rec.get(x)) is not None for rec in records)
    categories = ordered(rec.get(x) for rec in records) if numeric_x else _distinct(records, x)
    panels = _distinct(records, facet)
    fig, axes = new_figure(len(panels), 5.0, title or f"{metric(y).long} against {metric(x).long}")
    any_invalid = any_missing = False
    for ax, panel in zip(axes, panels):
        cells = _cells([r for r in records if _key_of(r, facet) == panel], (hue, x), y)
        for h in hues:
            pts = [(xv, cells[(h, xv)]) for xv in categories if (h, xv) in cells]
            if not pts:
                continue
            xs = np.array([xv if numeric_x else categories.index(xv) for xv, _ in pts], dtype=float)
            mean = np.array([c.mean for _, c in pts])
            style = dict(color=palette[h], marker=marker[h], markeredgecolor="black", markeredgewidth=0.4)
            ax.plot(xs, mean, linewidth=1.5, markersize=5, label=str(h), **style)
            invalid = np.array([c.invalid for _, c in pts])
            if invalid.any():
                ax.plot(xs[invalid], mean[invalid], linestyle="none", markersize=8, **{**style, "markerfacecolor": "white"})
                any_invalid = True
            if any(len(c.values) > 1 for _, c in pts):
                lo, hi = np.array([c.spread for _, c in pts]).T
                ax.fill_between(xs, lo, hi, color=palette[h], alpha=0.15, linewidth=0)
            empty = xs[np.isnan(mean)]
            if empty.size:
                _mark_missing(ax, empty, palette[h])
                any_missing = True
        set_scale(ax, log)
        if not numeric_x:
            ax.set_xticks(range(len(categories)), [str(c) for c in categories])
        elif len(categories) <= 12:  # few sizes: tick exactly those
            ax.set_xticks(categories, [format_value(c) for c in categories])
        ax.grid(True, axis="x")
        ax.set_xlabel(xlabel or metric(x).label)
        ax.set_ylabel(ylabel or metric(y).label)
        ax.set_title(_panel_title(facet, panel))
    handles = [Line2D([], [], color=palette[h], marker=marker[h], markeredgecolor="black", markeredgewidth=0.4,
                      label=str(h)) for h in hues]
    figure_legend(fig, handles + _marker_handles(any_invalid, any_missing, bars=False))
    return fig


def png_bytes(fig: Figure, *, dpi: int = DPI) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def write_png(fig: Figure, path: str | Path, *, dpi: int = DPI) -> bytes:
    """Write ``fig`` as a PNG (atomically); returns the bytes, e.g. to embed them in a page."""
    data = png_bytes(fig, dpi=dpi)
    atomic_write_bytes(Path(path), data)
    return data


# ---------------------------------------------------------------------------- tables

def pivot_table(records: Sequence[dict], key: str, *, rows: Sequence[str] = INSTANCE_KEYS, columns: str = "scheduler",
                title: str | None = None) -> ReportTable:
    """``key`` with one row per distinct ``rows`` value and one column per ``columns`` value
    (schedulers in display order); several records in a cell are averaged; placements that
    exceed node capacity carry :data:`~.display.OVERLOADED`'s mark."""
    records = check_keys(records, key, columns, *rows)
    col_values = ordered(rec.get(columns) for rec in records)
    cells = _cells(records, (*rows, columns), key)
    row_values = list(dict.fromkeys(tuple(rec.get(k) for k in rows) for rec in records))
    body = []
    for rv in row_values:
        cell_text = []
        for cv in col_values:
            cell = cells.get((*rv, cv))
            cell_text.append(NO_PLACEMENT.symbol if cell is None or not cell.values
                             else format_value(cell.mean) + (OVERLOADED.symbol if cell.invalid else ""))
        body.append((*map(format_value, rv), *cell_text))
    any_invalid = any(c.invalid for c in cells.values())
    m = metric(key)
    return ReportTable(title=title if title is not None else m.label,
                       headers=(*map(metric, rows), *(Metric(str(cv), str(cv)) for cv in col_values)),
                       rows=tuple(body), numeric=(False,) * len(rows) + (True,) * len(col_values),
                       note=legend([OVERLOADED]) if any_invalid else "")


# ---------------------------------------------------------------------------- HTML


@dataclass(frozen=True)
class Section:
    """One part of the page: figures (Matplotlib figures or PNG bytes) then tables."""

    heading: str
    text: str = ""
    how_to_read: str = ""
    figures: Sequence[Figure | bytes] = ()
    tables: Sequence[ReportTable] = ()


_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif;
       margin: 0 auto; padding: 24px 32px 48px; max-width: 1440px; color: #1a1a1a; background: #fff; line-height: 1.45; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-top: 12px; border-top: 1px solid #ddd; }
.meta { color: #555; font-size: 13px; margin: 0 0 12px; }
nav ol { margin: 4px 0 0; padding-left: 22px; font-size: 14px; }
nav a { color: #0b5cad; }
p { max-width: 80ch; }
.how { background: #f3f7fb; border-left: 4px solid #0072b2; padding: 8px 12px; margin: 10px 0 14px; max-width: 80ch; font-size: 14px; }
figure { margin: 14px 0 20px; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #e5e5e5; }
.table-wrap { overflow-x: auto; margin: 10px 0 4px; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; font-size: 14px; padding: 4px 0 6px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e3e3e3; text-align: left; white-space: nowrap; vertical-align: bottom; }
th { background: #f2f2f2; position: sticky; top: 0; font-weight: 600; }
th.num, td.num { text-align: right; }
.unit { font-weight: 400; color: #666; font-size: 11px; }
tbody tr:nth-child(even) { background: #fafafa; }
tr.none td { color: #8a8a8a; font-style: italic; }
tr.overloaded td { background: #fff3e0; }
.note { font-size: 12px; color: #555; margin: 2px 0 14px; white-space: pre-line; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort=ascending]::after { content: " \\25B2"; font-size: 10px; }
table.sortable th[aria-sort=descending]::after { content: " \\25BC"; font-size: 10px; }
input.filter { font: inherit; font-size: 13px; padding: 3px 6px; margin: 8px 0 0; width: 22em; }
"""

# Sorting (click a header; numbers by value, "-" last) and filtering (the box before a table keeps the
# rows whose text contains it). Inline, no library: the page stays one offline file.
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells, body = table.tBodies[0];
  function key(cell, numeric) {
    var text = cell.textContent.trim();
    if (!numeric) return text.toLowerCase();
    var v = parseFloat(text.replace(/[^0-9eE+.\\-]/g, ""));
    return isNaN(v) ? null : v;
  }
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending", numeric = th.classList.contains("num");
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
        if (x === y) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * (up ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
document.querySelectorAll("input.filter").forEach(function (box) {
  var table = box.nextElementSibling.querySelector("table");
  box.addEventListener("input", function () {
    var needle = box.value.toLowerCase();
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
      r.style.display = r.textContent.toLowerCase().indexOf(needle) >= 0 ? "" : "none";
    });
  });
});
"""


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{html.escape(p.strip())}</p>\n" for p in text.split("\n\n") if p.strip())


def _figure_html(fig: Figure | bytes, fallback_alt: str) -> str:
    data = fig if isinstance(fig, bytes) else png_bytes(fig)
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("a section figure must be a Matplotlib figure or PNG bytes")
    alt = fig.get_suptitle() if isinstance(fig, Figure) and fig.get_suptitle() else fallback_alt
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return f'<figure><img src="{src}" alt="{html.escape(alt)}"></figure>\n'


def html_report(title: str, sections: Sequence[Section], *, out_path: str | Path | None = None, intro: str = "",
                generated: datetime | None = None) -> str:
    """The page as a string; also written to ``out_path`` (atomically) when given. No external
    resources: CSS and the table script inline, figures as data URIs."""
    esc = html.escape
    when = (generated or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    toc = "".join(f'<li><a href="#section-{i}">{esc(s.heading)}</a></li>' for i, s in enumerate(sections, 1))
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
             f"<header><h1>{esc(title)}</h1><p class=\"meta\">Generated {esc(when)} by streamplace {esc(__version__)}</p>",
             _paragraphs(intro), f"<nav><ol>{toc}</ol></nav></header>" if len(sections) > 1 else "</header>"]
    for i, sec in enumerate(sections, 1):
        parts.append(f'<section id="section-{i}"><h2>{esc(sec.heading)}</h2>')
        parts.append(_paragraphs(sec.text))
        if sec.how_to_read:
            parts.append(f'<div class="how"><strong>How to read:</strong> {esc(sec.how_to_read)}</div>')
        parts += [_figure_html(fig, sec.heading) for fig in sec.figures]
        parts += [table.html() for table in sec.tables]
        parts.append("</section>")
    parts.append(f"<script>{_SCRIPT}</script></body></html>\n")
    page = "\n".join(parts)
    if out_path is not None:
        atomic_write_bytes(Path(out_path), page.encode("utf-8"))
    return page

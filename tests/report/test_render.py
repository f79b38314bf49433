"""Report module: gaps against hand-made records, plot anatomy, PNG files, self-contained HTML."""

import base64
import io
import re
import struct
from datetime import datetime, timezone
from html.parser import HTMLParser

import pytest
from matplotlib.container import BarContainer
from rich.console import Console

from streamplace import __version__
from streamplace.report import render as report
from streamplace.report.display import NO_PLACEMENT, OVERLOADED, row_mark
from streamplace.report.render import (SCHEDULER_ORDER, Section, add_gaps, colours, format_value, html_report,
                                      pivot_table, plot_gap_to_optimum, plot_lines, plot_metric_by_scheduler, plot_time,
                                      summary_table, write_png)
from streamplace.evaluate.records import result_record
from streamplace.schedulers import make_scheduler
from streamplace.schedulers.status import has_placement
from streamplace.workloads import microbench

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
UNIT = re.compile(r"\S \(.+\)$")


def rec(workload, scheduler, cost, *, cluster="c", status="heuristic", bound=None, valid=True, **extra):
    return {"workload": workload, "cluster": cluster, "scheduler": scheduler, "status": status,
            "inter_node_cost": cost, "lower_bound": bound, "valid": valid, "seconds": 0.5, **extra}


def infeasible(workload, scheduler, cluster="c"):
    return {**rec(workload, scheduler, None, cluster=cluster, status="infeasible", valid=False),
            "throughput": None, "latency_ms": None, "nodes_used": None, "max_utilisation": None}


@pytest.fixture(scope="module")
def real_records():
    """even, t3 and lf on two micro-benchmarks x both clusters, plus the infeasible throughput run."""
    records = []
    for layout in ("diamond", "star"):
        for preset in ("homogeneous", "heterogeneous"):
            problem = microbench.instances(sizes=(10,))
            inst = next(i for i in problem if i.layout == layout and i.cluster == preset)
            for name in ("even", "t3", "lf", "throughput"):
                record = result_record(make_scheduler(name).schedule(inst.problem), include_placement=False)
                records.append({"workload": f"{layout}-10", "layout": layout, "n_tasks": 10, "cluster": preset, **record})
    return records


# ---------------------------------------------------------------------------- gaps


def test_an_overloaded_placement_below_the_optimum_has_no_gap():
    # even overloads a node and sends less than the optimum: no gap, never a negative one
    out = add_gaps([rec("w", "optimal", 10.0, status="optimal"), rec("w", "even", 6.0, valid=False), rec("w", "t3", 12.0)])
    assert [r["gap_pct"] for r in out] == [0.0, None, pytest.approx(20.0)]
    assert out[1]["reference"] == 10.0 and out[1]["gap"] is None


def test_gap_against_the_optimal_record():
    out = add_gaps([rec("w", "optimal", 10.0, status="optimal", bound=9.999999), rec("w", "even", 15.0),
                    rec("w", "t3", 10.0)])
    assert [r["reference"] for r in out] == [10.0, 10.0, 10.0]
    assert all(r["reference_proven"] for r in out)
    assert [r["gap"] for r in out] == [0.0, 5.0, 0.0]
    assert [r["gap_pct"] for r in out] == [0.0, 50.0, 0.0]


def test_gap_per_instance_and_against_lower_bounds():
    records = [
        rec("a", "optimal", 12.0, status="feasible", bound=8.0), rec("a", "even", 10.0),        # bound only
        rec("b", "optimal", 9.0, status="feasible", bound=6.0), rec("b", "t3", 6.0),            # t3 meets the bound
        rec("b", "lf", 4.0, valid=False),                                                      # over capacity: no proof
        rec("c", "even", 7.0),                                                                 # nothing to compare with
        rec("a", "even", 20.0, cluster="other", status="optimal"),                             # another instance
    ]
    out = {(r["workload"], r["cluster"], r["scheduler"]): r for r in add_gaps(records)}
    a_opt, a_even = out[("a", "c", "optimal")], out[("a", "c", "even")]
    assert (a_opt["reference"], a_opt["reference_proven"]) == (8.0, False)
    assert a_opt["gap_pct"] == pytest.approx(50.0) and a_even["gap_pct"] == pytest.approx(25.0)
    assert (out[("b", "c", "t3")]["reference"], out[("b", "c", "t3")]["reference_proven"]) == (6.0, True)
    assert out[("b", "c", "optimal")]["gap_pct"] == pytest.approx(50.0)
    assert out[("b", "c", "lf")]["gap_pct"] is None   # over capacity and below the optimum: no negative gap
    assert out[("c", "c", "even")]["reference"] is None and out[("c", "c", "even")]["gap_pct"] is None
    assert out[("a", "other", "even")]["gap_pct"] == 0.0


def test_gap_of_infeasible_and_zero_optimum():
    out = add_gaps([rec("z", "optimal", 0.0, status="optimal"), rec("z", "even", 3.0), infeasible("z", "lf"),
                    rec("z", "t3", 0.0)])
    assert [r["gap"] for r in out] == [0.0, 3.0, None, 0.0]
    assert [r["gap_pct"] for r in out] == [0.0, None, None, 0.0]   # relative gap to 0 is undefined


# ---------------------------------------------------------------------------- plots


def legend_texts(fig):
    assert len(fig.legends) == 1
    return [t.get_text() for t in fig.legends[0].get_texts()]


def check_anatomy(fig, ylabel_part):
    assert fig.get_suptitle()
    for ax in fig.axes:
        assert UNIT.search(ax.get_ylabel()) and ylabel_part in ax.get_ylabel()
        assert ax.get_xlabel()
        assert ax.get_title()


def test_bars_carry_the_records_values_in_scheduler_order():
    records = [rec("w1", "t3", 4.0), rec("w1", "even", 16.0), rec("w2", "even", 20.0), rec("w2", "t3", 6.0, valid=False),
               rec("w1", "lf", 8.0, cluster="d"), infeasible("w2", "lf", cluster="d")]
    fig = plot_metric_by_scheduler(records, "inter_node_cost")
    check_anatomy(fig, "inter-node traffic (tuples/s)")
    assert [ax.get_title() for ax in fig.axes] == ["cluster: c", "cluster: d"]
    assert legend_texts(fig) == ["even", "t3", "lf", OVERLOADED.meaning, NO_PLACEMENT.meaning]   # the one legend
    bars = {(ax.get_title(), c.get_label()): c for ax in fig.axes for c in ax.containers if isinstance(c, BarContainer)}
    assert [p.get_height() for p in bars[("cluster: c", "even")]] == [16.0, 20.0]
    assert [p.get_height() for p in bars[("cluster: c", "t3")]] == [4.0, 6.0]
    assert [bool(p.get_hatch()) for p in bars[("cluster: c", "t3")]] == [False, True]
    assert [p.get_height() for p in bars[("cluster: d", "lf")]][0] == 8.0
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["w1", "w2"]
    missing = [line for line in fig.axes[1].lines if line.get_marker() == "X"]
    assert len(missing) == 1   # the infeasible lf run on w2


def test_several_seeds_are_averaged_with_a_range():
    records = [rec("w", "even", v, seed=s) for s, v in enumerate((10.0, 14.0, 18.0))]
    fig = plot_metric_by_scheduler(records, "inter_node_cost", facet=None)
    (bars,) = [c for c in fig.axes[0].containers if isinstance(c, BarContainer)]
    assert bars[0].get_height() == pytest.approx(14.0)
    (segments,) = [c for c in fig.axes[0].collections if c.get_segments()]
    assert sorted(y for seg in segments.get_segments() for _, y in seg) == [10.0, 18.0]


def test_gap_time_and_line_plots(real_records):
    opt = [{**r, "scheduler": "optimal", "status": "optimal", "inter_node_cost": 8.0} for r in real_records
           if r["scheduler"] == "t3"]
    fig = plot_gap_to_optimum(real_records + opt)
    check_anatomy(fig, "gap to optimum (%)")
    assert legend_texts(fig)[:4] == ["even", "t3", "throughput", "lf"]
    assert legend_texts(fig)[4] == "optimal"

    fig = plot_time(real_records)
    check_anatomy(fig, "solve time (s)")
    assert all(ax.get_yscale() == "log" for ax in fig.axes)

    sweep = [rec(f"l-{n}", s, float(n * k), n_tasks=n, layout="l") for n in (10, 20, 30)
             for k, s in ((2, "even"), (1, "t3"))]
    fig = plot_lines(sweep, "n_tasks", "inter_node_cost", facet=("layout", "cluster"))
    check_anatomy(fig, "inter-node traffic")
    assert fig.axes[0].get_xlabel() == "tasks (count)"
    assert fig.axes[0].get_title() == "layout: l, cluster: c"
    lines = {line.get_label(): line for line in fig.axes[0].lines}
    assert list(lines["even"].get_ydata()) == [20.0, 40.0, 60.0]
    assert list(lines["t3"].get_xdata()) == [10.0, 20.0, 30.0]


def test_gap_plot_stars_instances_without_a_proven_optimum():
    records = [rec("p", "optimal", 10.0, status="optimal"), rec("p", "even", 12.0),
               rec("q", "optimal", 10.0, status="feasible", bound=5.0), rec("q", "even", 12.0)]
    fig = plot_gap_to_optimum(records)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["p", "q*"]
    assert "* vs lower bound (optimum not proven)" in legend_texts(fig)
    bars = {c.get_label(): [p.get_height() for p in c] for c in fig.axes[0].containers if isinstance(c, BarContainer)}
    assert bars["even"] == pytest.approx([20.0, 140.0])
    other_job = add_gaps(records + [{**rec("p", "throughput", 1.0), "parallelism": {"a": 3}}])
    assert other_job[0]["reference"] == 10.0 and other_job[-1]["gap"] is None
    proven = plot_gap_to_optimum(records, proven_only=True)
    assert [t.get_text() for t in proven.axes[0].get_xticklabels()] == ["p"]


def test_colours_and_order_are_fixed_and_distinct():
    full = colours(SCHEDULER_ORDER)
    assert len(set(full.values())) == len(SCHEDULER_ORDER)
    subset = colours(["optimal", "mine", "even"])
    assert list(subset) == ["even", "optimal", "mine"]
    assert subset["even"] == full["even"] and subset["optimal"] == full["optimal"]
    assert subset["mine"] not in full.values()


def test_bad_plot_input_is_refused():
    with pytest.raises(ValueError, match="no records"):
        plot_metric_by_scheduler([], "inter_node_cost")
    with pytest.raises(ValueError, match="inter_node_cots"):
        plot_metric_by_scheduler([rec("w", "even", 1.0)], "inter_node_cots")
    with pytest.raises(ValueError, match="optimum or a lower bound"):
        plot_gap_to_optimum([rec("w", "even", 1.0)])


def test_write_png_is_a_png_of_the_figure_size(tmp_path):
    fig = plot_metric_by_scheduler([rec("w", "even", 3.0), rec("w", "t3", 2.0)], "inter_node_cost", facet=None)
    path = tmp_path / "cost.png"
    data = write_png(fig, path, dpi=100)
    assert path.read_bytes() == data and data[:8] == PNG_MAGIC and len(data) > 5000
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == tuple(round(v * 100) for v in fig.get_size_inches())
    assert [p.name for p in tmp_path.iterdir()] == ["cost.png"]   # no temporary file left


# ---------------------------------------------------------------------------- tables and HTML


class _Tables(HTMLParser):
    """Cells of every table in a page, and every src/href attribute."""

    def __init__(self):
        super().__init__()
        self.tables, self.links, self._cell = [], [], None

    def handle_starttag(self, tag, attrs):
        self.links += [v for k, v in attrs if k in ("src", "href")]
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def parse(page):
    parser = _Tables()
    parser.feed(page)
    return parser


def test_format_value():
    assert [format_value(v) for v in (None, 16.0, 7, 0.1234567, 2266666.67, 12345, True, [], ["n1", "n2"])] == \
        ["-", "16", "7", "0.1235", "2,266,667", "12,345", "yes", "-", "n1, n2"]


def test_summary_and_pivot_tables():
    records = add_gaps([rec("w", "optimal", 10.0, status="feasible", bound=8.0), rec("w", "even", 12.0),
                        rec("w", "lf", 9.0, valid=False), infeasible("w", "throughput")])
    table = summary_table(records, ["workload", "scheduler", "inter_node_cost", "gap_pct", "not_a_key"])
    assert [h.short for h in table.headers] == ["workload", "scheduler", "inter-node", "gap"]
    assert table.numeric == (False, False, True, True)
    assert [row[3] for row in table.rows] == ["≤ 25", "≤ 50", "-", "-"]   # over capacity: no gap (add_gaps)
    assert table.marks == ("", "", "overloaded", "none")
    assert [row[1] for row in table.rows] == ["optimal", "even", "lf !", "throughput -"]
    assert OVERLOADED.meaning in table.note and NO_PLACEMENT.meaning in table.note and "lower bound" in table.note

    seeds = [rec("w", "even", 10.0), rec("w", "even", 12.0), rec("w", "lf", 5.0, valid=False), infeasible("v", "even")]
    pivot = pivot_table(seeds, "inter_node_cost")
    assert pivot.title == "inter-node traffic (tuples/s)"
    assert [h.short for h in pivot.headers] == ["workload", "cluster", "even", "lf"]
    assert pivot.rows == (("w", "c", "11", "5!"), ("v", "c", "-", "-"))
    console = Console(file=io.StringIO(), width=160)
    console.print(pivot.rich())
    text = console.file.getvalue()
    flat = " ".join(text.split())   # the title wraps over a narrow table
    assert "inter-node traffic (tuples/s)" in flat and "5!" in text and "! exceeds node capacity" in flat


def test_html_is_self_contained_with_the_records_numbers(real_records, tmp_path):
    fig = plot_metric_by_scheduler(real_records, "inter_node_cost")
    png = write_png(plot_time(real_records), tmp_path / "time.png")
    columns = ["workload", "cluster", "scheduler", "status", "inter_node_cost", "throughput", "latency_ms", "seconds"]
    when = datetime(2025, 1, 2, 3, 4, tzinfo=timezone.utc)
    page = html_report("results", [Section("cost", text="one\n\ntwo", how_to_read="lower is better", figures=[fig, png],
                                           tables=[summary_table(real_records, columns)])],
                       out_path=tmp_path / "r.html", generated=when)
    assert (tmp_path / "r.html").read_text() == page
    assert f"streamplace {__version__}" in page and "2025-01-02 03:04 UTC" in page
    assert "<p>one</p>" in page and "<p>two</p>" in page and "How to read:" in page
    assert page.count("<script") == 1 and f"<script>{report._SCRIPT}</script>" in page   # only the table script, inline
    assert "<link" not in page and "url(" not in page and "@import" not in page and " src=\"http" not in page
    parsed = parse(page)
    images = [s for s in parsed.links if s.startswith("data:image/png;base64,")]
    assert len(images) == 2 and all(link.startswith(("data:", "#")) for link in parsed.links)
    assert base64.b64decode(images[1].split(",", 1)[1]) == png
    assert all(base64.b64decode(s.split(",", 1)[1])[:8] == PNG_MAGIC for s in images)

    (table,) = parsed.tables
    assert [cell.split()[0] for cell in table[0]] == ["workload", "cluster", "scheduler", "status", "inter-node",
                                                      "throughput", "latency", "solve"]
    assert len(table) == 1 + len(real_records)
    unplaced_rows = 0
    for row, record in zip(table[1:], real_records):
        mark = row_mark(record)
        name = record["scheduler"] + (f" {mark.symbol}" if mark else "")
        assert row[:4] == [record["workload"], record["cluster"], name, record["status"]]
        for cell, key in zip(row[4:], columns[4:]):
            if record[key] is None:
                assert cell == "-"
            else:
                assert float(cell.replace(",", "")) == pytest.approx(record[key], rel=5e-4, abs=1e-12)
        unplaced_rows += not has_placement(record["status"])
    assert unplaced_rows == 4 and page.count('<tr class="none">') == 4


def test_html_escapes_every_text():
    evil = "<script>alert(1)</script>"
    records = [rec(evil, "even", 3.0, cluster='"c&d"'), infeasible(evil, "t3", cluster='"c&d"')]
    page = html_report(f"title {evil}", [Section(f"heading {evil}", text=evil, how_to_read=evil,
                                                 figures=[plot_metric_by_scheduler(records, "inter_node_cost")],
                                                 tables=[summary_table(records), pivot_table(records, "inter_node_cost")])],
                       intro=evil)
    assert page.count("<script") == 1   # the table script: the text never became one
    # <title>, <h1>, intro, heading, text, how-to-read, 2 summary rows, 1 pivot row
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 9
    assert "&quot;c&amp;d&quot;" in page
    table = parse(page).tables[0]
    assert table[1][0] == evil and table[2][0] == evil   # the parser unescapes: the text survived intact


def test_metric_labels_carry_units():
    for key in ("inter_node_cost", "seconds", "throughput", "latency_ms", "gap_pct", "nodes_used", "max_utilisation"):
        assert UNIT.search(report.metric(key).label), key

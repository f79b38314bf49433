"""The one home of formatting, labels, marks and the results table: what a user reads."""

import io

import pytest
from rich.console import Console

from streamplace.report.display import (BEST, MARKS, NO_PLACEMENT, OVERLOADED, compact, format_pct, format_tau, format_taus, format_value, legend,
                                       metric, row_mark, summary_table)

KEYS = ("scheduler", "status", "valid", "inter_node_cost", "lower_bound", "inter_worker_cost", "throughput",
        "latency_ms", "nodes_used", "max_utilisation", "seconds", "message")


def _records():
    base = {"valid": True, "inter_node_cost": 52667.0, "lower_bound": None, "inter_worker_cost": 0.0,
            "throughput": 1108886.0, "latency_ms": 5.224, "nodes_used": 8, "max_utilisation": 0.0125, "seconds": 0.0012,
            "message": ""}
    return [{**base, "scheduler": "even", "status": "heuristic"},
            {**base, "scheduler": "lns", "status": "optimal", "recommended": True, "lower_bound": 52667.0},
            {**base, "scheduler": "metis", "status": "heuristic", "valid": False},
            {**{k: None for k in base}, "scheduler": "throughput", "status": "not_applicable", "valid": False,
             "seconds": 0.0001, "message": "no profiling: operator 'po1' has no cpu_per_tuple"}]


def _render(width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(*summary_table(_records(), KEYS, title="job", footnote="message").fitted(console))
    return console.file.getvalue()


def test_values_and_labels():
    assert [format_value(v) for v in (None, True, 12345, 0.00012523, 1108886.4, 3.0, [1, 2], {"a": 0.5})] == \
        ["-", "yes", "12,345", "0.0001252", "1,108,886", "3", "1, 2", "a=0.5"]
    assert compact(1.5e6, "throughput") == "1.5M" and compact(45600, "x") == "45.6k" and compact(0.5, "seconds") == "0.50"
    assert format_pct(12.4) == "+12 %" and format_pct(None) == "-"
    assert format_tau(0.8333) == "+0.83" and format_tau(-0.5) == "-0.50" and format_tau(float("nan")) == "-"
    assert format_tau(None, "n/a") == "n/a"
    assert format_taus({"a": 0.5, "b": float("nan")}, "n/a") == "a +0.50, b n/a"
    assert metric("latency_ms").label == "end-to-end latency (ms)" and metric("odd_key").long == "odd key"


def test_marks_are_distinct_and_one_legend_explains_them():
    assert len({m.symbol for m in MARKS}) == len(MARKS)
    recs = _records()
    assert [row_mark(r) for r in recs] == [None, BEST, OVERLOADED, NO_PLACEMENT]
    assert legend([OVERLOADED, None]) == f"{OVERLOADED.symbol} {OVERLOADED.meaning}"


def test_messages_become_numbered_footnotes():
    table = summary_table(_records(), KEYS, footnote="message")
    assert "message" not in [h.short for h in table.headers]
    assert table.rows[3][:3] == ("throughput -", "not_applicable [1]", "-")   # no placement: validity is moot
    assert "[1] throughput: no profiling: operator 'po1' has no cpu_per_tuple" in table.note
    assert table.rows[1][0] == "lns *" and table.rows[2][0] == "metis !"


@pytest.mark.parametrize("width", [200, 118, 70])
def test_no_header_or_cell_is_ever_cut(width):
    text = _render(width)
    assert "…" not in text and max(map(len, text.splitlines())) <= width
    flat = " ".join(text.split())
    for word in ("inter-node", "inter-worker", "throughput", "not_applicable", "1,108,886", "tuples/s", "0.0125"):
        assert word in flat, (width, word)
    assert "cpu_per_tuple" in flat


def test_layouts_by_width():
    wide, narrow = _render(200), _render(70)
    header = next(line for line in wide.splitlines() if line.startswith("scheduler"))
    assert header.split()[:3] == ["scheduler", "status", "valid"]          # one row per scheduler
    assert "inter-node traffic (tuples/s)" in narrow and "scheduler" not in narrow   # one block per scheduler

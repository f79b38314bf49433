"""The autopilot's run plotted: the throughput line, the shift and one marker per applied plan."""

from streamplace.report.timeline import plot_autopilot

DOC = {"workload": "shift", "shift_at": 20.0, "timeline": [{"t": float(t), "throughput": 1000.0 + t} for t in range(0, 40, 2)],
       "plans": [{"t": 26.1, "matched": False}, {"t": 34.0, "matched": True}]}


def test_the_plot_has_the_runs_throughput_the_shift_and_each_plan():
    (ax,) = plot_autopilot(DOC).axes
    data, shift, *plans = ax.get_lines()
    assert list(data.get_xdata()) == [w["t"] for w in DOC["timeline"]]
    assert list(data.get_ydata()) == [w["throughput"] for w in DOC["timeline"]]
    assert list(shift.get_xdata()) == [20.0, 20.0]
    assert [line.get_xdata()[0] for line in plans] == [26.1, 34.0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["measured throughput", "keys turn skewed",
                                                                   "plan applied"]


def test_a_run_without_plans_plots_no_marker():
    (ax,) = plot_autopilot({**DOC, "plans": []}).axes
    assert len(ax.get_lines()) == 2

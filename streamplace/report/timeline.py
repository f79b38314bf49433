"""A run's throughput over time with the autopilot's plans marked (the demo's autopilot step)."""

from __future__ import annotations

from matplotlib.figure import Figure

from .render import new_figure, set_scale

AUTOPILOT_HOW = ("Throughput of the running job per monitor window (every task's tuples per second, as run.json "
                 "counts them), against seconds since its submission. The dotted line is the moment the job's keys "
                 "turned skewed (its spec's phase); each dashed red line is a plan the autopilot applied, which the "
                 "plugin moves the job to on Nimbus' next round. A window no worker wrote (the job moving) shows "
                 "as a gap.")


def plot_autopilot(doc: dict) -> Figure:
    """``doc``: ``timeline`` (``t``, ``throughput``), ``plans`` (``t``), ``shift_at``, ``workload``."""
    fig, (ax,) = new_figure(1, 9.0, f"{doc['workload']}: throughput with the autopilot beside it")
    ax.plot([w["t"] for w in doc["timeline"]], [w["throughput"] for w in doc["timeline"]], marker="o", markersize=3,
            label="measured throughput")
    ax.axvline(doc["shift_at"], color="grey", linestyle=":", label="keys turn skewed")
    for i, plan in enumerate(doc["plans"]):
        ax.axvline(plan["t"], color="tab:red", linestyle="--", label="plan applied" if i == 0 else None)
    ax.set_xlabel("seconds since submission")
    ax.set_ylabel("tuples/s")
    set_scale(ax, False)
    ax.legend(loc="lower right")
    return fig

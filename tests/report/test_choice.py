"""The decision per job on report records: recommended placement, gains over Storm's default,
the Pareto front, and the placement drawing."""

import numpy as np
import pytest

from streamplace.report.choice import _front, decide, plot_pareto, plot_placement, plot_vs_default, recommended
from streamplace.evaluate.records import result_record
from streamplace.model import Problem
from streamplace.schedulers import make_scheduler
from streamplace.workloads import lf


def rec(job, scheduler, traffic, throughput, *, valid=True, latency=10.0):
    return {"workload": job, "cluster": "c", "scheduler": scheduler, "inter_node_cost": traffic, "throughput": throughput,
            "latency_ms": latency, "valid": valid, "status": "heuristic", "placement": {"a[0]": {"node": "n0", "worker": 0}}}


def test_one_recommendation_per_job_and_gains_against_the_default():
    records = [rec("w1", "even", 100.0, 1000.0), rec("w1", "t3", 40.0, 1500.0, latency=5.0), rec("w1", "optimal", 0.0, 600.0),
               rec("w2", "even", 50.0, 200.0), rec("w2", "metis", 10.0, 900.0, valid=False), rec("w2", "t3", 30.0, 300.0)]
    out = decide(records)
    assert [r["scheduler"] for r in recommended(out)] == ["t3", "t3"]
    assert sum(r["recommended"] for r in out) == 2 and [r["job"] for r in recommended(out)] == ["w1@c", "w2@c"]
    t3 = out[1]
    assert t3["traffic_saved_pct"] == pytest.approx(60.0) and t3["throughput_gain_pct"] == pytest.approx(50.0)
    assert t3["latency_change_pct"] == pytest.approx(-50.0) and t3["vs_default"]["throughput_pct"] == pytest.approx(50.0)
    assert out[0]["throughput_gain_pct"] == 0.0
    # the least-traffic placement (optimal, 0) packs: the reason says why it was not chosen
    assert "optimal sends the least inter-node traffic" in t3["reason"] and "highest predicted throughput" in t3["reason"]
    assert out[4]["recommended"] is False   # overloaded: more throughput, never recommended


def test_a_job_without_the_default_has_no_gains_and_still_a_recommendation():
    out = decide([rec("w", "t3", 40.0, 1500.0), rec("w", "metis", 30.0, 900.0)])
    assert all(r["vs_default"] is None and r["throughput_gain_pct"] is None for r in out)
    assert [r["scheduler"] for r in recommended(out)] == ["t3"]


def test_pareto_front_is_the_placements_no_other_beats_on_both():
    points = np.array([[0, 600], [40, 1500], [100, 1000], [30, 1500], [10, 400]], dtype=float)
    assert _front(points).tolist() == [0, 3]   # (0, 600) and (30, 1500); (40, 1500) is beaten by (30, 1500)


def test_plots_on_lf_star_records(tmp_path):
    problem = Problem.from_topology(lf.synthetic("star"), lf.cluster("lf-low"))
    records = [{"workload": "star", "cluster": "lf-low", **result_record(make_scheduler(n).schedule(problem))}
               for n in ("even", "lf", "t3")]
    out = decide(records)
    (chosen,) = recommended(out)
    best = max((r for r in records if r["valid"]), key=lambda r: r["throughput"])   # the rule, worked here
    assert chosen["scheduler"] == best["scheduler"] and chosen["throughput_gain_pct"] >= 0
    pareto = plot_pareto(out)
    (ax,) = pareto.axes
    assert ax.get_title() == "star@lf-low" and "throughput" in ax.get_ylabel()
    fig = plot_vs_default(out)
    assert fig.axes and any(line.get_ydata()[0] == 0 for line in fig.axes[0].get_lines())
    grid = plot_placement(chosen)
    (ax,) = grid.axes
    nodes = {where["node"] for where in chosen["placement"].values()}
    assert len(ax.patches) == len(chosen["placement"]) and len(ax.get_yticks()) == len(nodes)
    colours = {tuple(p.get_facecolor()) for p in ax.patches}
    assert len(colours) == len(problem.topology.operators)   # one colour per operator

"""The campaign scores of the calibrated model (streamplace.fit.operating_points), on run records
made by hand: latency at a fixed rate, calibrated on even's runs."""

import numpy as np
import pytest

from streamplace.fit.operating_points import score_latency
from streamplace.model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from streamplace.model.calibration import TRANSFER_WAIT_S
from streamplace.model.operating_point import OPERATING_POINTS, OperatingPoint

POINT = OperatingPoint("fixed", OPERATING_POINTS["10ms-sleeps"].storm_conf, source_rate=500.0, cpu_budget=8.0)


def problem():
    """Two spout tasks asking 500 tuples/s each (the point's rate) and two sinks on two 4-core
    nodes (the testbed's 8 cores: the cluster as specified)."""
    topo = Topology.build("t", [Operator("s", 2, role="source", source_rate=1.0), Operator("b", 2, role="sink")],
                          [Stream("s", "b")])
    return Problem.from_topology(topo, Cluster.build("c", [Node("n0", 4, cores=4, slots=2), Node("n1", 4, cores=4, slots=2)]))


def record(scheduler, placement, latency_ms, rep, source_rate=1000.0):
    labels = ["s[0]", "s[1]", "b[0]", "b[1]"]
    return {"experiment": "t@c", "scheduler": scheduler, "rep": rep, "job": f"{scheduler}-{rep}",
            "operating_point": POINT.document(), "cpu_budget": 8.0, "bandwidth_scaled": False,
            "placement": placement.to_mapping(labels, problem().cluster), "bolt_throughput": 1000.0,
            "source_rate": source_rate, "latency_ms": {"mean": latency_ms},
            "tasks": {lab: {"executed_per_s": 500.0, "cpu_cores": 0.01 if lab[0] == "s" else 0.02} for lab in labels},
            "streams": {"s>b": {"tuples_per_s": 1000.0}}}


ONE_WORKER = Placement(node=np.array([0, 0, 0, 0]), worker=np.array([0, 0, 0, 0]))
SPLIT = Placement(node=np.array([0, 1, 0, 1]), worker=np.array([0, 0, 0, 0]))


def test_latency_is_scored_against_even_calibrated_and_its_pairs_apart():
    """even (one worker) measured 12.0 and 12.4 ms: it calibrates the model and is predicted at
    their mean. SPLIT sends half its tuples across nodes, each waiting half of the transfer
    thread's 1-ms sleep more: predicted 12.2 + 0.25 ms against 13.1 measured (error 5.0 %). The
    two are 0.9 ms apart, beyond twice the larger spread (0.4 ms), and ordered alike."""
    records = [record("even", ONE_WORKER, 12.0, 0), record("split", SPLIT, 13.0, 0),
               record("even", ONE_WORKER, 12.4, 1), record("split", SPLIT, 13.2, 1)]
    s = score_latency(records, lambda r: problem())
    even, split = s.rows
    assert (even.scheduler, even.runs, even.held_back) == ("even", 2, 0)
    assert even.measured == pytest.approx(12.2) and even.predicted == pytest.approx(12.2)
    assert split.predicted == pytest.approx(12.2 + 0.5 * TRANSFER_WAIT_S * 1e3, abs=0.005)
    assert s.error == pytest.approx(abs(split.predicted - 13.1) / 13.1)
    assert (s.pairs_apart, s.pairs_ordered) == (1, 1) and s.tau == pytest.approx(1.0)
    assert s.point == "fixed" and s.passes
    assert s.constant_error == pytest.approx((13.1 - 12.2) / 13.1)   # every placement guessed at even's 12.2 ms


def test_a_campaign_not_at_a_fixed_rate_is_not_scored_for_latency():
    saturated = OperatingPoint("saturated", POINT.storm_conf, cpu_budget=8.0).document()
    records = [{**record("even", ONE_WORKER, 12.0, 0), "operating_point": saturated}]
    with pytest.raises(ValueError, match="no latency at a fixed rate to score"):
        score_latency(records, lambda r: problem())


def test_a_run_whose_spouts_fell_behind_is_counted():
    records = [record("even", ONE_WORKER, 12.0, 0), record("split", SPLIT, 13.0, 0, source_rate=800.0)]
    assert [r.held_back for r in score_latency(records, lambda r: problem()).rows] == [0, 1]


def test_each_experiment_of_a_campaign_file_is_scored_on_its_own_runs():
    from streamplace.fit.operating_points import per_experiment
    def of(experiment, rec):
        return {**rec, "experiment": experiment}
    records = [of("b@c", record("even", ONE_WORKER, 30.0, 0)), of("a@c", record("even", ONE_WORKER, 12.0, 0)),
               of("a@c", record("split", SPLIT, 13.0, 0)), of("b@c", record("split", SPLIT, 31.0, 0))]
    a, b = per_experiment(records, score_latency, lambda r: problem())
    assert (a.experiment, b.experiment) == ("a@c", "b@c")
    assert [r.measured for r in a.rows] == [12.0, 13.0] and [r.measured for r in b.rows] == [30.0, 31.0]


# ---------------------------------------------------------------------------- the testbed's own noise


def test_split_half_tau_ranks_even_numbered_runs_against_odd_numbered_ones():
    """Halves (runs 0, 2 | runs 1, 3): A 10 | 20, B 15 | 12, C 30 | 40 and D (one run) left out.
    A, B swap places between the halves, C stays on top: tau (2 - 1) / 3."""
    from streamplace.fit.operating_points import split_half_tau
    assert split_half_tau([[10, 20], [15, 12], [30, 40], [5]]) == pytest.approx(1 / 3)
    assert split_half_tau([[1, 2, 3, 4], [3, 9, 3, 9]]) == pytest.approx(1.0)   # means 2 | 3 and 3 | 9
    assert np.isnan(split_half_tau([[1, 2], [3]]))


def test_a_perfect_model_of_two_placements_orders_them_as_the_normal_law_says():
    """A's two repetitions e^0 and e^0.2, B's e^0.5 and e^0.3: log means 0.1 and 0.4; both
    repetitions average 0.25, so the residuals of placement + repetition are -0.1, +0.1, +0.1,
    -0.1: variance 0.04 on one degree of freedom. Means of two runs differ by 0.3 with sd
    sqrt(2 x 0.04 / 2) = 0.2, so they come out in order with probability Phi(1.5) = 0.9332: mean
    tau 2 x 0.9332 - 1 = 0.866 (4,000 draws: standard error 0.008). With eight runs each the sd
    halves: Phi(3) = 0.99865, tau 0.9973."""
    from streamplace.fit.operating_points import perfect_model_taus, tau_ceiling
    runs = [np.exp([0.0, 0.2]), np.exp([0.5, 0.3])]
    assert tau_ceiling(runs) == pytest.approx(0.8664, abs=0.03)
    assert tau_ceiling(runs, per_placement=8) == pytest.approx(0.9973, abs=0.004)
    taus = perfect_model_taus(runs)
    assert set(np.unique(taus)) == {-1.0, 1.0} and len(taus) == 4000
    assert tau_ceiling(runs, quantile=0.05) == -1.0    # about 7 % of the draws swap them


def test_a_drift_that_moves_a_whole_repetition_reorders_nothing():
    """Every placement ran twice and the second repetition doubled them all: B stays 1.5 x A and C
    2 x A, so the means keep their order in every draw. Pooled within placements (B given a third
    run, so the repetitions no longer line up) the same doubling reads as noise."""
    from streamplace.fit.operating_points import tau_ceiling
    assert tau_ceiling([[100, 200], [150, 300], [200, 400]]) == 1.0
    assert tau_ceiling([[100, 200], [150, 300, 150], [200, 400]]) < 0.9


def test_the_tau_ceiling_needs_noise_to_fall_and_runs_to_say_anything():
    from streamplace.fit.operating_points import tau_ceiling
    assert tau_ceiling([[5.0, 5.0], [7.0, 7.0], [6.0, 6.0]]) == 1.0        # no run differs from its mean
    assert np.isnan(tau_ceiling([[5.0], [7.0]]))                           # no placement run twice
    assert np.isnan(tau_ceiling([[5.0, 5.0], [5.0, 5.0]]))                 # every mean alike
    noisy = [[100, 140], [110, 90], [120, 100], [95, 130]]   # placements that swap places between repetitions
    assert tau_ceiling(noisy, per_placement=2) < tau_ceiling(noisy, per_placement=6) < 1.0
    assert tau_ceiling(noisy, quantile=0.05) < tau_ceiling(noisy)


def test_a_point_score_carries_the_testbed_noise_of_its_runs():
    """even 1,000 and 1,100 bolt tuples/s, split 1,200 and 1,050: the halves order them oppositely."""
    from streamplace.fit.operating_points import score
    def run(scheduler, placement, rep, value):
        return {**record(scheduler, placement, 12.0, rep), "bolt_throughput": value}
    s = score([run("even", ONE_WORKER, 0, 1000.0), run("split", SPLIT, 0, 1200.0),
               run("even", ONE_WORKER, 1, 1100.0), run("split", SPLIT, 1, 1050.0)], lambda r: problem())
    assert s.split_half_tau == pytest.approx(-1.0)
    assert -1.0 < s.tau_ceiling < 1.0 and s.tau_ceiling_p5 <= s.tau_ceiling

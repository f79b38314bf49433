"""The model calibrated on a run: costs read from the run, the CPU bound scaled to it, Storm's
flow control (max spout pending) worked by hand."""

import dataclasses

import numpy as np
import pytest

from streamplace.model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from streamplace.model.calibration import (PARK_S, ack_slots, SLEEP_OVERSHOOT_S, TRANSFER_WAIT_S, MeasuredRun, calibrate,
                                           calibrated_topology, mean_run, pending_time)
from streamplace.model.graph import key_shares
from streamplace.model.operating_point import CAMPAIGN_CONF, OPERATING_POINTS, OperatingPoint
from streamplace.model.performance import CostModel, predict

ACKING = OperatingPoint("acking", CAMPAIGN_CONF, ackers=1, max_spout_pending=10)


def job(bandwidth=1.25e8):
    topo = Topology.build("t", [Operator("s", 2, role="source", source_rate=1e5, tuple_bytes=100.0),
                                Operator("b", 2, role="sink")], [Stream("s", "b")])
    cluster = Cluster.build("c", [Node("n0", 4, cores=4, slots=2, bandwidth=bandwidth),
                                  Node("n1", 4, cores=4, slots=2, bandwidth=bandwidth)])
    return Problem.from_topology(topo, cluster)


ONE_WORKER = Placement(node=np.array([0, 0, 0, 0]), worker=np.array([0, 0, 0, 0]))
SPLIT = Placement(node=np.array([0, 1, 0, 1]), worker=np.array([0, 0, 0, 0]))   # s[i] and b[i] on node i


def run(point, placement=ONE_WORKER, source_rate=1000.0, bolt_rate=1000.0, cpu=(0.01, 0.01, 0.02, 0.02)):
    labels = ["s[0]", "s[1]", "b[0]", "b[1]"]
    tasks = {lab: (source_rate / 2 if lab.startswith("s") else bolt_rate / 2, c) for lab, c in zip(labels, cpu)}
    return MeasuredRun(point, placement, bolt_rate, source_rate, tasks, {("s", "b"): bolt_rate})


def test_costs_come_from_the_run():
    """CPU per tuple = executor CPU / tuples executed, less the engine's per-tuple cost the model
    adds back; a sink keeps its selectivity (it sends nothing)."""
    model = CostModel()
    topo = calibrated_topology(job().topology, run(ACKING), model, job().cluster)
    s, b = topo.operators
    assert s.cpu_per_tuple == pytest.approx(0.02 / 1000 - model.task_cpu_per_tuple)
    assert b.cpu_per_tuple == pytest.approx(0.04 / 1000 - model.task_cpu_per_tuple)


def test_serialising_remote_emits_is_left_out_of_a_measured_cost():
    """SPLIT: s[i] and b[i] alone in node i's worker, shuffle: each spout task sends half its 500
    tuples/s to the other worker, 250/s, which its executor thread serialised (Storm serialises a
    remote emit on the sender's thread) at the model's cost per side of a crossing tuple, 1.36 us +
    5 ns x 100 bytes = 1.86 us: 0.000465 cores of each spout task's 0.01 were not the spout's own
    work. The sink sends nothing: its cost is as measured."""
    model = CostModel()
    ser = model.ser_cpu_per_tuple + model.ser_cpu_per_byte * 100.0
    assert ser == pytest.approx(1.86e-6)
    s, b = calibrated_topology(job().topology, run(ACKING, SPLIT), model, job().cluster).operators
    assert s.cpu_per_tuple == pytest.approx((0.02 - 2 * 250 * 1.86e-6) / 1000 - model.task_cpu_per_tuple)
    assert b.cpu_per_tuple == pytest.approx(0.04 / 1000 - model.task_cpu_per_tuple)
    # what the model then charges the run's own placement for the spouts: their own work and the
    # serialising, once: the executors' measured cores plus the receiving side of the crossing tuples
    # (deserialised on the Netty thread)
    calibrated = Problem.from_topology(Topology.build("t", [s, b], list(job().topology.streams)), job().cluster)
    perf = predict(calibrated, SPLIT, model)
    at_run = 1000.0 / float(perf.in_rate[:2].sum())   # the run's spout rate over the unit rate
    assert perf.cpu_demand.sum() * at_run == pytest.approx(0.02 + 0.04 + 2 * 250 * 1.86e-6)


def test_a_bolts_selectivity_is_what_it_sent_per_tuple_executed():
    topo = Topology.build("t", [Operator("s", 1, role="source", source_rate=10.0), Operator("m", 1),
                                Operator("k", 1, role="sink")], [Stream("s", "m"), Stream("m", "k")])
    measured = MeasuredRun(ACKING, Placement(node=np.zeros(3, int), worker=np.zeros(3, int)), 300.0, 100.0,
                           {"s[0]": (100.0, 0.0), "m[0]": (100.0, 0.0), "k[0]": (250.0, 0.0)},
                           {("s", "m"): 100.0, ("m", "k"): 250.0})
    assert [op.selectivity for op in calibrated_topology(topo, measured, CostModel(), job().cluster).operators] == [1.0, 2.5, 1.0]


def test_flow_bound_by_hand_in_one_worker():
    """2 spouts, max pending 10, 10-ms sleeps, everything in one worker: the data hop and the
    sink's ack each wait for an idle bolt (half a 10-ms sleep); the acker's ack reaches the spout
    in its worker at no cost. R = 10 ms, T = max(S', R + S'/2) with S' = 10.08 ms."""
    model = calibrate(job(), run(ACKING, source_rate=1e9, bolt_rate=1e9))   # a run above the bound: no residual
    assert model.round_trip_residual_s == 0.0
    assert model.round_trip_s(ONE_WORKER) == pytest.approx(0.010)
    sleep = 0.010 + SLEEP_OVERSHOOT_S
    assert pending_time(0.010, ACKING) == pytest.approx(0.010 + sleep / 2)
    pred = model.predict(ONE_WORKER)
    spouts = 2 * 10 / (0.010 + sleep / 2)
    assert pred.bound == "flow control"
    assert pred.bolt_throughput == pytest.approx(spouts) and pred.throughput == pytest.approx(2 * spouts)


def test_flow_bound_across_nodes_adds_transfer_and_wire_time():
    """s[i] and b[i] on node i, one acker on n0's worker (the first in (node, worker) order). The
    shuffle sends half of each spout's tuples across: data path 5 ms + half of (0.5 ms transfer +
    106 B over the link). Ack from b[0] is local, from b[1] crosses (bolt wake always); the
    acker's ack to s[0] is local, to s[1] crosses (no wake: the spout's is in T)."""
    bw = 1e6
    model = calibrate(job(bw), run(ACKING, source_rate=1e9, bolt_rate=1e9))
    wire = (100.0 + CostModel().header_bytes) / bw
    ack_wire = (40.0 + CostModel().header_bytes) / bw
    data = 0.005 + 0.5 * (TRANSFER_WAIT_S + wire)
    ack = 0.005 + 0.5 * (TRANSFER_WAIT_S + ack_wire) + 0.5 * (TRANSFER_WAIT_S + ack_wire)
    assert model.round_trip_s(SPLIT) == pytest.approx(data + ack)


def test_the_run_calibrates_the_round_trip_and_is_predicted_back():
    """Measured 1,000 spout tuples/s from 2 spouts at 10 pending: T = 20 ms, so R = 20 ms - S'/2,
    of which the model explains 10 ms; the rest is added to every placement."""
    model = calibrate(job(), run(ACKING, source_rate=1000.0, bolt_rate=1000.0))
    sleep = 0.010 + SLEEP_OVERSHOOT_S
    assert model.round_trip_residual_s == pytest.approx(0.020 - sleep / 2 - 0.010)
    assert model.predict(ONE_WORKER).bolt_throughput == pytest.approx(1000.0)
    assert model.predict(SPLIT).bolt_throughput < 1000.0   # more hops between workers: a longer round trip


def test_storms_default_waits_park_rather_than_sleep():
    point = OperatingPoint("defaults", {}, ackers=1, max_spout_pending=50)
    model = calibrate(job(), run(point, source_rate=1e9, bolt_rate=1e9))
    assert model.round_trip_s(ONE_WORKER) == pytest.approx(2 * PARK_S)
    # R far below S'/2: one window of 50 per 1-ms sleep
    assert model.predict(ONE_WORKER).bolt_throughput == pytest.approx(2 * 50 / (0.001 + SLEEP_OVERSHOOT_S))


def test_without_acking_the_cpu_bound_is_scaled_to_the_run():
    point = OPERATING_POINTS["10ms-sleeps"]
    problem = job()
    model = calibrate(problem, run(point, source_rate=4000.0, bolt_rate=4000.0))
    uncalibrated = predict(model.problem, ONE_WORKER, CostModel())
    unit = float(uncalibrated.in_rate[2:].sum())
    # every task's tuples: 4,000 emitted by the spouts and 4,000 executed by the bolts
    assert model.capacity_factor == pytest.approx(8000.0 / uncalibrated.throughput)
    assert model.predict(ONE_WORKER).throughput == pytest.approx(8000.0)
    assert model.predict(ONE_WORKER).bolt_throughput == pytest.approx(4000.0)
    assert model.predict(ONE_WORKER).bound == "cpu"
    # the same factor on another placement: the CPU model's ratio between the two is kept
    other = predict(model.problem, SPLIT, CostModel())
    assert model.predict(SPLIT).bolt_throughput == pytest.approx(model.capacity_factor * other.max_scale * unit)


def test_the_capacity_factor_is_read_at_the_busiest_node_at_the_rates_the_run_executed():
    """Two saturated spouts that emitted 3,000 and 1,000 tuples/s, not alike as the model has them:
    worked by hand with every engine cost 0, each node (one core) hosting a spout (0.1 ms a tuple)
    and a bolt (0.2 ms) that executed 2,000/s. n0 used 3000 x 0.1 ms + 2000 x 0.2 ms = 0.7 of its
    core, n1 0.5: the factor is 0.7. Measured over predicted throughput would be 8,000 over the
    13,333 of equal spouts (each node 1 / 0.3 ms per spout tuple and bolt tuple), 0.6."""
    topo = Topology.build("split", [Operator("s", 2, role="source", source_rate=1e5, cpu_per_tuple=1e-4),
                                    Operator("b", 2, role="sink", cpu_per_tuple=2e-4)], [Stream("s", "b")])
    cluster = Cluster.build("two", [Node(f"n{i}", 4, cores=1, slots=1) for i in range(2)])
    problem = Problem.from_topology(topo, cluster)
    free = CostModel(task_cpu_per_tuple=0.0, ser_cpu_per_tuple=0.0, ser_cpu_per_byte=0.0, worker_cpu=0.0, node_cpu=0.0,
                     executor_cpu=0.0, connection_cpu=0.0)
    placement = Placement(node=np.array([0, 1, 0, 1]), worker=np.zeros(4, int))
    measured = MeasuredRun(OPERATING_POINTS["10ms-sleeps"], placement, 4000.0, 4000.0,
                           {"s[0]": (3000.0, 0.3), "s[1]": (1000.0, 0.1), "b[0]": (2000.0, 0.4), "b[1]": (2000.0, 0.4)},
                           {("s", "b"): 4000.0})
    model = calibrate(problem, measured, free)
    assert model.capacity_factor == pytest.approx(0.7)
    assert predict(problem, placement, free).throughput == pytest.approx(4 * 1 / 3e-4)
    assert model.predict(placement).throughput == pytest.approx(0.7 * 4 / 3e-4)


def test_at_the_models_own_rates_the_capacity_factor_is_the_runs_scale_over_the_models():
    """A run whose tasks executed exactly ``k`` times the model's unit rates (a source counting
    its emits, here half its records) with every engine cost the bundled model's: its factor is
    ``k`` over the model's sustainable scale of that placement."""
    topo = Topology.build("halves", [Operator("s", 2, role="source", source_rate=1e4, selectivity=0.5, cpu_per_tuple=1e-4),
                                     Operator("b", 2, role="sink", cpu_per_tuple=2e-4)], [Stream("s", "b")])
    cluster = Cluster.build("two", [Node(f"n{i}", 4, cores=1, slots=2) for i in range(2)])
    problem = Problem.from_topology(topo, cluster)
    placement = Placement(node=np.array([0, 1, 1, 0]), worker=np.array([0, 0, 1, 1]))
    model = CostModel()
    unit = predict(problem, placement, model)
    k = 0.02
    records = k * unit.in_rate   # s: records per second; the monitor counts a spout's emits
    tasks = {"s[0]": (records[0] * 0.5, 0.1), "s[1]": (records[1] * 0.5, 0.1), "b[0]": (records[2], 0.1), "b[1]": (records[3], 0.1)}
    measured = MeasuredRun(OPERATING_POINTS["10ms-sleeps"], placement, records[2:].sum(), records[:2].sum() * 0.5, tasks,
                           {("s", "b"): records[2:].sum()})
    assert calibrate(problem, measured, model).capacity_factor == pytest.approx(k / unit.max_scale)


def test_a_calibrated_model_predicts_only_its_own_job():
    model = calibrate(job(), run(ACKING))
    other = Problem.from_topology(Topology.build("u", [Operator("s", 1, role="source", source_rate=1.0),
                                                       Operator("b", 1, role="sink")], [Stream("s", "b")]), job().cluster)
    assert model.covers(job()) and not model.covers(other)
    with pytest.raises(ValueError, match="the calibration run is of t on c, not of u on c"):
        model.summary(other, Placement(node=np.zeros(2, int), worker=np.zeros(2, int)))


def test_runs_of_one_placement_average_and_others_do_not():
    a, b = run(ACKING, source_rate=800.0, bolt_rate=800.0), run(ACKING, source_rate=1200.0, bolt_rate=1200.0)
    both = mean_run([a, b])
    assert both.source_rate == 1000.0 and both.tasks["b[0]"][0] == pytest.approx(500.0)
    with pytest.raises(ValueError, match="different placements"):
        mean_run([a, run(ACKING, placement=SPLIT)])


def test_an_all_stream_counts_each_emit_once_not_once_per_receiver():
    """The monitor counts a tuple per receiving task: m sends 100/s to each of k's 3 tasks."""
    topo = Topology.build("t", [Operator("s", 1, role="source", source_rate=10.0), Operator("m", 1),
                                Operator("k", 3, role="sink")], [Stream("s", "m"), Stream("m", "k", grouping="all")])
    measured = MeasuredRun(ACKING, Placement(node=np.zeros(5, int), worker=np.zeros(5, int)), 400.0, 100.0,
                           {"s[0]": (100.0, 0.0), "m[0]": (100.0, 0.0)}, {("s", "m"): 100.0, ("m", "k"): 300.0})
    assert calibrated_topology(topo, measured, CostModel(), job().cluster).operators[1].selectivity == 1.0


def test_a_run_at_its_sources_own_rate_calibrates_the_costs_only():
    """The spouts emitted all they asked (1,000 of 1,000/s): neither bound showed, so neither the
    capacity nor the round trip is scaled to the run."""
    for point in (OPERATING_POINTS["10ms-sleeps"], ACKING):
        model = calibrate(job(), dataclasses.replace(run(point), offered_source_rate=1000.0))
        assert model.capacity_factor == 1.0 and model.round_trip_residual_s == 0.0
    held = calibrate(job(), dataclasses.replace(run(ACKING), offered_source_rate=5000.0))
    assert held.round_trip_residual_s > 0   # held back by max spout pending: the round trip is calibrated


def test_with_acking_every_placements_latency_is_its_round_trip():
    model = calibrate(job(), run(ACKING, source_rate=1e9, bolt_rate=1e9))
    for placement in (ONE_WORKER, SPLIT):
        assert model.summary(job(), placement)["latency_ms"] == pytest.approx(model.predict(placement).round_trip_ms)


def test_fixed_costs_are_scaled_to_the_cpu_the_runs_nodes_used():
    """n0 hosts the run's one worker: its measured cores less the tuples' modelled work, over the
    model's fixed costs of n0 (a worker, four executors, the node), is the factor."""
    from streamplace.model.calibration import fixed_cpu_factor
    model = CostModel()
    measured = run(OPERATING_POINTS["10ms-sleeps"], source_rate=1000.0, bolt_rate=1000.0)
    problem = Problem.from_topology(calibrated_topology(job().topology, measured, model, job().cluster), job().cluster)
    perf = predict(problem, ONE_WORKER, model)
    work = 2000.0 / float(perf.in_rate.sum()) * perf.cpu_demand[0]
    fixed = model.worker_cpu + 4 * model.executor_cpu + model.node_cpu   # no connection: one worker
    with_cpu = dataclasses.replace(measured, node_cores={"n0": work + 3 * fixed, "n1": 0.0})
    assert fixed_cpu_factor(problem, with_cpu, model) == pytest.approx(3.0)
    assert fixed_cpu_factor(problem, measured, model) == 1.0   # no node CPU measured


def test_messages_crossing_workers_by_hand():
    """SPLIT: s[i] and b[i] in node i's one worker; 1,000 spout tuples/s shuffled, 250/s on each
    of the four edges. Data crossing workers: 250 sent and 250 received per node. One acker, in
    the first worker by (node, worker) order (n0): s[1] sends its 500 emits' ack_inits and gets
    their 500 acks back across, b[1] its 500 acks: 1,500 more at each end."""
    from streamplace.model.calibration import run_messages
    assert run_messages(job(), run(ACKING, SPLIT)) == pytest.approx([2000.0, 2000.0])
    assert run_messages(job(), run(OPERATING_POINTS["10ms-sleeps"], SPLIT)) == pytest.approx([500.0, 500.0])
    assert run_messages(job(), run(ACKING, ONE_WORKER)) == pytest.approx([0.0, 0.0])
    two = OperatingPoint("two-ackers", CAMPAIGN_CONF, ackers=2, max_spout_pending=10)
    # one acker per worker: half of each task's ack messages cross: s[i] 1,000 / 2, b[i] 500 / 2,
    # from both nodes, counted at both ends (1,500), plus the 500 data
    assert run_messages(job(), run(two, SPLIT)) == pytest.approx([2000.0, 2000.0])
    three = OperatingPoint("three-ackers", CAMPAIGN_CONF, ackers=3, max_spout_pending=10)
    # ackers on n0, n1, n0: n1's tasks send 2/3 of theirs across, n0's 1/3: (1,500 x 2/3 + 1,500 x 1/3) + 500
    assert run_messages(job(), run(three, SPLIT)) == pytest.approx([2000.0, 2000.0])


def _measured_cpu(point, placement, node_cores, cpu=(0.05, 0.05, 0.05, 0.05)):
    """``run`` with its nodes' cores measured (and its tasks' executor cores: SPLIT puts s[i] and
    b[i] on node i, ONE_WORKER all four on n0)."""
    return dataclasses.replace(run(point, placement, cpu=cpu), node_cores=node_cores)


def test_the_message_cost_is_the_cpu_outside_executors_less_fixed_costs_per_message():
    """Each node: one worker, linked both ways with the other (two connection ends): fixed
    0.01 + 0.02 + 2 x 0.005 = 0.04 cores outside executors. (0.4 - 0.04) + (0.6 - 0.04) cores
    over 4,000 messages/s."""
    from streamplace.model.calibration import message_cpu_s
    model = CostModel(worker_cpu=0.01, node_cpu=0.02, connection_cpu=0.005)
    measured = _measured_cpu(ACKING, SPLIT, {"n0": 0.5, "n1": 0.7})   # executors: 0.1 cores per node
    assert message_cpu_s(job(), measured, model) == pytest.approx(0.92 / 4000)
    assert message_cpu_s(job(), run(ACKING, SPLIT), model) is None          # no node CPU measured
    assert message_cpu_s(job(), _measured_cpu(ACKING, ONE_WORKER, {"n0": 0.5}), model) is None  # no message


def test_with_acking_every_placement_pays_for_its_own_messages():
    """Calibrated on SPLIT's run, every placement's CPU demand holds its messages at the run's
    cost: SPLIT's 2 x 1,000-per-node at 1,000 spout tuples/s scale with the unit load (two
    messages per spout tuple per node); ONE_WORKER has none. The fixed costs are not rescaled."""
    measured = _measured_cpu(ACKING, SPLIT, {"n0": 0.5, "n1": 0.7})
    model = calibrate(job(), measured)
    cost = model.message_cpu_s
    assert cost > 0 and model.base.worker_cpu == CostModel().worker_cpu
    plain = predict(model.problem, SPLIT, model.base)
    unit_spouts = float(plain.in_rate[job().topology.source_task_mask].sum())
    assert model.cpu_bound(SPLIT).cpu_demand == pytest.approx(plain.cpu_demand + cost * 2 * unit_spouts)
    assert model.cpu_bound(ONE_WORKER).cpu_demand == pytest.approx(predict(model.problem, ONE_WORKER, model.base).cpu_demand)
    assert f"{cost * 1e6:.3g} us of CPU per message across workers" in model.describe()
    plain_run = calibrate(job(), run(ACKING, SPLIT))   # the run measured no node CPU: as before
    assert plain_run.message_cpu_s == 0.0 and "per message" not in plain_run.describe()


def test_a_run_cpu_bound_by_its_messages_is_predicted_back_and_sets_the_capacity():
    """Nodes nearly out of their 4 cores with 1,000 spout tuples/s in flight across workers: the
    messages make SPLIT CPU-bound below its flow bound, the run is predicted back through the
    capacity factor, and ONE_WORKER (no message crosses a worker) is held by flow control."""
    measured = _measured_cpu(ACKING, SPLIT, {"n0": 3.9, "n1": 3.9}, cpu=(0.025,) * 4)
    model = calibrate(job(), measured)
    own = model.predict(SPLIT)
    assert own.bound == "cpu" and own.throughput == pytest.approx(measured.throughput)
    assert model.capacity_factor != 1.0 and model.round_trip_residual_s == 0.0
    assert model.predict(ONE_WORKER).bound == "flow control"


def test_a_declared_cpu_cost_is_kept_and_an_undeclared_one_measured():
    topo = Topology.build("t", [Operator("s", 2, role="source", source_rate=10.0, cpu_per_tuple=5e-5),
                                Operator("b", 2, role="sink")], [Stream("s", "b")])
    model = CostModel()
    s, b = calibrated_topology(topo, run(ACKING), model, job().cluster).operators
    assert s.cpu_per_tuple == 5e-5
    assert b.cpu_per_tuple == pytest.approx(0.04 / 1000 - model.task_cpu_per_tuple)


def test_a_fields_streams_shares_are_what_its_receivers_tasks_executed():
    """s -> k by fields, k's only input: k's three tasks executed 600, 300 and 100 tuples/s, so the
    calibrated stream sends them 0.6, 0.3 and 0.1 whatever the declared keys give; a stream into an
    operator with two inputs keeps its declared distribution."""
    topo = Topology.build("t", [Operator("s", 1, role="source"), Operator("k", 3, role="sink", cpu_per_tuple=1e-4),
                                Operator("r", 1, role="source"), Operator("j", 2, role="sink")],
                          [Stream("s", "k", "fields", key="w"), Stream("s", "j", "fields", key="w"),
                           Stream("r", "j", "shuffle")])
    tasks = {"s[0]": (1000.0, 0.0), "k[0]": (600.0, 0.0), "k[1]": (300.0, 0.0), "k[2]": (100.0, 0.0),
             "r[0]": (10.0, 0.0), "j[0]": (1000.0, 0.0), "j[1]": (10.0, 0.0)}
    measured = MeasuredRun(ACKING, Placement(node=np.zeros(7, int), worker=np.zeros(7, int)), 2010.0, 1010.0, tasks,
                           {("s", "k"): 1000.0, ("s", "j"): 1000.0, ("r", "j"): 10.0})
    streams = calibrated_topology(topo, measured, CostModel(), job().cluster).streams
    assert streams[0].shares == pytest.approx((0.6, 0.3, 0.1))
    assert streams[1].shares is None and streams[2].shares is None
    assert key_shares(streams[0], 3).tolist() == pytest.approx([0.6, 0.3, 0.1])


def rate_job():
    """job() with its spouts asking for what the runs below emitted: 1,000 tuples/s."""
    problem = job()
    s, b = problem.topology.operators
    return Problem.from_topology(Topology.build("t", [dataclasses.replace(s, source_rate=1000.0), b],
                                                problem.topology.streams), problem.cluster)


def rate_run(point, latency_ms=None, placement=ONE_WORKER):
    return dataclasses.replace(run(point, placement), offered_source_rate=1000.0, latency_ms=latency_ms)


def test_latency_at_the_sources_rate_by_hand():
    """At 1,000 tuples/s b's CPU work per tuple is 4e-5 s (0.04 cores over 1,000 tuples/s) at a
    utilisation under 2 % of 4 cores, so its M/M/1 sojourn is 0.04 ms to within a microsecond.
    10-ms sleeps: the hop waits half a sleep for the idle bolt, 5 ms; all in one worker, 5.04 ms.
    s[i] and b[i] on node i: the shuffle sends half the tuples across nodes, where they also wait
    half of the transfer thread's 1-ms sleep: 5.04 + 0.25 ms (the wire's 106 bytes and the
    deserialisation are about a microsecond). Storm's defaults: the bolt is still parking, one
    parkNanos, 0.05 ms."""
    sleeps = calibrate(rate_job(), rate_run(OPERATING_POINTS["10ms-sleeps"]))
    assert sleeps.at_offered_rate and sleeps.latency_residual_s == 0.0   # the run measured no latency
    assert sleeps.latency_at_rate_ms(ONE_WORKER) == pytest.approx(5.04, abs=0.002)
    assert sleeps.latency_at_rate_ms(SPLIT) == pytest.approx(5.04 + 0.5 * TRANSFER_WAIT_S * 1e3, abs=0.005)
    defaults = calibrate(rate_job(), rate_run(OPERATING_POINTS["storm-defaults"]))
    assert defaults.latency_at_rate_ms(ONE_WORKER) == pytest.approx(PARK_S * 1e3 + 0.04, abs=0.002)


def test_the_runs_latency_is_predicted_back_and_its_residual_carried_to_every_placement():
    """Calibrated on a run that measured 12 ms in one worker (modelled 5.04 ms: the residual is
    6.96 ms): that placement is predicted at 12 ms, and SPLIT 0.25 ms more (half the tuples wait
    for a transfer thread). A run measured below its modelled hops (2 ms: busy bolts do not sleep)
    gives a negative residual, carried the same way."""
    point = OPERATING_POINTS["10ms-sleeps"]
    model = calibrate(rate_job(), rate_run(point, latency_ms=12.0))
    assert model.latency_residual_s == pytest.approx(0.012 - 0.00504, abs=2e-6)
    assert model.predict(ONE_WORKER, latency=True).latency_ms == pytest.approx(12.0)
    assert model.summary(rate_job(), SPLIT)["latency_ms"] == pytest.approx(12.25, abs=0.005)
    assert "latency at that rate: +6.96 ms beyond the modelled hops" in model.describe()
    below = calibrate(rate_job(), rate_run(point, latency_ms=2.0))
    assert below.latency_residual_s == pytest.approx(0.002 - 0.00504, abs=2e-6)
    assert below.latency_at_rate_ms(ONE_WORKER) == pytest.approx(2.0) and below.latency_at_rate_ms(SPLIT) == pytest.approx(2.25, abs=0.005)
    unmeasured = calibrate(rate_job(), rate_run(point))
    assert "the run measured none" in unmeasured.describe()


def test_latency_at_a_rate_is_not_predicted_where_the_rate_is_not_the_sources():
    """Held back (saturated, or by max spout pending), or with acking on (the round trip stands):
    no latency at the sources' rate."""
    saturated = calibrate(rate_job(), dataclasses.replace(rate_run(OPERATING_POINTS["10ms-sleeps"]), offered_source_rate=5000.0))
    acking = calibrate(rate_job(), rate_run(ACKING, latency_ms=12.0))
    for model in (saturated, acking):
        assert not model.at_offered_rate and model.predict(ONE_WORKER, latency=True).latency_ms is None
    assert acking.latency_residual_s == 0.0


def test_the_latency_refers_to_the_runs_rate_not_the_topology_files():
    """A topology file asking 100,000 tuples/s of a job run at 1,000: the latency is the run's
    (5.04 ms in one worker, as by hand above), not that of a rate nothing sustains."""
    problem = job()   # its spouts ask 1e5 tuples/s
    model = calibrate(problem, dataclasses.replace(run(OPERATING_POINTS["10ms-sleeps"]), offered_source_rate=1000.0))
    assert model.latency_at_rate_ms(ONE_WORKER) == pytest.approx(5.04, abs=0.002)


def test_a_placement_that_cannot_sustain_the_runs_rate_has_no_finite_latency():
    """b's tasks used 0.6 cores each at 500 tuples/s: on a 1-core node they need 1.2 cores, more
    than the node has; in the 4-core node they fit. A run
    measured in the placement that cannot sustain its own rate cannot be calibrated."""
    topo = rate_job().topology
    cluster = Cluster.build("c", [Node("big", 4, cores=4, slots=2), Node("small", 4, cores=1, slots=2)])
    problem = Problem.from_topology(topo, cluster)
    heavy = dataclasses.replace(run(OPERATING_POINTS["10ms-sleeps"], cpu=(0.01, 0.01, 0.6, 0.6)), offered_source_rate=1000.0)
    model = calibrate(problem, heavy)
    on_small = Placement(node=np.array([1, 1, 1, 1]), worker=np.zeros(4, int))
    assert np.isfinite(model.latency_at_rate_ms(ONE_WORKER)) and model.latency_at_rate_ms(on_small) == float("inf")
    with pytest.raises(ValueError, match="its latency cannot be calibrated"):
        calibrate(problem, dataclasses.replace(heavy, placement=on_small, latency_ms=20.0))


def test_a_run_the_model_cannot_calibrate_on_is_one_input_error(tmp_path, monkeypatch):
    """Through the library's calibrate (what --calibrate calls): the refusal names the run."""
    import streamplace as sp
    from streamplace.storm import measured_run
    topo = rate_job().topology
    problem = Problem.from_topology(topo, Cluster.build("c", [Node("big", 4, cores=4, slots=2), Node("small", 4, cores=1, slots=2)]))
    on_small = Placement(node=np.array([1, 1, 1, 1]), worker=np.zeros(4, int))
    heavy = dataclasses.replace(run(OPERATING_POINTS["10ms-sleeps"], on_small, cpu=(0.01, 0.01, 0.6, 0.6)),
                                offered_source_rate=1000.0, latency_ms=20.0)
    monkeypatch.setattr(measured_run, "read_run", lambda path, prob: heavy)
    with pytest.raises(sp.InputError, match=f"--calibrate {tmp_path}: the run emitted 1,000 spout tuples/s"):
        sp.calibrate(problem, tmp_path)


def test_what_a_run_asked_of_its_spouts():
    """A named saturated point asked nothing finite (None); a named fixed-rate point its rate per
    spout task times the 2 spout tasks; a user's own job ("measured") its topology's rates."""
    from streamplace.model.calibration import offered_rate
    topo = rate_job().topology   # spouts: 1,000 tuples/s in all
    assert offered_rate(OPERATING_POINTS["10ms-sleeps"], topo) is None
    assert offered_rate(OPERATING_POINTS["fixed-rate-10ms-sleeps"], topo) == 2 * 600.0
    assert offered_rate(OperatingPoint("measured"), topo) == 1000.0


def test_ackers_are_dealt_interleaved_by_node_as_the_plugin_deals_them_and_node_major_before():
    """Node a (index 1) has workers 0, 1, 2, node b (index 0) workers 0 and 1; three ackers. The
    plugin's rule since 2026-11-30 (PlanAssignment, its JUnit test): a's first worker, b's
    first, a's second (nodes by name, not index); the rule before: a's three workers. Global
    worker ids: node index x 3 + worker."""
    cluster = Cluster.build("two", [Node("b", 1, slots=3), Node("a", 1, slots=3)])   # node names out of index order
    placement = Placement(node=np.array([1, 1, 1, 0, 0]), worker=np.array([0, 1, 2, 0, 1]))
    assert ack_slots(placement, cluster, 3).tolist() == [3, 0, 4]
    assert ack_slots(placement, cluster, 3, "node-major").tolist() == [3, 4, 5]
    assert ack_slots(placement, cluster, 6).tolist() == [3, 0, 4, 1, 5, 3]

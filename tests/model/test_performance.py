import numpy as np
import pytest

from streamplace.model.performance import CostModel, path_latency, predict, routed_flows, routes, worker_connections
from streamplace.evaluate.records import evaluation_record
from streamplace.model import Cluster, Node, Operator, Placement, Problem, Stream, Topology
from streamplace.model.graph import stream_flows

# ser per tuple per side = 1e-5 + 1e-8 x 1000 B = 2e-5 s; wire = 1000 + 24 B
def worked_model(**constants) -> CostModel:
    """The model the hand-worked figures below use: no engine cost per tuple, no fixed CPU per
    executor, worker, connection or node."""
    return CostModel(**{"task_cpu_per_tuple": 0.0, "worker_cpu": 0.0, "node_cpu": 0.0, "executor_cpu": 0.0,
                        "connection_cpu": 0.0, **constants})


MODEL = worked_model(ser_cpu_per_tuple=1e-5, ser_cpu_per_byte=1e-8, header_bytes=24.0)


def pair_problem(bandwidth=2e6, cpu_b=1e-4):
    # a emits 1000 tuples/s of 1000 B to b; both cost cpu_b / 1e-4 s per tuple
    topo = Topology.build("pair", [Operator("a", 1, source_rate=1000.0, tuple_bytes=1000.0, cpu_per_tuple=1e-4),
                                   Operator("b", 1, role="sink", cpu_per_tuple=cpu_b)], [Stream("a", "b")])
    cluster = Cluster.build("c", [Node(f"node{i:02d}", 2, slots=2, cores=1, bandwidth=bandwidth) for i in range(2)])
    return Problem.from_topology(topo, cluster)


def test_inter_node_pair_pays_exactly_serialisation_cpu_and_nic():
    p = pair_problem()
    same = predict(p, Placement(node=[0, 0], worker=[0, 0]), MODEL)
    assert np.allclose(same.cpu_demand, [0.2, 0.0]) and np.allclose(same.nic_demand, 0.0)
    assert same.max_scale == pytest.approx(5.0) and same.bottleneck == "node00:cpu"
    assert same.throughput == pytest.approx(5.0 * 2000)  # a emits 1000/s, b executes 1000/s
    # same node, two workers: 1000 tuples/s x 2e-5 s serialised and deserialised on node00
    workers = predict(p, Placement(node=[0, 0], worker=[0, 1]), MODEL)
    assert np.allclose(workers.cpu_demand, [0.24, 0.0]) and np.allclose(workers.nic_demand, 0.0)
    # two nodes: each side pays 0.02 core-s/s of (de)serialisation; 1000 x 1024 B/s each way
    apart = predict(p, Placement(node=[0, 1], worker=[0, 0]), MODEL)
    assert np.allclose(apart.cpu_demand, [0.12, 0.12])
    assert np.allclose(apart.nic_out, [1.024e6, 0.0]) and np.allclose(apart.nic_in, [0.0, 1.024e6])
    # NIC-bound: 2e6 / 1.024e6 (CPU would allow 1 / 0.12); the sender comes first in the tie
    assert apart.max_scale == pytest.approx(2e6 / 1.024e6) and apart.bottleneck == "node00:nic"
    assert apart.throughput == pytest.approx(2000 * 2e6 / 1.024e6)
    assert apart.nic_utilisation.tolist() == pytest.approx([1.0, 1.0])
    assert apart.cpu_utilisation.tolist() == pytest.approx([0.12 * 2e6 / 1.024e6] * 2)


def test_cpu_bound_when_the_network_is_fast():
    # b costs 2e-4 s: node01 carries 0.2 + 0.02 core-s/s, node00 only 0.12
    perf = predict(pair_problem(bandwidth=1e9, cpu_b=2e-4), Placement(node=[0, 1], worker=[0, 0]), MODEL)
    assert perf.bottleneck == "node01:cpu" and perf.max_scale == pytest.approx(1 / 0.22)
    assert perf.cpu_utilisation.tolist() == pytest.approx([0.12 / 0.22, 1.0])


def test_machine_speed_and_per_type_cpu_table():
    topo = Topology.build("t", [Operator("a", 2, source_rate=2.0, cpu_per_tuple={"fast": 0.1, "slow": 0.4})])
    cluster = Cluster.build("c", [Node("f", 1, cores=2, machine_type="fast"), Node("s", 1, cores=2, machine_type="slow")])
    p = Problem.from_topology(topo, cluster)
    perf = predict(p, Placement(node=[0, 1], worker=[0, 0]), worked_model(machine_speed={"fast": 4.0}))
    # the table holds seconds measured on each type: reference demand 0.1 x 4 and 0.4 x 1
    assert perf.cpu_capacity.tolist() == [8.0, 2.0] and perf.cpu_demand.tolist() == pytest.approx([0.4, 0.4])
    assert perf.bottleneck == "s:cpu" and perf.max_scale == pytest.approx(5.0)
    partial = Topology.build("t", [Operator("a", 1, cpu_per_tuple={"fast": 0.1})])
    with pytest.raises(ValueError, match="no entry for machine type 'slow'"):
        predict(Problem.from_topology(partial, cluster), Placement(node=[1], worker=[0]))


def lor_topology(pair_rate=None):
    return Topology.build("lor", [Operator("a", 2, source_rate=2.0), Operator("b", 4)],
                          [Stream("a", "b", grouping="local_or_shuffle", pair_rate=pair_rate)])


def test_local_or_shuffle_stays_in_the_worker_and_spreads_otherwise():
    topo = lor_topology()
    # a0 shares worker 0 of node 0 with b0, b1; a1 (node 1) has no b in its worker
    node = np.array([0, 1, 0, 0, 0, 0])
    worker = np.array([0, 0, 0, 0, 1, 1])
    in_rate, flows = routed_flows(topo, node * 2 + worker)
    (_, src, dst, rate), = flows
    sent = {(int(u), int(v)): float(r) for u, v, r in zip(src, dst, rate)}
    assert sent == {(0, 2): 0.5, (0, 3): 0.5, (1, 2): 0.25, (1, 3): 0.25, (1, 4): 0.25, (1, 5): 0.25}
    assert in_rate.tolist() == [1.0, 1.0, 0.75, 0.75, 0.25, 0.25]
    # pair_rate counts only the pairs that communicate: a0 talks to two tasks, a1 to four
    in_rate, ((_, src, _, _),) = routed_flows(lor_topology(pair_rate=1.0), node * 2 + worker)
    assert np.bincount(src).tolist() == [2, 4] and in_rate[2:].tolist() == [2.0, 2.0, 1.0, 1.0]
    # without a placement (graph builder) local_or_shuffle is plain shuffle
    assert stream_flows(topo)[0].tolist() == [1.0, 1.0, 0.5, 0.5, 0.5, 0.5]


def test_local_or_shuffle_placement_changes_network_demand():
    cluster = Cluster.build("c", [Node("n0", 3, slots=1), Node("n1", 3, slots=1)])
    p = Problem.from_topology(lor_topology(), cluster)
    model = worked_model(header_bytes=0.0)
    # every a task with two b tasks in its worker: nothing crosses a node
    local = predict(p, Placement(node=[0, 1, 0, 0, 1, 1], worker=[0] * 6), model)
    assert local.nic_demand.tolist() == [0.0, 0.0]
    # a1 alone on n1: it shuffles 1 tuple/s x 100 B over the four b tasks on n0
    remote = predict(p, Placement(node=[0, 1, 0, 0, 0, 0], worker=[0] * 6), model)
    assert remote.nic_out.tolist() == pytest.approx([0.0, 100.0]) and remote.nic_in.tolist() == pytest.approx([100.0, 0.0])


def test_routes_made_once_predict_what_a_fresh_prediction_does_and_belong_to_their_placement():
    """A fit predicts one placement under many models with its routes made once: every figure is
    the same, to the bit, as a prediction that makes them itself."""
    p = Problem.from_topology(lor_topology(), Cluster.build("c", [Node("n0", 3, slots=1), Node("n1", 3, slots=1)]))
    placement, other = Placement(node=[0, 1, 0, 0, 0, 0], worker=[0] * 6), Placement(node=[0, 1, 0, 0, 1, 1], worker=[0] * 6)
    routed = routes(p, placement)
    for model in (MODEL, worked_model(header_bytes=0.0, worker_cpu=0.1, connection_cpu=0.01), CostModel()):
        fresh, kept = predict(p, placement, model), predict(p, placement, model, routed=routed)
        assert (fresh.throughput, fresh.bottleneck, fresh.latency_ms) == (kept.throughput, kept.bottleneck, kept.latency_ms)
        assert fresh.cpu_capacity.tolist() == kept.cpu_capacity.tolist() and fresh.nic_in.tolist() == kept.nic_in.tolist()
    with pytest.raises(ValueError, match="another problem or placement"):
        predict(p, other, MODEL, routed=routed)


def random_instance(rng):
    """A random layered DAG with placement-independent groupings and a random placement."""
    ops, streams = [], []
    layers = [[f"l{i}o{j}" for j in range(rng.integers(1, 3))] for i in range(rng.integers(2, 4))]
    for i, layer in enumerate(layers):
        for name in layer:
            ops.append(Operator(name, int(rng.integers(1, 4)), source_rate=float(rng.integers(1, 100)),
                                tuple_bytes=float(rng.integers(10, 2000)), selectivity=float(rng.uniform(0.5, 2))))
            if i:
                for up in rng.choice(layers[i - 1], size=rng.integers(1, len(layers[i - 1]) + 1), replace=False):
                    streams.append(Stream(str(up), name, grouping=str(rng.choice(["shuffle", "fields", "global", "all"])),
                                          pair_rate=None if rng.random() < 0.7 else float(rng.integers(1, 50))))
    topo = Topology.build("rand", ops, streams)
    cluster = Cluster.build("c", [Node(f"n{j}", 100, slots=2, cores=1e6, bandwidth=float(rng.choice([1e4, 1e5])))
                                  for j in range(4)])
    n = topo.n_tasks
    return Problem.from_topology(topo, cluster), rng.integers(0, 4, n), rng.integers(0, 2, n)


def test_moving_a_task_next_to_its_partners_never_lowers_nic_bound_throughput():
    # CPU never binds (1e6 cores). Put all partners of a task v on one node, then move v there
    # (into a partner's worker): v's edges stop crossing nodes and no other edge starts to.
    # local_or_shuffle is left out on purpose: re-routing can raise traffic further downstream.
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(60):
        p, node, worker = random_instance(rng)
        w = p.graph.weights
        v = int(rng.integers(0, p.n_tasks))
        partners = w.indices[w.indptr[v]:w.indptr[v + 1]]
        if not partners.size:
            continue
        target = int(rng.integers(0, 4))
        node[partners] = target
        node[v] = (target + 1) % 4
        before = predict(p, Placement(node=node.copy(), worker=worker.copy()))
        node[v], worker[v] = target, worker[partners[0]]
        after = predict(p, Placement(node=node.copy(), worker=worker.copy()))
        assert before.bottleneck.endswith(":nic")
        assert after.throughput >= before.throughput * (1 - 1e-12)
        assert np.all(after.nic_in <= before.nic_in + 1e-9) and np.all(after.nic_out <= before.nic_out + 1e-9)
        assert after.nic_in.sum() < before.nic_in.sum()
        checked += 1
    assert checked > 40


def test_path_latency_dp_on_a_diamond_by_hand():
    topo = Topology.build("d", [Operator("s", 1), Operator("l", 1), Operator("r", 1), Operator("t", 1)],
                          [Stream("s", "l", pair_rate=3.0), Stream("s", "r", pair_rate=1.0),
                           Stream("l", "t", pair_rate=3.0), Stream("r", "t", pair_rate=1.0)])
    _, flows = stream_flows(topo)
    hops = {("s", "l"): 1.0, ("s", "r"): 5.0, ("l", "t"): 2.0, ("r", "t"): 1.0}
    # l at 1, r at 5; t = (3 x (1 + 2) + 1 x (5 + 1)) / 4 = 3.75
    assert path_latency(topo, flows, [np.array([hops[(f[0].src, f[0].dst)]]) for f in flows]) == pytest.approx(3.75)


def diamond_problem():
    ops = [Operator(name, 1, source_rate=2.0, tuple_bytes=1000.0, cpu_per_tuple=1e-4) for name in "slrt"]
    topo = Topology.build("d", ops, [Stream("s", "l"), Stream("s", "r"), Stream("l", "t"), Stream("r", "t")])
    cluster = Cluster.build("c", [Node("n0", 4, cores=1, bandwidth=1e6), Node("n1", 4, cores=1, bandwidth=1e6)])
    return Problem.from_topology(topo, cluster)


def test_predicted_latency_on_a_diamond_with_one_remote_branch():
    # r on n1, the rest in one worker; at zero load: same-worker hop 0.05 + 0.1 ms service;
    # inter-node hop 1 ms + 1 ms transfer (1000 B at 1e6 B/s) + 0.1 ms + 0.02 ms deserialisation
    model = worked_model(ser_cpu_per_tuple=1e-5, ser_cpu_per_byte=1e-8, header_bytes=0.0)
    perf = predict(diamond_problem(), Placement(node=[0, 0, 1, 0], worker=[0, 0, 0, 0]), model, offered_scale=0.0)
    # both branches carry 2 tuples/s: t = (2 x 0.30 + 2 x 4.24) / 4
    assert perf.latency_ms == pytest.approx((0.3 + 4.24) / 2)
    default = predict(diamond_problem(), Placement(node=[0, 0, 1, 0], worker=[0, 0, 0, 0]), model)
    assert default.latency_scale == pytest.approx(0.7 * default.max_scale) and default.latency_ms > perf.latency_ms


def test_mm1_queueing_terms_at_the_receiver():
    # b on node 1: CPU per tuple 3e-5 + 2e-5 deserialisation; 1000 B at 2e7 B/s = 0.05 ms.
    # At scale 1e4 both node 1 CPU and inbound NIC run at 50 %: 1 + 0.05/0.5 + 0.05/0.5 ms
    topo = Topology.build("t", [Operator("a", 1, tuple_bytes=1000.0), Operator("b", 1, cpu_per_tuple=3e-5)],
                          [Stream("a", "b")])
    cluster = Cluster.build("c", [Node("n0", 1, cores=1, bandwidth=2e7), Node("n1", 1, cores=1, bandwidth=2e7)])
    p = Problem.from_topology(topo, cluster)
    model = worked_model(ser_cpu_per_tuple=1e-5, ser_cpu_per_byte=1e-8, header_bytes=0.0)
    perf = predict(p, Placement(node=[0, 1], worker=[0, 0]), model, offered_scale=1e4)
    assert perf.latency_ms == pytest.approx(1.2)
    assert predict(p, Placement(node=[0, 1], worker=[0, 0]), model, offered_scale=3e4).latency_ms == np.inf


def test_evaluation_record_carries_the_prediction_and_bad_input_is_refused():
    p = pair_problem()
    record = evaluation_record(p, Placement(node=[0, 1], worker=[0, 0]), include_placement=False)
    perf = predict(p, Placement(node=[0, 1], worker=[0, 0]))
    assert record["throughput"] == pytest.approx(perf.throughput) and record["bottleneck"] == perf.bottleneck
    assert record["latency_ms"] == pytest.approx(perf.latency_ms)
    with pytest.raises(ValueError, match="covers 1 tasks"):
        predict(p, Placement(node=[0], worker=[0]))
    with pytest.raises(ValueError, match="latency_load"):
        CostModel(latency_load=1.0)
    with pytest.raises(ValueError, match="ser_cpu_per_byte"):
        CostModel(ser_cpu_per_byte=-1.0)


def test_no_demand_means_unbounded_and_json_safe():
    topo = Topology.build("t", [Operator("a", 2, source_rate=10.0)])
    p = Problem.from_topology(topo, Cluster.build("c", [Node("n0", 2)]))
    perf = predict(p, Placement(node=[0, 0], worker=[0, 0]), worked_model(default_cpu_per_tuple=0.0))
    assert perf.max_scale == np.inf and perf.bottleneck is None and perf.cpu_utilisation.tolist() == [0.0]
    assert perf.summary() == {"throughput": None, "bottleneck": None, "latency_ms": 0.0}


def test_worker_connections_by_hand():
    """s (2 tasks) -> k (2 tasks) on nodes a and b with two workers each: s runs in a0 and a1, k
    in a0 and b0. Storm connects each worker to every other worker holding a task of a component
    its own send to, whatever the grouping (global sends every tuple to k0 in a0, yet a0 and a1
    connect to b0 too): a0->b0, a1->a0, a1->b0 (a0->a0 is inside one worker). Each connection
    counts at both ends."""
    topo = Topology.build("two", [Operator("s", 2, source_rate=10.0), Operator("k", 2, role="sink")],
                          [Stream("s", "k", grouping="global")])
    cluster = Cluster.build("c", [Node("a", 4, slots=2, cores=1), Node("b", 4, slots=2, cores=1)])
    placement = Placement(node=[0, 0, 0, 1], worker=[0, 1, 0, 0])   # s0 a0, s1 a1, k0 a0, k1 b0
    assert worker_connections(topo, placement, cluster).tolist() == [4.0, 2.0]
    model = worked_model(connection_cpu=0.01)
    capacity = predict(Problem.from_topology(topo, cluster), placement, model).cpu_capacity
    assert np.allclose(capacity, [1 - 0.04, 1 - 0.02])   # beside no other fixed cost
    alone = Placement(node=[0, 0, 0, 0], worker=[0, 0, 0, 0])   # one worker: no connection
    assert worker_connections(topo, alone, cluster).tolist() == [0.0, 0.0]

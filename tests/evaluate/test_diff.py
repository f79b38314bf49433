"""Plan diff: moves, node/worker counts, nodes touched and traffic change, worked by hand."""

import json

import pytest

from streamplace.cli import main
from streamplace.evaluate.diff import DiffError, diff_placements, diff_targets
from streamplace.model import Cluster, Operator, Placement, Problem, Stream, Topology
from streamplace.model.specs import placement_targets


def _problem():
    # a[0..1] -> b[0..1], shuffle with pair rate 1: w = 1 for each of the 4 (a, b) pairs
    topo = Topology.build("ab", [Operator("a", 2, role="source", source_rate=1.0), Operator("b", 2)],
                          [Stream("a", "b", pair_rate=1.0)])
    return Problem.from_topology(topo, Cluster.from_capacities({4.0: 3}))


def test_moves_counts_and_traffic_by_hand():
    problem = _problem()
    spread = Placement(node=[0, 1, 0, 1], worker=[0, 0, 0, 0])     # a0 n0, a1 n1, b0 n0, b1 n1: cut a0-b1, a1-b0 = 2
    packed = Placement(node=[0, 0, 0, 2], worker=[0, 1, 0, 0])     # a1 -> n0 worker 1, b1 -> n2: cut a0-b1, a1-b1 = 2
    d = diff_placements(problem, spread, packed)
    assert [m.task for m in d.moves] == ["a[1]", "b[1]"]
    assert (d.node_moves, d.worker_moves) == (2, 0)
    assert d.nodes_touched == tuple(n.name for n in problem.cluster.nodes)   # n0 gains a1, n1 loses both, n2 gains b1
    assert d.traffic_delta == 0.0
    together = Placement(node=[0, 0, 0, 0], worker=[0, 1, 0, 1])
    d = diff_placements(problem, packed, together)
    assert (d.node_moves, d.worker_moves, d.traffic_delta) == (1, 0, -2.0)
    d = diff_placements(problem, together, Placement(node=[0, 0, 0, 0], worker=[0, 0, 0, 0]))
    assert (d.node_moves, d.worker_moves, d.traffic_delta) == (0, 2, 0.0)
    assert d.to_dict()["moves"][0] == {"task": "a[1]", "from": {"node": d.nodes_touched[0], "worker": 1},
                                       "to": {"node": d.nodes_touched[0], "worker": 0}}
    assert diff_placements(problem, spread, spread).moves == ()


def test_different_jobs_are_refused_naming_a_task():
    a = placement_targets({"x[0]": "n0", "x[1]": "n1"})
    with pytest.raises(DiffError, match=r"x\[1\] is not placed by second"):
        diff_targets(a, placement_targets({"x[0]": "n0"}))


def test_cli_diff_from_files(tmp_path, capsys):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps({"inter_node_cost": 5.0, "placement": {"x[0]": {"node": "n0", "worker": 1}, "x[1]": "n1"}}))
    second.write_text(json.dumps({"inter_node_cost": 3.0, "placement": {"x[0]": "n0", "x[1]": "n0"}}))
    main(["diff", str(first), str(second), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert out == {"node_moves": 1, "worker_moves": 1, "nodes_touched": ["n0", "n1"], "traffic_delta": -2.0,
                   "moves": [{"task": "x[0]", "from": {"node": "n0", "worker": 1}, "to": {"node": "n0", "worker": 0}},
                             {"task": "x[1]", "from": {"node": "n1", "worker": 0}, "to": {"node": "n0", "worker": 0}}]}
    second.write_text(json.dumps({"placement": {"x[0]": "n0"}}))
    with pytest.raises(SystemExit) as exc:
        main(["diff", str(first), str(second)])
    assert exc.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1

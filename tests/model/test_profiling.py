import pytest

from streamplace.model import Cluster, Node, Operator, Stream, Topology
from streamplace.model.profiling import (DEFAULT_MET, derive_profiling, load_profiling, profiling_from_dict,
                                         profiling_to_dict)
from streamplace.model.specs import SpecError, write_document

GOOD = """
machine_types:
  - {name: fast, count: 2, cores: 2}
  - {name: slow, count: 1, max_tasks: 3}
operators: {a: light}
e:
  light: {fast: 0.01, slow: 0.02}
  b: {fast: 0.05, slow: 0.1}
MET: {b: {slow: 4}}
met_default: 2
R0: 5
"""


def test_load_yaml_lookups_and_cluster(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(GOOD)
    prof = load_profiling(path)
    assert prof.type_names == ["fast", "slow"] and prof.r0 == 5.0 and prof.source == str(path)
    assert prof.row_of("a") == "light" and prof.row_of("b") == "b"
    assert prof.e_of("light", "slow") == 0.02
    assert prof.met_of("b", "slow") == 4.0 and prof.met_of("b", "fast") == 2.0 and prof.met_of("light", "slow") == 2.0
    cluster = prof.cluster(name="x")
    assert [n.name for n in cluster.nodes] == ["fast-00", "fast-01", "slow-00"]
    assert [n.machine_type for n in cluster.nodes] == ["fast", "fast", "slow"]
    assert cluster.capacities.tolist() == [100.0] * 3 and cluster.slots.tolist() == [1, 1, 1]
    assert cluster.nodes[0].cores == 2.0


def test_round_trip_through_json(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(GOOD)
    prof = load_profiling(path)
    out = tmp_path / "p.json"
    write_document(profiling_to_dict(prof), out)
    again = load_profiling(out)
    assert profiling_to_dict(again) == profiling_to_dict(prof)
    assert again.machine_types == prof.machine_types


@pytest.mark.parametrize("doc, field, words", [
    ({"e": {"x": {"t": 1}}}, "machine_types", "non-empty list"),
    ({"machine_types": [{"name": "t"}], "e": {"x": {"t": 0}}}, "e.x.t", "> 0"),
    ({"machine_types": [{"name": "t"}], "e": {"x": {"t": -1}}}, "e.x.t", ">= 0"),
    ({"machine_types": [{"name": "t"}, {"name": "u"}], "e": {"x": {"t": 1}}}, "e.x", "missing machine type 'u'"),
    ({"machine_types": [{"name": "t"}], "e": {"x": {"v": 1}}}, "e.x.v", "unknown machine type"),
    ({"machine_types": [{"name": "t"}, {"name": "t"}], "e": {"x": {"t": 1}}}, "machine_types[1].name", "duplicate"),
    ({"machine_types": [{"name": "t", "count": -1}], "e": {"x": {"t": 1}}}, "machine_types[0].count", ">= 0"),
    ({"machine_types": [{"name": "t", "cores": 0}], "e": {"x": {"t": 1}}}, "machine_types[0].cores", "> 0"),
    ({"machine_types": [{"name": "t"}], "e": {"x": {"t": 1}}, "R0": 0}, "R0", "> 0"),
    ({"machine_types": [{"name": "t"}], "e": {"x": {"t": 1}}, "operators": {"a": "y"}}, "operators.a", "unknown e row"),
    ({"machine_types": [{"name": "t"}], "e": {"x": {"t": 1}}, "MET": {"y": {"t": 1}}}, "MET.y", "no e row"),
    ({"machine_types": [{"name": "t"}], "e": {"x": {"t": 1}}, "MET": {"x": {"t": 0}}}, "MET.x.t", "needs max_tasks"),
    ({"machine_types": [{"name": "t"}], "e": {"x": {"t": 1}}, "met_default": 0}, "met_default", "needs max_tasks"),
    ({"machine_types": [{"name": "t"}], "e": {"x": {"t": 1}}, "speed": 2}, "speed", "unknown field"),
])
def test_bad_specs_give_one_line_errors(tmp_path, doc, field, words):
    with pytest.raises(SpecError) as info:
        profiling_from_dict(doc, "p.yaml")
    assert info.value.field_path == field and words in info.value.problem
    assert str(info.value).startswith(f"p.yaml: {field}: ") and "\n" not in str(info.value)


def test_zero_met_is_accepted_with_a_task_limit():
    prof = profiling_from_dict({"machine_types": [{"name": "t", "max_tasks": 4}], "e": {"x": {"t": 1}}, "met_default": 0})
    assert prof.met_of("x", "t") == 0.0


def test_missing_e_row_for_an_operator_and_missing_counts():
    prof = profiling_from_dict({"machine_types": [{"name": "t"}], "e": {"a": {"t": 1}}}, "p.yaml")
    topo = Topology.build("t", [Operator("a", 1), Operator("b", 1)], [Stream("a", "b")])
    with pytest.raises(SpecError, match="p.yaml: e: no e row 'b' for operator 'b'"):
        prof.check_topology(topo)
    with pytest.raises(SpecError, match="no count"):
        prof.cluster()


def test_derive_from_cpu_per_tuple_and_node_types():
    topo = Topology.build("t", [Operator("a", 1, cpu_per_tuple=0.01), Operator("b", 1, cpu_per_tuple={"x": 0.02, "y": 0.04})],
                          [Stream("a", "b")])
    cluster = Cluster.build("c", [Node("n0", 1, machine_type="x", cores=4), Node("n1", 1, machine_type="y", cores=2),
                                  Node("n2", 1, machine_type="x", cores=4)])
    prof = derive_profiling(topo, cluster)
    assert [(t.name, t.count, t.cores) for t in prof.machine_types] == [("x", 2, 4.0), ("y", 1, 2.0)]
    assert prof.e == {"a": {"x": 0.01, "y": 0.01}, "b": {"x": 0.02, "y": 0.04}}
    assert prof.met_of("a", "x") == DEFAULT_MET
    bad = Topology.build("t", [Operator("a", 1, cpu_per_tuple={"x": 0.01})])
    with pytest.raises(ValueError, match="no value for machine type 'y'"):
        derive_profiling(bad, cluster)
    with pytest.raises(ValueError, match="no cpu_per_tuple"):
        derive_profiling(Topology.build("t", [Operator("a", 1)]), cluster)

"""Plans out: a Heron packing plan that parses against Heron's message definition, Flink hints
worked by hand, and a Storm plan directory the plugin's own parser reads (the Java test reads the
file this test keeps in step)."""

import json
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

from streamplace.cli import main
from streamplace.export import flink_job_hints, heron_container_nodes, heron_packing_plan
from streamplace.model import Cluster, Node, Operator, Stream, Topology
from streamplace.model.specs import cluster_to_dict, placement_targets, topology_to_dict, write_document

STORM_FIXTURE = Path(__file__).parents[1] / "storm" / "src" / "test" / "resources" / "export" / "pipe.json"
# a -> b -> c, 2 + 2 + 1 tasks on two nodes; a[0], b[0] share worker 0 of n1; c[0] alone on n2
PLACEMENT = {"placement": {"a[0]": {"node": "n1", "worker": 0}, "a[1]": {"node": "n1", "worker": 1},
                           "b[0]": {"node": "n1", "worker": 0}, "b[1]": {"node": "n1", "worker": 1},
                           "c[0]": {"node": "n2", "worker": 0}}}


def _topology():
    return Topology.build("pipe", [Operator("a", 2, role="source", source_rate=10.0, memory_mb=512.0),
                                   Operator("b", 2, cpu_demand=0.5), Operator("c", 1)],
                          [Stream("a", "b"), Stream("b", "c")])


def _heron_message_class():
    """heron.proto.system.PackingPlan (heron/proto/packing_plan.proto), built field by field."""
    f = descriptor_pb2.FileDescriptorProto(name="packing_plan.proto", package="heron.proto.system", syntax="proto2")
    T = L = descriptor_pb2.FieldDescriptorProto

    def message(name, fields):
        m = f.message_type.add(name=name)
        for number, (field, kind, label, type_name) in enumerate(fields, start=1):
            m.field.add(name=field, number=number, type=kind, label=label, type_name=type_name)
    req, rep, opt = L.LABEL_REQUIRED, L.LABEL_REPEATED, L.LABEL_OPTIONAL
    resource = ".heron.proto.system.Resource"
    message("Resource", [("cpu", T.TYPE_DOUBLE, req, None), ("ram", T.TYPE_INT64, req, None),
                         ("disk", T.TYPE_INT64, req, None)])
    message("InstancePlan", [("component_name", T.TYPE_STRING, req, None), ("task_id", T.TYPE_INT32, req, None),
                             ("component_index", T.TYPE_INT32, req, None), ("resource", T.TYPE_MESSAGE, req, resource)])
    message("ContainerPlan", [("id", T.TYPE_INT32, req, None),
                              ("instance_plans", T.TYPE_MESSAGE, rep, ".heron.proto.system.InstancePlan"),
                              ("requiredResource", T.TYPE_MESSAGE, req, resource),
                              ("scheduledResource", T.TYPE_MESSAGE, opt, resource)])
    message("PackingPlan", [("id", T.TYPE_STRING, req, None),
                            ("container_plans", T.TYPE_MESSAGE, rep, ".heron.proto.system.ContainerPlan")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("heron.proto.system.PackingPlan"))


def test_heron_packing_plan_parses_against_heron_s_definition():
    targets = placement_targets(PLACEMENT)
    doc = heron_packing_plan(targets, "pipe", _topology())
    plan = json_format.Parse(json.dumps(doc), _heron_message_class()())   # unknown or missing fields raise
    assert plan.IsInitialized()   # every required field present
    # containers = workers (n1/0, n1/1, n2/0), numbered from 1
    assert [(c.id, [(i.component_name, i.component_index, i.task_id) for i in c.instance_plans])
            for c in plan.container_plans] == [(1, [("a", 0, 1), ("b", 0, 3)]), (2, [("a", 1, 2), ("b", 1, 4)]),
                                               (3, [("c", 0, 5)])]
    first = plan.container_plans[0]
    assert [i.resource.ram for i in first.instance_plans] == [512 << 20, 1 << 30]
    assert [i.resource.cpu for i in first.instance_plans] == [1.0, 0.5]   # a: its load; b: cpu_demand
    assert first.requiredResource.ram == (512 << 20) + (1 << 30) and first.requiredResource.cpu == 1.5
    assert heron_container_nodes(targets) == {1: "n1", 2: "n1", 3: "n2"}


def test_flink_groups_operators_that_share_a_worker():
    hints = flink_job_hints(placement_targets(PLACEMENT))
    assert [(o["name"], o["parallelism"], o["slot_sharing_group"]) for o in hints["operators"]] == \
        [("a", 2, "group-0"), ("b", 2, "group-0"), ("c", 1, "group-1")]
    assert (hints["nodes"], hints["workers"]) == (2, 3) and hints["not_expressible"]
    joined = dict(PLACEMENT["placement"], **{"c[0]": {"node": "n1", "worker": 1}})
    assert {o["slot_sharing_group"] for o in flink_job_hints(placement_targets({"placement": joined}))["operators"]} == \
        {"group-0"}


def test_storm_plan_export_is_the_file_the_plugin_test_reads(tmp_path, capsys):
    write_document(topology_to_dict(_topology()), tmp_path / "pipe.yaml")
    cluster = Cluster.build("two", [Node("n1", capacity=4.0, slots=2), Node("n2", capacity=4.0, slots=2)])
    write_document(cluster_to_dict(cluster), tmp_path / "two.yaml")
    (tmp_path / "plan.json").write_text(json.dumps(PLACEMENT))
    main(["export", str(tmp_path / "plan.json"), "--to", "storm-plan", "--topology", str(tmp_path / "pipe.yaml"),
          "--cluster", str(tmp_path / "two.yaml"), "-o", str(tmp_path / "plans")])
    assert (tmp_path / "plans" / "pipe.json").read_text() == STORM_FIXTURE.read_text()
    capsys.readouterr()
    (tmp_path / "old.json").write_text("{}")
    with pytest.raises(SystemExit) as exc:   # a file as the plan directory: "File exists" before
        main(["export", str(tmp_path / "plan.json"), "--to", "storm-plan", "--topology", str(tmp_path / "pipe.yaml"),
              "--cluster", str(tmp_path / "two.yaml"), "-o", str(tmp_path / "old.json")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "old.json is a file; --to storm-plan writes into the plugin's plan directory" in err
    assert (tmp_path / "old.json").read_text() == "{}"


def test_export_refuses_a_placement_of_another_job(tmp_path, capsys):
    write_document(topology_to_dict(_topology()), tmp_path / "pipe.yaml")
    write_document(cluster_to_dict(Cluster.from_capacities({4.0: 2})), tmp_path / "c.yaml")
    (tmp_path / "plan.json").write_text(json.dumps({"placement": {"x[0]": "node00"}}))
    with pytest.raises(SystemExit) as exc:
        main(["export", str(tmp_path / "plan.json"), "--to", "heron", "--topology", str(tmp_path / "pipe.yaml"),
              "--cluster", str(tmp_path / "c.yaml"), "-o", str(tmp_path / "h.json")])
    assert exc.value.code == 2 and "x[0]" in capsys.readouterr().err
    assert not (tmp_path / "h.json").exists()

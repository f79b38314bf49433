import numpy as np
import pytest

from streamplace.model import Operator, Stream, Topology, TopologyError


def topo(ops, streams):
    return Topology.build("t", ops, streams)


def test_tasks_are_contiguous_per_operator_in_declaration_order():
    t = topo([Operator("a", 2), Operator("b", 3), Operator("c", 1)], [Stream("a", "b"), Stream("b", "c")])
    assert t.n_tasks == 6
    assert t.task_labels == ["a[0]", "a[1]", "b[0]", "b[1]", "b[2]", "c[0]"]
    assert list(t.tasks_of("b")) == [2, 3, 4]
    assert t.operator_of_task.tolist() == [0, 0, 1, 1, 1, 2]
    assert t.task_id("b[2]") == 4
    with pytest.raises(KeyError):
        t.task_id("b[3]")
    with pytest.raises(KeyError):
        t.task_id("zz[0]")


def test_operator_links_mark_each_stream_once():
    t = topo([Operator("a", 2), Operator("b", 3), Operator("c", 1)], [Stream("a", "b"), Stream("a", "c"), Stream("b", "c")])
    assert t.operator_links.tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0]]


def test_topological_order_and_sources():
    t = topo([Operator("sink", 1), Operator("mid", 1), Operator("src", 1)], [Stream("src", "mid"), Stream("mid", "sink")])
    assert t.topological_order == ["src", "mid", "sink"]
    assert t.is_source("src") and not t.is_source("mid")


@pytest.mark.parametrize("ops, streams, field, fragment", [
    ([Operator("a", 0)], [], "operators[0].parallelism", ">= 1"),
    ([Operator("a", 1), Operator("a", 1)], [], "operators[1].name", "duplicate"),
    ([Operator("a", 1)], [Stream("a", "b")], "streams[0].to", "unknown operator 'b'"),
    ([Operator("a", 1), Operator("b", 1)], [Stream("a", "b", grouping="broadcast")], "streams[0].grouping", "unknown grouping"),
    ([Operator("a", 1), Operator("b", 1), Operator("c", 1)], [Stream("a", "b"), Stream("b", "c"), Stream("c", "a")], "streams", "cycle a -> b -> c -> a"),
    ([Operator("a", 1, selectivity=-1.0)], [], "operators[0].selectivity", ">= 0"),
    ([Operator("a", 1)], [Stream("a", "a")], "streams[0]", "self-loop"),
])
def test_validation_names_the_field(ops, streams, field, fragment):
    with pytest.raises(TopologyError) as err:
        topo(ops, streams)
    assert err.value.field_path == field
    assert fragment in err.value.problem


def test_task_loads_follow_operator_load():
    t = topo([Operator("a", 2, load=1.5), Operator("b", 1, load=3.0)], [Stream("a", "b")])
    assert np.allclose(t.task_loads, [1.5, 1.5, 3.0])


@pytest.mark.parametrize("grouping, shares", [("fields", (0.5, 0.6)), ("fields", (1.0,)), ("fields", (1.5, -0.5)),
                                              ("shuffle", (0.5, 0.5))])
def test_measured_shares_are_one_fraction_per_receiving_task_of_a_fields_stream(grouping, shares):
    with pytest.raises(TopologyError) as err:
        Topology.build("t", [Operator("a", 1), Operator("b", 2)], [Stream("a", "b", grouping, shares=shares)])
    assert err.value.field_path == "streams[0].shares"

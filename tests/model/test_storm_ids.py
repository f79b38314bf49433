"""Storm's task numbering, worked by hand from Storm's rule (components in Java String order, ids from 1)."""

import numpy as np

from streamplace.model import Operator, Stream, Topology
from streamplace.model.storm_ids import (component_order, fields_target, int_key_hash, labels_by_storm_id,
                                         storm_task_ids, storm_task_order)


def wordcount():
    # declared spout, split, count; Storm sorts count < split < spout
    return Topology.build("wc", [Operator("spout", 4), Operator("split", 8), Operator("count", 4)],
                          [Stream("spout", "split"), Stream("split", "count", grouping="fields", key="w")])


def test_storm_numbers_components_in_sorted_order_from_one():
    ids = storm_task_ids(wordcount())
    assert ids.tolist() == [13, 14, 15, 16, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4]


def test_ackers_take_ids_in_their_sorted_place():
    # the example of Storm's own numbering: 2 ackers -> __acker 1-2, count 3-6, split 7-14, spout 15-18
    labels = labels_by_storm_id(wordcount(), {"__acker": 2})
    assert labels[3] == "count[0]" and labels[7] == "split[0]" and labels[15] == "spout[0]" and labels[18] == "spout[3]"
    assert 1 not in labels and 2 not in labels


def test_java_order_puts_uppercase_before_underscore_before_lowercase():
    topo = Topology.build("t", [Operator("b", 1), Operator("Z", 1), Operator("a_", 1), Operator("a", 1)])
    order = [name for name, _ in component_order(topo, {"__acker": 1})]
    assert order == ["Z", "__acker", "a", "a_", "b"]


def test_java_order_is_utf16_not_code_points():
    # U+FF5E (BMP) sorts after U+1F600 (surrogate pair D83D DE00) in Java, before it in Python
    topo = Topology.build("t", [Operator("\uff5e", 1), Operator("\U0001F600", 1)])
    assert [name for name, _ in component_order(topo)] == ["\U0001F600", "\uff5e"]


def test_storm_task_order_is_ids_sorted():
    topo = wordcount()
    order = storm_task_order(topo)
    assert np.all(np.diff(storm_task_ids(topo)[order]) == 1)


def test_fields_target_matches_java_deep_hash_code():
    # Arrays.deepHashCode(new Object[]{k}) = 31 + k (int overflow wraps); floorMod keeps it non-negative
    assert int_key_hash(0).item() == 31
    assert int_key_hash(2**31 - 31).item() == -(2**31)
    assert fields_target(int_key_hash(np.arange(4)), 4).tolist() == [3, 0, 1, 2]
    assert fields_target(np.array([-5]), 4).tolist() == [3]

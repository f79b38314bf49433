"""Operating points: the named ones, the settings Storm runs with, the record form."""

import pytest

from streamplace.model.operating_point import (CAMPAIGN_CONF, OPERATING_POINTS, STORM_DEFAULTS, OperatingPoint,
                                               named)


def test_the_named_points_differ_from_the_models_point_in_what_the_plan_says():
    base = OPERATING_POINTS["10ms-sleeps"]
    assert (base.ackers, base.max_spout_pending, base.source_rate, base.cpu_budget) == (0, None, None, 1.5)
    assert dict(base.storm_conf) == dict(CAMPAIGN_CONF)
    assert OPERATING_POINTS["storm-defaults"].conf() == {}
    for name, pending in (("acking-msp10", 10), ("acking-msp50", 50)):
        point = OPERATING_POINTS[name]
        assert point.acking and point.ackers == 3 and point.conf()["topology.max.spout.pending"] == pending
    assert OPERATING_POINTS["cpu-1.0"].cpu_budget == 1.0
    assert OPERATING_POINTS["bandwidth-scaled"].bandwidth_scaled


def test_sleeps_come_from_the_point_else_from_storms_defaults():
    assert OPERATING_POINTS["10ms-sleeps"].sleep_s("spout") == 0.010
    assert OPERATING_POINTS["10ms-sleeps"].sleep_s("bolt") == 0.010
    # Storm 2.8's conf/defaults.yaml: every level-3 sleep is 1 ms, no max spout pending
    assert OPERATING_POINTS["storm-defaults"].sleep_s("bolt") == 0.001
    assert OPERATING_POINTS["storm-defaults"].setting("topology.max.spout.pending") is None
    assert STORM_DEFAULTS["topology.executor.receive.buffer.size"] == 32768


def test_a_point_survives_its_record_form():
    for point in OPERATING_POINTS.values():
        assert OperatingPoint.from_document(point.document()) == point


def test_bad_points_are_refused_with_the_field_named():
    with pytest.raises(ValueError, match="max_spout_pending"):
        OperatingPoint("x", max_spout_pending=0)
    with pytest.raises(ValueError, match="ackers"):
        OperatingPoint("x", ackers=-1)
    with pytest.raises(ValueError, match="as fields"):
        OperatingPoint("x", {"topology.max.spout.pending": 5})
    with pytest.raises(ValueError, match="unknown operating point 'nope' \\(known: 10ms-sleeps"):
        named("nope")


@pytest.mark.parametrize("conf, message", [
    ({"topology.acker.executors": 10**8}, "topology.acker.executors must be an integer 0..10,000,000, got 100000000"),
    ({"topology.max.spout.pending": True}, "topology.max.spout.pending must be an integer"),
    ({"topology.spout.wait.progressive.level3.sleep.millis": "ten"}, "sleep.millis must be a number 0..2,147,483,647"),
])
def test_the_settings_of_a_run_are_counts_storm_can_hold(conf, message):
    with pytest.raises(ValueError, match=message):
        OperatingPoint.of_conf(conf, 3)
    # Storm's own reading: unset ackers are one per worker, max spout pending 0 is no limit
    point = OperatingPoint.of_conf({"topology.max.spout.pending": 0}, 3)
    assert (point.ackers, point.max_spout_pending) == (3, None)
    # a fractional sleep is what Storm takes (it reads the sleeps as longs, cutting the fraction)
    assert OperatingPoint.of_conf({"topology.bolt.wait.progressive.level3.sleep.millis": 0.5}, 3).sleep_s("bolt") == 0.0005


def test_a_point_cannot_be_changed_after_it_is_made():
    point = OPERATING_POINTS["acking-msp10"]
    with pytest.raises(TypeError):
        point.storm_conf["topology.executor.receive.buffer.size"] = 1

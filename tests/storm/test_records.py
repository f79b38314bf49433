"""The measured run's figures from the monitor's raw records, on hand-made rows."""

import pandas as pd

from streamplace.model import Operator, Stream, Topology
from streamplace.storm.records import missing_windows, spout_trees

TOPO = Topology.build("t", [Operator("s", 2, role="source"), Operator("b", 1)], [Stream("s", "b")])


def rows(*items):
    return pd.DataFrame([{"window_start": w, "window_seconds": 1.0, "task": task, "executed": n, "cpu_seconds": 0.0,
                          **extra} for w, task, n, extra in items])


def test_missing_windows_counts_each_task_window_without_a_record():
    load = rows((0, "s[0]", 5, {}), (1, "s[0]", 5, {}), (0, "s[1]", 5, {}), (0, "b[0]", 9, {}), (1, "b[0]", 9, {}))
    assert missing_windows(load, TOPO, 2) == 1             # s[1] has no record of window 1
    assert missing_windows(load, TOPO, 3) == 4             # and none of the three has a third
    assert missing_windows(load.iloc[0:0], TOPO, 2) == 6   # nothing arrived: 3 tasks x 2 windows


def test_spout_trees_sum_the_spouts_emits_acks_and_fails_only():
    load = rows((0, "s[0]", 10, {"acked": 8, "failed": 1}), (1, "s[0]", 10, {"acked": 12, "failed": 0}),
                (0, "s[1]", 7, {"acked": 7, "failed": 0}), (0, "b[0]", 27, {}))
    assert spout_trees(load, TOPO) == {"emitted": 27, "acked": 27, "failed": 1}
    # without ackers the spouts' rows carry no counts: nothing acked
    assert spout_trees(rows((0, "s[0]", 10, {}), (0, "b[0]", 10, {})), TOPO) == {"emitted": 10, "acked": 0, "failed": 0}

"""The demo's Storm step: which application instance it runs."""

import pytest

from streamplace.demo.storm_step import instance_to_run
from streamplace.evaluate.records import ResultRecord
from streamplace.storm import StormError


def _rec(workload, cluster, scheduler, throughput, workers, *, valid=True):
    placement = {f"t[{i}]": {"node": "n0", "worker": i % workers} for i in range(8)}
    return ResultRecord.from_dict({"workload": workload, "cluster": cluster, "application": workload,
                                   "scheduler": scheduler, "throughput": throughput, "inter_node_cost": 1.0,
                                   "valid": valid, "placement": placement})


def test_runs_the_heterogeneous_instance_whose_recommended_plan_has_fewest_workers():
    records = [_rec("big", "4high+4low", "lf", 9.0, 8), _rec("big", "4high+4low", "metis", 5.0, 2),
               _rec("small", "4high+4low", "optimal", 7.0, 3), _rec("small", "4high+4low", "even", 99.0, 1),
               _rec("tiny", "8high", "optimal", 7.0, 1)]
    first, best = instance_to_run(records)
    # big's recommended plan is lf (8 workers, metis' 2 do not count); even never is the recommended one;
    # the homogeneous cluster is not a candidate while a heterogeneous one is
    assert (first["workload"], best.scheduler) == ("small", "optimal")


def test_without_a_heterogeneous_cluster_any_cluster_will_do():
    first, best = instance_to_run([_rec("a", "8high", "lf", 1.0, 4), _rec("b", "8high", "t3", 1.0, 2)])
    assert (first["workload"], best.scheduler) == ("b", "t3")


def test_no_placement_within_capacity_is_one_clear_error():
    with pytest.raises(StormError, match="no placement within capacity to run on Storm \\(a on 4high\\+4low\\)"):
        instance_to_run([_rec("a", "4high+4low", "lf", 1.0, 4, valid=False)])

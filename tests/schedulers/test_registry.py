"""The contract every registered scheduler obeys (DESIGN 3), checked over the whole registry."""

import dataclasses
import sys

import numpy as np
import pytest

from streamplace.evaluate.metrics import inter_node_cost, inter_worker_cost
from streamplace.model import Cluster, Operator, Problem, Topology
from streamplace.schedulers import REGISTRY, ScheduleResult, available, make_scheduler
from streamplace.schedulers.base import STATUSES
from streamplace.workloads import microbench

# schedulers whose problem is a different one: throughput chooses the parallelism from a
# profiling spec (its own tests cover it); all others place the given tasks
PLACING = [name for name in available() if name != "throughput"]
FAST_PARAMS = {"optimal": {"time_limit": 5.0}, "ischeduler": {"theta": 0.5}}
SAMPLE = [i for i in microbench.instances(sizes=(10, 20, 32))]


def test_registry_has_the_design_schedulers():
    assert {"even", "optimal"} <= set(available())
    for name, cls in REGISTRY.items():
        assert cls.name == name and dataclasses.is_dataclass(cls)
        # the running time is declared and derived in the module's docstring
        assert cls.complexity.startswith(("O(", "exponential")), name
        assert "Running time" in sys.modules[cls.__module__].__doc__, name
        sched = cls()
        assert sched.get_params()["seed"] == 0
        assert make_scheduler(name, {k: str(v) for k, v in sched.get_params().items()
                                     if isinstance(v, (int, float)) and not isinstance(v, bool)}) == sched


@pytest.mark.parametrize("name", PLACING)
@pytest.mark.parametrize("inst", SAMPLE, ids=lambda i: i.name)
def test_valid_recomputed_and_deterministic(name, inst, recompute):
    p = inst.problem
    sched = make_scheduler(name, FAST_PARAMS.get(name, {}))
    res = sched.schedule(p)
    assert isinstance(res, ScheduleResult) and res.status in STATUSES and res.scheduler == name
    assert res.placement is not None, res.message
    assert res.placement.structural_errors(p.n_tasks, p.cluster) == []
    if REGISTRY[name].respects_capacity:
        assert res.placement.violations(p.loads, p.cluster) == []
    assert np.all(res.placement.workers_used(p.cluster) <= p.cluster.slots)
    inter_node, inter_worker = recompute(p, res.placement.node, res.placement.worker)
    assert inter_node_cost(p, res.placement) == pytest.approx(inter_node)
    assert inter_worker_cost(p, res.placement) == pytest.approx(inter_worker)
    again = make_scheduler(name, FAST_PARAMS.get(name, {})).schedule(p)
    if res.status == "optimal":  # parallel CP-SAT may return another optimum: same cost
        assert inter_node_cost(p, again.placement) == pytest.approx(inter_node)
    else:
        assert again.placement == res.placement


@pytest.mark.parametrize("name", [n for n in PLACING if REGISTRY[n].respects_capacity])
def test_infeasible_problems_give_a_message_not_a_traceback(name):
    topo = Topology.build("t", [Operator("a", 3, load=2.0)])
    res = make_scheduler(name, FAST_PARAMS.get(name, {})).schedule(Problem.from_topology(topo, Cluster.from_capacities({3: 1})))
    assert res.status == "infeasible" and res.placement is None and "capacity" in res.message

"""Plans out: a placement in the form another engine takes.

* ``storm-plan``: the plan directory the streamplace Nimbus plugin reads (one ``<topology>.json``;
  :mod:`streamplace.storm.plans`), the same as ``streamplace storm plan-dir``.
* ``heron``: a Heron packing plan, the JSON form (proto3 JSON mapping, camelCase field names) of
  Heron's ``heron.proto.system.PackingPlan`` (``heron/proto/packing_plan.proto``): one container
  per worker of the placement, numbered from 1 in node order then worker order (Heron keeps
  container 0 for its topology master); an instance per task with its component name, a global
  task id (1, 2, ... in task order) and its index within the component. Resources: CPU = the task's
  ``cpu_demand`` if declared, else its ``load``; RAM = ``memory_mb`` if declared, else Heron's
  default instance RAM (1 GiB); disk = Heron's default (1 GiB). A container requires the sum of
  its instances. Heron's packing algorithms add padding per container; a plan given to Heron as is
  has none.
* ``flink``: what a Flink job can be told. Flink places subtasks into slots itself and has no API
  to pin a subtask to a TaskManager, so the node choice cannot be carried over. What can: every
  operator's parallelism and a slot-sharing group per operator, grouping the operators whose tasks
  the placement puts in one worker (connected through shared workers), so operators that never
  share a worker never share a slot. The output says what is lost.

The input is a placement document (the JSON ``streamplace schedule -o`` writes, or a bare label
map); task labels give the operators and indices, so the topology is optional (it supplies the
Heron resources and checks the placement).
"""

from __future__ import annotations

import re
from collections import defaultdict

from .files import quote
from .model import Topology
from .model.specs import placement_targets

Targets = dict[str, tuple[str, int]]
FORMATS = ("storm-plan", "heron", "flink")
HERON_DEFAULT_RAM = 1 << 30    # bytes: Heron's default instance RAM and disk
HERON_DEFAULT_DISK = 1 << 30
MB = 1 << 20


def _label(label: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.+)\[(0|[1-9][0-9]*)\]", label)
    if not match:
        raise ValueError(f"{quote(label)} is not a task label op[i]")
    return match.group(1), int(match.group(2))


def _tasks(targets: Targets, topology: Topology | None) -> list[tuple[str, str, int]]:
    """(label, operator, index) in task order: the topology's, else by operator then index."""
    labels = list(topology.task_labels) if topology is not None else sorted(targets, key=_label)
    return [(label, *_label(label)) for label in labels]


def _workers(targets: Targets) -> list[tuple[str, int]]:
    """The placement's (node, worker) pairs, by node name then worker."""
    return sorted(set(targets.values()))


def heron_packing_plan(targets: Targets, plan_id: str, topology: Topology | None = None) -> dict:
    """The Heron ``PackingPlan`` JSON of a placement (module docstring)."""
    ops = {op.name: op for op in topology.operators} if topology is not None else {}
    containers = {slot: [] for slot in _workers(targets)}
    for task_id, (label, name, index) in enumerate(_tasks(targets, topology), start=1):
        op = ops.get(name)
        cpu = (op.cpu_demand or op.load) if op is not None else 1.0
        ram = int(op.memory_mb * MB) if op is not None and op.memory_mb > 0 else HERON_DEFAULT_RAM
        containers[targets[label]].append({"componentName": name, "taskId": task_id, "componentIndex": index,
                                           "resource": {"cpu": cpu, "ram": str(ram), "disk": str(HERON_DEFAULT_DISK)}})
    plans = []
    for number, instances in enumerate(containers.values(), start=1):
        need = {"cpu": sum(i["resource"]["cpu"] for i in instances),
                "ram": str(sum(int(i["resource"]["ram"]) for i in instances)),
                "disk": str(sum(int(i["resource"]["disk"]) for i in instances))}
        plans.append({"id": number, "instancePlans": instances, "requiredResource": need})
    return {"id": plan_id, "containerPlans": plans}


def heron_container_nodes(targets: Targets) -> dict[int, str]:
    """Which node each Heron container stands for (container id -> node), for the scheduler side."""
    return {number: node for number, (node, _) in enumerate(_workers(targets), start=1)}


def flink_job_hints(targets: Targets, topology: Topology | None = None) -> dict:
    """Parallelism and slot-sharing groups per operator, and what Flink cannot express."""
    tasks = _tasks(targets, topology)
    order = list(dict.fromkeys(name for _, name, _ in tasks))
    parent = {name: name for name in order}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    by_worker: dict[tuple[str, int], list[str]] = defaultdict(list)
    for label, name, _ in tasks:
        by_worker[targets[label]].append(name)
    for names in by_worker.values():
        for other in names[1:]:
            a, b = root(names[0]), root(other)
            if a != b:
                parent[max(a, b, key=order.index)] = min(a, b, key=order.index)
    groups = {r: f"group-{i}" for i, r in enumerate(dict.fromkeys(root(n) for n in order))}
    parallelism = {name: sum(1 for _, n, _ in tasks if n == name) for name in order}
    return {"operators": [{"name": name, "parallelism": parallelism[name], "slot_sharing_group": groups[root(name)]}
                          for name in order],
            "nodes": len({node for node, _ in targets.values()}), "workers": len(by_worker),
            "not_expressible": [
                "which TaskManager (node) runs a subtask: Flink's scheduler chooses the slots' machines",
                "which subtasks of different operators share a slot: Flink pairs subtasks by index within a "
                "slot-sharing group, not by this placement",
                "node capacities: give each TaskManager as many slots as the node's workers "
                "(taskmanager.numberOfTaskSlots) to keep the worker count"]}


def read_targets(doc, path: str) -> Targets:
    """The placement of a document, labels checked for the op[i] form."""
    targets = placement_targets(doc, path)
    for label in targets:
        try:
            _label(label)
        except ValueError as exc:
            raise ValueError(f"{path}: placement.{label}: {exc}") from None
    return targets

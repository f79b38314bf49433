"""What a placement must fit on each node: task units and, where stated, CPU cores and memory.

Every node has a ``capacity`` in task units (the papers' unit: tasks per node; a task occupies
its operator's ``load``). Real units can be stated beside it (docs/definitions.md#resources):

* ``cpu``, in cores. A task needs its operator's ``cpu_demand`` (cores; a spec may give Storm's
  ``cpu_percent`` instead, 100 = one core), or the ``cpu_cores`` a profile measured for it. A
  node offers its ``cores`` (a spec may give Storm's ``supervisor.cpu.capacity`` as
  ``cpu_percent``). Checked when some task needs CPU.
* ``memory``, in MB. A task needs its operator's ``memory_mb`` (Storm's on-heap memory per
  executor); a node offers its ``memory_mb``, and a node that states none (0) is unlimited.
  Checked when some task and some node state memory.

Column 0 is always the task units, so a job that states nothing else is exactly the papers'
problem. A stated resource no node can run short of (even its capacity's worth of its hungriest
tasks fits) is *redundant*: checked for validity, left out of the solvers (:attr:`binding`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .placement import Placement, capacity_slack

LOAD, CPU, MEMORY = "load", "cpu", "memory"
UNITS = {LOAD: "task units", CPU: "cores", MEMORY: "MB"}


@dataclass(frozen=True, eq=False)
class Resources:
    """``need[t, r]`` of every task and ``limit[j, r]`` of every node (inf: unlimited), per resource."""

    names: tuple[str, ...]
    need: np.ndarray
    limit: np.ndarray

    @classmethod
    def of(cls, topology, graph, cluster) -> "Resources":
        """The resources of a job: task units always; CPU and memory where they are stated."""
        op = topology.operator_of_task
        names, need, limit = [LOAD], [np.asarray(graph.loads, dtype=float)], [cluster.capacities]
        cpu = graph.cpu if graph.cpu is not None else np.array([o.cpu_demand for o in topology.operators], dtype=float)[op]
        if cpu.size and cpu.max() > 0:
            names.append(CPU)
            need.append(np.asarray(cpu, dtype=float))
            limit.append(np.array([n.cores for n in cluster.nodes], dtype=float))
        memory = np.array([o.memory_mb for o in topology.operators], dtype=float)[op]
        offered = np.array([n.memory_mb for n in cluster.nodes], dtype=float)
        if memory.size and memory.max() > 0 and offered.max(initial=0.0) > 0:
            names.append(MEMORY)
            need.append(memory)
            limit.append(np.where(offered > 0, offered, np.inf))
        return cls(tuple(names), np.column_stack(need), np.column_stack(limit) if limit[0].size else np.zeros((0, len(names))))

    @property
    def units(self) -> tuple[str, ...]:
        return tuple(UNITS[name] for name in self.names)

    @cached_property
    def slack(self) -> np.ndarray:
        """The capacity slack of every limit (:func:`~.placement.capacity_slack`; 0 where unlimited)."""
        return np.where(np.isfinite(self.limit), capacity_slack(np.where(np.isfinite(self.limit), self.limit, 0.0)), 0.0)

    @cached_property
    def binding(self) -> np.ndarray:
        """Indices of the resources a placement within task units can still exceed on some node:
        always 0; another r only if some node could hold more of it than it offers (its capacity
        filled with the tasks of the highest need per task unit, or every task where loads are 0)."""
        keep = [0]
        load = self.need[:, 0]
        for r in range(1, len(self.names)):
            need = self.need[:, r]
            if (need[load == 0] > 0).any():
                worst = np.full(self.limit.shape[0], need.sum())
            else:
                per_unit = (need[load > 0] / load[load > 0]).max(initial=0.0)
                worst = np.minimum(need.sum(), per_unit * self.limit[:, 0])
            if (worst > self.limit[:, r] + self.slack[:, r]).any():
                keep.append(r)
        return np.array(keep, dtype=np.int64)

    @property
    def extra(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The binding resources beyond task units as ``(needs n x E, limits m x E)`` (the exact
        solver's ``extra``), or None when only task units can bind."""
        cols = self.binding[1:]
        return (self.need[:, cols], self.limit[:, cols]) if cols.size else None

    def usage(self, node: np.ndarray) -> np.ndarray:
        """What each node holds of each resource, ``(nodes, resources)``."""
        m = self.limit.shape[0]
        return np.stack([np.bincount(node, weights=self.need[:, r], minlength=m) for r in range(len(self.names))], axis=1)

    def over(self, node: np.ndarray) -> np.ndarray:
        """``(nodes, resources)`` booleans: where a node holds more than it offers."""
        return self.usage(node) > self.limit + self.slack

    def overloads(self, placement: Placement, cluster) -> list[str]:
        """One sentence per node and stated real resource (CPU, memory) it holds too much of."""
        used, over = self.usage(placement.node), self.over(placement.node)
        over[:, 0] = False   # task units: Placement.violations says it, in the papers' words
        return [f"node {cluster.nodes[j].name} needs {used[j, r]:g} {self.units[r]} of {self.names[r]} > "
                f"{self.limit[j, r]:g} {self.units[r]}" for j, r in zip(*np.nonzero(over))]

    def infeasibility(self, labels: list[str]) -> str | None:
        """Why no placement can fit, when one resource alone shows it (naming the resource), else None."""
        for r, name in enumerate(self.names):
            need, limit = self.need[:, r], self.limit[:, r]
            if not need.size:
                continue
            largest, t = limit.max(initial=0.0), int(need.argmax())
            if name == LOAD:
                if need[t] > largest:
                    return f"task {labels[t]} has load {need[t]:g}, more than the largest node capacity {largest:g}"
                if need.sum() > limit.sum() + 1e-9:
                    return f"total task load {need.sum():g} exceeds total cluster capacity {limit.sum():g}"
                continue
            unit = self.units[r]
            if need[t] > largest:
                return f"task {labels[t]} needs {need[t]:g} {unit} of {name}, more than the largest node offers ({largest:g} {unit})"
            if need.sum() > limit.sum() + 1e-9:
                return f"the tasks need {need.sum():g} {unit} of {name} in total, the cluster offers {limit.sum():g} {unit}"
        return None

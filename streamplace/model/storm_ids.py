"""Storm's task numbering and routing rules, the one Python home of the label <-> task id map.

Storm numbers the tasks of a topology from 1, contiguously per component, with components in
Java ``String`` order (UTF-16 code units, so ``A-Z`` < ``__acker`` < ``a-z``) and system
components (``__acker``, ``__eventlogger``, ``__metrics_*``) sorted among the user's. A
streamplace label ``op[i]`` is the i-th task of operator ``op`` (one task per executor), so the
label of a Storm task is its component and its rank among that component's task ids. The Java
module has the same rule in ``org.streamplace.storm.TaskLabels``; both are tested against
Storm's own numbering.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .topology import Topology


def java_string_key(name: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units)."""
    return name.encode("utf-16-be")


def component_order(topology: Topology, system: Mapping[str, int] | None = None) -> list[tuple[str, int]]:
    """(component, task count) in Storm's numbering order, system components included."""
    comps = {op.name: op.parallelism for op in topology.operators}
    comps.update({name: int(n) for name, n in (system or {}).items() if n > 0})
    return sorted(comps.items(), key=lambda item: java_string_key(item[0]))


def storm_task_ids(topology: Topology, system: Mapping[str, int] | None = None) -> np.ndarray:
    """Storm task id of every streamplace task (index = our task id).

    ``system``: task counts of Storm's system components, e.g. ``{"__acker": 2}`` (Storm's default
    acker count is ``topology.workers``; streamplace runs with 0).
    """
    ids = np.empty(topology.n_tasks, dtype=np.int64)
    next_id = 1
    for name, count in component_order(topology, system):
        if name in topology.index:
            ids[topology.tasks_of(name).start:topology.tasks_of(name).stop] = np.arange(next_id, next_id + count)
        next_id += count
    return ids


def labels_by_storm_id(topology: Topology, system: Mapping[str, int] | None = None) -> dict[int, str]:
    """Storm task id -> label ``op[i]``, user tasks only."""
    ids = storm_task_ids(topology, system)
    return {int(ids[t]): label for t, label in enumerate(topology.task_labels)}


def storm_task_order(topology: Topology) -> np.ndarray:
    """Our task ids in Storm's order (what Storm's EvenScheduler deals round-robin)."""
    return np.argsort(storm_task_ids(topology), kind="stable")


def fields_target(key_hash: np.ndarray | int, n_targets: int) -> np.ndarray:
    """Index of the receiving task of a fields grouping: ``floorMod(hash, targets)``.

    Storm hashes the grouping fields' values with ``Arrays.deepHashCode``; for one int key k
    that is ``31 + k`` (:func:`int_key_hash`). Targets are the receiver's tasks in ascending id
    order, i.e. label order.
    """
    return np.mod(np.asarray(key_hash, dtype=np.int64), n_targets)


def int_key_hash(key: np.ndarray | int) -> np.ndarray:
    """``Arrays.deepHashCode(new Object[]{k})`` of an int key k: ``31 + k`` in 32-bit arithmetic."""
    h = (31 + np.asarray(key, dtype=np.int64)) & 0xFFFFFFFF
    return np.where(h >= 2**31, h - 2**32, h)

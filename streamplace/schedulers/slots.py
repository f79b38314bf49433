"""Storm's worker-slot ordering, shared by ``even`` and ``lf`` ([LF] Alg. 1)."""

from __future__ import annotations

import numpy as np

from ..model import Cluster
from ..model.storm_ids import java_string_key


def sort_slots(cluster: Cluster) -> np.ndarray:
    """Free slots in Storm's fairness order, as an ``(s, 2)`` array of (node, worker).

    Slots are grouped by node (nodes in name order), the groups sorted by slot count
    descending (stable), then interleaved: the first slot of every node, then the second...
    """
    names = [java_string_key(n.name) for n in cluster.nodes]   # Storm groups slots in a TreeMap
    by_name = sorted(range(cluster.n_nodes), key=names.__getitem__)
    groups = sorted(by_name, key=lambda j: -int(cluster.slots[j]))
    depth = int(cluster.slots.max())
    order = [(j, w) for w in range(depth) for j in groups if w < cluster.slots[j]]
    return np.array(order, dtype=np.int64).reshape(-1, 2)


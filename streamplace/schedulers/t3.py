"""T3-Scheduler: topology- and traffic-aware two-level scheduling ([T3] Sec. 4, Alg. 1-2, App. A-C).

docs/schedulers.md#t3. First level: the simplified graph starts with one group per operator (group
weight = summed task loads, group edge = summed task-pair weights ``w(u, v)``, [T3] Sec. 4.2).
Nodes are filled one by one, highest capacity first, equal capacities in a seeded random order
(Sec. 4.3). For the node being filled, repeatedly ([T3] Alg. 2):

* if some unassigned group neighbours the node's sub-graph, take the one with the highest edge
  weight to it: whole if it fits, else *single-group partitioning* (Sec. 4.4.3): its tasks by
  rate to the sub-graph, highest first, each taken if it still fits;
* otherwise (always for an empty node) start from the heaviest pair of unassigned groups: whole
  if it fits, else *group-pair partitioning* (Sec. 4.4.2): task pairs of (A, B) by rate, highest
  first; both tasks new -> take both if they fit; one already selected -> take the new task with
  the highest-rate unselected partner from the other group that fits (alone if none fits, the
  last paragraph of Sec. 4.4.2); both selected -> skip. No pair left -> the heaviest single group.

Every partial placement splits a group: the unselected rest stays a group (named ``B2``, ``B3``
... as in App. C) and the simplified graph's edges are updated. Second level:
:func:`~.second_level.assign_workers` (Sec. 4.5, Eq. 3).

Choices where the paper is silent or assumes unit loads:
* ties between equal-rate task pairs or tasks are broken in seeded random order (the paper:
  "at random"); ties between group pairs / neighbours by operator order;
* a candidate none of whose tasks fits the remaining capacity (possible only with non-uniform
  loads) is passed over for this node; a node is done when no unplaced task fits it;
* single-group partitioning fills the node: after the tasks connected to the sub-graph come the
  unconnected ones in task order (Sec. 4.4.1 says the split group fills the node);
* the starting single group is the heaviest by load.
A group is always a subset of one operator and operators have no streams to themselves, so a
group has no internal edges: its tasks' rates to the sub-graph do not change while it is being
partitioned (the scores are computed once per split), and the rest of a split keeps the group's
index, so the simplified graph never grows beyond one vertex per operator.

Cost: every placed task's adjacency row is read once (sub-graph scores and group edges); a
group-pair split sorts the task pairs between the two groups and walks them in chunks, only
visiting pairs that can still change the selection in Python.

Running time: every placed task's adjacency row is read once and a group-pair split sorts the
pairs between two groups, O(m log m) over the run; choosing the next group scans at most o
groups, up to o times per node, O(k o^2).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..model import Problem
from ..model.placement import Placement, capacity_slack
from .base import NoSolution, Outcome, Scheduler, register
from .second_level import DEFAULT_TASKS_PER_WORKER, assign_workers

_FIRST_CHUNK = 64
_MAX_CHUNK = 1 << 16


def greedy_fit(loads: np.ndarray, room: float) -> np.ndarray:
    """Mask of the items taken when walking ``loads`` in order and taking each one that fits."""
    take = np.zeros(loads.shape[0], dtype=bool)
    start = 0
    while start < loads.shape[0]:
        idx = start + np.flatnonzero(loads[start:] <= room)
        if idx.size == 0:
            break
        csum = np.cumsum(loads[idx])
        k = int(np.searchsorted(csum, room, side="right"))
        take[idx[:k]] = True
        room -= float(csum[k - 1])
        if k == idx.size:
            break
        start = int(idx[k]) + 1
    return take


class _FirstLevel:
    """The simplified graph and the node being filled (state of one ``schedule`` call)."""

    def __init__(self, problem: Problem, rng: np.random.Generator):
        topo, graph = problem.topology, problem.graph
        self.rng = rng
        self.w = graph.weights
        self.loads = graph.loads
        n, n_groups = graph.n, len(topo.operators)
        self.op_names = [op.name for op in topo.operators]
        self.group_of = topo.operator_of_task.astype(np.int64)  # -1 once placed
        self.node_of = np.full(n, -1, dtype=np.int64)
        self.unplaced = n
        self.members = [np.arange(topo.offsets[g], topo.offsets[g + 1]) for g in range(n_groups)]
        self.gload = np.bincount(self.group_of, weights=self.loads, minlength=n_groups)
        self.gmin = np.array([self.loads[m].min() for m in self.members])
        self.names = list(self.op_names)
        self.splits = [0] * n_groups
        u, v, wt = graph.edges
        gu, gv = self.group_of[u], self.group_of[v]
        cross = gu != gv
        agg = sp.coo_matrix((wt[cross], (np.minimum(gu, gv)[cross], np.maximum(gu, gv)[cross])),
                            shape=(n_groups, n_groups)).tocsr()
        agg.sum_duplicates()
        agg.eliminate_zeros()
        self.adj: list[dict[int, float]] = [{} for _ in range(n_groups)]
        self.heap: list[tuple[float, int, int]] = []
        coo = agg.tocoo()
        for a, b, x in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
            self.adj[a][b] = self.adj[b][a] = x
            self.heap.append((-x, a, b))
        heapq.heapify(self.heap)
        self.to_node = np.zeros(n)  # rate of every task to the current node's sub-graph
        self.steps: dict[int, list[dict]] = {}

    # ------------------------------------------------------------------ node loop
    def fill(self, j: int, capacity: float) -> None:
        """First level for node ``j``: add groups until no unplaced task fits."""
        self.node, self.room = j, capacity
        # half the slack: the room is decremented load by load, and the sum of those float steps
        # must stay within the validator's slack
        self.tol = 0.5 * capacity_slack(capacity)
        self.node_score: dict[int, float] = {}
        self.touched: list[np.ndarray] = []
        self.deferred: list[tuple[float, int, int]] = []
        while self.unplaced and np.any(self.gmin <= self.room + self.tol):
            g = self._best_neighbour()
            if g is None:
                if not self._start():
                    break
            elif self.gload[g] <= self.room + self.tol:
                self._place(g, self.members[g], "neighbour")
            else:
                self._place(g, self._single_partition(g), "neighbour")
        for entry in self.deferred:
            heapq.heappush(self.heap, entry)
        if self.touched:
            self.to_node[np.concatenate(self.touched)] = 0.0

    def _best_neighbour(self) -> int | None:
        """Unassigned group with the highest edge weight to the sub-graph that can still add a task."""
        fit = self.room + self.tol
        best = max(((x, -g) for g, x in self.node_score.items() if x > 0 and self.gmin[g] <= fit), default=None)
        return None if best is None else -best[1]

    def _start(self) -> bool:
        """Heaviest usable group pair, else the heaviest single group; False if nothing fits."""
        while self.heap:
            entry = heapq.heappop(self.heap)
            x, a, b = -entry[0], entry[1], entry[2]
            if self.adj[a].get(b) != x:
                continue  # stale: a group was split or placed since this entry was pushed
            if self.gmin[a] + self.gmin[b] > self.room + self.tol:
                self.deferred.append(entry)
                continue
            if self.gload[a] + self.gload[b] <= self.room + self.tol:
                self._place(a, self.members[a], "pair")
                self._place(b, self.members[b], "pair")
                return True
            chosen = self._pair_partition(a, b)
            if chosen.size == 0:
                self.deferred.append(entry)
                continue
            in_a = self.group_of[chosen] == a
            self._place(a, chosen[in_a], "pair")
            self._place(b, chosen[~in_a], "pair")
            return True
        usable = np.flatnonzero(self.gmin <= self.room + self.tol)
        if usable.size == 0:
            return False
        g = int(usable[np.argmax(self.gload[usable])])
        fits = self.gload[g] <= self.room + self.tol
        self._place(g, self.members[g] if fits else self._single_partition(g), "single")
        return True

    # ------------------------------------------------------------------ partitioning
    def _single_partition(self, g: int) -> np.ndarray:
        """[T3] Sec. 4.4.3: tasks of ``g`` by rate to the sub-graph, each taken if it fits."""
        m = self.members[g]
        score = self.to_node[m]
        linked = np.flatnonzero(score > 0)
        linked = linked[np.lexsort((self.rng.random(linked.size), -score[linked]))]
        order = np.concatenate([linked, np.flatnonzero(score <= 0)])
        return m[order[greedy_fit(self.loads[m[order]], self.room + self.tol)]]

    def _pair_partition(self, a: int, b: int) -> np.ndarray:
        """[T3] Sec. 4.4.2: the tasks of groups a, b selected for the node (maybe none)."""
        rows_g = a if self.members[a].size <= self.members[b].size else b
        other = b if rows_g == a else a
        rows = self.w[self.members[rows_g]]
        u = np.repeat(self.members[rows_g], np.diff(rows.indptr))
        keep = self.group_of[rows.indices] == other
        u, v, rate = u[keep], rows.indices[keep], rows.data[keep]
        order = np.lexsort((self.rng.random(rate.size), -rate))
        loads, node_of, j = self.loads, self.node_of, self.node
        limit = self.room + self.tol
        floor = min(self.gmin[a], self.gmin[b])
        chosen: list[int] = []
        pos, chunk = 0, _FIRST_CHUNK
        while pos < order.size and limit >= floor:
            blk = order[pos:pos + chunk]
            pos, chunk = pos + chunk, min(2 * chunk, _MAX_CHUNK)
            bu, bv = u[blk], v[blk]
            live = ((node_of[bu] < 0) | (node_of[bv] < 0)) & ((loads[bu] <= limit) | (loads[bv] <= limit))
            for x, y in zip(bu[live].tolist(), bv[live].tolist()):
                if limit < floor:
                    break
                new_x, new_y = node_of[x] < 0, node_of[y] < 0
                if new_x and new_y:
                    take = [x, y] if loads[x] + loads[y] <= limit else []
                elif new_x or new_y:
                    t, partner_group = (x, other) if new_x else (y, rows_g)
                    take = [] if loads[t] > limit else [t, *self._partner(t, partner_group, limit - loads[t])]
                else:
                    continue
                for t in take:
                    node_of[t] = j
                    limit -= loads[t]
                chosen.extend(take)
        chosen_arr = np.array(chosen, dtype=np.int64)
        node_of[chosen_arr] = -1  # _place marks them for good
        return chosen_arr

    def _partner(self, t: int, group: int, limit: float) -> list[int]:
        """The unselected task of ``group`` with the highest rate to ``t`` that fits (or none)."""
        lo, hi = self.w.indptr[t], self.w.indptr[t + 1]
        nb, rate = self.w.indices[lo:hi], self.w.data[lo:hi]
        ok = np.flatnonzero((self.group_of[nb] == group) & (self.node_of[nb] < 0) & (self.loads[nb] <= limit))
        return [int(nb[ok[np.argmax(rate[ok])]])] if ok.size else []

    # ------------------------------------------------------------------ graph update
    def _place(self, g: int, tasks: np.ndarray, how: str) -> None:
        """Put ``tasks`` (of group g) on the current node and update the simplified graph."""
        if tasks.size == 0:
            return
        old_name = self.names[g]
        self.node_of[tasks] = self.node
        self.group_of[tasks] = -1
        self.room -= float(self.loads[tasks].sum())
        self.unplaced -= tasks.size
        rest = self.members[g][self.group_of[self.members[g]] == g]
        self.members[g] = rest
        self.gload[g] = float(self.loads[rest].sum())
        self.gmin[g] = self.loads[rest].min() if rest.size else np.inf
        if rest.size:
            self.splits[g] += 1
            self.names[g] = f"{self.op_names[g]}{self.splits[g] + 1}"
        self.steps.setdefault(self.node, []).append({
            "group": old_name, "operator": self.op_names[g], "tasks": int(tasks.size),
            "load": float(self.loads[tasks].sum()), "how": how, "rest": self.names[g] if rest.size else None})
        # rates of the placed tasks: to every task (sub-graph scores) and to every group
        rows = self.w[tasks]
        nb, inv = np.unique(rows.indices, return_inverse=True)
        per_task = np.bincount(inv, weights=rows.data, minlength=nb.size)
        self.to_node[nb] += per_task
        self.touched.append(nb)
        grp = self.group_of[nb]
        open_ = grp >= 0
        groups, ginv = np.unique(grp[open_], return_inverse=True)
        per_group = np.bincount(ginv, weights=per_task[open_], minlength=groups.size)
        for h, x in zip(groups.tolist(), per_group.tolist()):
            self.node_score[h] = self.node_score.get(h, 0.0) + x
            if h != g:
                self._reduce_edge(g, h, x)
        if rest.size:
            for h, x in self.adj[g].items():
                heapq.heappush(self.heap, (-x, min(g, h), max(g, h)))
        else:
            for h in self.adj[g]:
                del self.adj[h][g]
            self.adj[g] = {}
            self.node_score.pop(g, None)

    def _reduce_edge(self, g: int, h: int, x: float) -> None:
        old = self.adj[g][h]
        left = old - x
        if left <= 1e-9 * old:
            del self.adj[g][h], self.adj[h][g]
        else:
            self.adj[g][h] = self.adj[h][g] = left


@register
@dataclass(frozen=True, kw_only=True)
class T3Scheduler(Scheduler):
    """``tasks_per_worker``: T of [T3] Eq. 3 (max tasks per worker at the second level)."""

    name = "t3"
    complexity = "O(m log m + k o^2)"
    tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER

    def __post_init__(self):
        if self.tasks_per_worker < 1:
            raise ValueError(f"tasks_per_worker must be >= 1, got {self.tasks_per_worker}")

    def _schedule(self, problem: Problem) -> Outcome:
        cluster = problem.cluster
        rng = np.random.default_rng(self.seed)
        order = np.lexsort((rng.random(cluster.n_nodes), -cluster.capacities))
        level = _FirstLevel(problem, rng)
        for j in order.tolist():
            if not level.unplaced:
                break
            level.fill(j, float(cluster.capacities[j]))
        unplaced = np.flatnonzero(level.node_of < 0)
        if unplaced.size:
            labels = ", ".join(problem.topology.task_labels[t] for t in unplaced[:5])
            raise NoSolution(
                f"t3 left {unplaced.size} of {problem.n_tasks} tasks unplaced (load {problem.loads[unplaced].sum():g}; "
                f"e.g. {labels}): no node has enough free capacity left for them")
        worker = assign_workers(problem, level.node_of, tasks_per_worker=self.tasks_per_worker, seed=self.seed)
        names = [node.name for node in cluster.nodes]
        workers_used = Placement(node=level.node_of, worker=worker).workers_used(cluster)
        details = {
            "node_order": [names[j] for j in order.tolist()],
            "nodes": {names[j]: steps for j, steps in level.steps.items()},
            "workers": {names[j]: int(workers_used[j]) for j in level.steps},
        }
        return Outcome(placement=Placement(node=level.node_of, worker=worker), details=details)

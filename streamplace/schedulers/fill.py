"""Placement pieces more than one scheduler is built from (as Storm composes its strategies from
shared orderings): the contraction of a task graph onto groups of tasks, the traffic-driven
best-fit fill of waiting tasks into free capacity, the check that every task found a node, and
the repair that makes a placement fit the CPU and memory a job states (:func:`fit_resources`).

``ischeduler`` fills what its fused groups leave and ``lns`` repairs a running placement with
them ([I] Sec. 4.2 describes the fill for I-Scheduler; ``lns`` reuses it unchanged).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..model.placement import capacity_slack
from .status import NoSolution
from .segments import segment_cumsum


def reduced_graph(weights: sp.csr_matrix, loads: np.ndarray, group: np.ndarray, n_groups: int):
    """One vertex per group (ids 0..f-1) and per unfused task (f.. in task order): ``(W', L', vertex of task)``.

    ``W' = P^T W P`` without its diagonal, ``L' = P^T L`` (P: task -> vertex indicator matrix).
    """
    vertex = group.copy()
    unfused = vertex < 0
    vertex[unfused] = n_groups + np.arange(int(unfused.sum()))
    m = n_groups + int(unfused.sum())
    P = sp.csr_matrix((np.ones(vertex.size), (np.arange(vertex.size), vertex)), shape=(vertex.size, m))
    upper = P.T @ sp.triu(weights, k=1, format="csr") @ P  # each task pair once
    reduced = (upper + upper.T).tocsr()  # exactly symmetric (float addition commutes)
    reduced.setdiag(0)
    reduced.eliminate_zeros()
    return reduced, np.bincount(vertex, weights=loads, minlength=m), vertex


def best_fit(weights: sp.csr_matrix, loads: np.ndarray, node: np.ndarray, capacities: np.ndarray) -> np.ndarray:
    """Place the tasks with ``node == -1`` into the free capacity by traffic, in vectorised rounds.

    Each round, every waiting task proposes the node with the most traffic to its placed
    neighbours among the nodes it fits; waiting tasks with no such node seed empty room: the r-th
    of them by traffic to the other waiting tasks proposes the r-th roomiest node (if it fits
    there; if a round has no proposal at all, they spread round-robin over the nodes they fit).
    Each node accepts its proposals, most traffic first, while they fit. Returns the completed
    ``node`` array; tasks that fit nowhere keep -1.
    """
    node = node.copy()
    caps = np.asarray(capacities, dtype=float)
    slack = capacity_slack(caps)
    m = caps.size
    while True:
        todo = np.flatnonzero(node < 0)
        if todo.size == 0:
            return node
        placed = np.flatnonzero(node >= 0)
        free = caps - np.bincount(node[placed], weights=loads[placed], minlength=m)
        need = loads[todo]
        rows = weights[todo]
        onto = sp.csr_matrix((np.ones(placed.size), (placed, node[placed])), shape=(node.size, m))
        aff = (rows @ onto).tocoo()
        ok = (need[aff.row] <= free[aff.col] + slack[aff.col]) & (aff.data > 0)
        r, c, v = aff.row[ok], aff.col[ok], aff.data[ok]
        choice = np.full(todo.size, -1, dtype=np.int64)
        score = np.zeros(todo.size)
        o = np.lexsort((c, -v, r))
        first = o[np.r_[True, r[o][1:] != r[o][:-1]]] if o.size else o
        choice[r[first]], score[r[first]] = c[first], v[first]
        lonely = np.flatnonzero(choice < 0)
        pull = np.asarray(rows[:, todo].sum(axis=1)).ravel()[lonely]
        lonely = lonely[np.lexsort((-need[lonely], -pull))]
        roomiest = np.argsort(-free, kind="stable")
        fits = np.searchsorted(-free[roomiest], -need[lonely] + slack.max(), side="right")   # accept checks each node
        rank = np.arange(lonely.size)
        seeds = rank < fits
        choice[lonely[seeds]] = roomiest[rank[seeds]]
        if not seeds.any() and first.size == 0:
            spread = fits > 0
            choice[lonely[spread]] = roomiest[rank[spread] % fits[spread]]
        cand = np.flatnonzero(choice >= 0)
        if cand.size == 0:
            return node
        o = cand[np.lexsort((-need[cand], -score[cand], choice[cand]))]
        accept = segment_cumsum(choice[o], need[o]) <= free[choice[o]] + slack[choice[o]]
        node[todo[o[accept]]] = choice[o[accept]]


def require_placed(node: np.ndarray, loads: np.ndarray, capacities: np.ndarray) -> np.ndarray:
    """``node`` if every task is placed, else :class:`NoSolution` saying what did not fit."""
    waiting = node < 0
    if waiting.any():
        free = capacities - np.bincount(node[~waiting], weights=loads[~waiting], minlength=capacities.size)
        raise NoSolution(
            f"{int(waiting.sum())} task(s) of total load {loads[waiting].sum():g} fit in no node's remaining "
            f"capacity (heaviest waiting load {loads[waiting].max():g}, largest free capacity {max(free.max(), 0):g})")
    return node


def fit_resources(weights: sp.csr_matrix, resources, node: np.ndarray, node_names: list[str]) -> tuple[np.ndarray, list[int]]:
    """Move tasks off the nodes that hold more of some resource than they offer; returns the new
    ``node`` array and the tasks moved.

    The shared repair for a job that states CPU or memory (model.resources) after a scheduler that
    packs by task units alone. Node by node, most overloaded (largest excess share) first: among the
    node's tasks that need a resource it is short of and the nodes where such a task fits in every
    resource, move the one whose move raises the inter-node traffic least per share of the excess it
    removes (ties: the lower task id, then the lower node index). Raises :class:`NoSolution`
    (naming the node and resource) when no task of an overloaded node fits anywhere else.
    """
    node = node.copy()
    need, limit = resources.need, resources.limit
    m = limit.shape[0]
    free = limit + resources.slack - resources.usage(node)
    moved: list[int] = []
    while True:
        with np.errstate(divide="ignore", invalid="ignore"):
            excess = np.where(free < 0, -free / np.maximum(limit, 1e-300), 0.0)
        j = int(np.argmax(excess.max(axis=1)))
        short = free[j] < 0
        if not short.any():
            return node, moved
        on = np.flatnonzero(node == j)
        cand = on[(need[on][:, short] > 0).any(axis=1)]
        fit = (need[cand][:, None, :] <= free[None, :, :]).all(axis=2)
        fit[:, j] = False
        if not fit.any():
            r = int(np.flatnonzero(short)[0])
            raise NoSolution(f"node {node_names[j]} holds more {resources.names[r]} than it offers and none of its tasks fits "
                             f"on another node in every resource ({', '.join(resources.names)})")
        rows = weights[cand].tocoo()   # traffic of each candidate to each node: its own edges only
        aff = np.zeros((cand.size, m))
        np.add.at(aff, (rows.row, node[rows.col]), rows.data)
        relief = (np.minimum(need[cand][:, short], -free[j, short]) / -free[j, short]).sum(axis=1)
        score = np.where(fit, (aff[:, [j]] - aff) / relief[:, None], np.inf)
        i, d = np.unravel_index(int(np.argmin(score)), score.shape)
        t = int(cand[i])
        node[t] = d
        free[j] += need[t]
        free[d] -= need[t]
        moved.append(t)

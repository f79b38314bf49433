"""Interchangeable task classes and the symmetry they leave ([I] Eq. 1-5 expressed over counts).

Tasks are grouped into classes such that all tasks of a class have the same load, every block
``W[C, D]`` between two classes is constant (``w_CD``) and all off-diagonal entries of ``W[C, C]``
are equal (``w_CC``). Permuting the tasks inside a class is then an automorphism of the problem,
so only the *number* of tasks of each class on each node matters. Two tasks can share a class iff
they are "twins" (``W[u, x] == W[v, x]`` for every x not in {u, v}, equal loads); twinship is an
equivalence, and the twin classes are the coarsest valid partition (:func:`interchangeable_classes`).
The caller's ``groups`` (e.g. operator ids) are the starting partition: they are refined, and
refined classes whose union is still a valid class are merged (the parallel middle operators of a
diamond, all leaf operators of a star: exact, and it removes that symmetry entirely). Singletons
(the task-level model, ``model="task"``) are always valid. :class:`Classes` holds the counts view
of a problem (class sizes, loads, the class weight matrix, node types); :func:`class_orbits` and
:func:`canonical_counts` give the symmetry the count model breaks.
"""

from __future__ import annotations

import numpy as np

from .numbers import dense


def interchangeable_classes(weights, loads, groups=None, *, merge: bool = False) -> np.ndarray:
    """Class id (0..k-1, numbered by first task) per task; tasks of a class are interchangeable.

    The classes refine ``groups`` (default: a single group) and the loads: two tasks of the same
    group and load share a class iff they are twins, ``W[u, x] == W[v, x]`` for all x not in
    {u, v} (an equivalence relation). Every class then has constant blocks ``W[C, D]`` and a
    constant off-diagonal inside (verified; a violating class would be split into singletons).
    With ``merge=True`` refined classes of different groups are merged whenever their union is
    still a set of mutual twins; as twinship is an equivalence this is the coarsest valid
    partition, computed directly (``groups`` then no longer matters).
    """
    W = dense(weights)
    loads = np.asarray(loads, dtype=float)
    loads = loads.reshape(loads.shape[0], -1) if loads.ndim else loads.reshape(1, 1)   # n x R: one column per resource
    n = loads.shape[0]
    if W.shape != (n, n):
        raise ValueError(f"weights must be {n}x{n}, got {W.shape}")
    if groups is not None and np.asarray(groups).ravel().shape != (n,):
        raise ValueError(f"groups must have one entry per task ({n})")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    g = np.zeros(n, dtype=np.int64) if groups is None or merge else np.unique(np.asarray(groups).ravel(),
                                                                               return_inverse=True)[1]
    # Twins have equal off-diagonal row multisets (row u minus W[u,v] equals row v minus W[v,u]),
    # so only tasks with equal (group, load, sorted off-diagonal row) need the exact test.
    off = W[~np.eye(n, dtype=bool)].reshape(n, n - 1) if n > 1 else np.zeros((n, 0))
    keys = np.sort(off, axis=1) + 0.0  # (+ 0.0 turns -0.0 into 0.0 for the byte keys)
    cls = np.full(n, -1, dtype=np.int64)
    reps: list[int] = []
    buckets: dict[bytes, list[int]] = {}
    for u in range(n):
        key = np.int64(g[u]).tobytes() + (loads[u] + 0.0).tobytes() + keys[u].tobytes()
        cands = buckets.setdefault(key, [])
        found = -1
        if cands:
            r = np.array([reps[c] for c in cands])
            mism = W[r] != W[u][None, :]
            cnt = mism.sum(axis=1) - mism[:, u] - mism[np.arange(r.size), r]
            hit = np.flatnonzero(cnt == 0)
            if hit.size:
                found = cands[int(hit[0])]
        if found < 0:
            found = len(reps)
            reps.append(u)
            cands.append(found)
        cls[u] = found
    # Safety net (vectorised): W must equal the class model off the diagonal.
    k = len(reps)
    sizes = np.bincount(cls, minlength=k)
    second = np.full(k, -1, dtype=np.int64)  # a second member of each class (for w_CC)
    for u in range(n):
        c = cls[u]
        if u != reps[c] and second[c] < 0:
            second[c] = u
    R = W[np.ix_(reps, reps)].copy()
    multi = sizes > 1
    R[np.flatnonzero(multi), np.flatnonzero(multi)] = W[np.array(reps)[multi], second[multi]]
    model = R[np.ix_(cls, cls)]
    bad_pairs = (model != W) & ~np.eye(n, dtype=bool)
    if bad_pairs.any():  # pragma: no cover - the twin relation guarantees constant blocks
        for u in np.flatnonzero(bad_pairs.any(axis=1)):
            cls[u] = cls.max() + 1
    _, first, inv = np.unique(cls, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inv.ravel()]


class Classes:
    """The integer problem over classes: sizes, loads, weights; node types. ``xL`` (n x E) and
    ``xC`` (m x E), integer, are the needs and limits of E further resources (CPU, memory), if any."""

    def __init__(self, cls, L, Cp, Wi, xL=None, xC=None):
        self.cls = cls
        self.k = k = int(cls.max()) + 1
        self.members = [np.flatnonzero(cls == c) for c in range(k)]
        self.sizes = [int(mc.size) for mc in self.members]
        self.loads = [int(L[mc[0]]) for mc in self.members]
        self.wcc = [int(Wi[mc[0], mc[1]]) if mc.size > 1 else 0 for mc in self.members]
        reps = [int(mc[0]) for mc in self.members]
        self.wcd = Wi[np.ix_(reps, reps)].astype(np.int64)
        np.fill_diagonal(self.wcd, 0)
        self.caps = [int(x) for x in Cp]
        self.m = len(self.caps)
        self.types = sorted(set(self.caps), reverse=True)  # node types, largest capacity first
        self.nodes_of_type = {C: [j for j in range(self.m) if self.caps[j] == C] for C in self.types}
        E = 0 if xL is None else xL.shape[1]
        self.xload = [tuple(int(v) for v in xL[mc[0]]) for mc in self.members] if E else [()] * k
        self.xcaps = [tuple(int(v) for v in row) for row in xC] if E else [()] * self.m

    def kind(self, j: int) -> tuple:
        """What makes node j interchangeable with another: its capacity and further limits."""
        return (self.caps[j],) + self.xcaps[j]

    def counts(self, node) -> np.ndarray:
        H = np.zeros((self.k, self.m), dtype=np.int64)
        np.add.at(H, (self.cls, np.asarray(node, dtype=np.int64)), 1)
        return H

    def value(self, H) -> int:
        """Intra weight (integer units) of the count matrix H (k x m)."""
        H = np.asarray(H, dtype=np.int64)
        v = int(((self.wcd @ H) * H).sum()) // 2
        return v + int((np.array(self.wcc, dtype=np.int64) @ (H * (H - 1) // 2)).sum())

    def placement(self, H) -> np.ndarray:
        node = np.empty(len(self.cls), dtype=np.int64)
        for c in range(self.k):
            reps = np.repeat(np.arange(self.m), H[c])
            node[self.members[c]] = reps
        return node


def class_orbits(P: Classes) -> list[list[int]]:
    """Groups of (non-merged) classes that are pairwise interchangeable at class level."""
    k, seen, out = P.k, [False] * P.k, []
    for c in range(k):
        if seen[c]:
            continue
        grp, seen[c] = [c], True
        for d in range(c + 1, k):
            if seen[d] or (P.sizes[d], P.loads[d], P.xload[d], P.wcc[d]) != (P.sizes[c], P.loads[c], P.xload[c], P.wcc[c]):
                continue
            mask = np.ones(k, dtype=bool)
            mask[[c, d]] = False
            if np.array_equal(P.wcd[c, mask], P.wcd[d, mask]):
                grp.append(d)
                seen[d] = True
        if len(grp) > 1:
            out.append(grp)
    return out


def canonical_counts(H, col_groups, row_groups):
    """Sort columns within col_groups and rows within row_groups lexicographically (descending)
    until both orders hold (terminates: each sort increases the row-major flattening)."""
    H = H.copy()
    for _ in range(1000):
        changed = False
        for grp in col_groups:
            if len(grp) > 1:
                order = sorted(range(len(grp)), key=lambda i: tuple(H[:, grp[i]]), reverse=True)
                if order != list(range(len(grp))):
                    H[:, grp] = H[:, [grp[i] for i in order]]
                    changed = True
        for grp in row_groups:
            if len(grp) > 1:
                order = sorted(range(len(grp)), key=lambda i: tuple(H[grp[i], :]), reverse=True)
                if order != list(range(len(grp))):
                    H[grp, :] = H[[grp[i] for i in order], :]
                    changed = True
        if not changed:
            break
    return H

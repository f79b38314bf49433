"""k-way graph partitioning with vertex weights, edge weights and per-part targets.

Backed by METIS through ``pymetis`` (multilevel k-way). METIS wants positive integer
weights: float weights are scaled to integers, self-loops and zero-weight edges are dropped
(they cannot change a cut). Edge cases are handled here rather than in METIS: ``k == 1`` puts
everything in part 0; ``k >= n`` gives every vertex its own part (heaviest vertex to the
largest target); an edgeless graph is split greedily by weight; parts with target 0 stay
empty; disconnected graphs need nothing special.

Many parts: METIS k-way slows down sharply with k (it stops coarsening at about 30 vertices
per part, so initial partitioning and refinement of a large coarse graph dominate): 10^6
vertices into 10^4 parts take 26 s CPU (edge-cut) and 79 s (volume). Above
``MAX_DIRECT_PARTS`` = 1024 parts the wrapper partitions in ``L = ceil(log_1024 k)`` levels:
``b = ceil(k^(1/L))`` groups of consecutive parts (group target = sum of its targets), then
each group's subgraph into its parts, with ``imbalance^(1/L)`` per level so the tolerances
multiply to ``imbalance``. At 10^6/10^4 (L = 2, b = 100): 13 s for +2.5 % cut (0.401 vs
0.391 of the traffic), 27 s for +11 % (0.545 vs 0.492) with the volume objective. Below 1024
parts direct is fast enough and better: at 10^5/1000 two levels would save 0.3 s (cut) or
1.4 s (volume) for +5 % traffic.

Why METIS (``python benchmarks/partitioners.py``; CPU seconds, one thread, on this 2-core
machine; cut = inter-node traffic / total traffic with capacity-proportional targets, after
the metis scheduler's capacity repair; the synthetic graphs of
:mod:`streamplace.workloads.synthetic` with k = tasks / 100 heterogeneous nodes):

========================  ============  =============  =============  ===================
partitioner               72 micro [1]  10^4 tasks     10^5 tasks     same result per seed
========================  ============  =============  =============  ===================
pymetis (edge-cut)        3901, 0.03 s  0.374, 0.10 s  0.325, 1.3 s   yes
KaHIP FAST [2]            4341, 0.03 s  0.428, 0.33 s  0.383, 5.1 s   yes
KaHIP ECO [2]             4347, 0.15 s  0.417, 2.4 s   (338 s [3])    yes
Mt-KaHyPar DEFAULT        4246, 0.9 s   0.364, 0.90 s  0.305, 15.2 s  no (even one thread)
Mt-KaHyPar DETERMINISTIC  4251, 0.9 s   0.365, 2.3 s   (44-53 s [3])  yes
========================  ============  =============  =============  ===================

[1] summed inter-node cost over the 72 micro-benchmarks (METIS alone ignores balance on such
tiny graphs, worst part 10x its target, and the repair fixes it; with the volume objective
3891). [2] KaHIP has no per-part targets: equal parts, whose worst part holds 2.2-2.5x its
node's capacity share before the repair. [3] wall time of a first run on another seed while
the machine was loaded; not repeated.

Chosen: METIS. It is the fastest at every size (3-12x on the synthetic graphs), deterministic
per seed, takes unequal targets natively (``tpwgts``), is already a dependency, and after the
repair it is also the best on the micro-benchmarks (8 % below the others). Mt-KaHyPar cuts
3-6 % less traffic on the synthetic graphs (``set_individual_target_block_weights`` = absolute
maximum block weights, passed as ``(1 + eps) x target``; the LARGE_K preset not used) but
costs 9-12x the CPU time and gives the same result per seed only with the DETERMINISTIC preset
(2.5x slower again); KaHIP is slower, worse, and cannot express heterogeneous nodes. Neither
is adopted (measured in a throwaway venv: kahip 3.25, mtkahypar 1.7.post1).
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from contextlib import contextmanager

import numpy as np
import pymetis
import scipy.sparse as sp

from ..files import quote
from ..interrupt import in_child
from ..model.errors import Notice

OBJECTIVES = {"cut": 0, "volume": 1}
#: the largest load-imbalance tolerance METIS can be given: its ``ufactor`` is
#: ``(imbalance - 1) x 1000`` in a C int
MAX_IMBALANCE = 1e6
_EDGE_SCALE = 1_000_000
_VERTEX_SCALE = 10_000
MAX_DIRECT_PARTS = 1024
SMALL_GRAPH = 4096
# From this many stored edges METIS runs in a forked child: the call holds the GIL (4.7 s on the
# 5.4 M-edge graph of tests/reliability), which would keep Ctrl-C waiting; a child is killed at once.
CHILD_PROCESS_EDGES = 200_000  # up to this many vertices: recursive bisection (see _metis)


def _to_int_weights(values: np.ndarray, scale: int, *, positive: bool) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return values.astype(np.int64)
    if np.all(values == np.round(values)) and values.max() <= scale:
        out = values.astype(np.int64)
    else:
        top = values.max()
        out = np.round(values * (scale / top)).astype(np.int64) if top > 0 else np.zeros(values.shape, np.int64)
    return np.maximum(out, 1) if positive else out


def _greedy(vweights: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Heaviest vertex to the part with the most remaining target weight (LPT rule)."""
    remaining = targets * vweights.sum()
    parts = np.empty(vweights.shape[0], dtype=np.int64)
    for v in np.argsort(-vweights, kind="stable"):
        p = int(np.argmax(remaining))
        parts[v] = p
        remaining[p] -= vweights[v]
    return parts


def _clean(weights) -> sp.csr_matrix:
    """Symmetric CSR with float data, no diagonal and no explicit zeros (vectorised)."""
    g = sp.csr_matrix(weights, dtype=float)
    g.sum_duplicates()
    rows = np.repeat(np.arange(g.shape[0]), np.diff(g.indptr))
    keep = (g.indices != rows) & (g.data != 0)
    if keep.all():
        return g
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[keep], minlength=g.shape[0]))])
    return sp.csr_matrix((g.data[keep], g.indices[keep], indptr), shape=g.shape)


def _metis(g: sp.csr_matrix, vw: np.ndarray, tp: np.ndarray, imbalance: float, objtype: int, seed: int) -> np.ndarray:
    # METIS's k-way mode ignores balance on tiny graphs (star-20 into 5 parts: one part holds
    # all 20 vertices); recursive bisection honours the targets there. It has no volume
    # objective, so volume stays k-way (the metis scheduler repairs capacity afterwards).
    recursive = g.shape[0] <= SMALL_GRAPH and objtype == OBJECTIVES["cut"]
    call = (tp.size, g.indptr.astype(np.int64), g.indices.astype(np.int64), _to_int_weights(vw, _VERTEX_SCALE, positive=False),
            _to_int_weights(g.data, _EDGE_SCALE, positive=True), (tp / tp.sum()).tolist(), recursive,
            dict(seed=int(seed) % (2**31), ufactor=max(1, int(round((imbalance - 1.0) * 1000))), objtype=objtype))
    said, part = in_child(_part_graph, *call) if g.nnz >= CHILD_PROCESS_EDGES else _part_graph(*call)
    if said:  # METIS prints "***Cannot bisect ..." and returns a partition it did not make
        complaint = " ".join(dict.fromkeys(line.strip(" \t*") for line in said[0].splitlines() if line.strip()))
        warnings.warn(f"METIS could not make this partition ({complaint}); used a greedy balanced split instead",
                      MetisFallback, stacklevel=2)
        return _greedy(vw, tp / tp.sum())
    return part


def _part_graph(k, indptr, indices, vweights, eweights, tpwgts, recursive, options):
    """One ``pymetis.part_graph`` call with METIS's fd-1 chatter captured: (what it said, parts)."""
    with _c_stdout_captured() as said:
        res = pymetis.part_graph(k, pymetis.CSRAdjacency(adj_starts=indptr, adjacent=indices), vweights=vweights,
                                 eweights=eweights, tpwgts=tpwgts, recursive=recursive, options=pymetis.Options(**options))
    return said, np.asarray(res.vertex_part, dtype=np.int64)


class MetisFallback(Notice):
    """METIS failed on a graph and a greedy split was used (said on stderr, never on stdout)."""


@contextmanager
def _c_stdout_captured():
    """Capture what C code writes to file descriptor 1 (METIS prints its errors there), so it can never
    corrupt a machine-readable stdout; yields a list that holds the text afterwards (if any)."""
    said: list[str] = []
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no usable fd 1: nothing to protect
        yield said
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            yield said
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode(errors="replace")
            if text.strip():
                said.append(text)


def _partition(g: sp.csr_matrix, vw: np.ndarray, tp: np.ndarray, imbalance: float, objtype: int, seed: int) -> np.ndarray:
    n, k = g.shape[0], tp.size
    if k == 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    if k >= n:
        parts = np.empty(n, dtype=np.int64)
        parts[np.argsort(-vw, kind="stable")] = np.argsort(-tp, kind="stable")[:n]
        return parts
    if g.nnz == 0:
        return _greedy(vw, tp / tp.sum())
    if k <= MAX_DIRECT_PARTS:
        return _metis(g, vw, tp, imbalance, objtype, seed)
    # hierarchical: b groups of consecutive parts, then each group's vertices into its parts
    levels = int(np.ceil(np.log(k) / np.log(MAX_DIRECT_PARTS)))
    b = int(np.ceil(k ** (1.0 / levels)))
    step = imbalance ** (1.0 / levels)
    group = np.arange(k) * b // k
    top = _metis(g, vw, np.bincount(group, weights=tp, minlength=b), step, objtype, seed)
    order = np.argsort(top, kind="stable")
    bounds = np.searchsorted(top[order], np.arange(b + 1))
    perm = g[order][:, order]
    parts = np.empty(n, dtype=np.int64)
    for i in range(b):
        lo, hi = bounds[i], bounds[i + 1]
        members = np.flatnonzero(group == i)
        sub = _partition(perm[lo:hi, lo:hi], vw[order[lo:hi]], tp[members], imbalance / step, objtype, seed)
        parts[order[lo:hi]] = members[sub]
    return parts


def kway_partition(weights: sp.spmatrix, vweights, k: int, *, targets=None, imbalance: float = 1.03,
                   objective: str = "cut", seed: int = 0) -> np.ndarray:
    """Partition a symmetric weighted graph into ``k`` parts; returns the part of each vertex.

    ``targets``: relative part weights (any non-negative scale; normalised here), e.g. node
    capacities for heterogeneous clusters; a part with target 0 stays empty, as does one whose
    share of the targets is 0 in METIS's single precision (under ``float32``'s smallest normal
    number, 1.2e-38: METIS refuses a zero target). ``imbalance``:
    allowed max part weight / target (METIS ``ufactor``). ``objective``: ``cut`` (edge-cut) or
    ``volume`` (communication volume).
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {quote(objective)}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not imbalance >= 1.0:
        raise ValueError(f"imbalance must be >= 1, got {imbalance}")
    n = weights.shape[0]
    vw = np.asarray(vweights, dtype=float)
    if vw.shape != (n,):
        raise ValueError(f"vweights must have one entry per vertex ({n}), got shape {vw.shape}")
    tp = np.ones(k) if targets is None else np.asarray(targets, dtype=float)
    if tp.shape != (k,) or not np.all(np.isfinite(tp)) or tp.min() < 0 or tp.sum() <= 0:
        raise ValueError(f"targets must be {k} finite non-negative numbers, not all zero")
    live = np.flatnonzero(tp / tp.sum() >= np.finfo(np.float32).tiny)
    parts = _partition(_clean(weights), vw, tp[live], imbalance, OBJECTIVES[objective], seed)
    return live[parts]

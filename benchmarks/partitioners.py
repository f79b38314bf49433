"""Partitioner study: METIS (pymetis) against KaHIP and Mt-KaHyPar on the project's graphs.

Question: which multilevel partitioner should ``streamplace.partition`` wrap? It needs k-way
partitioning with vertex weights, edge weights, per-part target weights (heterogeneous
nodes), an imbalance tolerance and a seed. Candidates from PyPI:

* ``pymetis`` (the project's dependency): one ``part_graph`` call (``direct``), and the
  project's wrapper ``kway_partition`` (hierarchical above 64 parts, see its docstring);
* ``kahip`` (``kaffpa``, modes FAST and ECO): no per-part targets, so it is run with equal
  targets and the overload against the heterogeneous capacities is reported;
* ``mtkahypar`` (presets DEFAULT and DETERMINISTIC, objective CUT, one thread): unequal parts
  via ``set_individual_target_block_weights`` (absolute maximum block weights, here
  ``(1 + eps) x target``). The LARGE_K preset is not used (not measured here).

Graphs: the 72 micro-benchmarks (k = 10 nodes, capacities as targets; totals over all 72) and
synthetic workloads (``--sizes``; k = tasks / 100 heterogeneous nodes, capacities as targets,
task loads as vertex weights, rates as edge weights). Columns: CPU seconds (``process_time``;
the machine is shared, wall time would measure the neighbours), inter-node traffic as a
fraction of the total (``cut``; for the micro-benchmarks the summed cut), worst part load / its
capacity-proportional target (``imb``), the cut after the metis scheduler's capacity repair
(``repaired``: what a scheduler would get; METIS ignores balance on tiny graphs), and whether a
second run with the same seed gives the same partition (``det``).

kahip and mtkahypar are not project dependencies: run this in a throwaway venv, e.g.

    python3 -m venv /tmp/partvenv && /tmp/partvenv/bin/pip install numpy scipy pymetis pyyaml kahip mtkahypar
    PYTHONPATH=. /tmp/partvenv/bin/python benchmarks/partitioners.py [--sizes 10000,100000] [--skip-slow]

Partitioners whose package is missing are skipped with a note.
"""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pymetis
import scipy.sparse as sp

from streamplace.interrupt import cpu_seconds
from streamplace.partition.kway import _clean, _to_int_weights, kway_partition
from streamplace.schedulers.metis import parts_to_nodes, repair_capacity
from streamplace.workloads.microbench import instances
from streamplace.workloads.synthetic import synthetic_problem

EPS = 0.03
SEED = 1


@dataclass(frozen=True)
class Graph:
    name: str
    weights: sp.csr_matrix
    loads: np.ndarray
    targets: np.ndarray  # node capacities

    def cut(self, parts: np.ndarray) -> float:
        upper = sp.triu(self.weights, k=1).tocoo()
        return float(upper.data[parts[upper.row] != parts[upper.col]].sum())


def int_graph(g: Graph):
    c = _clean(g.weights)
    return c, _to_int_weights(g.loads, 10_000, positive=False), _to_int_weights(c.data, 1_000_000, positive=True)


def metis_direct(g: Graph, objective: str) -> np.ndarray:
    c, vw, ew = int_graph(g)
    options = pymetis.Options(seed=SEED, ufactor=int(EPS * 1000), objtype={"cut": 0, "volume": 1}[objective])
    res = pymetis.part_graph(g.targets.size, pymetis.CSRAdjacency(adj_starts=c.indptr, adjacent=c.indices), vweights=vw,
                             eweights=ew, tpwgts=(g.targets / g.targets.sum()).tolist(), recursive=False, options=options)
    return np.asarray(res.vertex_part)


def metis_wrapper(g: Graph, objective: str) -> np.ndarray:
    return kway_partition(g.weights, g.loads, g.targets.size, targets=g.targets, imbalance=1 + EPS,
                          objective=objective, seed=SEED)


def kahip_mode(mode_name: str) -> Callable[[Graph], np.ndarray]:
    import kahip

    def run(g: Graph) -> np.ndarray:
        c, vw, ew = int_graph(g)
        _, blocks = kahip.kaffpa(vw.tolist(), c.indptr.tolist(), ew.tolist(), c.indices.tolist(), g.targets.size, EPS,
                                 True, SEED, getattr(kahip, mode_name))
        return np.asarray(blocks)
    return run


_MT = {}


def mtkahypar_preset(preset: str) -> Callable[[Graph], np.ndarray]:
    import mtkahypar

    def run(g: Graph) -> np.ndarray:
        if "init" not in _MT:
            _MT["init"] = mtkahypar.initialize(1)
        ini = _MT["init"]
        c, vw, ew = int_graph(g)
        upper = sp.triu(c, k=1).tocoo()
        ew_u = _to_int_weights(upper.data, 1_000_000, positive=True)
        ctx = ini.context_from_preset(getattr(mtkahypar.PresetType, preset))
        ctx.set_partitioning_parameters(g.targets.size, EPS, mtkahypar.Objective.CUT)
        ctx.logging = False
        mtkahypar.set_seed(SEED)
        vw = np.maximum(vw, 1)
        max_weights = np.ceil((1 + EPS) * g.targets / g.targets.sum() * vw.sum()).astype(np.int64)
        ctx.set_individual_target_block_weights(max_weights.tolist())
        graph = ini.create_graph(ctx, c.shape[0], upper.row.size, np.stack([upper.row, upper.col], 1), vw, ew_u)
        return np.asarray(graph.partition(ctx).get_partition())
    return run


def candidates(skip_slow: bool) -> dict[str, Callable[[Graph], np.ndarray]]:
    runs: dict[str, Callable[[Graph], np.ndarray]] = {
        "pymetis direct cut": lambda g: metis_direct(g, "cut"),
        "pymetis direct volume": lambda g: metis_direct(g, "volume"),
        "kway_partition cut": lambda g: metis_wrapper(g, "cut"),
        "kway_partition volume": lambda g: metis_wrapper(g, "volume"),
    }
    others = [("kahip", "kahip {} (equal)", kahip_mode, "FAST", "ECO"),
              ("mtkahypar", "mtkahypar {}", mtkahypar_preset, "DEFAULT", "DETERMINISTIC")]
    for package, label, make, fast, slow in others:
        if not importlib.util.find_spec(package):
            print(f"note: {package} not installed, skipped")
            continue
        for mode in (fast,) if skip_slow else (fast, slow):
            runs[label.format(mode)] = make(mode)
    return runs


def measure(run: Callable[[Graph], np.ndarray], g: Graph) -> tuple[float, float, float, float, bool]:
    """CPU seconds, cut, worst part load / target, cut after the metis scheduler's capacity
    repair (parts -> nodes heaviest to largest, then repair), same partition on a second run."""
    start = cpu_seconds()   # METIS on a large graph runs in a child process
    parts = run(g)
    seconds = cpu_seconds() - start
    k = g.targets.size
    part_load = np.bincount(parts, weights=g.loads, minlength=k)
    imb = float((part_load / (g.targets / g.targets.sum() * g.loads.sum())).max())
    node = parts_to_nodes(parts, g.loads, np.arange(k), g.targets)
    repaired, _ = repair_capacity(g.weights, g.loads, node, g.targets, np.ones(k, dtype=bool))
    return seconds, g.cut(parts), imb, g.cut(repaired), bool(np.array_equal(parts, run(g)))


def micro_graphs() -> list[Graph]:
    return [Graph(i.name, i.problem.graph.weights, i.problem.loads, i.problem.cluster.capacities) for i in instances()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="synthetic task counts (k = tasks / 100)")
    parser.add_argument("--skip-slow", action="store_true", help="skip KaHIP ECO and Mt-KaHyPar DETERMINISTIC")
    args = parser.parse_args()
    runs = candidates(args.skip_slow)
    print(f"{'graph':>22} {'partitioner':>24} {'cpu s':>8} {'cut':>7} {'imb':>6} {'repaired':>8} {'det':>4}")
    micro = micro_graphs()
    for name, run in runs.items():
        total_s, cut_sum, worst, repaired_sum, det = 0.0, 0.0, 0.0, 0.0, True
        for g in micro:
            s, cut, imb, repaired, same = measure(run, g)
            total_s, cut_sum, repaired_sum = total_s + s, cut_sum + cut, repaired_sum + repaired
            worst, det = max(worst, imb), det and same
        print(f"{'72 micro (sum of cuts)':>22} {name:>24} {total_s:>8.2f} {cut_sum:>7.0f} {worst:>6.2f} "
              f"{repaired_sum:>8.0f} {'yes' if det else 'no':>4}", flush=True)
    for n in (int(float(x)) for x in args.sizes.split(",") if x):
        p = synthetic_problem(n, max(2, n // 100), seed=0)
        g = Graph(f"synthetic {n}/{p.cluster.n_nodes}", p.graph.weights, p.loads, p.cluster.capacities)
        total = float(sp.triu(g.weights, k=1).sum())
        for name, run in runs.items():
            s, cut, imb, repaired, same = measure(run, g)
            print(f"{g.name:>22} {name:>24} {s:>8.2f} {cut / total:>7.4f} {imb:>6.3f} {repaired / total:>8.4f} "
                  f"{'yes' if same else 'no':>4}", flush=True)


if __name__ == "__main__":
    main()

"""Heterogeneity-aware throughput scheduler ([N] Nasiri et al., Sec. 5, Alg. 1-2; docs/schedulers.md#throughput).

Chooses the parallelism of every operator and the machine of every task together, to
maximise the topology input rate no machine can be over-utilised at.

Model ([N] Eq. 5-6). With topology input rate R, operator o receives ``F_o = R * f_o`` tuples/s,
``f`` propagated in topological order (a source gets its ``source_rate`` share of R; every
stream carries ``selectivity x F_src`` to its downstream operator), and each of its ``p_o``
instances gets ``F_o / p_o`` (Eq. 6: instances share their operator's input evenly). An
instance of o on machine m uses ``TCU = 100 e[o][type m] F_o / (p_o cores) + MET[o][type m]``
percent of m (Eq. 5; :mod:`streamplace.model.profiling`); a machine offers MAC = 100.

FirstAssignment (Alg. 1): at ``R0``, one instance per operator (topological order), each on the
machine where its TCU is least among those it fits on. MaximizeThroughput (Alg. 2), Scale = 1:
no machine over MAC -> remember the state as the last stable one, ``R += R / Scale``; else add
an instance of the operator owning the hottest task of the first over-utilised machine, on the
machine where the new instance's TCU is least among those that stay within MAC after the
operator's input is re-shared; if none, and ``R > Scale``: ``Scale *= 2`` and go back to the last
stable state; otherwise stop and return the last stable state. ``R <= Scale`` means the next step
would be under 1 tuple/s, so rates must be in tuples/s. Where nothing is over MAC even at
``MAX_RATE`` (10^12 tuples/s, the largest number a spec may give; costs of 10^-15 s a tuple
reach no limit before floating point does), the search stops at the last stable rate below it
(a deliberate bound: Alg. 2 would double the rate for ever).

Parameter ``max_batch`` (default 1 = the paper's text): when a single new instance fits
on no machine, try taking 2, 3, ... ``max_batch`` instances at once, all sharing the operator's
input, before giving up (the authors' published simulator code, [N] ref. [24], tries up to 199). With one at a time the
search stalls on clusters whose slower machines cannot host an instance until the operator has
many: on [N]'s medium cluster (30 machines) the mixed linear topology stops at 10 tasks and ~37 %
weighted utilisation (``benchmarks/throughput_scenarios.py``).

Choices where the paper is silent or loose (deliberate, stated):

* machine ties (same TCU: machines of one type) go to the machine with the most free CPU
  after the move, then the lowest index;
* a stream is copied to every downstream operator (Storm stream semantics, as in the
  project's task graph); [N] Eq. 6 read literally would split a task's output over all
  downstream tasks of all operators. ``global`` and ``all`` groupings break Eq. 6's even
  share and are refused; ``fields`` streams are treated as evenly shared;
* [N] Eq. 7-8 weights sum to C (the number of operator types); we divide by C so the weighted
  utilisation is a percentage. Weights use the machine types present in the cluster;
* the result's problem has the chosen parallelism, the profiled ``e`` rows as the operators'
  ``cpu_per_tuple`` and the profiled ``cores`` on the nodes (so the performance model sees the
  same CPU costs), one worker per machine ([N] Sec. 4.1), node capacity MAC = 100 and task
  loads = predicted TCU at the maximum rate, so the utilisation metrics show predicted CPU use.

Cluster and profiling: if every node of the problem's cluster has a ``machine_type`` the
profiling declares, those nodes are the machines (the profiling's counts are ignored); if no
node does, the machines are built from the profiling's counts; a mix is refused. Without a
profiling, one is derived from the operators' ``cpu_per_tuple`` and the cluster's machine types.

Running time: every search step (an instance added or the rate raised, I steps) recomputes the
usage of the k machines from o operator rows, O(o k) per step, independent of the task edges.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..files import quote
from ..model import Cluster, Placement, Problem, Topology, build_task_graph
from ..model.profiling import Profiling, derive_profiling, load_profiling
from ..model.specs import MAX_NUMBER
from .base import NoSolution, NotApplicable, Outcome, Scheduler, register

MAC = 100.0
TOL = 1e-9


def uneven_input(topology: Topology) -> str | None:
    """The first stream whose grouping does not share its tuples evenly among the receiving
    instances, which [N] Eq. 6 assumes (global, all), as a reason; None if there is none."""
    for s in topology.streams:
        if s.grouping in ("global", "all"):
            return (f"stream {s.src} -> {s.dst} uses {s.grouping} grouping; the throughput scheduler "
                    "needs instances that share their input evenly ([N] Eq. 6)")
    return None


def operator_flows(topology: Topology) -> np.ndarray:
    """Input tuples/s of every operator per unit topology input rate (declaration order)."""
    reason = uneven_input(topology)
    if reason:
        raise NotApplicable(reason)
    ops = topology.operators
    sources = [i for i, op in enumerate(ops) if topology.is_source(op.name)]
    weights = np.array([ops[i].source_rate for i in sources], dtype=float)
    weights = weights / weights.sum() if weights.sum() > 0 else np.full(len(sources), 1.0 / len(sources))
    flow = np.zeros(len(ops))
    flow[sources] = weights
    for name in topology.topological_order:
        i = topology.index[name]
        for s in topology.downstream(name):
            flow[topology.index[s.dst]] += ops[i].selectivity * flow[i]
    return flow


def machine_cluster(cluster: Cluster, profiling: Profiling) -> tuple[Cluster, bool]:
    """The machines to schedule on (capacity MAC each) and whether they came from ``cluster``."""
    known = set(profiling.type_names)
    matching = [n.machine_type in known for n in cluster.nodes]
    if all(matching):
        nodes = [dataclasses.replace(n, capacity=MAC, cores=profiling.machine_type(n.machine_type).cores) for n in cluster.nodes]
        return Cluster.build(cluster.name, nodes), True
    if any(matching):
        bad = cluster.nodes[matching.index(False)]
        raise NotApplicable(f"node {bad.name} has machine type {quote(bad.machine_type)}, which the profiling does not declare "
                         f"(types: {', '.join(profiling.type_names)})")
    return profiling.cluster(name=f"{cluster.name}-profiled", capacity=MAC), False


@dataclass(frozen=True, eq=False)
class CpuModel:
    """[N] Eq. 5-6 for one topology on one set of machines, as arrays.

    ``flow[o]``: input rate of operator o per unit topology rate; ``slope[o, m]``: percent of
    machine m per tuple/s an instance of o processes there (``100 e / cores``); ``met[o, m]``:
    percent per instance; ``max_tasks[m]``: tasks machine m may hold (inf = no limit).
    """

    topology: Topology
    cluster: Cluster
    profiling: Profiling
    flow: np.ndarray
    slope: np.ndarray
    met: np.ndarray
    max_tasks: np.ndarray

    @classmethod
    def build(cls, topology: Topology, cluster: Cluster, profiling: Profiling) -> "CpuModel":
        profiling.check_topology(topology)
        types = [profiling.machine_type(n.machine_type) for n in cluster.nodes]
        rows = [profiling.row_of(op.name) for op in topology.operators]
        slope = np.array([[100.0 * profiling.e_of(r, t.name) / t.cores for t in types] for r in rows])
        met = np.array([[profiling.met_of(r, t.name) for t in types] for r in rows])
        max_tasks = np.array([np.inf if t.max_tasks is None else t.max_tasks for t in types], dtype=float)
        return cls(topology, cluster, profiling, operator_flows(topology), slope, met, max_tasks)

    def instance_tcu(self, parallelism: np.ndarray, rate: float) -> np.ndarray:
        """``[o, m]``: TCU of one instance of o on machine m at rate ``rate``."""
        return self.slope * (rate * self.flow / parallelism)[:, None] + self.met

    def usage(self, counts: np.ndarray, rate: float) -> np.ndarray:
        """Percent CPU of every machine; ``counts[o, m]`` = instances of o on m."""
        return (counts * self.instance_tcu(counts.sum(axis=1), rate)).sum(axis=0)

    def max_rate(self, counts: np.ndarray) -> float:
        """Largest rate with no machine over MAC (usage is linear in the rate)."""
        per_rate = (counts * self.slope * (self.flow / counts.sum(axis=1))[:, None]).sum(axis=0)
        fixed = (counts * self.met).sum(axis=0)
        if np.any(fixed > MAC + TOL):
            return 0.0
        busy = per_rate > 0
        return float(((MAC - fixed[busy]) / per_rate[busy]).min()) if busy.any() else float("inf")

    def throughput(self, rate: float) -> float:
        """Tuples/s processed by all tasks together ([N] Eq. 2: sum of processing rates)."""
        return float(rate * self.flow.sum())

    def weighted_utilisation(self, usage: np.ndarray) -> float:
        """[N] Eq. 7-8, normalised by the number of operator types C (see module docstring)."""
        types = [n.machine_type for n in self.cluster.nodes]
        present = list(dict.fromkeys(types))
        rows = list(dict.fromkeys(self.profiling.row_of(op.name) for op in self.topology.operators))
        speed = np.array([[1.0 / self.profiling.e_of(r, t) for t in present] for r in rows])
        x = (speed / speed.sum(axis=1, keepdims=True)).sum(axis=0)
        type_of = np.array([present.index(t) for t in types])
        mean_u = np.bincount(type_of, weights=usage, minlength=len(present)) / np.bincount(type_of, minlength=len(present))
        return float((x * mean_u).sum() / len(rows))


def _pick(tcu: np.ndarray, usage_after: np.ndarray, ok: np.ndarray) -> int | None:
    """Least TCU, then most free CPU after the move, then lowest index; None if nothing fits."""
    cand = np.flatnonzero(ok)
    if cand.size == 0:
        return None
    return int(cand[np.lexsort((cand, usage_after[cand], tcu[cand]))[0]])


def first_assignment(model: CpuModel, r0: float) -> np.ndarray:
    """[N] Alg. 1: one instance per operator at rate ``r0``; returns ``counts[o, m]``."""
    n_ops, n_machines = model.slope.shape
    counts = np.zeros((n_ops, n_machines), dtype=np.int64)
    tcu = model.instance_tcu(np.ones(n_ops), r0)
    usage = np.zeros(n_machines)
    for name in model.topology.topological_order:
        o = model.topology.index[name]
        after = usage + tcu[o]
        m = _pick(tcu[o], after, (after <= MAC + TOL) & (counts.sum(axis=0) < model.max_tasks))
        if m is None:
            raise NoSolution(f"operator {name} needs {tcu[o].min():.4g} % of a machine at R0 = {r0:g} tuples/s "
                             "and fits on no machine; lower R0")
        counts[o, m] = 1
        usage[m] += tcu[o, m]
    return counts


#: the highest input rate the search tries (tuples/s): the specs' own bound on any number
MAX_RATE = MAX_NUMBER


@dataclass(frozen=True)
class Search:
    counts: np.ndarray
    rate: float
    scale: float
    iterations: int
    stop_rate: float


def _new_instances(model: CpuModel, counts: np.ndarray, usage: np.ndarray, tcu: np.ndarray, o: int,
                   max_batch: int, rate: float) -> np.ndarray | None:
    """Machines for the fewest k <= ``max_batch`` new instances of operator o that all fit, or None.

    For a given k every instance of o gets ``F_o / (p_o + k)``; the k instances are placed one
    at a time by :func:`_pick`. That greedy succeeds iff the machines' room for whole instances
    adds up to k, which is checked for every k at once before placing.
    """
    ks = np.arange(1, max_batch + 1)
    new_tcu = model.slope[o] * (rate * model.flow[o] / (counts[o].sum() + ks))[:, None] + model.met[o]
    base = usage + counts[o] * (new_tcu - tcu[o])
    free_slots = model.max_tasks - counts.sum(axis=0)
    with np.errstate(divide="ignore"):  # an idle operator with MET 0 costs nothing: room = task limit
        room = np.minimum(np.floor(np.maximum(MAC + TOL - base, 0.0) / new_tcu), free_slots)
    for i in np.flatnonzero(room.sum(axis=1) >= ks):
        after, added = base[i].copy(), np.zeros_like(counts[o])
        for _ in range(ks[i]):
            target = _pick(new_tcu[i], after + new_tcu[i], (after + new_tcu[i] <= MAC + TOL) & (added < free_slots))
            if target is None:
                break
            added[target] += 1
            after[target] += new_tcu[i, target]
        else:
            return added
    return None


def maximize_throughput(model: CpuModel, counts: np.ndarray, r0: float, max_batch: int = 1) -> Search:
    """[N] Alg. 2 from a stable state ``counts`` at ``r0``; returns the last stable state.

    ``max_batch`` > 1: when one new instance fits nowhere, try 2, 3, ... at once (all sharing
    the operator's input) before giving up, as [N]'s published simulator does.
    """
    counts = counts.copy()
    rate, scale = float(r0), 1.0
    stable_counts, stable_rate = counts.copy(), rate
    iterations = 0
    while True:
        iterations += 1
        parallelism = counts.sum(axis=1)
        tcu = model.instance_tcu(parallelism, rate)
        usage = (counts * tcu).sum(axis=0)
        over = np.flatnonzero(usage > MAC + TOL)
        if over.size == 0:
            stable_counts, stable_rate = counts.copy(), rate
            step = rate + rate / scale
            if not step <= MAX_RATE or step == rate:   # nothing binds below any rate a spec can state
                return Search(stable_counts, stable_rate, scale, iterations, step)
            rate = step
            continue
        m = over[0]
        hosted = np.flatnonzero(counts[:, m])
        o = int(hosted[np.argmax(tcu[hosted, m])])
        added = _new_instances(model, counts, usage, tcu, o, max_batch, rate)
        if added is not None:
            counts[o] += added
        elif rate > scale:
            scale *= 2
            counts, rate = stable_counts.copy(), stable_rate
        else:
            return Search(stable_counts, stable_rate, scale, iterations, rate)


def counts_to_nodes(counts: np.ndarray) -> np.ndarray:
    """Node of every task: operator o's tasks fill its machines in index order."""
    machines = np.arange(counts.shape[1])
    return np.concatenate([np.repeat(machines, row) for row in counts]).astype(np.int64)


def placement_counts(topology: Topology, placement: Placement, n_machines: int) -> np.ndarray:
    """``counts[o, m]`` of any placement of ``topology``."""
    counts = np.zeros((len(topology.operators), n_machines), dtype=np.int64)
    np.add.at(counts, (topology.operator_of_task, placement.node), 1)
    return counts


@dataclass(frozen=True)
class Prediction:
    max_rate: float
    throughput: float
    utilisation: np.ndarray
    weighted_utilisation: float


def predict(problem: Problem, placement: Placement, profiling: Profiling) -> Prediction:
    """Eq. 5-8 for any placement of ``problem`` (every node's type must be in the profiling)."""
    cluster, from_problem = machine_cluster(problem.cluster, profiling)
    if not from_problem:
        raise NotApplicable(f"no node of cluster {problem.cluster.name} has a machine type the profiling declares")
    model = CpuModel.build(problem.topology, cluster, profiling)
    counts = placement_counts(problem.topology, placement, cluster.n_nodes)
    rate = model.max_rate(counts)
    usage = model.usage(counts, rate)
    return Prediction(rate, model.throughput(rate), usage, model.weighted_utilisation(usage))


def profiled_topology(topology: Topology, parallelism, profiling: Profiling) -> Topology:
    """``topology`` with the chosen parallelism and the profiled ``e`` rows as ``cpu_per_tuple``."""
    ops = [dataclasses.replace(op, parallelism=int(p), cpu_per_tuple=dict(profiling.e[profiling.row_of(op.name)]))
           for op, p in zip(topology.operators, parallelism)]
    return Topology.build(topology.name, ops, topology.streams)


@register
@dataclass(frozen=True, kw_only=True)
class ThroughputScheduler(Scheduler):
    """``profiling``: a profiling spec path or a :class:`Profiling` (None: derive it from the
    operators' ``cpu_per_tuple``); ``r0``: initial input rate in tuples/s (None: the profiling's R0);
    ``max_batch``: how many new instances may be taken at once when one fits nowhere (1 = [N] Alg. 2)."""

    name = "throughput"
    complexity = "O(I o k)"
    respects_capacity = False  # capacity here is CPU percent (TCU vs MAC), checked by the search
    needs_profiling = True
    chooses_parallelism = True
    profiling: str | Profiling | None = None
    r0: float | None = None
    max_batch: int = 1

    def __post_init__(self):
        if self.r0 is not None and not self.r0 > 0:
            raise ValueError(f"r0 must be > 0, got {self.r0}")
        if self.max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {self.max_batch}")

    def get_params(self) -> dict:
        source = self.profiling.source if isinstance(self.profiling, Profiling) else self.profiling
        return {"seed": self.seed, "profiling": source, "r0": self.r0, "max_batch": self.max_batch}

    def applicable(self, problem: Problem) -> str | None:
        return uneven_input(problem.topology)

    def _load(self, problem: Problem) -> Profiling:
        if isinstance(self.profiling, Profiling):
            return self.profiling
        if self.profiling is not None:
            return load_profiling(self.profiling)
        try:
            return derive_profiling(problem.topology, problem.cluster)
        except ValueError as exc:
            raise NotApplicable(f"no profiling: {exc}") from None

    def _schedule(self, problem: Problem) -> Outcome:
        profiling = self._load(problem)
        cluster, from_problem = machine_cluster(problem.cluster, profiling)
        model = CpuModel.build(problem.topology, cluster, profiling)
        r0 = self.r0 if self.r0 is not None else profiling.r0
        search = maximize_throughput(model, first_assignment(model, r0), r0, self.max_batch)
        parallelism = search.counts.sum(axis=1)
        topology = profiled_topology(problem.topology, parallelism, profiling)
        node = counts_to_nodes(search.counts)
        tcu = model.instance_tcu(parallelism, search.rate)
        graph = dataclasses.replace(build_task_graph(topology), loads=tcu[topology.operator_of_task, node])
        usage = model.usage(search.counts, search.rate)
        names = [n.name for n in cluster.nodes]
        details = {
            "parallelism": {op.name: int(p) for op, p in zip(topology.operators, parallelism)},
            "max_rate": search.rate,
            "throughput": model.throughput(search.rate),
            "utilisation": dict(zip(names, usage.round(6).tolist())),
            "weighted_utilisation": model.weighted_utilisation(usage),
            "r0": r0,
            "scale": search.scale,
            "iterations": search.iterations,
            "profiling": profiling.source,
        }
        message = "" if from_problem else (f"machines built from the profiling's machine types ({cluster.n_nodes} nodes): "
                                           "no node of the input cluster has a profiled machine type")
        return Outcome(placement=Placement(node=node, worker=np.zeros_like(node)), details=details, message=message,
                       problem=Problem(topology=topology, graph=graph, cluster=cluster))

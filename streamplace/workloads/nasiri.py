"""[N]'s workloads: Storm micro-benchmark shapes, the Table 3 profile, the Table 4 clusters.

docs/workloads.md, [N]. Topologies (our reading of [N] Fig. 5, whose drawing is not in the text;
every operator processes one input tuple into one output tuple, streams are shuffle):

* ``linear``: spout -> bolt1 -> bolt2 -> bolt3;
* ``diamond``: spout -> bolt1, bolt2, bolt3 -> bolt4;
* ``star``: spout1, spout2 -> bolt1 -> bolt2, bolt3.

Operator types (``compute``): ``mixed`` (default) gives each shape one highCompute bolt (the
"gray" bolt of [N] Sec. 6.2), one midCompute bolt and lowCompute for the rest; ``low``, ``mid``
or ``high`` make every operator that type. The profile is [N] Table 3: execute time per tuple
on machine types 1-3 (Pentium Dual-Core 2.6 GHz, Core i3 2.9 GHz, Core i5 2.5 GHz, Table 2).
Table 3 labels its column seconds, but the values are what Storm's ``get_execute_ms_avg()``
reports, i.e. milliseconds, and only milliseconds fit Sec. 6.2 (a highCompute bolt on one
machine at 8 tuples/s, then 20-80 times more, before it saturates; at 0.19 s per tuple 8 tuples/s
would already need 1.5 machines). We therefore read them as milliseconds (the profiling spec is
in seconds: 0.0581 -> 5.81e-5). This also keeps [N] Alg. 2's stop rule (``R <= Scale``: steps
under 1 tuple/s) a fine resolution. [N] gives no MET, so
:data:`~streamplace.model.profiling.DEFAULT_MET` applies unless ``met`` is given.
Clusters ([N] Table 4): small 2/2/2, medium 10/10/10, large 20/70/90 machines of
types 1/2/3, one worker slot and MAC = 100 each.
"""

from __future__ import annotations

from ..files import quote
from ..model import Cluster, Operator, Stream, Topology
from ..model.profiling import DEFAULT_MET, DEFAULT_R0, MachineType, Profiling

LAYOUTS = ("linear", "diamond", "star")
COMPUTE = ("mixed", "low", "mid", "high")
MACHINE_TYPES = ("machine1", "machine2", "machine3")
OPERATOR_TYPES = {"low": "lowCompute", "mid": "midCompute", "high": "highCompute"}
TABLE3 = {  # [N] Table 3: execute time per tuple, read as milliseconds (module docstring)
    "lowCompute": {"machine1": 0.0581, "machine2": 0.107, "machine3": 0.0916},
    "midCompute": {"machine1": 0.103, "machine2": 0.1844, "machine3": 0.168},
    "highCompute": {"machine1": 0.1915, "machine2": 0.3449, "machine3": 0.3207},
}
CLUSTER_PRESETS = {  # [N] Table 4: machines of type 1, 2, 3
    "nasiri-small": (2, 2, 2),
    "nasiri-medium": (10, 10, 10),
    "nasiri-large": (20, 70, 90),
}
DESCRIPTIONS = ("Pentium Dual-Core 2.6 GHz, 2 GB", "Core i3 2.9 GHz, 4 GB", "Core i5 2.5 GHz, 6 GB")

# name, role, mixed type; then streams
_SHAPES = {
    "linear": ([("spout", "source", "low"), ("bolt1", "compute", "low"), ("bolt2", "compute", "mid"),
                ("bolt3", "sink", "high")],
               [("spout", "bolt1"), ("bolt1", "bolt2"), ("bolt2", "bolt3")]),
    "diamond": ([("spout", "source", "low"), ("bolt1", "compute", "low"), ("bolt2", "compute", "mid"),
                 ("bolt3", "compute", "high"), ("bolt4", "sink", "low")],
                [("spout", "bolt1"), ("spout", "bolt2"), ("spout", "bolt3"),
                 ("bolt1", "bolt4"), ("bolt2", "bolt4"), ("bolt3", "bolt4")]),
    "star": ([("spout1", "source", "low"), ("spout2", "source", "low"), ("bolt1", "compute", "mid"),
              ("bolt2", "sink", "high"), ("bolt3", "sink", "low")],
             [("spout1", "bolt1"), ("spout2", "bolt1"), ("bolt1", "bolt2"), ("bolt1", "bolt3")]),
}


def _check(layout: str, compute: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {quote(layout)} (expected one of {', '.join(LAYOUTS)})")
    if compute not in COMPUTE:
        raise ValueError(f"unknown compute {quote(compute)} (expected one of {', '.join(COMPUTE)})")


def operator_types(layout: str, compute: str = "mixed") -> dict[str, str]:
    """Operator name -> Table 3 row (lowCompute, midCompute or highCompute)."""
    _check(layout, compute)
    return {name: OPERATOR_TYPES[kind if compute == "mixed" else compute] for name, _, kind in _SHAPES[layout][0]}


def topology(layout: str, compute: str = "mixed") -> Topology:
    """The ``layout`` micro-benchmark with one instance per operator (the user topology)."""
    _check(layout, compute)
    ops, streams = _SHAPES[layout]
    return Topology.build(f"nasiri-{layout}-{compute}", [Operator(name, 1, role=role) for name, role, _ in ops],
                          [Stream(a, b, grouping="shuffle") for a, b in streams])


def profiling(layout: str, compute: str = "mixed", *, preset: str | None = None, met: float = DEFAULT_MET,
              r0: float = DEFAULT_R0) -> Profiling:
    """[N] Table 3 for the operators of ``layout``; ``preset`` adds Table 4 machine counts."""
    counts = _counts(preset) if preset is not None else (None,) * len(MACHINE_TYPES)
    types = tuple(MachineType(name=t, count=c, description=d) for t, c, d in zip(MACHINE_TYPES, counts, DESCRIPTIONS))
    ops = operator_types(layout, compute)
    rows = {row: {t: ms / 1000 for t, ms in TABLE3[row].items()} for row in dict.fromkeys(ops.values())}
    return Profiling(machine_types=types, e=rows, met_default=met, r0=r0, operators=ops,
                     source=f"<[N] Table 3: {layout}/{compute}>")


def _counts(preset: str) -> tuple[int, ...]:
    if preset not in CLUSTER_PRESETS:
        raise ValueError(f"unknown cluster preset {quote(preset)} (expected one of {', '.join(CLUSTER_PRESETS)})")
    return CLUSTER_PRESETS[preset]


def cluster(preset: str) -> Cluster:
    """A Table 4 cluster: nodes ``machine<k>-NN`` with ``machine_type`` set, capacity 100, 1 slot."""
    types = tuple(MachineType(name=t, count=c) for t, c in zip(MACHINE_TYPES, _counts(preset)))
    return Profiling(machine_types=types, e={}).cluster(name=preset)

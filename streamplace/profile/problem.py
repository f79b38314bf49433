"""The problem of a topology file and a cluster file, with a profile's measured rates as the task
graph's edge weights when a profile directory is given: the one place a problem is built from
files (``streamplace.load_problem``; the CLI, the demo).
"""

from __future__ import annotations

import os

from ..model import Problem
from ..model.cluster import ClusterError
from ..model.specs import SpecError, load_cluster, load_topology
from ..model.topology import TopologyError


def load_problem(topology: str | os.PathLike, cluster: str | os.PathLike,
                 profile: str | os.PathLike | None = None) -> Problem:
    """The problem of a topology and a cluster file; with a profile directory (``streamplace
    profile``) its measured rates are the edge weights. A model error names its file (:class:`SpecError`).

    >>> load_problem("diamond30.yaml", "het.yaml").n_tasks      # doctest: +SKIP
    30
    """
    topo, clus = load_topology(topology), load_cluster(cluster)
    try:
        if profile is None:
            return Problem.from_topology(topo, clus)
        from . import load_profile_graph
        return Problem.from_topology(topo, clus, graph=load_profile_graph(profile, topo))
    except (TopologyError, ClusterError) as exc:
        raise SpecError(topology if isinstance(exc, TopologyError) else cluster, exc.field_path, exc.problem) from None

"""The Storm testbed: a multi-process Storm cluster on one machine, one network namespace per node.

:class:`Testbed` starts and always tears down ZooKeeper, Nimbus (with the plan plugin) and one
supervisor per cluster node; :mod:`.network` holds the namespaces, shaping and wire counters,
:mod:`.cgroups` the CPU quotas. Needs Linux, root, ``ip``/``tc`` and the cgroup cpu controller
(:func:`preflight` says which is missing).
"""

from .cluster import Testbed, TestbedSettings, active, holder, preflight, supervisor_capacity, worker_childopts

__all__ = ["Testbed", "TestbedSettings", "active", "holder", "preflight", "supervisor_capacity", "worker_childopts"]

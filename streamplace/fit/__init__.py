"""The cost-model fit: the constants of :class:`~streamplace.model.performance.CostModel` that
make its predictions answer to what the Storm testbed measured, and how well they do.

* :mod:`.runs`: campaign run records (``runs.jsonl`` of ``benchmarks/storm_testbed.py``) as the
  fit reads them: the problem each record's experiment ran, training against held-out runs,
  runs that measured nothing.
* :mod:`.cases`: one *case* per measured placement (mean bolt throughput over its runs) and the
  model's prediction of it on the cluster as the testbed ran it.
* :mod:`.solve`: the fits (:func:`~.solve.fit_cpu` to each node's measured CPU, then
  :func:`~.solve.fit_cap`; :func:`~.solve.fit` to throughput).
* :mod:`.scores`: median absolute error, Kendall's tau per experiment, and the ceilings the
  measurements set (one repetition or one campaign against another).
* :mod:`.operating_points`: the calibrated model scored per operating point and experiment.
* :mod:`.messaging`: a node's CPU outside its executor threads against its workers and the
  messages crossing them (``benchmarks/acking_cpu.py``).
* :mod:`.build`: a cost model file from runs (what ``benchmarks/fit_cost_model.py`` writes) and
  the bundled model rebuilt from the campaign index (``benchmarks/results/index.yaml``;
  ``benchmarks/rebuild_cost_model.py``).

Which campaigns a shipped model was fitted on, at which operating point, and what was tried
on the way: ``benchmarks/results/`` (README.md, index.yaml, HISTORY.md).
"""

"""The baselines as the papers ran them: the one home of the scheduler settings the demo, the
testbed campaign, the reproductions and the benchmark scripts share.

* ``ischeduler``: theta = 1 s, the optimiser's budget of [I] Sec. 5-6 (also the class default,
  stated here so a changed default cannot silently change the papers' runs);
  :data:`ISCHEDULER_NO_OPTIMISER` (theta = 0, the heuristic alone) is the variant [I] Fig. 12-13
  also show.
* ``online`` (Aniello's OLS): the papers' limits plus an explicit ``relax_gamma=true``. With unit
  task loads its slot-load limit gamma x E / W caps a slot below the ceil(E / W) tasks some slot
  needs, so the greedy has no slot for the last tasks; the papers' OLS used measured, non-uniform
  CPU loads ([I]/[T3] Sec. 6, [F] Sec. IV-A2), which they do not publish. Every record of a
  relaxed run says so (``details.gamma_relaxed`` and the message).
"""

from __future__ import annotations

ISCHEDULER = {"theta": 1.0}              # seconds: [I] Sec. 5-6
ISCHEDULER_NO_OPTIMISER = {"theta": 0.0}  # [I] Fig. 12-13: the heuristic without the optimiser
OLS_RELAX = {"relax_gamma": True}        # module docstring

#: scheduler name -> the parameters the papers' runs set (others: the class defaults)
PAPER_PARAMS = {"ischeduler": ISCHEDULER, "online": OLS_RELAX}


def paper_params(name: str) -> dict:
    """A fresh copy of the papers' parameters of scheduler ``name`` (``{}`` if they set none)."""
    return dict(PAPER_PARAMS.get(name, {}))

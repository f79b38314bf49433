"""The exact solver: minimum inter-node traffic within node capacities ([I] Eq. 1-5) on CP-SAT.

One module per job: :mod:`.numbers` (integer scaling, input checks, the objective),
:mod:`.classes` (interchangeable task classes and their symmetry), :mod:`.greedy` (a quick
feasible start), :mod:`.count_model` (the class-count model and its single-node bound),
:mod:`.configurations` (the configuration bound and program) and :mod:`.solve` (the search that
combines them). Used by the ``optimal``, ``ischeduler`` and ``lns`` schedulers alike.
"""

from .greedy import greedy_placement
from .numbers import cut_weight

__all__ = ["ExactSolution", "Formulation", "cut_weight", "greedy_placement", "solve_min_inter_node"]
_SOLVER = ("ExactSolution", "Formulation", "solve_min_inter_node")


def __getattr__(name: str):
    """:mod:`.solve`'s names, imported on first use: OR-Tools takes about 0.3 s to import, which
    every command (``streamplace --help`` 0.75 s, 0.65 s without it) would otherwise pay whether it
    solves or not. The schedulers import :func:`solve_min_inter_node` where they call it."""
    if name in _SOLVER:
        from . import solve
        return getattr(solve, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

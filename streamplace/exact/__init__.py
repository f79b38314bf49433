"""The exact solver: minimum inter-node traffic within node capacities ([I] Eq. 1-5) on CP-SAT.

One module per job: :mod:`.numbers` (integer scaling, input checks, the objective),
:mod:`.classes` (interchangeable task classes and their symmetry), :mod:`.greedy` (a quick
feasible start), :mod:`.count_model` (the class-count model and its single-node bound),
:mod:`.configurations` (the configuration bound and program) and :mod:`.solve` (the search that
combines them). Used by the ``optimal``, ``ischeduler`` and ``lns`` schedulers alike.
"""

from .greedy import greedy_placement
from .numbers import cut_weight
from .solve import ExactSolution, Formulation, solve_min_inter_node

__all__ = ["ExactSolution", "Formulation", "cut_weight", "greedy_placement", "solve_min_inter_node"]

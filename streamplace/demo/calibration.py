"""``streamplace demo --calibrate RUN``: the demo's predictions of one of its jobs calibrated on a
run of that job (:mod:`streamplace.model.calibration`), as ``compare --calibrate`` calibrates
them for a job given by files.

RUN is a ``streamplace storm run`` output directory (or one made the same way on a real cluster:
:mod:`streamplace.storm.measured_run`) of one application instance the demo schedules, e.g. of
``DIR/apps/page-view/topology.yaml`` on ``DIR/apps/page-view/cluster-4high+4low.yaml`` from an
earlier demo. The instance is the one whose topology and cluster ``run.json`` names (``topology``,
``cluster``, as ``storm run`` writes them), else the one whose tasks and nodes the run's
``assignment`` fits. That instance's records, its recommendation and the schedulers that predict
performance (``lns`` with ``objective=throughput``) use the calibrated model; every other job keeps
the model it had (``--cost-model`` or the bundled one). The demo's Storm step still calibrates on
its own even run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..files import SpecError
from ..model.calibration import CalibratedModel, calibrate
from ..model.errors import InputError
from ..model.performance import CostModel
from ..storm.measured_run import read_run, run_document


@dataclass(frozen=True)
class Calibration:
    """The model of one demo job (``job``: ``workload@cluster``) calibrated on ``run_dir``."""

    run_dir: Path
    job: str
    model: CalibratedModel

    def document(self) -> dict:
        """What ``run.json`` records of it."""
        return {"run": str(self.run_dir), "job": self.job, "model": self.model.describe()}


def calibration_for(instances: Sequence, run_dir: str | os.PathLike, model: CostModel | None = None) -> Calibration:
    """The calibration of the one instance (``label``, ``problem``) ``run_dir`` is a run of
    (module docstring); :class:`SpecError` naming ``run.json`` when it fits none or several."""
    run_dir = Path(run_dir)
    doc = run_document(run_dir)
    doc_path = run_dir / "run.json"
    named = [i for i in instances if doc.get("topology", i.problem.topology.name) == i.problem.topology.name
             and doc.get("cluster", i.problem.cluster.name) == i.problem.cluster.name]
    fits, refusals = [], []
    for inst in named:
        try:
            fits.append((inst, read_run(run_dir, inst.problem)))
        except SpecError as exc:
            refusals.append(exc)
    jobs = ", ".join(i.label for i in instances)
    for key, name_of in (("topology", lambda i: i.problem.topology.name), ("cluster", lambda i: i.problem.cluster.name)):
        if key in doc and all(doc[key] != name_of(i) for i in instances):
            raise SpecError(doc_path, key, f"{doc[key]!r} is none of the demo's jobs' ({jobs})")
    if not fits and refusals and (len(named) == 1 or len({r.field_path for r in refusals}) == 1):
        raise refusals[0]   # the job it names, or one fault every job finds: a run the calibration cannot read
    if not fits:
        raise SpecError(doc_path, "assignment", f"a run of none of the demo's jobs ({jobs})")
    if len(fits) > 1:
        raise SpecError(doc_path, "cluster", f"fits {' and '.join(i.label for i, _ in fits)}: name the run's topology "
                                             "and cluster (`topology`, `cluster`, as `storm run` writes them)")
    inst, measured = fits[0]
    try:
        return Calibration(run_dir, inst.label, calibrate(inst.problem, measured, model))
    except ValueError as exc:   # a run the model cannot be calibrated on
        raise InputError(f"--calibrate {run_dir}: {exc}") from None

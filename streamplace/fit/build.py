"""A cost model file from campaign runs, and the shipped model files rebuilt from the campaign index.

:func:`fit_model` is the one procedure behind every fitted file in ``docs/cost-models/``: the
runs split into training runs (micro-benchmarks and calibration runs) and held-out runs (the
papers' applications, :func:`~.runs.held_out`), one of the two fits on the training cases, its
fitted constants rounded to 3 significant digits, and the file's provenance: the files it was
fitted on, the fit's facts, and the rounded model's scores on both sets beside the analytic
model's on the held-out set. ``benchmarks/fit_cost_model.py`` calls it on the files it is
given; :func:`rebuild` calls it on the files ``benchmarks/results/index.yaml`` lists for a model
file, with the method, constants and date recorded there, so that a shipped file can be made
again from the data beside it (``benchmarks/rebuild_cost_model.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..files import quote
from ..model import Problem
from ..model.performance import CostModel, load_cost_model
from ..model.specs import SpecError, read_document
from .cases import Case, cases_from_runs, predictions
from .runs import held_out, stalled
from .scores import scores, scores_of
from .solve import FITTED, fit, fit_cap, fit_cpu

#: the testbed's CPU budget (cores over all nodes) for records that do not carry ``cpu_budget``:
#: every indexed campaign ran at 1.5 (benchmarks/results/index.yaml, operating points)
CPU_BUDGET = 1.5
#: the fits a model file may be written by
METHODS = ("throughput", "cpu")


@dataclass(frozen=True)
class Split:
    """Campaign runs as a fit uses them: cases to train on and to validate with, and the runs
    left out because their bolts executed nothing in the measured window (:func:`~.runs.stalled`)."""

    train: list[Case]
    valid: list[Case]
    train_runs: list[dict]
    valid_runs: list[dict]
    stalled: list[dict]


def split(runs: Sequence[dict], problem_of: Callable[[dict], Problem], cpu_budget: float = CPU_BUDGET) -> Split:
    """The runs without the stalled ones, split by :func:`~.runs.held_out` and grouped into cases."""
    left_out = [r for r in runs if stalled(r)]
    kept = [r for r in runs if not stalled(r)]
    train_runs = [r for r in kept if not held_out(r["kind"])]
    valid_runs = [r for r in kept if held_out(r["kind"])]
    return Split(cases_from_runs(train_runs, problem_of, cpu_budget), cases_from_runs(valid_runs, problem_of, cpu_budget),
                 train_runs, valid_runs, left_out)


def fit_by_cpu(cases: Sequence[Case], start: CostModel, params: Sequence[str] = FITTED, *,
               cap: bool = True) -> tuple[CostModel, dict]:
    """The node-CPU fit (:func:`~.solve.fit_cpu`), then unless ``cap`` is false the cap on the
    fixed costs fitted to the cases' throughput (:func:`~.solve.fit_cap`)."""
    model, info = fit_cpu(cases, start, params)
    if cap:
        model, cap_info = fit_cap(cases, model)
        info = {**info, **cap_info, "params": [*info["params"], "fixed_cpu_cap"]}
    return model, info


def rounded(model: CostModel, names: Sequence[str]) -> CostModel:
    """``model`` with the constants ``names`` to 3 significant digits, as model files store them."""
    return dataclasses.replace(model, **{p: float(f"{getattr(model, p):.3g}") for p in names})


def fit_model(data: Split, start: CostModel, *, method: str, params: Sequence[str] = FITTED, cap: bool = True,
              fitted: tuple[CostModel, dict] | None = None) -> tuple[CostModel, dict]:
    """The model file's model and the part of its provenance the fit decides: ``(model, facts)``.

    ``method`` ``cpu`` is :func:`fit_by_cpu`, ``throughput`` :func:`~.solve.fit`; ``fitted`` is
    that fit's ``(model, info)`` when the caller already ran it. The constants the fit may change
    (``params`` and ``fixed_cpu_cap``) are rounded to 3 significant digits; ``facts`` holds the
    training and validation experiments, the rounded model's scores on both sets, the analytic
    (``start``) model's on the validation set, and the fit's own facts."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {quote(method)}")
    if fitted is None:
        fitted = fit_by_cpu(data.train, start, params, cap=cap) if method == "cpu" else fit(data.train, start, params)
    model, info = fitted
    model = rounded(model, [*params, "fixed_cpu_cap"])
    everything = data.train + data.valid
    pred = predictions(model, everything)
    written = {"training": scores_of(data.train, pred[:len(data.train)]),
               "validation": scores_of(data.valid, pred[len(data.train):]) if data.valid else None}
    return model, {"method": method,
                   "training_experiments": sorted({c.experiment for c in data.train}),
                   "validation_experiments": sorted({c.experiment for c in data.valid}),
                   **written,
                   "analytic_validation": scores(start, data.valid) if data.valid else None, **info}


def document(model: CostModel, facts: dict, *, fitted_on: Sequence[str], date: str) -> dict:
    """A ``--cost-model`` file's content: the constants and their provenance."""
    return {"cost_model": model.to_dict(),
            "provenance": {"fitted_on": list(fitted_on), "date": date, **facts}}


# ---------------------------------------------------------------------------- the index


def read_index(path: Path) -> dict:
    """``benchmarks/results/index.yaml``: its ``campaigns`` and ``cost_models`` mappings, checked
    for what :func:`rebuild` needs (a :class:`~streamplace.model.specs.SpecError` otherwise)."""
    doc = read_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("campaigns"), list):
        raise SpecError(path, "campaigns", "missing: expected a list of campaigns")
    models = doc.get("cost_models")
    if not isinstance(models, dict):
        raise SpecError(path, "cost_models", "missing: expected a mapping of model file -> how it was fitted")
    for name, how in models.items():
        for key in ("fitted_on", "method", "params", "start", "date"):
            if not isinstance(how, dict) or key not in how:
                raise SpecError(path, f"cost_models.{name}.{key}", "missing")
        if how["method"] not in METHODS:
            raise SpecError(path, f"cost_models.{name}.method", f"must be one of {', '.join(METHODS)}")
    return doc


def bundled(index: dict) -> str:
    """The model file the index marks ``bundled: true`` (``CostModel()``'s defaults)."""
    names = [name for name, how in index["cost_models"].items() if how.get("bundled")]
    if len(names) != 1:
        raise ValueError(f"the index marks {len(names)} cost model files as bundled, expected one")
    return names[0]


def rebuild(index_path: Path, model_file: str, load: Callable[[list[Path]], list[dict]],
            problem_of: Callable[[dict], Problem]) -> dict:
    """The content of ``model_file`` (a name in ``docs/cost-models/``) fitted again on the
    campaign files the index lists for it, with its method, constants, starting model and date.

    ``load`` reads campaign files into run records (e.g.
    :func:`streamplace.reproduce.measured.load_campaigns`), ``problem_of`` names the
    problem of a record (:func:`~.runs.run_problems`). Paths in the index are relative to the
    index's folder (the campaign folders); the provenance names them from the repository root,
    ``benchmarks/results/<campaign>/<file>``, as the fit script is run from there."""
    index = read_index(index_path)
    how = index["cost_models"].get(model_file)
    if how is None:
        raise SpecError(index_path, f"cost_models.{model_file}", "missing: no recipe for this model file")
    results = index_path.parent
    models_dir = results.parent.parent / "docs" / "cost-models"
    files = [results / f for f in how["fitted_on"]]
    start = load_cost_model(models_dir / how["start"])
    data = split(load(files), problem_of)
    model, facts = fit_model(data, start, method=how["method"], params=how["params"], cap=how.get("cap", True))
    return document(model, facts, fitted_on=[f"benchmarks/results/{f}" for f in how["fitted_on"]], date=str(how["date"]))

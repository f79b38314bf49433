"""The bundled cost model rebuilt from the campaign index equals the shipped file; a model file's
provenance is what its fit and scores say."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamplace.reproduce.measured import load_campaigns
from streamplace.fit.build import bundled, fit_model, read_index, rebuild, rounded, split
from streamplace.fit.runs import run_problems
from streamplace.fit.scores import scores
from streamplace.model.performance import CostModel, load_cost_model
from streamplace.model.specs import SpecError

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "benchmarks" / "results" / "index.yaml"
MODELS = ROOT / "docs" / "cost-models"
CAMPAIGNS = ROOT / "tests" / "fixtures" / "campaigns"


@pytest.fixture(scope="module")
def rebuilt():
    """The bundled file's rebuild, by the function benchmarks/rebuild_cost_model.py calls."""
    name = bundled(read_index(INDEX))
    return name, rebuild(INDEX, name, load_campaigns, run_problems())


def test_the_index_marks_the_file_cost_model_defaults_come_from(rebuilt):
    assert rebuilt[0] == "testbed-fit.json"
    assert load_cost_model(MODELS / rebuilt[0]) == CostModel()


def test_the_rebuild_of_the_bundled_model_equals_the_shipped_file(rebuilt):
    name, doc = rebuilt
    shipped = json.loads((MODELS / name).read_text())
    assert doc["cost_model"] == shipped["cost_model"]   # the constants as the file stores them (3 digits)
    assert doc["provenance"].keys() == shipped["provenance"].keys()
    for key in ("fitted_on", "date", "method", "params", "points", "training_experiments", "validation_experiments"):
        assert doc["provenance"][key] == shipped["provenance"][key], key
    for key in ("rms_cores", "r2", "capped_loss", "uncapped_loss"):
        assert doc["provenance"][key] == pytest.approx(shipped["provenance"][key], rel=1e-9), key
    for part in ("training", "validation", "analytic_validation"):
        got, want = doc["provenance"][part], shipped["provenance"][part]
        assert got["median_abs_error"] == pytest.approx(want["median_abs_error"], rel=1e-9)
        assert got["kendall_tau"] == pytest.approx(want["kendall_tau"], rel=1e-9)
        assert (got["cases"], got["pairs"], got["pairs_agree"]) == (want["cases"], want["pairs"], want["pairs_agree"])


def test_the_shipped_held_out_figures_are_the_documented_ones(rebuilt):
    """docs/performance-model.md: 11.7 % median error and mean tau +0.83 over the 36 held-out
    placements (144 runs, four testbeds of each application)."""
    held_out = rebuilt[1]["provenance"]["validation"]
    assert round(100 * held_out["median_abs_error"], 1) == 11.7
    assert round(held_out["mean_kendall_tau"], 2) == 0.83
    assert held_out["cases"] == 36
    index = read_index(INDEX)
    runs = [e["runs"] for f in index["cost_models"]["testbed-fit.json"]["fitted_on"]
            for c in index["campaigns"] for entry in c["files"] if f == f"{c['folder']}/{entry['file']}"
            for e in entry["experiments"].values() if e["role"] == "held-out"]
    assert sum(runs) == 144


def test_fit_model_writes_the_rounded_models_scores_and_keeps_unfitted_constants():
    runs = load_campaigns([CAMPAIGNS / "testbed-runs-2026-11-26-trending-topics.jsonl",
                           CAMPAIGNS / "testbed-runs-2026-11-26-more-reps.jsonl"])
    data = split(runs, run_problems())
    start = load_cost_model(MODELS / "analytic.json")
    model, facts = fit_model(data, start, method="cpu", params=["executor_cpu"])
    assert facts["training_experiments"] == ["trending-topics@2high+2low"]
    assert facts["validation_experiments"] == ["frequent-routes@2high+2low", "frequent-routes@8high"]
    assert model == rounded(model, ["executor_cpu", "fixed_cpu_cap"])
    assert {k for k, v in model.to_dict().items() if v != start.to_dict()[k]} <= {"executor_cpu", "fixed_cpu_cap"}
    assert facts["validation"]["median_abs_error"] == pytest.approx(scores(model, data.valid)["median_abs_error"])
    assert facts["analytic_validation"] == scores(start, data.valid)
    with pytest.raises(ValueError, match="method must be one of"):
        fit_model(data, start, method="guess")


def test_an_index_without_a_recipe_field_names_it(tmp_path):
    bad = tmp_path / "index.yaml"
    bad.write_text("campaigns: []\ncost_models:\n  m.json: {method: cpu}\n")
    with pytest.raises(SpecError, match=r"cost_models\.m\.json\.fitted_on: missing"):
        read_index(bad)


def test_the_command_refuses_a_model_the_index_has_no_recipe_for_in_one_line():
    """The command's full rebuild is what the tests above check in process (the same function)."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "rebuild_cost_model.py"), "--model", "nowhere.json", "--check"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("streamplace: ") and "cost_models.nowhere.json: missing" in proc.stderr

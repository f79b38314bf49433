"""benchmarks/fit_cost_model.py end to end, on two campaign files (tests/fixtures/campaigns): the split into
training and held-out runs, the constants it may change, the written file and its scores, and its
one-line refusals."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamplace.reproduce.measured import load_campaigns
from streamplace.fit import runs as fit_runs
from streamplace.fit.cases import cases_from_runs
from streamplace.fit.scores import scores
from streamplace.model.performance import load_cost_model

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "fit_cost_model.py"
CAMPAIGNS = ROOT / "tests" / "fixtures" / "campaigns"
FILES = [CAMPAIGNS / "testbed-runs-2026-11-26-trending-topics.jsonl", CAMPAIGNS / "testbed-runs-2026-11-26-more-reps.jsonl"]
ANALYTIC = load_cost_model(ROOT / "docs" / "cost-models" / "analytic.json")


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    out = tmp_path_factory.mktemp("fit") / "model.json"
    proc = _run(*FILES, "--method", "cpu", "--params", "executor_cpu", "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


def test_trains_on_the_calibration_run_and_holds_the_papers_applications_out(fitted):
    doc = json.loads(fitted[0].read_text())["provenance"]
    assert doc["training_experiments"] == ["trending-topics@2high+2low"]
    assert doc["validation_experiments"] == ["frequent-routes@2high+2low", "frequent-routes@8high"]
    assert doc["method"] == "cpu" and doc["fitted_on"] == [str(f) for f in FILES]


def test_changes_only_the_chosen_constants_and_the_cap_to_three_digits(fitted):
    model = load_cost_model(fitted[0])
    changed = {k for k, v in model.to_dict().items() if v != ANALYTIC.to_dict()[k]}
    assert changed <= {"executor_cpu", "fixed_cpu_cap"} and "executor_cpu" in changed
    for name in changed:
        value = getattr(model, name)
        assert value == float(f"{value:.3g}")
    assert f"executor_cpu = {model.executor_cpu:g}, fixed_cpu_cap = {model.fixed_cpu_cap:g}" in fitted[1]


def test_the_written_scores_are_the_written_models_on_the_held_out_runs(fitted):
    model = load_cost_model(fitted[0])
    runs = [r for r in load_campaigns(FILES) if fit_runs.held_out(r["kind"]) and not fit_runs.stalled(r)]
    expected = scores(model, cases_from_runs(runs, fit_runs.run_problems(), 1.5))
    written = json.loads(fitted[0].read_text())["provenance"]["validation"]
    assert written["median_abs_error"] == pytest.approx(expected["median_abs_error"])
    assert written["kendall_tau"] == pytest.approx(expected["kendall_tau"])
    assert written["median_abs_error"] != pytest.approx(scores(ANALYTIC, cases_from_runs(runs, fit_runs.run_problems(), 1.5))["median_abs_error"])


def test_an_unknown_constant_is_one_line_and_exit_2_with_nothing_written(tmp_path):
    out = tmp_path / "model.json"
    proc = _run(*FILES, "--params", "warp_speed", "-o", out)
    assert proc.returncode == 2 and not out.exists()
    assert proc.stderr.count("\n") == 1 and "--params: 'warp_speed' is not a fitted constant" in proc.stderr


def test_a_campaign_file_that_is_not_one_is_one_line_and_exit_2(tmp_path):
    bad, out = tmp_path / "runs.jsonl", tmp_path / "model.json"
    bad.write_text('{"experiment": "x"\n')
    proc = _run(bad, "-o", out)
    assert proc.returncode == 2 and not out.exists()
    assert proc.stderr.count("\n") == 1 and str(bad) in proc.stderr, proc.stderr

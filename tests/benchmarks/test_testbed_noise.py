"""benchmarks/testbed_noise.py: one campaign (tests/fixtures/campaigns) as the predictor of another of the same
placements, beside the model."""

import subprocess
import sys
from pathlib import Path

from streamplace.reproduce.measured import load_runs
from streamplace.fit import runs as fit_runs
from streamplace.fit.cases import cases_from_runs
from streamplace.fit.scores import across

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "testbed_noise.py"
CAMPAIGNS = ROOT / "tests" / "fixtures" / "campaigns"
APPS, MORE = CAMPAIGNS / "testbed-runs-2026-11-25-apps-frequent-routes.jsonl", CAMPAIGNS / "testbed-runs-2026-11-26-more-reps.jsonl"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=600)


def test_two_campaigns_of_frequent_routes_predict_each_other_as_across_scores_them():
    proc = _run(APPS, MORE)
    assert proc.returncode == 0, proc.stderr
    cases = {p: cases_from_runs([r for r in load_runs(p) if not fit_runs.stalled(r)], fit_runs.run_problems(), 1.5)
             for p in (APPS, MORE)}
    expected = across(cases[APPS], cases[MORE])
    assert expected["cases"] == 18   # frequent-routes on both clusters, nine schedulers
    line = next(line for line in proc.stdout.splitlines() if line.strip().startswith(f"by {APPS.stem}:"))
    assert f"median error {expected['median_abs_error']:6.1%}" in line
    assert f"pairs apart in the same order {expected['pairs_agree']}/{expected['pairs']}" in line
    assert proc.stdout.count("predicted by") == 2   # both orders


def test_no_placement_in_common_is_one_line_and_exit_2():
    proc = _run(CAMPAIGNS / "testbed-runs-2026-11-26-calibration-rep0.jsonl", MORE)
    assert proc.returncode == 2 and proc.stderr.strip() == "no two groups measured a placement in common"


def test_a_bad_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "runs.jsonl"
    bad.write_text("not json\n")
    proc = _run(bad, MORE)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "line 1" in proc.stderr


def test_a_campaign_given_twice_is_one_line_and_exit_2():
    proc = _run(APPS, APPS)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "give each campaign once" in proc.stderr


def test_another_placement_under_the_same_name_is_one_line_and_exit_2(tmp_path):
    import json
    runs = [json.loads(line) for line in MORE.read_text().splitlines()]
    first = next(r for r in runs if r["scheduler"] == "metis")
    task = next(iter(first["placement"]))
    for r in runs:
        if r["scheduler"] == "metis":   # one task moved to another worker slot: another placement
            r["placement"] = {**r["placement"], task: {**r["placement"][task], "worker": r["placement"][task]["worker"] + 1}}
    moved = tmp_path / "moved.jsonl"
    moved.write_text("".join(json.dumps(r) + "\n" for r in runs))
    proc = _run(APPS, moved)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "placement" in proc.stderr and "runs of one cell must share their placement" in proc.stderr

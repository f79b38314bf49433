"""benchmarks/storm_testbed.py's summary of a campaign and its one-line refusals (the campaign
itself, on the testbed, is tests/storm/testbed's and the committed results' business)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from streamplace.campaign import testbed as campaign
from streamplace.reproduce.measured import load_runs

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "storm_testbed.py"
RUNS = ROOT / "tests" / "fixtures" / "campaigns" / "testbed-runs-2026-11-26-trending-topics.jsonl"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=600)


def test_the_summary_of_a_campaign_ranks_its_cells_by_mean_measured_throughput(tmp_path):
    shutil.copy(RUNS, tmp_path / "runs.jsonl")
    proc = _run("--summary-only", "-o", tmp_path)
    assert proc.returncode == 0, proc.stderr
    stats = campaign.cell_stats(load_runs(RUNS))
    by_mean = [cell[1] for cell in sorted(stats, key=lambda cell: -stats[cell]["mean"])]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("measured ranking:"))
    assert line.removeprefix("measured ranking:").strip().split(" > ") == by_mean
    assert (tmp_path / "summary.json").is_file()


def test_a_runs_file_that_is_not_a_campaign_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "runs.jsonl").write_text('{"job": "a"}\n')
    proc = _run("--summary-only", "-o", tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "line 1: experiment: missing" in proc.stderr
    assert not (tmp_path / "summary.json").exists()


def test_no_repetitions_is_one_line_and_exit_2(tmp_path):
    proc = _run("--reps", "0", "-o", tmp_path / "out")
    assert proc.returncode == 2 and proc.stderr.strip() == "error: --reps must be >= 1 and --first-rep >= 0"
    assert not (tmp_path / "out").exists()


def test_a_storm_setting_the_run_owns_or_not_key_value_is_one_line_and_exit_2(tmp_path):
    for pair, message in (("topology.workers=3", "error: --storm-conf topology.workers: set by the plan"),
                          ("storm.messaging.netty.buffer_size", "error: --storm-conf: expected KEY=VALUE")):
        proc = _run("--experiments", "linear-io", "--storm-conf", pair, "-o", tmp_path / "out")
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and proc.stderr.startswith(message), proc.stderr
        assert not (tmp_path / "out").exists()

"""benchmarks/demo_step.py: its argument parsing, the error it scores, and its refusals (the
repeated testbed step itself is the campaign's, not a test's)."""

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "demo_step.py"


def test_a_variant_is_warm_up_and_measured_seconds(script):
    demo_step = script("demo_step")
    assert demo_step.variant("10+20") == (10.0, 20.0)
    assert demo_step.variant("0+2.5") == (0.0, 2.5)
    for bad in ("10", "10+x", "-1+10", "10+0"):
        with pytest.raises(argparse.ArgumentTypeError):
            demo_step.variant(bad)


def test_the_error_is_the_recommended_jobs_prediction_against_its_measurement(script):
    # the step's run.json lists the recommended job first, even's second
    run = {"jobs": [{"calibrated_throughput": 90.0, "throughput": 120.0}, {"calibrated_throughput": 50.0, "throughput": 50.0}]}
    assert script("demo_step").recommended_error(run) == pytest.approx(-0.25)


def test_a_directory_without_a_demo_is_refused_in_one_line(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "-o", str(tmp_path / "out.jsonl")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'results.json'}: not found "
                                                "(DEMO_DIR must be a `streamplace demo` output directory)"]
    assert not (tmp_path / "out.jsonl").exists()

"""benchmarks/acking_cpu.py: the regression of node CPU outside executors, printed per campaign file."""

import subprocess
import sys
from pathlib import Path

from streamplace.fit import runs as fit_runs
from streamplace.fit.messaging import node_rows, regress
from streamplace.reproduce.measured import load_runs

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "campaigns" / "frequent-routes-acking-msp10-first4.jsonl"


def test_prints_the_regression_of_every_node_of_every_run():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "acking_cpu.py"), str(FIXTURE)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    fit = regress(node_rows(load_runs(FIXTURE), fit_runs.run_problems()))
    line = next(line for line in proc.stdout.splitlines() if line.startswith(FIXTURE.name))
    assert line.split()[1:6] == [str(fit.n), f"{fit.base:.4f}", f"{fit.per_worker:.4f}", f"{fit.per_message * 1e6:.2f}",
                                 f"{fit.r2:.2f}"]

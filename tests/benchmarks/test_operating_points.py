"""benchmarks/operating_points.py: a file that holds no testbed runs is one line and exit 2, before any figure."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "operating_points.py"


def test_a_file_without_runs_is_one_line_naming_it_and_exit_2(tmp_path):
    empty = tmp_path / "runs.jsonl"
    empty.write_text("")
    for path, said in ((tmp_path / "missing.jsonl", "no testbed runs here"), (empty, "holds no run records")):
        proc = subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and str(path) in proc.stderr and said in proc.stderr, proc.stderr

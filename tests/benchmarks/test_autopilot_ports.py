"""benchmarks/autopilot_ports.py: the ports a plan keeps, and its table, on records made up here
whose figures are worked by hand (the campaign itself runs on the testbed)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from streamplace.model import Placement

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "autopilot_ports.py"


def _script():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import autopilot_ports
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return autopilot_ports


def test_kept_ports_of_the_demos_plan_by_hand():
    """s on h0, k[0..1] on h1, k[2..3] on h2, all on worker 0; k[2] joins s: h0's and h2's workers
    change, both on port 0, which a running worker holds; h1's does not change."""
    current = Placement(node=np.array([0, 1, 1, 2, 2]), worker=np.zeros(5, int))
    assert _script().kept_ports(current, Placement(node=np.array([0, 1, 1, 0, 2]), worker=np.zeros(5, int))) == (2, 2)
    assert _script().kept_ports(current, Placement(node=np.array([0, 1, 1, 0, 2]), worker=np.array([1, 0, 0, 1, 1]))) == (2, 0)


def test_the_table_of_one_run_per_variant(tmp_path):
    """Windows every 5 s at rate 100, the plan at t=60, then 0, 0, 50 and 100 again: pre = post =
    100, recovered in the window at 75 (20 s after the plan), dip (100 + 100 + 50) x 5 = 1,250."""
    timeline = [{"t": float(t), "throughput": {60: 0.0, 65: 0.0, 70: 50.0}.get(t, 100.0)} for t in range(5, 131, 5)]
    runs = [{"variant": v, "mode": "cluster", "plans": [{"t": 60.0, "matched": True}], "timeline": timeline,
             "changed_workers": [3], "kept_ports": [k]} for v, k in (("reuse", 3), ("fresh", 0))]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    proc = subprocess.run([sys.executable, str(SCRIPT), "-o", str(tmp_path), "--summary-only"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line.split() for line in proc.stdout.splitlines()]
    assert ["1", "reuse", "cluster", "1", "60:", "3,", "3,", "True,", "20,", "1,250"] in lines
    assert ["2", "fresh", "cluster", "1", "60:", "3,", "0,", "True,", "20,", "1,250"] in lines

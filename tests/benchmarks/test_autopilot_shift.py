"""benchmarks/autopilot_shift.py's judgement of the second shift plan's rules, on runs made up
here whose figures are worked by hand (the campaign itself runs on the testbed)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "autopilot_shift.py"
T0, W = 1000.0, 5.0


def _policy(name: str, rep: int, phase1: float, phase2: float, applies_at: list[int]) -> dict:
    """A policy run: windows every 5 s from 5 s to 275 s (phase 1's rate before 120 s, phase 2's
    after), one period every 5 s from 20 s, ``apply`` at the given period numbers (1 = first)."""
    timeline = [{"t": T0 + W * k, "throughput": phase1 if W * k < 120 else phase2} for k in range(1, 56)]
    periods = [{"t": T0 + 20 + W * (i - 1), "decision": "apply" if i in applies_at else "keep", "moves": 2}
               for i in range(1, 53)]
    return {"kind": "policy", "name": name, "rep": rep, "submitted_at": T0, "window_s": W, "timeline": timeline,
            "autopilot": periods, "executed": {}, "throughput": phase2}


def _static(kind: str, name: str, rep: int, rate: float) -> dict:
    return {"kind": kind, "name": name, "rep": rep, "throughput": rate}


def test_rules_one_to_three_as_worked_by_hand(tmp_path):
    runs = [_static("static-phase1", "even", 1, 100.0), _static("static-phase1", "even", 2, 110.0),   # even alone: 105
            _static("static", "even", 1, 80.0), _static("static", "even", 2, 80.0),
            _static("static", "calibrated-lns", 1, 200.0), _static("static", "calibrated-lns", 2, 220.0),  # best: 210
            _policy("hysteresis", 1, 150.0, 200.0, [4]),     # period 4, +42.9 %; 200/210 = 95.2 %
            _policy("hysteresis", 2, 150.0, 180.0, [6]),     # period 6: too late; 180/210 = 85.7 %
            _policy("greedy", 1, 150.0, 190.0, [4, 10, 30]),
            _policy("greedy", 2, 100.0, 200.0, [4, 11, 31])]  # phase 1 100 < 105
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    proc = subprocess.run([sys.executable, str(SCRIPT), "-o", str(tmp_path), "--summary-only"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line.strip() for line in proc.stdout.splitlines()]
    assert "rules (even alone on phase 1: 105; best static of phase 2: 210):" in lines
    assert "hysteresis    r1: 1 met (first 4, phase 1 +42.9% on even), 2 met (95.2% of best)" in lines
    assert "hysteresis    r2: 1 missed (first 6, phase 1 +42.9% on even), 2 missed (85.7% of best)" in lines
    assert "greedy        r2: 1 missed (first 4, phase 1 -4.8% on even), 2 met (95.2% of best)" in lines
    # ours: 1 plan, phase 2 mean 190; greedy: 3 plans, mean 195, spread 10 -> 190 >= 185
    assert "3 vs greedy: met (plans 1.0 vs 3.0; phase 2 190 vs 195 - 10)" in lines

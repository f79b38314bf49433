"""Re-decide a shift run's period (RUN_DIR, seconds after submission) on the run's own monitor
records, on a quiet machine, with lns given 0.5 and 2 s of wall time: the candidate it proposes
(moves, predicted gain, workers), against the one the run logged under the testbed's load."""
import json, shutil, tempfile
from collections import Counter
from pathlib import Path
import streamplace as sp
from streamplace.autopilot.loop import Autopilot, Settings
from streamplace.autopilot.policy import Hysteresis
from streamplace.model import Problem
from streamplace.model.operating_point import named
from streamplace.workloads import runtime
import sys
run = Path(sys.argv[1]); AT = float(sys.argv[2])
rj = json.loads((run / "run.json").read_text()); t0 = rj["submitted_at"]
prob = Problem.from_topology(runtime.shift(280.0), runtime.named_cluster("2high+2low"))
even = sp.make_scheduler("even").schedule(prob).placement
recs = [json.loads(l) for l in open(run / "autopilot.jsonl")]
r143 = next(r for r in recs if abs(r["t"] - t0 - AT) < 2.5)
print("logged:", r143["moves"], r143["predicted_now"], r143["predicted_new"])
point = None
for tl in (0.5, 2.0):
    d = Path(tempfile.mkdtemp())
    s = Settings(window_s=5.0, horizon_windows=3, time_limit=tl, max_moves=20, point=named("10ms-sleeps"))
    ap = Autopilot(prob, run / "monitor", d / "plans", d / "log.jsonl", even, Hysteresis(), s)
    dec = ap.step(r143["t"])
    cand = ap.pending[0] if ap.pending else ap.current
    w = Counter(zip(cand.node.tolist(), cand.worker.tolist()))
    print(f"lns {tl:g} s: moves {dec.moves} now {dec.predicted_now:.0f} new {dec.predicted_new:.0f} ({dec.predicted_new / dec.predicted_now - 1:+.1%}) workers {len(w)}; {dec.reason[:60]}")
    shutil.rmtree(d)

"""PLAN-autopilot-shift-7.md's check of the load-change threshold for the within-horizon guard.
On the periods where the loop decided (a prediction made: every earlier check passed), the
guard's distance between the horizon's oldest and newest window; which would have kept. Reads
the campaigns' run directories (monitor records, autopilot.jsonl; outside the repository, under
/work/camp on the machine that ran them)."""
import json, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main")
from streamplace.autopilot.loop import key_shares, load_moved
from streamplace.storm import records
from streamplace.workloads import runtime
topo = runtime.shift(280.0)
rows = []
for camp in ("payback4", "rewarm5", "loadchange6", "mingain7", "confirm9"):
    for run in sorted(Path(f"/work/camp/{camp}/runs").iterdir()):
        if not (run / "autopilot.jsonl").is_file():
            continue
        load = records.read_monitor(run / "monitor", "load", 0, 1e12, live=True)
        ws = sorted({float(w) for w in load["window_start"]})
        sh = {w: key_shares(load[load["window_start"] == w], topo) for w in ws}
        shift = next((w for w in ws if "count" in sh[w] and sh[w]["count"][7] > 0.3), None)
        for l in open(run / "autopilot.jsonl"):
            r = json.loads(l)
            if r.get("predicted_now") is None or not r.get("windows"):
                continue
            w0, w1 = float(r["windows"][0]), float(r["windows"][-1])
            m = load_moved(sh.get(w0, {}), sh.get(w1, {}))
            d = m[1] if m else 0.0
            kind = "straddle" if shift is not None and w0 < shift <= w1 else "one load"
            rows.append((camp, run.name, kind, d, r["decision"], round(w1 - shift) if shift else None))
print("periods decided:", len(rows))
for kind in ("one load", "straddle"):
    v = np.array([r[3] for r in rows if r[2] == kind])
    print(kind, len(v), "max %.3f p99 %.3f median %.3f above 0.1: %d" % (v.max(), np.percentile(v, 99), np.median(v), (v > 0.1).sum()))
print("one load above 0.1:", [r for r in rows if r[2] == "one load" and r[3] > 0.1])
print("straddle:", [(r[0], r[1], round(r[3], 3), r[4], r[5]) for r in rows if r[2] == "straddle"])

"""Predicted against measured gain of every plan the shift campaigns of 2026-11-29 applied: the
gain the policy saw (predicted new / predicted now - 1, before the migration cost) and the one
measured (the running placement's calibrated rate at the first decided period after the plan's
recovery, over the one before it). Reads the campaigns' run directories (autopilot.jsonl,
run.json; kept outside the repository, under /work/camp on the machine that ran them). Plans whose
measurement came after the key shift (t=280 s) are listed but left out of the medians."""
import json
import statistics as st
from pathlib import Path
SHIFT = 280.0
rows = []
for camp in ("payback4", "rewarm5", "loadchange6", "mingain7", "confirm9"):
    for run in sorted(Path(f"/work/camp/{camp}/runs").glob("*")):
        if run.name.startswith("static"):
            continue
        rj = json.loads((run / "run.json").read_text()); t0 = rj["submitted_at"]
        recs = [json.loads(l) for l in open(run / "autopilot.jsonl")]
        for i, r in enumerate(recs):
            if r["decision"] != "apply":
                continue
            after = None
            for q in recs[i + 1:]:
                if q["decision"] == "apply":
                    break
                if q.get("predicted_now") and not q["reason"].startswith("settling"):
                    after = q; break
            ta = r["t"] - t0
            if after is None:
                continue
            tb = after["t"] - t0
            straddle = ta - 15 < SHIFT + 5 < tb + 0   # the shift between the decision's horizon and the after horizon
            rows.append((camp, run.name, round(ta), r["moves"], r["predicted_now"], r["predicted_new"], after["predicted_now"], round(tb), straddle))
print("camp run t moves pred_gain meas_gain after_t straddle")
g = []
for c, n, ta, m, pn, pw, an, tb, s in rows:
    pg, mg = pw / pn - 1, an / pn - 1
    print(f"{c:12s} {n:26s} {ta:4d} {m:3d} {pg:+.1%} {mg:+.1%} {tb:4d} {'SHIFT' if s else ''}")
    if not s: g.append((m, pg, mg))
err = [pg - mg for m, pg, mg in g]
print("no shift between:", len(g), "median over-prediction (points) %.1f%%" % (100 * st.median(err)),
      "quartiles", [round(100 * x, 1) for x in st.quantiles(err, n=4)])
for lo, hi in ((1, 3), (4, 8), (9, 40)):
    e = [pg - mg for m, pg, mg in g if lo <= m <= hi]
    if e: print(f"moves {lo}-{hi}: n={len(e)} median {100*st.median(e):.1f} points")

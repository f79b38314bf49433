"""[LF] Sec. 4.2 (Fig. 6): cohesion and coupling of L/F against Storm's even scheduler.

The ten synthetic instances of :mod:`streamplace.workloads.lf` (five configurations at low and
high parallelism), distances 1 within a worker and 40 otherwise (the metrics' defaults, [LF]
Sec. 4.2). Even places the topology's tasks only (Storm would deal acker executors into the
round robin too; the paper's figures come out without them). ``benchmarks/lf_cohesion.py``
prints the same comparison with Alg. 5's literal round-robin assignment as an option.
"""

from __future__ import annotations

from ..schedulers import make_scheduler
from ..workloads import lf
from ..report import render as report
from ..report.render import Section, pivot_table, plot_metric_by_scheduler
from ..report.display import format_pct
from .core import Check, Run
from .reported import LF

EXPERIMENT = "cohesion-coupling"
TOLERANCE_PP = 0.5  # cohesion gains are exact ratios: agree within half a percentage point


def gain(new: float, old: float) -> float:
    """Percentage by which ``new`` exceeds ``old`` (0 when both are 0)."""
    return 0.0 if new == old else 100.0 * (new - old) / old


def records(run: Run) -> list[dict]:
    instances = list(lf.instances())
    schedulers = [("even", make_scheduler("even")), ("lf", make_scheduler("lf"))]
    task = run.task("lf: synthetic configurations", len(instances) * len(schedulers))
    out = []
    for inst in instances:
        pair = {}
        for label, scheduler in schedulers:
            run.advance(task, f"lf: {label} {inst.layout} on {inst.cluster}")
            context = {"paper": "lf", "experiment": EXPERIMENT, "workload": inst.layout, "cluster": inst.cluster,
                       "scheduler": label, "n_tasks": inst.n_tasks}
            pair[label] = run.record(("lf", inst.name, label), inst.problem, scheduler, context)
        for rec in pair.values():
            rec["cohesion_gain_pct"] = gain(rec["cohesion"], pair["even"]["cohesion"])
            rec["coupling_gain_pct"] = gain(rec["coupling"], pair["even"]["coupling"])
        out += pair.values()
    return out


def checks(recs: list[dict]) -> list[Check]:
    out = []
    cohesion, coupling = LF["cohesion/lf-vs-even"], LF["coupling/lf-vs-even"]
    for r in (r for r in recs if r["scheduler"] == "lf"):
        paper = cohesion.value[r["workload"]]
        ours = r["cohesion_gain_pct"]
        verdict = "agree" if abs(ours - paper) <= TOLERANCE_PP else ("direction" if ours > 0 else "disagree")
        out.append(Check("lf", EXPERIMENT, f"L/F cohesion gain over even, {r['workload']} on {r['cluster']}",
                         cohesion.source, f"{paper:+.2f} %", f"{ours:+.2f} %", verdict,
                         "" if verdict == "agree" else
                         f"the gain is L/F's cohesion ({r['cohesion']:g}) over even's; even's round robin over Storm's "
                         f"sorted slots sets the base, and [LF] does not list its slot order",
                         tolerance=f"+-{TOLERANCE_PP:g} pp"))
        ours = r["coupling_gain_pct"]
        verdict = "agree" if abs(ours - coupling.value) <= TOLERANCE_PP else "disagree"
        out.append(Check("lf", EXPERIMENT, f"L/F coupling change against even, {r['workload']} on {r['cluster']}",
                         coupling.source, f"{coupling.value:+.2f} %", format_pct(ours) if ours else "+0.00 %", verdict,
                         "" if verdict == "agree" else
                         f"L/F's coupling ({r['coupling']:g}) differs from even's: the two place an operator's tasks "
                         f"over a different number of workers here", tolerance=f"+-{TOLERANCE_PP:g} pp"))
    return out


NOTES = ["L/F with our least-loaded pipeline assignment (docs/schedulers.md#lf); even deals the topology's tasks round robin "
         "over Storm's sorted slots. Cohesion and coupling use [LF]'s distances (1 in a worker, 40 otherwise)."]


def sections(recs: list[dict], out_dir) -> list[Section]:
    figs = [report.write_png(plot_metric_by_scheduler(recs, key, title=f"[LF] Fig. 6: {key} by configuration"),
                             out_dir / f"lf_{key}.png") for key in ("cohesion", "coupling")]
    tables = [pivot_table(recs, key, rows=("workload", "cluster"), title=title)
              for key, title in (("cohesion", "cohesion (sum of closeness; higher is better)"),
                                 ("coupling", "coupling (sum of closeness; lower is better)"))]
    return [Section("[LF] Sec. 4.2: cohesion and coupling",
                    how_to_read="Cohesion: higher is better (communicating tasks close together); coupling: lower is "
                                "better (tasks of one operator spread out).", figures=figs, tables=tables)]

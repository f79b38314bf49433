"""[I] Sec. 5 (Fig. 4-9) and [T3] Sec. 5 (Fig. 5-6): the heuristic against the optimum.

The 72 uniform micro-benchmarks (linear, diamond, star x 10..32 tasks x homogeneous and
heterogeneous cluster; :mod:`streamplace.workloads.microbench`): inter-node cost of the
paper's scheduler (I-Scheduler with theta = 1 s as in [I] Sec. 5, or T3) beside the exact
optimum (the ``optimal`` scheduler; the papers used CPLEX), and both resolution times. The
optimum is computed once per instance and run, shared by both papers.
"""

from __future__ import annotations

from ..schedulers import make_scheduler
from ..workloads import microbench
from ..report import render as report
from ..report.render import Section, add_gaps, pivot_table, plot_lines
from .core import Check, Run, exact_verdict
from .reported import ISCHEDULER, T3

QUICK_SIZES = (10, 12, 14)
SCHEDULERS = {"ischeduler": {"theta": 1.0}, "t3": {}}
EXPERIMENT = "microbench"
_EPS = 1e-9


def records(run: Run, paper: str) -> list[dict]:
    """The paper's scheduler and the optimum on every micro-benchmark (gaps added)."""
    sizes = QUICK_SIZES if run.quick else microbench.SIZES
    instances = list(microbench.instances(sizes=sizes))
    schedulers = [(paper, make_scheduler(paper, SCHEDULERS[paper]))]
    if run.has("optimal"):
        schedulers.append(("optimal", run.optimal()))
    task = run.task(f"{paper}: micro-benchmarks", len(instances) * len(schedulers))
    out = []
    for inst in instances:
        for label, scheduler in schedulers:
            run.advance(task, f"{paper}: {label} {inst.name}")
            context = {"paper": paper, "experiment": EXPERIMENT, "workload": f"{inst.layout}-{inst.n_tasks}",
                       "cluster": inst.cluster, "scheduler": label, "layout": inst.layout, "n_tasks": inst.n_tasks}
            out.append(run.record((EXPERIMENT, inst.name, label), inst.problem, scheduler, context))
    return add_gaps(out)


def _instance(rec: dict) -> str:
    return f"{rec['workload']}@{rec['cluster']}"


def _costs(recs: list[dict], scheduler: str) -> dict[str, float]:
    return {_instance(r): r["inter_node_cost"] for r in recs if r["scheduler"] == scheduler and r["inter_node_cost"] is not None}


def _optimum(recs: list[dict]) -> dict[str, float]:
    """Proven optimum per instance (the gap reference when proven)."""
    return {_instance(r): r["reference"] for r in recs if r["scheduler"] == "optimal" and r.get("reference_proven")}


def _above(recs: list[dict], scheduler: str) -> dict[str, float]:
    """Instances where ``scheduler`` is above the proven optimum, with the gap in %."""
    return {_instance(r): r["gap_pct"] for r in recs
            if r["scheduler"] == scheduler and r.get("reference_proven") and r["gap"] is not None and r["gap"] > _EPS}


def _exact_checks(paper: str, recs: list[dict], key: str, scheduler: str, table) -> list[Check]:
    rep = table[key]
    ours = _optimum(recs) if scheduler == "optimal" else _costs(recs, scheduler)
    reading = "proven optimum of our instance" if scheduler == "optimal" else _phi_text(recs)
    out = []
    for inst, value in rep.value.items():
        verdict = exact_verdict(ours.get(inst), value)
        why = "" if verdict != "disagree" else (
            f"ours is {100 * (ours[inst] / value - 1):+.1f} % from the published cost: our instance generation (the "
            f"task-level traffic of the micro-benchmark) cannot be identical to [I]'s, which it does not publish"
            + ("" if scheduler == "optimal" else f"; {_fusion_why(recs)}"))
        out.append(Check(paper, EXPERIMENT, f"{'optimum' if scheduler == 'optimal' else scheduler} inter-node cost, {inst}",
                         rep.source, f"{value:g}", f"{ours[inst]:g}" if inst in ours else "not_run", verdict, why,
                         tolerance="exact", reading=reading))
    return out


def _phi_text(recs: list[dict]) -> str:
    """Which phi I-Scheduler ran with: [I] leaves phi (the fused graph's size bound) unspecified (Sec. 4)."""
    phis = sorted({r["details"]["phi"] for r in recs if r["scheduler"] == "ischeduler" and "phi" in r.get("details", {})})
    return (f"I-Scheduler with phi = {', '.join(map(str, phis)) or 'its default'} ([I] does not give phi; ours is "
            "calibrated so the exact step finishes within theta = 1 s here)")


def _above_text(above: dict[str, float], n: int, *, show: int = 6) -> str:
    if not above:
        return f"0 of {n} above the optimum"
    names = sorted(above)
    listed = ", ".join(names[:show]) + (f", ... ({len(names) - show} more)" if len(names) > show else "")
    worst = max(above, key=above.get)
    return f"{len(above)} of {n} above the optimum ({listed}; worst +{above[worst]:.1f} % at {worst})"


def _fusion_why(recs: list[dict]) -> str:
    phis = sorted({r["details"]["phi"] for r in recs if r["scheduler"] == "ischeduler" and "phi" in r.get("details", {})})
    return (f"I-Scheduler fuses tasks until the reduced graph has at most phi = {', '.join(map(str, phis))} vertices "
            "(phi calibrated for theta = 1 s with our CP-SAT solver on this 2-core machine, "
            "streamplace/schedulers/ischeduler_phi.json); the fused parts come from a heuristic K-way partition "
            "(pymetis), and where they differ from the optimum's node contents the exact step cannot recover.")


def ischeduler_checks(recs: list[dict]) -> list[Check]:
    paper = "ischeduler"
    n = len({_instance(r) for r in recs})
    checks = _exact_checks(paper, recs, "microbench/optimum", "optimal", ISCHEDULER)
    checks += _exact_checks(paper, recs, "microbench/ischeduler", paper, ISCHEDULER)
    rep = ISCHEDULER["microbench/off-optimum"]
    above = _above(recs, paper)
    proven = len(_optimum(recs))
    if not proven:
        verdict = "not_run"
    elif set(above) == set(rep.value) & set(_optimum(recs)):
        verdict = "agree"
    else:
        verdict = "direction" if max(above.values(), default=0.0) <= 5.0 else "disagree"
    checks.append(Check(paper, EXPERIMENT, "I-Scheduler reaches the optimum on every instance but the two listed",
                        rep.source, f"{len(rep.value)} of 72 above ({', '.join(rep.value)})", _above_text(above, n), verdict,
                        "" if verdict in ("agree", "not_run") else _fusion_why(recs)))
    theta = ISCHEDULER["microbench/theta"]
    slowest = max((r["seconds"] for r in recs if r["scheduler"] == paper), default=None)
    checks.append(Check(paper, EXPERIMENT, "every I-Scheduler run finishes within theta", theta.source,
                        f"< {theta.value:g} s", "not_run" if slowest is None else f"slowest {slowest:.2f} s",
                        "not_run" if slowest is None else ("agree" if slowest < theta.value else "disagree"),
                        "" if slowest is None or slowest < theta.value else
                        "wall time, not solver work: the run shares 2 cores with other jobs, and theta bounds only the "
                        "exact step's time limit (phi is calibrated for it on a quiet machine), not partitioning and "
                        "fusion around it", tolerance="exact (a bound)"))
    return checks


def t3_checks(recs: list[dict]) -> list[Check]:
    paper = "t3"
    above = _above(recs, paper)
    optimum = _optimum(recs)
    linear = [i for i in optimum if i.startswith("linear-")]
    rep = T3["microbench/linear-at-optimum"]
    at_opt = [i for i in linear if i not in above]
    checks = [Check(paper, EXPERIMENT, "T3 equals the optimum on every linear instance", rep.source,
                    f"{rep.value} of 24", f"{len(at_opt)} of {len(linear)}" if linear else "not_run",
                    "not_run" if not linear else ("agree" if len(at_opt) == len(linear) else "disagree"),
                    "" if not linear or len(at_opt) == len(linear) else
                    f"T3's greedy first level misses the optimum on {', '.join(sorted(set(linear) - set(at_opt)))}",
                    tolerance="exact (a count)")]
    rep = T3["microbench/diamond-star"]
    others = {i: g for i, g in above.items() if not i.startswith("linear-")}
    n_other = len([i for i in optimum if not i.startswith("linear-")])
    checks.append(Check(paper, EXPERIMENT, "T3 on diamond and star is near, and at some sizes above, the optimum",
                        rep.source, rep.value, _above_text(others, n_other) if n_other else "not_run",
                        "not_run" if not n_other else ("agree" if others else "disagree"),
                        "" if others or not n_other else "ours reaches the optimum on every diamond and star instance: "
                        "our tie-breaks and instance traffic differ from [T3]'s, which it does not publish",
                        tolerance="sign only (the paper gives no number)"))
    rep = T3["microbench/cplex-seconds"]
    seconds = {_instance(r): r["seconds"] for r in recs if r["scheduler"] == "optimal"}
    for inst, value in rep.value.items():
        checks.append(Check(paper, EXPERIMENT, f"optimal solver time, {inst}", rep.source, f"{value:,} s",
                            f"{seconds[inst]:.2f} s" if inst in seconds else "not_run",
                            "not_comparable" if inst in seconds else "not_run",
                            "not comparable: CPLEX on the task-level MILP, 64 cores; ours is CP-SAT on interchangeable "
                            "task classes (docs/schedulers.md#optimal), 2 cores", tolerance="-"))
    return checks


CHECKS = {"ischeduler": ischeduler_checks, "t3": t3_checks}
FIGURES = {"ischeduler": ("[I] Fig. 4-6", "[I] Fig. 7-9"), "t3": ("[T3] Fig. 5", "[T3] Fig. 6")}


def sections(paper: str, recs: list[dict], out_dir) -> list[Section]:
    cost_fig, time_fig = FIGURES[paper]
    cost = report.write_png(plot_lines(recs, "n_tasks", "inter_node_cost", facet=("layout", "cluster"),
                                       title=f"{cost_fig}: inter-node cost against task count"),
                            out_dir / f"{paper}_microbench_cost.png")
    seconds = report.write_png(plot_lines(recs, "n_tasks", "seconds", facet=("layout", "cluster"), log=True,
                                          title=f"{time_fig}: resolution time against task count"),
                               out_dir / f"{paper}_microbench_time.png")
    table = pivot_table(recs, "inter_node_cost", rows=("layout", "cluster", "n_tasks"),
                        title="inter-node cost (tuples/s) per instance")
    return [Section(f"{cost_fig} and {time_fig}: micro-benchmarks against the optimum",
                    how_to_read="Lower is better; the optimal line is the exact minimum of [I] Eq. 1-5 "
                                "(our CP-SAT solver instead of the papers' CPLEX). Time axis is logarithmic.",
                    figures=[cost, seconds], tables=[table])]

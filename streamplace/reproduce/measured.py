"""[I]/[T3] Sec. 6 statements scored against what the Storm testbed measured (``reproduce --testbed``).

Input: the runs of a testbed campaign (``runs.jsonl`` of :mod:`streamplace.campaign.testbed`,
written by ``benchmarks/storm_testbed.py``). For every published comparison whose experiment was
measured (I-Scheduler or T3 against R-Storm and OLS, per micro-benchmark layout and configuration
and per application and cluster), the measured gain is the ratio of the two schedulers' mean
bolt throughput (tuples executed per second by non-source tasks, the papers' measure), scored with the same verdict rules and tolerances as the model's figures
(:mod:`.testbed`). Each statement is scored per operating point of the runs (``operating_point``
of the records), and only at points of the regime the paper ran the experiment in
(:data:`PAPER_REGIME`: I/O-intensive and applications latency-bound, with acking and max spout
pending; CPU-intensive saturated; :func:`regime`); the claim names its point, and a statement
measured only in another regime (``at-rate`` included) is not run, saying so. Each statement's ``why`` carries the measured means,
spread and run counts.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..fit.runs import relabel
from ..workloads import runtime
from ..report.display import format_pct
from .core import Check, pct, ratio
from .testbed import ABOVE, NAMES, TABLES, _spec_text, _verdict, display_name

READING = "measured on the Storm testbed: mean bolt tuples executed/s over runs"

#: how the papers ran each experiment ([I] and [T3] Sec. 6): the I/O-intensive micro-benchmarks
#: and the applications latency-bound ("processing time limited by the network latency", [I]
#: 6.1; Storm 1.x with acking and max spout pending), the CPU-intensive ones saturated
PAPER_REGIME = {"micro-io": "latency-bound", "micro-cpu": "saturated"}
APPLICATION_REGIME = "latency-bound"


def regime(record: dict) -> str:
    """``latency-bound`` for a run with acking and max spout pending (the round trip bounds the
    rate, as in the papers' Storm 1.x runs); ``at-rate`` for sources at a fixed rate without
    that bound (every placement emits what it asks: equal throughputs say nothing of the
    placements, whose difference is latency: ``benchmarks/fixed_rate_latency.py``);
    ``saturated`` otherwise (and for records from before operating points were recorded: every
    one of them ran saturated, without ackers)."""
    point = record.get("operating_point") or {}
    if point.get("ackers", 0) and point.get("max_spout_pending"):
        return "latency-bound"
    return "at-rate" if point.get("source_rate") is not None else "saturated"


def point_name(record: dict) -> str:
    """The operating point a run names (``10ms-sleeps`` for records from before points were named)."""
    return (record.get("operating_point") or {}).get("name", "10ms-sleeps")
PAPERS = tuple(TABLES)  # the papers whose Sec. 6 ran on a Storm testbed: [I] and [T3]


RUN_KEYS = ("job", "experiment", "kind", "scheduler", "placement", "bolt_throughput")   # what every reader of a run needs


def load_runs(path) -> list[dict]:
    """Campaign records from ``runs.jsonl`` or a campaign directory holding it, runs of an older
    workload version named apart (:func:`streamplace.fit.runs.relabel`)."""
    from ..files import SpecError, read_json_lines
    p = Path(path)
    if p.is_dir():
        p = p / "runs.jsonl"
    if not p.is_file():
        raise SpecError(p, "", "no testbed runs here (expected runs.jsonl of benchmarks/storm_testbed.py)")
    records = []
    for number, record in read_json_lines(p, what="campaign file (JSON lines)"):
        if not isinstance(record, dict):
            raise SpecError(p, f"line {number}", "not a JSON object")
        if missing := [key for key in RUN_KEYS if key not in record]:
            raise SpecError(p, f"line {number}: {missing[0]}", "missing: not a run of benchmarks/storm_testbed.py")
        records.append(record)
    return relabel(records)


def load_campaigns(paths, *, mixed_operating_points: bool = False) -> list[dict]:
    """The records of one or more campaigns (:func:`load_runs` each), in order. A record given
    twice (the same job finishing at the same time with the same throughput: the same file or
    campaign named twice) is refused, as it would count one run twice; so is a run of an
    experiment and scheduler whose placement, testbed version (``testbed_version``, 1 where
    absent) or Storm settings (``storm_conf``) differ from an earlier run's, as pooling them would
    average two placements, or two operating points, into one. ``mixed_operating_points`` lets one
    cell's runs differ in version and Storm settings (for comparing them, not pooling them)."""
    from ..model.specs import SpecError
    runs, seen, placed = [], {}, {}
    for path in paths:
        for r in load_runs(path):
            key = (r.get("job"), r.get("finished_s"), r.get("bolt_throughput"))
            if key in seen:
                raise SpecError(path, "", f"run {r.get('job')} is also in {seen[key]}: a campaign given twice")
            seen[key] = path
            cell = (r.get("experiment"), r.get("scheduler"))
            version, conf = r.get("testbed_version", 1), r.get("storm_conf")
            placement0, version0, conf0, path0 = placed.setdefault(cell, (r.get("placement"), version, conf, path))
            if r.get("placement") != placement0:
                raise SpecError(path, "placement", f"run {r.get('job')} of {cell[0]} / {cell[1]} ran another placement "
                                f"than the runs of it in {path0}: runs of one cell must share their placement")
            if version != version0 and not mixed_operating_points:
                raise SpecError(path, "testbed_version", f"run {r.get('job')} of {cell[0]} / {cell[1]} ran on testbed "
                                f"version {version}, the runs of it in {path0} on version {version0}: runs of one "
                                "cell must share the testbed's operating point (campaign.TESTBED_VERSION)")
            if conf != conf0 and not mixed_operating_points:
                a, b = conf or {}, conf0 or {}
                changed = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
                raise SpecError(path, "storm_conf", f"run {r.get('job')} of {cell[0]} / {cell[1]} ran with other Storm "
                                f"settings than the runs of it in {path0} ({', '.join(changed)}): runs of one cell "
                                "must share the testbed's operating point")
            runs.append(r)
    return runs


def _figure(st: dict | None) -> str:
    if st is None:
        return "not measured"
    spread = f" +- {st['sd']:,.0f}" if st["n"] > 1 else ""
    return f"{st['mean']:,.0f}{spread} bolt tuples/s (n={st['n']})"


def _check(paper: str, exp_kind: str, claim: str, rep, value, stats: dict, experiment: str, base: str) -> Check:
    mine, theirs = stats.get((experiment, paper)), stats.get((experiment, base))
    gain = None
    if mine is not None and theirs is not None:
        r = ratio(mine["mean"], theirs["mean"])
        gain = pct(r) if r is not None else None
    why = f"{NAMES[paper]} {_figure(mine)}, {display_name(base)} {_figure(theirs)}"
    verdict = _verdict(gain, value)
    return Check(paper, exp_kind, claim, rep.source, _spec_text(value), format_pct(gain), verdict,
                 why if verdict != "not_run" else "", reading=READING)


def checks(paper: str, runs: list[dict]) -> list[Check]:
    """The paper's Sec. 6 statements whose experiments the runs cover, each scored on the runs
    made at an operating point of the regime the paper ran it in (:data:`PAPER_REGIME`), once per
    such point, the claim naming it; a statement whose experiment ran only in the other regime is
    reported not run, saying so."""
    out = []
    by_point: dict[str, list[dict]] = {}
    for r in runs:
        by_point.setdefault(point_name(r), []).append(r)
    for name, point_runs in sorted(by_point.items()):
        mode = regime(point_runs[0])
        for check, kind in _point_checks(paper, point_runs):
            wanted = PAPER_REGIME.get(kind, APPLICATION_REGIME)
            if wanted != mode:
                check = Check(check.paper, check.experiment, check.claim + f" [at {name}]", check.source, check.reported, "-",
                              "not_run", f"the paper ran it {wanted}; {name} is {mode}", reading=READING)
            else:
                check = dataclasses.replace(check, claim=check.claim + f" [at {name}]",
                                            why=f"at {name} ({mode}, as the paper): {check.why}" if check.why else "")
            out.append(check)
    return out


def _point_checks(paper: str, runs: list[dict]) -> list[tuple[Check, str]]:
    """(statement, its experiment kind) for the runs of one operating point."""
    from ..campaign.testbed import cell_stats
    table = TABLES[paper]
    stats = cell_stats(runs)
    measured = {r["experiment"] for r in runs}
    out = []
    for mode, kind in (("io", "micro-io"), ("cpu", "micro-cpu")):
        for layout in runtime.LAYOUTS:
            experiment = f"{layout}-{mode}@{runtime.MODE_CLUSTER[mode]}"
            if experiment not in measured:
                continue
            for base in ("rstorm", "online"):
                rep = table[f"{kind}/vs-{base}"]
                value = rep.value[layout] if isinstance(rep.value, dict) else rep.value
                out.append((_check(paper, kind, f"{NAMES[paper]} vs {NAMES[base]}, {layout} ({mode.upper()}-intensive)",
                                   rep, value, stats, experiment, base), kind))
    for app, (hom, het) in runtime.APPLICATIONS.items():
        for cluster, rep in ((hom, table[f"{app}/homogeneous"]), (het, table[f"{app}/heterogeneous"])):
            experiment = f"{app}@{cluster}"
            if experiment not in measured:
                continue
            if isinstance(rep.value, dict):
                claims = [(b, "vs", round(pct(rep.value[paper] / v), 1)) for b, v in rep.value.items() if b != paper]
            else:
                claims = [(b, "above", ABOVE) for b in rep.value]
            for base, verb, value in claims:
                out.append((_check(paper, app, f"{NAMES[paper]} {verb} {display_name(base)}, {app} on {cluster}",
                                   rep, value, stats, experiment, base), app))
    return out

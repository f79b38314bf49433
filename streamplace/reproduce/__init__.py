"""``streamplace reproduce``: the five papers' comparisons rebuilt from our implementations.

One module per experiment family: :mod:`.microbench` ([I]/[T3] Sec. 5), :mod:`.testbed`
([I]/[T3] Sec. 6), :mod:`.metis` ([F]), :mod:`.lf` ([LF]) and :mod:`.throughput` ([N]); the
papers' own numbers live in :mod:`.reported`, one table per paper. :func:`reproduce` runs the
chosen papers and writes to the output directory:

* ``results.json`` / ``results.csv``: one record per (paper, experiment, workload, cluster,
  scheduler) with the metric keys of :func:`~streamplace.evaluate.records.result_record`
  (placements in the JSON) plus each experiment's own keys;
* PNG figures and ``report.html`` (via :mod:`streamplace.report.render`);
* ``summary.md``: per paper, every published statement beside our number with a verdict
  (:mod:`.core`), where and why we differ, and the paper's values with their sources;
* ``statements.json``: the same statements machine-readably, one object per statement with
  ``paper``, ``claim``, ``source``, ``published``, ``ours``, ``verdict``, ``tolerance``,
  ``reading`` and ``why`` (:meth:`~.core.Check.statement`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..files import quote
from ..evaluate.records import records_to_csv
from ..model.specs import atomic_write_text
from ..report.render import Section, html_report, summary_table
from . import lf, measured, metis, microbench, testbed, throughput
from .core import VERDICTS, Check, PaperResult, Run, tally, verdict_text
from .reported import TABLES, Reported
from .summary import BEFORE_ISSUE_17, LEGEND, counts_text, markdown, now_counts

PAPER_TITLES = {
    "ischeduler": "[I] I-Scheduler (Eskandari et al., FGCS 2020)",
    "t3": "[T3] T3-Scheduler (Eskandari et al., FGCS 2018)",
    "metis": "[F] METIS scheduler (Fischer & Bernstein, IEEE BigData 2015)",
    "lf": "[LF] L/F job scheduler (Son & Moon, Electronics 2020)",
    "throughput": "[N] Heterogeneity-aware throughput scheduler (Nasiri et al.)",
}
PAPERS = tuple(PAPER_TITLES)


@dataclass(frozen=True)
class Paper:
    alt_label: str  # what a check's second reading is ("" if none)
    run: Callable[[Run, Path], PaperResult]


def _eskandari(key: str) -> Callable[[Run, Path], PaperResult]:
    """[I] or [T3]: Sec. 5 micro-benchmarks against the optimum, Sec. 6 testbed."""
    def run(r: Run, out: Path) -> PaperResult:
        micro, bed = microbench.records(r, key), testbed.records(r, key)
        bed_checks = testbed.checks(key, bed)
        return PaperResult(key, PAPER_TITLES[key], micro + bed, microbench.CHECKS[key](micro) + bed_checks,
                           microbench.sections(key, micro, out) + testbed.sections(key, bed, out),
                           testbed.NOTES + testbed.explain(key, bed, bed_checks))
    return run


def _single(key: str, module, explain=None) -> Callable[[Run, Path], PaperResult]:
    """A paper whose comparison is one module's ``records``/``checks``/``sections``."""
    def run(r: Run, out: Path) -> PaperResult:
        recs = module.records(r)
        return PaperResult(key, PAPER_TITLES[key], recs, module.checks(recs), module.sections(recs, out),
                           list(module.NOTES) + (explain(recs) if explain else []))
    return run


REGISTRY = {
    "ischeduler": Paper("second reading", _eskandari("ischeduler")),
    "t3": Paper("second reading", _eskandari("t3")),
    "metis": Paper("without acking", _single("metis", metis, metis.explain)),
    "lf": Paper("", _single("lf", lf)),
    "throughput": Paper("", _single("throughput", throughput)),
}


def _plain(value):
    """JSON fallback for NumPy scalars and arrays in details."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def checks_table(checks: list[Check], alt_label: str, *, title: str):
    rows = [{"claim": c.claim, "source": c.source, "paper": c.reported, "ours": c.ours, "verdict": c.verdict,
             "tolerance": c.tolerance, **({alt_label: f"{c.alt} ({c.alt_verdict})" if c.alt else "-"} if alt_label else {}),
             "why": c.why or "-"} for c in checks]
    columns = ("claim", "source", "paper", "ours", "verdict", "tolerance", *((alt_label,) if alt_label else ()), "why")
    return summary_table(rows, columns, title=title)


def overview_table(results: list[PaperResult]):
    """One row per paper: how many statements got each verdict."""
    rows = [{"paper": res.paper, "statements": len(res.checks), **{v: tally(res.checks).get(v, 0) for v in VERDICTS},
             "before -> after #17": f"{counts_text(BEFORE_ISSUE_17[res.paper])} -> {counts_text(now_counts(res))}",
             "run s": round(res.seconds, 1)} for res in results]
    return summary_table(rows, ("paper", "statements", *VERDICTS, "before -> after #17", "run s"),
                         title="paper statements beside ours (a/d/x/nc = agree/direction/disagree/not_comparable)")


def reported_table(table: dict[str, Reported], *, title: str):
    rows = [{"key": r.key, "what": r.what, "value": r.text, "source": r.source} for r in table.values()]
    return summary_table(rows, ("key", "what", "value", "source"), title=title)


def reproduce(papers, out_dir: Path, *, quick: bool = False, time_limit: float = 10.0,
              console: Console | None = None, model=None, testbed_runs: list[dict] | None = None) -> list[PaperResult]:
    """Run ``papers`` (names of :data:`PAPERS`), write every output file to ``out_dir``; ``model``
    (a :class:`~streamplace.model.performance.CostModel`) replaces the default cost model;
    ``testbed_runs`` (a testbed campaign's records) adds the [I]/[T3] Sec. 6 statements scored
    against the measured throughput (``statements-testbed.json`` and a report section)."""
    unknown = [p for p in papers if p not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown paper {quote(unknown[0])} (expected one of {', '.join(PAPERS)})")
    console = console or Console(stderr=True)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    results = []
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        run = Run(quick=quick, time_limit=time_limit, progress=progress, model=model)
        for key in papers:
            t0 = time.perf_counter()
            res = REGISTRY[key].run(run, out_dir)
            res.seconds = time.perf_counter() - t0
            results.append(res)
    wall = time.perf_counter() - start
    records = [rec for res in results for rec in res.records]
    atomic_write_text(out_dir / "results.json", json.dumps(records, indent=1, default=_plain) + "\n")
    atomic_write_text(out_dir / "results.csv", records_to_csv(records))
    statements = [c.statement(REGISTRY[res.paper].alt_label) for res in results for c in res.checks]
    atomic_write_text(out_dir / "statements.json", json.dumps(statements, indent=1) + "\n")
    generated = datetime.now(timezone.utc)
    atomic_write_text(out_dir / "summary.md", markdown(results, REGISTRY, wall=wall, quick=quick, generated=generated))
    sections = []
    measured_checks: list[Check] = []
    for res in results:
        paper = REGISTRY[res.paper]
        verdicts = verdict_text(res.checks)
        sections.append(Section(f"{res.title}: paper vs ours", text="\n\n".join([f"Verdicts: {verdicts}.", *res.notes]),
                                tables=[checks_table(res.checks, paper.alt_label, title="published statements beside ours"),
                                        reported_table(TABLES[res.paper], title="values the paper reports")]))
        sections += res.sections
        if testbed_runs is not None and res.paper in measured.PAPERS:
            mine = measured.checks(res.paper, testbed_runs)
            measured_checks += mine
            sections.append(Section(f"{res.title}: measured on the Storm testbed",
                                    text=f"Verdicts: {verdict_text(mine)}. {measured.READING}; {len(testbed_runs)} runs.",
                                    tables=[checks_table(mine, "", title="published statements beside the testbed's")]))
    if testbed_runs is not None:
        atomic_write_text(out_dir / "statements-testbed.json",
                          json.dumps([c.statement("") for c in measured_checks], indent=1) + "\n")
    html_report("streamplace reproduce: the papers' comparisons", sections, out_path=out_dir / "report.html",
                intro=f"{len(records)} results from {len(results)} paper(s) in {wall:.0f} s"
                      f"{' (quick sizes)' if quick else ''}.\n\n{LEGEND.replace('**', '')}", generated=generated)
    console.print(overview_table(results).rich())
    console.print(f"wrote {out_dir / 'summary.md'}, statements.json, report.html, results.csv/json ({len(records)} records) in {wall:.0f} s")
    return results

"""``summary.md``: the generated text of ``reproduce`` (the paper values come from :mod:`.reported`,
everything else from the run)."""

from __future__ import annotations

from datetime import datetime

from .core import NEEDS_WHY, VERDICTS, PaperResult, tally, verdict_text
from .reported import TABLES

LEGEND = ("Each row sets one statement of a paper beside our figure. **agree**: same direction and within the "
          "row's tolerance (the paper's own run-to-run spread where it reports one, [F] Table I; else 10 percentage "
          "points; exact quantities such as an optimum: equal); "
          "**direction**: the same winner, a different size; **disagree**: the other winner or a different exact "
          "value; **not_comparable**: the paper lacks a quantity or ran something we cannot (the reason is on the "
          "row); **not_run**: not computed in this run (e.g. `--quick`). `statements.json` holds every row.")

# Verdict counts (agree, direction, disagree, not_comparable) of the full-size run before issue 17
# ("Reproduction fidelity"), as the issue states them; the overview sets this run's counts beside them.
BEFORE_ISSUE_17 = {"ischeduler": (7, 2, 20, 0), "t3": (7, 1, 18, 5), "metis": (5, 4, 9, 0), "lf": (20, 0, 0, 0),
                   "throughput": (2, 3, 25, 0)}


def counts_text(counts) -> str:
    """``"7/2/20/0"``: agree/direction/disagree/not_comparable."""
    return "/".join(map(str, counts))


def now_counts(res: PaperResult) -> tuple[int, ...]:
    t = tally(res.checks)
    return tuple(t.get(v, 0) for v in VERDICTS[:4])


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(headers: list[str], rows: list[list]) -> list[str]:
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)] + \
           ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def _paper(res: PaperResult, alt_label: str) -> list[str]:
    lines = [f"## {res.title}", "", f"{len(res.records)} results in {res.seconds:.0f} s. Verdicts: {verdict_text(res.checks)}."]
    if alt_label and any(c.alt for c in res.checks):
        lines[-1] += f" Second reading ({alt_label}): {verdict_text(res.checks, 'alt_verdict')}."
    lines += ["", *(f"- {note}" for note in res.notes), "", "### Statements beside ours", ""]
    headers = ["claim", "source", "paper", "ours", "verdict", "tolerance"] + ([alt_label] if alt_label else [])
    rows = [[c.claim, c.source, c.reported, c.ours, c.verdict, c.tolerance] +
            ([f"{c.alt} ({c.alt_verdict})" if c.alt else "-"] if alt_label else []) for c in res.checks]
    lines += _table(headers, rows)
    differ = [c for c in res.checks if c.verdict in NEEDS_WHY]
    lines += ["", "### Where we differ, and what is not comparable", ""]
    lines += [f"- **{c.claim}** ({c.source}): paper {c.reported}, ours {c.ours} ({c.verdict})." + (f" {c.why}" if c.why else "")
              for c in differ] or ["- nowhere."]
    lines += ["", "### Values the paper reports (the only hard-coded numbers, `reported.py`)", ""]
    lines += _table(["key", "what", "value", "source"],
                    [[r.key, r.what, r.text, r.source]
                     for r in TABLES[res.paper].values()])
    return lines + [""]


def markdown(results: list[PaperResult], registry, *, wall: float, quick: bool, generated: datetime) -> str:
    lines = ["# streamplace reproduce: the papers' comparisons, rebuilt", "",
             f"Generated {generated:%Y-%m-%d %H:%M} UTC; papers: {', '.join(r.paper for r in results)}; "
             f"{'quick sizes' if quick else 'full sizes'}; wall time {wall:.0f} s.", "", LEGEND, "", "## Overview", ""]
    lines += _table(["paper", "statements", *VERDICTS, "before -> after issue 17 (a/d/x/nc)", "second reading", "seconds"],
                    [[r.title, len(r.checks), *(tally(r.checks).get(v, 0) for v in VERDICTS),
                      f"{counts_text(BEFORE_ISSUE_17[r.paper])} -> {counts_text(now_counts(r))}",
                      f"{registry[r.paper].alt_label}: {verdict_text(r.checks, 'alt_verdict')}"
                      if tally(r.checks, "alt_verdict") else "-", f"{r.seconds:.0f}"] for r in results])
    lines.append("")
    for res in results:
        lines += _paper(res, registry[res.paper].alt_label)
    return "\n".join(lines)

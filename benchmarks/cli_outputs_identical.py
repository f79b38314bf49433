"""The `streamplace` command gives the same outputs as a saved earlier run (behaviour preserved).

    python benchmarks/cli_outputs_identical.py capture DIR   # run the commands, save every output in DIR
    python benchmarks/cli_outputs_identical.py compare DIR   # run them again, compare with DIR; exit 1 on a difference

Each command of :data:`COMMANDS` runs as ``python -m streamplace ...`` (this tree's package: the
repository root goes first on PYTHONPATH) in one scratch directory, in order, with relative paths
and a fixed terminal width, so that the inputs, the messages and the files written are the same
from one run to the next. Saved per command: the exit code, stdout, stderr and every file it wrote.
Compared byte for byte apart from timings: in JSON the values of :data:`TIMING_KEYS` and the times of
lns' ``history``, in CSV the ``seconds`` column, in tables the row of ``seconds`` and, in compare's
table the column under ``solve time``. The commands skip Spark and Storm
(profile, traffic, demo, storm run), whose outputs carry timings and take minutes.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMING_KEYS = {"seconds", "wall_s", "solver_seconds"}
TIMED_SERIES = {"history"}   # lns: [seconds since start, cost] per improvement: the seconds are masked
SCHEDULERS = ("even", "lf", "rstorm", "online", "t3", "metis", "ischeduler", "optimal", "lns", "throughput")
S = "diamond30.yaml", "het.yaml"   # the problem most commands use

COMMANDS: list[list[str]] = [
    ["--help"], ["--version"],
    ["workload", "microbench", "--layout", "diamond", "--tasks", "30", "-o", "diamond30.yaml"],
    ["workload", "microbench", "--layout", "star", "--tasks", "12", "-o", "star12.json"],
    ["workload", "cluster", "--preset", "heterogeneous", "-o", "het.yaml"],
    ["workload", "cluster", "--preset", "homogeneous", "-o", "hom.yaml"],
    ["workload", "cluster", "--preset", "nasiri-small", "-o", "nasiri-small.yaml"],
    ["workload", "cluster", "--generator", "testbed", "high=2", "low=4", "-o", "tb.yaml"],
    ["workload", "cluster", "--generator", "sized", "kind=heterogeneous", "--topology", "diamond30.yaml", "-o", "sized.yaml"],
    ["workload", "topology", "runtime", "layout=diamond", "mode=io", "-o", "runtime.yaml"],
    ["workload", "topology", "lf", "config=star", "high=true", "-o", "lfstar.yaml"],
    ["workload", "topology", "lf", "config=star", "high=maybe", "-o", "bad.yaml"],
    ["workload", "topology", "microbench", "layout=diamond", "-o", "bad.yaml"],
    ["workload", "lf", "--config", "ascent", "-o", "lfascent.yaml"],
    ["workload", "nasiri", "--layout", "diamond", "-o", "nasiri.yaml", "--profiling-out", "nasiri-prof.yaml",
     "--preset", "nasiri-small"],
    ["workload", "list"],
    *[["schedule", *S, "-s", name, "--seed", "1", "--time-limit", "5", "--format", "json", "-o", f"sched-{name}.json"]
      for name in SCHEDULERS],
    ["schedule", *S, "-s", "metis", "--format", "table"],
    ["schedule", *S, "-s", "metis", "-p", "repair=false", "-p", "objective=cut", "--format", "json"],
    ["schedule", *S, "-s", "even", "-p", "workers=lots"],
    ["schedule", *S, "-s", "even", "-p", "nokey"],
    ["schedule", *S, "-s", "magic"],
    ["schedule", *S, "-s", "even", "-o", "diamond30.yaml"],
    ["schedule", "nasiri.yaml", "nasiri-small.yaml", "-s", "throughput", "--profiling", "nasiri-prof.yaml", "--format", "json"],
    ["evaluate", *S, "sched-even.json", "--format", "json"],
    ["evaluate", *S, "sched-metis.json"],
    ["compare", *S, "--schedulers", "even,metis,lf,optimal", "--time-limit", "5", "--format", "json"],
    ["compare", *S, "--schedulers", "metis,lf", "--format", "json"],
    ["compare", *S, "--schedulers", "metis,lf,optimal", "--time-limit", "5", "--objective", "traffic", "--format", "csv"],
    ["compare", *S, "--schedulers", "even,metis", "-p", "metis.repair=false", "--format", "csv", "-o", "compare.csv"],
    ["compare", *S, "--schedulers", "even,metis", "-p", "lf.x=1"],
    ["compare", *S, "--schedulers", "even,metis", "-o", "compare.txt"],
    ["diff", "sched-even.json", "sched-metis.json"],
    ["diff", "sched-even.json", "sched-metis.json", "--format", "json"],
    ["diff", "sched-even.json", "sched-optimal.json", "--topology", S[0], "--cluster", S[1], "--format", "json"],
    ["diff", "sched-even.json", "sched-metis.json", "--topology", S[0]],
    ["reschedule", S[0], "hom.yaml", "--current", "sched-metis.json", "-s", "metis", "--format", "json", "-o", "resched.json"],
    ["reschedule", S[0], "hom.yaml", "--current", "sched-metis.json", "--max-moves", "3", "--time-limit", "2",
     "--format", "json"],
    ["reschedule", S[0], "hom.yaml", "--current", "sched-metis.json", "-s", "even"],
    ["export", "sched-metis.json", "--to", "heron", "-o", "heron.json"],
    ["export", "sched-metis.json", "--to", "heron", "--topology", S[0], "--cluster", S[1], "-o", "heron-checked.json"],
    ["export", "sched-metis.json", "--to", "flink", "-o", "flink.json"],
    ["export", "sched-metis.json", "--to", "storm-plan", "--topology", S[0], "--cluster", S[1], "-o", "plans"],
    ["export", "sched-metis.json", "--to", "storm-plan", "-o", "plans2"],
    ["export", "sched-metis.json", "--to", "flink", "-o", "sched-metis.json"],
    ["storm", "plan-dir", *S, "sched-even.json", "-o", "plandir"],
]
HELP_COMMANDS = ["schedule", "evaluate", "compare", "diff", "reschedule", "export", "profile", "traffic", "demo",
                 "reproduce", "sweep", "workload", "workload microbench", "workload lf", "workload nasiri",
                 "workload cluster", "workload topology", "workload list", "workload app", "storm", "storm run",
                 "storm plan-dir", "import", "import storm-ui"]
COMMANDS += [[*c.split(), "--help"] for c in HELP_COMMANDS]


def run_all(work: Path) -> dict[str, dict]:
    """Every command run in ``work``: name -> exit code, stdout, stderr, files written (path -> text)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "COLUMNS": "100",
           "TERM": "dumb", "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    outputs = {}
    for i, args in enumerate(COMMANDS):
        before = _files(work)
        proc = subprocess.run([sys.executable, "-m", "streamplace", *args], cwd=work, env=env, capture_output=True,
                              text=True, check=False)
        after = _files(work)
        written = {p: text for p, text in after.items() if before.get(p) != text}
        outputs[f"{i:03d} {' '.join(args)}"] = {"code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                                                 "files": written}
    return outputs


def _files(work: Path) -> dict[str, str]:
    return {str(p.relative_to(work)): p.read_text(errors="replace") for p in sorted(work.rglob("*")) if p.is_file()}


def _untimed_json(value):
    if isinstance(value, dict):
        return {k: ("<timing>" if k in TIMING_KEYS else
                    [["<timing>", *p[1:]] for p in v] if k in TIMED_SERIES and isinstance(v, list) else _untimed_json(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_untimed_json(v) for v in value]
    return value


def normalise(text: str) -> str:
    """``text`` with its timings masked (JSON documents, CSV tables, table rows)."""
    try:
        return json.dumps(_untimed_json(json.loads(text)), indent=2)
    except ValueError:
        pass
    lines = text.splitlines()
    header = lines[0].split(",") if lines else []
    if "seconds" in header and len(lines) > 1:   # a CSV of records
        col = header.index("seconds")
        import csv, io
        rows = list(csv.reader(io.StringIO(text)))
        return "\n".join(",".join("<timing>" if j == col else cell for j, cell in enumerate(row)) for row in rows)
    # a table: the value on a row naming seconds, and the seconds column of compare's table
    lines = [re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "<n>", line) if re.search(r"\bseconds\b|\bs\)", line) else line
             for line in lines]
    header = next((line for line in lines[:6] if "solve time" in line), None)
    if header is not None:   # compare's table: blank its seconds column (right-aligned under "solve time")
        start, end = header.index("solve time"), header.index("solve time") + len("solve time")
        lines = [line[:start] + "<timing>".rjust(end - start) + line[end:] if line is not header and len(line) >= end
                 else line for line in lines]
    return "\n".join(lines)


def compare(saved: dict, now: dict) -> list[str]:
    problems = []
    for name in saved.keys() | now.keys():
        if name not in saved or name not in now:
            problems.append(f"{name}: only in {'the new run' if name in now else 'the saved run'}")
            continue
        old, new = saved[name], now[name]
        if old["code"] != new["code"]:
            problems.append(f"{name}: exit code {old['code']} -> {new['code']}")
        for stream in ("stdout", "stderr"):
            a, b = normalise(old[stream]), normalise(new[stream])
            if a != b:
                problems.append(f"{name}: {stream} differs:\n" + "\n".join(
                    difflib.unified_diff(a.splitlines(), b.splitlines(), "saved", "now", lineterm="", n=1)))
        if old["files"].keys() != new["files"].keys():
            problems.append(f"{name}: files written {sorted(old['files'])} -> {sorted(new['files'])}")
        for path in old["files"].keys() & new["files"].keys():
            a, b = normalise(old["files"][path]), normalise(new["files"][path])
            if a != b:
                problems.append(f"{name}: {path} differs:\n" + "\n".join(
                    difflib.unified_diff(a.splitlines(), b.splitlines(), "saved", "now", lineterm="", n=1)))
    return sorted(problems)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("capture", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    verb, directory = argv[0], Path(argv[1])
    work = Path(tempfile.mkdtemp(prefix="cli-outputs-"))
    try:
        outputs = run_all(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if verb == "capture":
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "outputs.json").write_text(json.dumps(outputs, indent=1, sort_keys=True))
        print(f"{len(outputs)} commands saved in {directory / 'outputs.json'}")
        return 0
    saved = json.loads((directory / "outputs.json").read_text())
    problems = compare(saved, outputs)
    for line in problems:
        print(line)
    print(f"{len(outputs)} commands, {len(problems)} difference(s) from {directory / 'outputs.json'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

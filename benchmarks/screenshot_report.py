"""Build the standard HTML report and screenshot it in headless Chromium (a visual check).

Records come from RESULTS (a ``results.json`` of ``streamplace demo`` or ``compare --format
json``; compare output lacks ``workload``/``cluster``: ``--workload``/``--cluster`` or the file
name stand in) or, without
it, from running the registered schedulers on the uniform micro-benchmarks of [I]/[T3] Sec. 5
(``--sizes``) on both paper clusters. The page is loaded from disk with networking off; the
script fails (exit 1) when Chromium logs a console error or an uncaught exception, when the
dumped DOM lacks the report's sections or images, or when the screenshot is not a PNG. The
screenshot is full-page: the window is made taller than the page (estimated from the embedded
images and tables) and the blank bottom is cropped.

Needs Chromium: ``apt-get install -y chromium`` (Debian; /usr/bin/chromium), or set CHROMIUM.

    python benchmarks/screenshot_report.py [RESULTS [--workload W --cluster C]] [--out DIR]
                                           [--sizes 10,20] [--time-limit 5]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from streamplace.report.page import write_report
from streamplace.evaluate.records import result_record
from streamplace.schedulers import available, make_scheduler
from streamplace.workloads import microbench

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--enable-logging=stderr", "--v=0")
# The page has no scripts, so any console line (Chromium logs console.error and uncaught
# exceptions as INFO:CONSOLE) is a problem, as is any failed load.
ERROR_PATTERNS = re.compile(r":CONSOLE|Uncaught|Failed to load|net::ERR_")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def micro_records(sizes: list[int], time_limit: float) -> list[dict]:
    records = []
    schedulers = [make_scheduler(n, time_limit=time_limit) for n in available()]
    for inst in microbench.instances(sizes=sizes):
        for sched in schedulers:
            record = result_record(sched.schedule(inst.problem), include_placement=False)
            records.append({"workload": f"{inst.layout}-{inst.n_tasks}", "layout": inst.layout, "n_tasks": inst.n_tasks,
                            "cluster": inst.cluster, **record})
    return records


def load_records(path: Path, workload: str | None, cluster: str) -> list[dict]:
    """Records of a results file; ``workload``/``cluster`` fill in where they are missing."""
    records = json.loads(path.read_text())
    if isinstance(records, dict):
        records = [records]
    return [{"workload": workload or path.stem, "cluster": cluster, **rec} for rec in records]


def chromium() -> str:
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        sys.exit("screenshot_report: Chromium not found: apt-get install -y chromium (or set CHROMIUM=/path)")
    return exe


def run_chromium(exe: str, extra: list[str], url: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, url],
                              capture_output=True, text=True, timeout=120)


def estimated_height(page: str) -> int:
    """Page height in CSS px, generously: embedded PNGs (IHDR sizes) at most 1376 px wide, table rows, sections."""
    height = 400 + 220 * page.count("<section ") + 30 * page.count("<tr")
    for b64 in re.findall(r"data:image/png;base64,([A-Za-z0-9+/]{32})", page):
        width, tall = struct.unpack(">II", base64.b64decode(b64)[16:24])
        height += 40 + tall * min(1.0, 1376 / width)
    return int(height)


def full_page_screenshot(exe: str, url: str, screenshot: Path, height: int) -> subprocess.CompletedProcess:
    """Screenshot a window taller than the page, then crop the blank bottom (retry taller if the
    page reached the bottom edge)."""
    for _ in range(3):
        proc = run_chromium(exe, [f"--screenshot={screenshot}", f"--window-size=1400,{height}"], url)
        if proc.returncode != 0 or not screenshot.exists():
            return proc
        with Image.open(screenshot) as im:
            pixels = np.asarray(im.convert("L"))
        used = np.flatnonzero((pixels < 250).any(axis=1))
        bottom = int(used[-1]) + 1 if used.size else 0
        if bottom < height - 40:
            with Image.open(screenshot) as im:
                im.crop((0, 0, im.width, min(height, bottom + 32))).save(screenshot)
            return proc
        height = int(height * 1.5)
    return proc


def check_page(exe: str, html_path: Path, screenshot: Path, n_sections: int, n_images: int) -> list[str]:
    """Problems found: console errors, a DOM without the expected parts, a missing screenshot."""
    url = html_path.resolve().as_uri()
    problems = []
    dom = run_chromium(exe, ["--dump-dom", "--virtual-time-budget=5000"], url)
    shot = full_page_screenshot(exe, url, screenshot, estimated_height(html_path.read_text()))
    for name, proc in (("dump-dom", dom), ("screenshot", shot)):
        errors = [line for line in proc.stderr.splitlines() if ERROR_PATTERNS.search(line)]
        problems += [f"{name}: {line.strip()}" for line in errors]
        if proc.returncode != 0:
            problems.append(f"{name}: chromium exited with {proc.returncode}: {proc.stderr.strip()[-500:]}")
    sections = len(re.findall(r"<section\b", dom.stdout))
    images = len(re.findall(r'<img src="data:image/png;base64,', dom.stdout))
    if sections != n_sections or images != n_images:
        problems.append(f"dump-dom: {sections} sections and {images} embedded images, expected {n_sections} and {n_images}")
    if re.search(r'(src|href)="(https?:)?//', dom.stdout):
        problems.append("dump-dom: the page references an external resource")
    broken = [i for i, b64 in enumerate(re.findall(r'data:image/png;base64,([^"]*)"', dom.stdout))
              if base64.b64decode(b64)[:8] != PNG_MAGIC]
    if broken:
        problems.append(f"dump-dom: embedded images {broken} are not PNGs")
    if not screenshot.exists() or screenshot.read_bytes()[:8] != PNG_MAGIC:
        problems.append(f"screenshot: {screenshot} missing or not a PNG")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", type=Path, help="results.json (default: run the micro-benchmarks)")
    parser.add_argument("--workload", help="workload name for records without one (default: the file name)")
    parser.add_argument("--cluster", default="unknown", help="cluster name for records without one")
    parser.add_argument("--out", type=Path, default=Path("out/report-screenshot"))
    parser.add_argument("--sizes", default="10,20", help="micro-benchmark task counts (default 10,20)")
    parser.add_argument("--time-limit", type=float, default=5.0, help="seconds per optimal solve")
    args = parser.parse_args()
    exe = chromium()
    start = time.perf_counter()
    if args.results:
        records, source = load_records(args.results, args.workload, args.cluster), str(args.results)
    else:
        sizes = [int(s) for s in args.sizes.split(",")]
        records = micro_records(sizes, args.time_limit)
        source = f"micro-benchmarks with {', '.join(map(str, sizes))} tasks, schedulers {', '.join(available())}"
    built = time.perf_counter()
    html_path = write_report(records, args.out, title="streamplace: scheduler comparison",
                             intro=f"{len(records)} results from {source}.")
    page = html_path.read_text()
    n_sections, n_images = page.count("<section "), page.count('<img src="data:image/png;base64,')
    rendered = time.perf_counter()
    screenshot = args.out / "report.png"
    problems = check_page(exe, html_path, screenshot, n_sections, n_images)
    print(f"records: {len(records)} in {built - start:.1f} s; report: {html_path} ({len(page) / 1024:.0f} KiB, "
          f"{n_sections} sections, {n_images} images) in {rendered - built:.1f} s; "
          f"screenshot: {screenshot} in {time.perf_counter() - rendered:.1f} s")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

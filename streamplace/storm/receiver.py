"""The receiving end of the monitor's path through Storm's metrics: windows from every worker of a
cluster, gathered by ``org.streamplace.storm.RecordsConsumer`` and POSTed here, written as the
same ``traffic-*.jsonl``, ``load-*.jsonl`` and ``latency-*.jsonl`` files a monitor directory holds.

Why this path (docs/monitor.md): the hook's files sit on each supervisor's disk; Storm already moves
every task's metrics to one consumer over its own connections, so the windows need no shared
filesystem, no HDFS or S3 service, and no new port on the workers: only the consumer's one HTTP
connection to the host that runs :class:`RecordsReceiver` (the autopilot's, ``--receive``).

The protocol: ``POST /records``, a body of JSON Lines, one window of one worker per line:
``host``, ``worker`` (storm id, port, pid), ``window_start``, ``traffic``, ``load``, ``latency``
(each the kind's JSON Lines, as the hook would have written them to its files) and ``dropped`` (the
windows that worker has dropped so far); headers ``X-Streamplace-Dropped``: the windows the
consumer has dropped so far, and ``X-Streamplace-Consumer``: which consumer counted them (the
topology's id and its task; without it, the sender's address), so that two topologies' consumers
on one host are counted apart. A body is checked whole before anything is written (400 and nothing written
otherwise); a window already received (the consumer sends again what got no answer) is not written
twice; 204 when done. Drops reported by a worker or a consumer are noted, never hidden.
"""

from __future__ import annotations

import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from ..files import SpecError
from .errors import StormError
from .records import check_records

PATH = "/records"
KINDS = ("traffic", "load", "latency")
#: a request body larger than this is refused (413): far above a 1,000-task worker's window
MAX_BODY = 256 << 20
#: windows remembered per worker to recognise a window sent again (~11 hours of 10-s windows)
REMEMBERED = 4096
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class BadWindow(ValueError):
    """A line of a request that is not a window: its message names the line and the field."""


def _json_object(line: str, where: str) -> dict:
    """``line`` as a JSON object; :class:`BadWindow` saying ``where`` it is otherwise."""
    try:
        doc = json.loads(line)
    except ValueError as e:
        raise BadWindow(f"{where}not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise BadWindow(f"{where}not a JSON object")
    return doc


def parse_window(line: str, number: int) -> dict:
    """One line of a request as a window; :class:`BadWindow` naming the line and field otherwise."""
    doc = _json_object(line, f"line {number}: ")
    for key in ("host", "worker"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            raise BadWindow(f"line {number}: {key}: must be a non-empty string")
    start = doc.get("window_start")
    if isinstance(start, bool) or not isinstance(start, (int, float)):
        raise BadWindow(f"line {number}: window_start: must be a number")
    for kind in KINDS:
        text = doc.get(kind)
        if not isinstance(text, str) or (text and not text.endswith("\n")):
            raise BadWindow(f"line {number}: {kind}: must be JSON Lines ending in a newline")
    dropped = doc.get("dropped", 0)
    if isinstance(dropped, bool) or not isinstance(dropped, int) or dropped < 0:
        raise BadWindow(f"line {number}: dropped: must be a count")
    return doc


def check_windows(windows: list[tuple[int, dict]]) -> None:
    """The records of every kind in ``windows`` (line number, window), as the monitor's files must
    hold them (:func:`~.records.check_records`), checked together (one frame per kind, not per
    window); :class:`BadWindow` naming the first bad window's line, the kind and the field."""
    import pandas as pd
    for kind in KINDS:
        rows = [(number, _json_object(text, f"line {number}: {kind}: a record is "))
                for number, window in windows for text in window[kind].splitlines()]
        if not rows:
            continue
        try:
            check_records(pd.DataFrame([row for _, row in rows]), "request", kind=kind)
        except SpecError:
            for number, window in windows:   # which window: each alone, only on this rare path
                try:
                    check_records(pd.DataFrame([row for n, row in rows if n == number]), "request", kind=kind)
                except SpecError as e:
                    raise BadWindow(f"line {number}: {kind}: {e.field_path}: {e.problem}") from None
            raise


class RecordsReceiver:
    """An HTTP server that writes the windows it is sent into ``out_dir``; ``url`` is what the
    consumer's registration takes (``port`` 0: any free port). Use as a context manager, or
    :meth:`start` and :meth:`stop`; ``on_note`` gets one sentence whenever a drop is reported."""

    def __init__(self, out_dir: Path, host: str = "127.0.0.1", port: int = 0, *,
                 on_note: Callable[[str], None] | None = None):
        self.out_dir = Path(out_dir)
        self._on_note = on_note or (lambda message: None)
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str], set] = {}
        self._dropped: dict[str, int] = {}      # by worker ("host worker") and consumer ("consumer address")
        self.windows = 0
        self.repeated = 0
        self.refused = 0
        self.lost = 0          # windows that could not be written here
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):   # noqa: N802 (http.server's name)
                self._answer(*receiver._handle(self))

            def do_GET(self):   # noqa: N802 (http.server's name)
                self._answer(*receiver._progress(self.path))

            def _answer(self, code: int, message: str) -> None:
                self.send_response(code)
                body = message.encode()
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):   # no line per request on stderr
                pass

        try:
            self._server = ThreadingHTTPServer((host, port), Handler)
        except OSError as e:
            raise StormError(f"the records receiver cannot listen on {host}:{port}: {e.strerror or e}") from None
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{PATH}"

    def start(self) -> RecordsReceiver:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="streamplace-records-receiver", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> RecordsReceiver:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def stats(self) -> dict:
        """What arrived: ``windows`` written, ``repeated`` (sent again, not written twice),
        ``refused`` requests, ``dropped`` windows: reported dropped by workers and consumers, or
        not written here (a write that failed)."""
        with self._lock:
            return {"windows": self.windows, "repeated": self.repeated, "refused": self.refused,
                    "dropped": sum(self._dropped.values()) + self.lost}

    def _progress(self, target: str) -> tuple[int, str]:
        """``GET PATH?prefix=STORM_ID&through=SECONDS``: ``"READY TOTAL"``, the workers whose name
        starts with ``STORM_ID-`` that sent a window here (TOTAL) and those of them whose newest
        window starts at ``SECONDS`` or later (READY). The runner asks it before it stops a job whose
        windows come this way, until every worker has sent the last measured window."""
        parts = urlsplit(target)
        usage = f"GET {PATH}?prefix=STORM_ID&through=SECONDS"
        if parts.path != PATH:
            return 404, usage
        query = parse_qs(parts.query)
        try:
            prefix, through = query["prefix"][0] + "-", float(query["through"][0])
        except (KeyError, ValueError):
            return 400, usage
        if not math.isfinite(through):
            return 400, usage
        with self._lock:
            newest = [max(starts) for (_, worker), starts in self._seen.items() if worker.startswith(prefix) and starts]
        return 200, f"{sum(start >= through for start in newest)} {len(newest)}"

    def _handle(self, request: BaseHTTPRequestHandler) -> tuple[int, str]:
        if request.path != PATH:
            return self._refuse(404, f"POST windows to {PATH}")
        try:
            length = int(request.headers.get("Content-Length", ""))
        except ValueError:
            length = -1
        if length < 0:
            return self._refuse(411, "Content-Length required")
        if length > MAX_BODY:
            return self._refuse(413, f"body over {MAX_BODY} bytes")
        body = request.rfile.read(length).decode("utf-8", errors="replace")
        try:
            numbered = [(n, parse_window(line, n)) for n, line in enumerate(body.split("\n"), 1) if line.strip()]
            check_windows(numbered)
            windows = [window for _, window in numbered]
            consumer_dropped = int(request.headers.get("X-Streamplace-Dropped", "0"))
        except (BadWindow, ValueError) as e:
            return self._refuse(400, str(e))
        with self._lock:
            consumer = request.headers.get("X-Streamplace-Consumer") or f"at {request.client_address[0]}"
            self._note_dropped(f"consumer {consumer}", consumer_dropped)
            for window in windows:
                self._write(window)
        return 204, ""

    def _refuse(self, code: int, message: str) -> tuple[int, str]:
        """A request not taken: counted (the consumer logs it and does not send it again)."""
        with self._lock:
            self.refused += 1
        self._on_note(f"refused a request ({code}): {message}")
        return code, message

    def _write(self, window: dict) -> None:
        source = (window["host"], window["worker"])
        seen = self._seen.setdefault(source, set())
        if window["window_start"] in seen:
            self.repeated += 1
            return
        if len(seen) >= REMEMBERED:   # forget the oldest half
            for start in sorted(seen)[:REMEMBERED // 2]:
                seen.discard(start)
        seen.add(window["window_start"])
        name = f"{_UNSAFE.sub('_', window['host'])}-{_UNSAFE.sub('_', window['worker'])}.jsonl"
        try:
            for kind in KINDS:
                if window[kind]:
                    with open(self.out_dir / f"{kind}-{name}", "a", encoding="utf-8") as f:
                        f.write(window[kind])
        except OSError as e:   # counted and said, never sent again half-written: the loop sees a partial window
            self.lost += 1
            self._on_note(f"cannot write a window of worker {window['worker']} on {window['host']} into "
                          f"{self.out_dir}: {e.strerror or e}; {self.lost} windows lost in all")
            return
        self.windows += 1
        self._note_dropped(f"worker {window['worker']} on {window['host']}", window["dropped"])

    def _note_dropped(self, who: str, count: int) -> None:
        before = self._dropped.get(who, 0)
        if count > before:
            self._dropped[who] = count
            self._on_note(f"{who} dropped {count - before} monitor windows (no metrics tick or no "
                          f"receiver took them in time); {count} in all")

"""A topology spec from what the Storm UI already shows (its REST API), for users without a
traffic monitor: the real parallelism and the measured rates, as an analytic task graph.

Read (Storm's ``docs/STORM-UI-REST-API.md``): the topology page ``/api/v1/topology/<id>?window=W``
(name, window, ``spouts[].spoutId/tasks``, ``bolts[].boltId/tasks``), every component page
``/api/v1/topology/<id>/component/<c>?window=W`` (``outputStats`` emitted per stream,
``inputStats`` executed per source component and stream) and, if present, the visualization
``/api/v1/topology/<id>/visualization?window=W`` (the grouping of every input). A saved copy is a
directory holding ``topology.json``, ``component-<id>.json`` per component and optionally
``visualization.json``, the responses as the UI sent them.

Mapping: one operator per spout and bolt with ``parallelism`` = its tasks; spouts are sources with
``source_rate`` = tuples emitted per second on their non-system streams over the window; a bolt's
``selectivity`` = tuples it emitted / tuples it executed (1 when it executed none); one stream per
(source component -> bolt) input; system components and streams (``__acker``, ``__metrics``, ...)
are left out. Groupings from the visualization: ``shuffle``, ``local_or_shuffle``, ``all`` as they
are, ``none`` as ``shuffle`` (Storm's meaning), ``fields`` as ``fields`` with uniform keys (the key
names and a global grouping, which Storm stores as fields over no field, are not shown by the UI);
``direct`` and custom groupings, and every input when there is no visualization, become
``shuffle``: each such choice is listed in the returned notes. In the model every stream out of an
operator carries the operator's whole output (Storm's default stream); a component that splits
its output over named streams is averaged.
"""

from __future__ import annotations

import http.client
import math
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..files import MAX_DOCUMENT_BYTES, note_input, parse_document, quote, read_document, shorten
from ..model import Operator, Stream, Topology
from ..model.specs import topology_to_dict
from .errors import StormError

GROUPINGS = {"shuffle": "shuffle", "local_or_shuffle": "local_or_shuffle", "all": "all", "none": "shuffle",
             "fields": "fields"}
TIMEOUT_S = 30


@dataclass(frozen=True)
class Imported:
    """What ``import storm-ui`` read: the topology spec, the window its rates come from (Storm UI's
    ``window`` in seconds) and one note per thing it had to assume or leave out."""

    topology: Topology
    window_s: float
    notes: tuple[str, ...]


def _system(name: str) -> bool:
    return name.startswith("__")


class _Source:
    """Responses by name: from a saved directory or from the UI at a topology URL."""

    def __init__(self, where: str, window: str | None):
        self.where, self.window = where, window
        self.url = where.startswith(("http://", "https://"))
        if not self.url and not (Path(where) / "topology.json").is_file():
            raise StormError(f"{where}: not a Storm UI topology URL nor a directory with topology.json")
        if window is not None and window not in UI_WINDOWS:
            raise StormError(f"--window: the Storm UI's windows are {', '.join(UI_WINDOWS)}, got {quote(window)}")
        if window is not None and not self.url:
            raise StormError(f"--window: {where} holds the window its responses were saved with; --window asks a URL")
        if not self.url:
            note_input(where, tree=True)   # the saved responses are one input: nothing is written into them

    def get(self, name: str, component: str | None = None, *, optional: bool = False) -> dict | None:
        """One response, parsed by the reader layer's rules (size, duplicate keys, finite numbers)."""
        if self.url:
            path = {"topology": "", "visualization": "/visualization"}.get(name, f"/component/{urllib.parse.quote(component or '', safe='')}")
            query = f"?window={urllib.parse.quote(self.window)}" if self.window else ""
            where = self.where.rstrip("/") + path + query
            try:
                with urllib.request.urlopen(where, timeout=TIMEOUT_S) as response:
                    data = response.read(MAX_DOCUMENT_BYTES + 1)
            except (OSError, ValueError, http.client.HTTPException) as exc:   # ValueError: a malformed URL
                if optional:
                    return None
                raise StormError(f"{shorten(where, 200)}: {shorten(exc, 200)}") from None
            if len(data) > MAX_DOCUMENT_BYTES:
                raise StormError(f"{shorten(where, 200)}: the response is longer than {MAX_DOCUMENT_BYTES:,} bytes")
            doc = parse_document(data, where, "json")
        else:
            file = Path(self.where) / (f"{name}.json" if component is None else f"component-{component}.json")
            if optional and not file.exists():
                return None
            where = str(file)
            doc = read_document(file, what="Storm UI response (JSON)") if file.suffix == ".json" else None
        if not isinstance(doc, dict):
            raise StormError(f"{where}: expected a JSON object")
        return doc


def _number(doc: dict, key: str, where: str) -> float:
    value = doc.get(key, 0) or 0
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise StormError(f"{where}: {key}: not a number: {quote(value)}") from None
    if not 0 <= value < float("inf"):
        raise StormError(f"{where}: {key}: must be a finite number >= 0, got {quote(value)}")
    return value


def _objects(doc: dict, key: str, where: str) -> list[dict]:
    """``doc[key]``: a list of JSON objects (missing: empty)."""
    value = doc.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise StormError(f"{where}: {key}: expected a list of objects, got {quote(value)}")
    return value


#: the statistics windows the Storm UI serves (``STORM-UI-REST-API.md``: ``window`` of the topology page)
UI_WINDOWS = ("600", "10800", "86400", ":all-time")


def _window_s(page: dict) -> float:
    window = str(page.get("window", ":all-time"))
    if window == ":all-time":
        seconds = _number(page, "uptimeSeconds", "topology.json")
    else:
        try:
            seconds = float(window)
        except ValueError:
            raise StormError(f"topology.json: window: not a number of seconds: {quote(window)}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise StormError(f"topology.json: window: must be a number of seconds > 0 (or uptime > 0 at :all-time), "
                         f"got {quote(page.get('window'))}" + (f" with uptime {quote(seconds)}" if window == ":all-time" else ""))
    return seconds


def import_storm_ui(where: str, *, window: str | None = None) -> Imported:
    """The topology of a Storm UI URL (``.../api/v1/topology/<id>``) or saved directory."""
    source = _Source(where, window)
    page = source.get("topology")
    name = page.get("name")
    if not isinstance(name, str) or not name:
        raise StormError(f"{where}: topology.json: name: missing (is this a /api/v1/topology/<id> response?)")
    seconds = _window_s(page)
    spouts, bolts = _objects(page, "spouts", "topology.json"), _objects(page, "bolts", "topology.json")
    components = [(c.get("spoutId"), "source") for c in spouts] + [(c.get("boltId"), "compute") for c in bolts]
    tasks = {c.get("spoutId") or c.get("boltId"): c.get("tasks") for c in [*spouts, *bolts]}
    visual = source.get("visualization", optional=True) or {}
    notes: list[str] = []
    operators, streams = [], []
    for component, role in components:
        if not isinstance(component, str) or _system(component):
            continue
        count = tasks.get(component)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise StormError(f"{where}: topology.json: {component}: tasks: must be an integer >= 1, got {quote(count)}")
        detail = source.get("component", component)
        label = f"component-{component}.json"
        emitted = sum(_number(s, "emitted", label) for s in _objects(detail, "outputStats", label)
                      if not _system(str(s.get("stream", ""))))
        inputs = [s for s in _objects(detail, "inputStats", label) if not _system(str(s.get("stream", "")))
                  and not _system(str(s.get("component", "")))]
        if role == "source":
            operators.append(Operator(component, count, role="source", source_rate=emitted / seconds))
            continue
        executed = sum(_number(s, "executed", label) for s in inputs)
        operators.append(Operator(component, count, selectivity=emitted / executed if executed else 1.0))
        if not executed:
            notes.append(f"{component} executed no tuple in the window: selectivity 1 assumed")
        inputs_shown = visual.get(component) or {}
        if not isinstance(inputs_shown, dict):
            raise StormError(f"visualization.json: {component}: expected an object, got {quote(inputs_shown)}")
        groupings = {(i.get(":component"), i.get(":stream")): i.get(":grouping")
                     for i in _objects(inputs_shown, ":inputs", f"visualization.json: {component}")}
        for src in dict.fromkeys(str(s.get("component")) for s in inputs):
            kinds = {g for (c, _), g in groupings.items() if c == src}
            storm_kind = sorted(kinds)[0] if kinds else None
            grouping = GROUPINGS.get(storm_kind or "", "shuffle")
            if storm_kind is None:
                notes.append(f"{src} -> {component}: grouping not shown (no visualization): shuffle assumed")
            elif storm_kind not in GROUPINGS:
                notes.append(f"{src} -> {component}: {storm_kind} grouping is not modelled: shuffle assumed")
            elif storm_kind == "fields":
                notes.append(f"{src} -> {component}: fields grouping with uniform keys (the UI shows neither the "
                             "key fields nor whether it is a global grouping)")
            streams.append(Stream(src, component, grouping=grouping))
    known = {op.name for op in operators}
    missing = sorted({s.src for s in streams} - known)
    if missing:
        raise StormError(f"{where}: {missing[0]} feeds a bolt but is not a spout or bolt of topology.json")
    topology = Topology.build(name, operators, streams)
    topology_to_dict(topology)   # what is written must load: the spec rules (names, ranges) on the document itself
    return Imported(topology=topology, window_s=seconds, notes=tuple(notes))

"""The job file ``storm run`` hands the Java runners, checked before it is written.

The file's one declaration is the JSON Schema ``job.schema.json`` in the Storm module's
resources (:data:`SCHEMA`); the runners check every file they read against the same file
(``org.streamplace.storm.JobSchema``), so a field either side gets wrong is refused with its name.
Both sides implement the same small subset of JSON Schema (:data:`KEYWORDS`) with the same
messages, rather than a JSON Schema library (none is among the project's dependencies, and a
dozen fields do not call for one); a keyword outside the subset in the schema is an error, so the
schema cannot silently ask for more than the checkers do.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

from ..files import atomic_write_text, dumps_json
from . import jvm
from .errors import StormError

SCHEMA = jvm.REPO_STORM / "src" / "main" / "resources" / "org" / "streamplace" / "storm" / "job.schema.json"
#: the keywords the checkers implement; ``title``, ``description``, ``default`` and ``$``-keys are annotations
KEYWORDS = frozenset({"type", "required", "properties", "additionalProperties", "items", "minimum", "exclusiveMinimum",
                      "minLength"})
_ANNOTATIONS = frozenset({"title", "description", "default"})
_ARTICLE = {"object": "an object", "array": "a list", "integer": "an integer", "null": "null"}


@functools.cache
def schema() -> dict:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def problem(document: Any) -> str | None:
    """``FIELD: problem`` for the first field (in schema order) of ``document`` that breaks the
    schema (the message the Java runner gives for it), None if it conforms."""
    try:
        _check(document, schema(), "")
    except _Refused as refused:
        return str(refused)
    return None


def write(path: Path, document: dict) -> None:
    """Checks ``document`` against the schema, then writes it (atomically) as JSON."""
    why = problem(document)
    if why is not None:
        raise StormError(f"{path}: {why}")
    atomic_write_text(path, dumps_json(document, indent=None))


class _Refused(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}" if field else message)


def _render(value: Any) -> str:
    """A value as the Java side prints it in a message (compact JSON)."""
    return json.dumps(value, separators=(",", ":"))


def _is(value: Any, kind: str) -> bool:
    """JSON Schema's types over what ``json`` reads and writes (a bool is no number)."""
    match kind:
        case "object":
            return isinstance(value, dict)
        case "array":
            return isinstance(value, (list, tuple))
        case "string":
            return isinstance(value, str)
        case "boolean":
            return isinstance(value, bool)
        case "null":
            return value is None
        case "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        case "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    raise ValueError(f"{SCHEMA}: unknown type {kind}")


def _join(field: str, name: str) -> str:
    return f"{field}.{name}" if field else name


def _check(value: Any, rule: dict, field: str) -> None:
    for key in rule:
        if key not in KEYWORDS and key not in _ANNOTATIONS and not key.startswith("$"):
            raise ValueError(f"{SCHEMA}: keyword {key} at {field or 'the top'} is not one the checkers implement")
    kinds = rule.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if kinds and not any(_is(value, kind) for kind in kinds):
        raise _Refused(field, f"must be {' or '.join(_ARTICLE.get(k, 'a ' + k) for k in kinds)}, got {_render(value)}")
    if isinstance(value, dict):
        props = rule.get("properties", {})
        for name in rule.get("required", []):
            if name not in value:
                raise _Refused(_join(field, name), "required")
        if rule.get("additionalProperties") is False:
            for name in value:
                if name not in props:
                    raise _Refused(_join(field, str(name)), f"unknown field (known: {', '.join(props)})")
        for name, sub in props.items():
            if name in value:
                _check(value[name], sub, _join(field, name))
    elif isinstance(value, (list, tuple)) and "items" in rule:
        for i, item in enumerate(value):
            _check(item, rule["items"], f"{field}[{i}]")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in rule and value < rule["minimum"]:
            raise _Refused(field, f"must be >= {_render(rule['minimum'])}, got {_render(value)}")
        if "exclusiveMinimum" in rule and value <= rule["exclusiveMinimum"]:
            raise _Refused(field, f"must be > {_render(rule['exclusiveMinimum'])}, got {_render(value)}")
    elif isinstance(value, str) and "minLength" in rule and len(value) < rule["minLength"]:
        raise _Refused(field, "must not be empty" if not value else f"must have at least {rule['minLength']} characters")

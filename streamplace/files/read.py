"""The one way in: every file a command reads (specs, placements, plans, profiles, monitoring
records, Storm UI responses, sweep grids, cost models, campaign files) comes through here.

Rules, in the order they apply (docs/safety.md states them for users):

1. **Size before reading.** A document may hold at most :data:`MAX_DOCUMENT_BYTES`; at most that
   many bytes (plus one) are ever read, so a FIFO or ``/dev/zero`` is refused as soon as it is
   too long instead of filling memory. The parsed document must also fit the memory limit
   (:mod:`streamplace.memory`): a JSON document needs about :data:`PARSE_FACTOR` ``["json"]``
   times its size while it is parsed, YAML about ``["yaml"]`` times (measured, below). Record
   files read in bulk (Parquet, CSV, JSON lines, by Spark or pandas) are checked by their total
   size with :func:`check_total_size` before the reader starts.
2. **Safe, strict parsing.** JSON with duplicate keys refused and no ``NaN``/``Infinity``
   constants; YAML with the safe loader, duplicate keys refused, and alias expansion bounded:
   a document whose aliases would expand to more than :data:`MAX_ALIAS_EXPANSION` times its own
   node count (plus :data:`ALIAS_ALLOWANCE`) is refused (the "billion laughs" bomb: 479 bytes
   expanding to 10^9 nodes), so anchors used for shared settings still work.
3. **Finite values.** Every float of a parsed document is finite: YAML's ``.nan``/``.inf``
   are refused naming the field. Ranges are checked where the value enters the model
   (:mod:`streamplace.model.specs` and the other loaders).
4. **Short quotes.** Every value quoted in an error message goes through :func:`quote`, so no
   error line is longer than a screen whatever the input holds.

Every file read inside a :func:`streamplace.files.guard.guarding` session is recorded as an input,
so the writer (:mod:`streamplace.files.write`) never replaces or deletes it.
"""

from __future__ import annotations

import json
import math
import os
import re
import reprlib
from pathlib import Path
from typing import Any, Iterable, Iterator

import yaml

from . import guard

MAX_DOCUMENT_BYTES = 256 * 2**20
"""Largest spec/placement/plan/profile/grid/cost-model/campaign document (256 MiB). The largest
real documents are placements: ~45 bytes per task in JSON, so 256 MiB holds ~6x10^6 task
labels, within the model's own limit of 10^7 tasks only for the compact formats; a larger
placement is refused here, with its size, instead of being parsed for minutes."""

PARSE_FACTOR = {"json": 10, "yaml": 64, "parquet": 10}
"""Peak memory while parsing, per byte of document. Measured with tracemalloc on a 200,000-task
placement (9.7 MB of JSON, 9.3 MB of YAML): ``json.loads`` 7.8x, PyYAML's C safe loader 61.6x;
rounded up. Parquet (compressed columns decoded into pandas) is given JSON's factor."""

MAX_RECORD_BYTES = 64 * 2**30
"""Largest set of record files (monitoring records, application data) one command reads: 64 GiB.
Spark streams them from disk, so memory is not the bound: the limit stops a wrong path (a disk
image, a device) before hours of work; readers that hold records in memory are also checked
against the memory limit (:func:`check_total_size`)."""

MAX_ALIAS_EXPANSION = 10
ALIAS_ALLOWANCE = 10_000
"""A YAML document's aliases may expand it to at most ``10 x its own nodes + 10,000`` nodes:
shared settings referenced a few times pass, an exponential bomb does not."""

QUOTE_CHARS = 60


class SpecError(ValueError):
    """A bad input file: ``str(err)`` is ``FILE: FIELD: problem`` (the CLI prints
    ``streamplace: FILE: FIELD: problem`` and exits 2)."""

    def __init__(self, file: str | os.PathLike, field_path: str, problem: str):
        self.file = printable(str(file))
        self.field_path = printable(field_path)
        self.problem = printable(problem)
        super().__init__(f"{self.file}: {self.field_path}: {self.problem}" if field_path else f"{self.file}: {self.problem}")

    def __reduce__(self):   # raised in a child process (interrupt.in_child), it comes back pickled
        return type(self), (self.file, self.field_path, self.problem), self.__dict__


def printable(text: str) -> str:
    """``text`` with its control characters (a NUL, a terminal's escape sequences) written as
    ``\\xNN`` escapes: what an error line shows of a user's file must not drive the terminal."""
    if not isinstance(text, str):
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", _SPACES.sub(" ", text))


_SPACES = re.compile(r" *[\t\n\r][\t\n\r ]*")   # a line break in a message is a space: the message is one line
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_REPR = reprlib.Repr()   # Python 3.11 takes no keyword arguments here
_REPR.maxlevel, _REPR.maxstring, _REPR.maxlong, _REPR.maxother = 2, QUOTE_CHARS, 40, QUOTE_CHARS
_REPR.maxtuple = _REPR.maxlist = _REPR.maxarray = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdeque = 4


def quote(value: Any, limit: int = QUOTE_CHARS) -> str:
    """What every error message shows of a user's value: ``repr(value)`` for a scalar, cut to
    ``limit`` characters (``...`` and the full length when cut); a container through
    :mod:`reprlib` (a few items, two levels), so a shared (aliased) structure never prints whole."""
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        return _REPR.repr(value)
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` (an exception's message, a path) on one line, cut to ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _size_text(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n:,} bytes"


def read_bytes(path: str | os.PathLike, *, limit: int | None = None, what: str = "file") -> bytes:
    """The bytes of ``path``, refused (:class:`SpecError`) when it is missing, a directory, or
    longer than ``limit`` (default :data:`MAX_DOCUMENT_BYTES`; checked on the size first, then by
    reading at most ``limit + 1`` bytes, so endless files stop). Records ``path`` as an input of
    the running command."""
    limit = MAX_DOCUMENT_BYTES if limit is None else limit
    p = Path(path)
    if not p.exists():
        raise SpecError(p, "", "file not found")
    if p.is_dir():
        raise SpecError(p, "", f"is a directory, expected a {what}")
    guard.note_input(p)
    try:
        size = p.stat().st_size
        if size > limit:
            raise SpecError(p, "", f"is {_size_text(size)}; a {what} may hold at most {_size_text(limit)}")
        with open(p, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise SpecError(p, "", f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise SpecError(p, "", f"is longer than {_size_text(limit)} (read stopped there); a {what} may hold at most "
                               f"{_size_text(limit)}")
    return data


def _memory_check(source: str, n_bytes: int, fmt: str) -> None:
    from ..memory import over_limit
    refusal = over_limit(n_bytes * PARSE_FACTOR[fmt], f"parsing {_size_text(n_bytes)} of {fmt.upper()} would")
    if refusal:
        raise SpecError(source, "", refusal)


def read_document(path: str | os.PathLike, *, what: str = "YAML or JSON file") -> Any:
    """Parse a YAML (``.yaml``/``.yml``) or JSON file (anything else is tried as YAML, which
    reads JSON too) under the rules of this module."""
    p = Path(path)
    data = read_bytes(p, what=what)
    fmt = "json" if p.suffix.lower() == ".json" else "yaml"
    return parse_document(data, p, fmt)


def parse_document(data: bytes | str, source: str | os.PathLike, fmt: str) -> Any:
    """Parse ``data`` (``fmt`` ``"json"`` or ``"yaml"``) from ``source`` (a file or URL, for messages)."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SpecError(source, "", f"cannot read: not UTF-8 text (byte {exc.start})") from None
    else:
        text = data
    if not text.strip():
        raise SpecError(source, "", "file is empty")
    _memory_check(str(source), len(text), fmt)
    if fmt == "json":
        doc = _parse_json(text, source)
    else:
        doc = _parse_yaml(text, source)
    check_finite(doc, source)
    return doc


# ---------------------------------------------------------------------- JSON
def _no_duplicates(source):
    def hook(pairs):
        doc = {}
        for key, value in pairs:
            if key in doc:
                raise SpecError(source, str(key)[:QUOTE_CHARS], "duplicate key (each key may appear once)")
            doc[key] = value
        return doc
    return hook


def _no_constant(source):
    def hook(name):
        raise SpecError(source, "", f"{name} is not a number JSON allows (numbers must be finite)")
    return hook


def _unreadable(exc: ValueError) -> str:
    """The problem of a value the parser found but Python could not make: an integer of more
    digits than ``int`` reads (4,300), or a YAML value such as a date that is no date."""
    if "digits" in str(exc):
        return "a number with more digits than can be read (numbers must be at most 10^12)"
    return f"a value that cannot be read: {str(exc)[:200]}"


def _parse_json(text: str, source) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates(source), parse_constant=_no_constant(source))
    except json.JSONDecodeError as exc:
        raise SpecError(source, "", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise SpecError(source, "", "nested too deeply") from None
    except SpecError:   # the hooks' own (a duplicate key, NaN): as they are
        raise
    except ValueError as exc:   # Python's own limit on an integer's digits
        raise SpecError(source, "", _unreadable(exc)) from None


def parse_json_line(line: str, source, number: int) -> Any:
    """One line of a JSON-lines file (campaign records, monitor records) under the same rules."""
    try:
        doc = json.loads(line, object_pairs_hook=_no_duplicates(f"{source}: line {number}"),
                         parse_constant=_no_constant(f"{source}: line {number}"))
    except json.JSONDecodeError as exc:
        raise SpecError(source, f"line {number}", f"invalid JSON at column {exc.colno}: {exc.msg}") from None
    except SpecError:   # the hooks' own (a duplicate key, NaN): as they are
        raise
    except ValueError as exc:   # Python's own limit on an integer's digits
        raise SpecError(source, f"line {number}", _unreadable(exc)) from None
    check_finite(doc, f"{source}: line {number}")
    return doc


def read_json_lines(path: str | os.PathLike, *, what: str = "JSON-lines file") -> Iterator[tuple[int, Any]]:
    """(line number, record) for every non-blank line of a JSON-lines file."""
    text = read_bytes(path, what=what).decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield number, parse_json_line(line, path, number)


# ---------------------------------------------------------------------- YAML
_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_Base):
    """The safe loader, refusing duplicate mapping keys (PyYAML keeps the last one silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":   # ``<<: *base``: merged keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:   # an unhashable key: the base constructor says so
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {quote(key)} (each key may "
                                                        "appear once)", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def _expanded_nodes(root, limit: int) -> int:
    """Nodes of the document with every alias expanded (shared nodes counted once per use),
    stopping as soon as ``limit`` is passed; memoised per node so a bomb costs its own size."""
    memo: dict[int, int] = {}

    def size(node) -> int:
        key = id(node)
        if key in memo:
            return memo[key]
        memo[key] = 1   # a recursive alias counts once
        if isinstance(node, yaml.MappingNode):
            total = 1 + sum(size(k) + size(v) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            total = 1 + sum(size(v) for v in node.value)
        else:
            total = 1
        memo[key] = min(total, limit + 1)
        return memo[key]

    return size(root)


def _composed_nodes(root) -> int:
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack += [k, v]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value
    return len(seen)


def _parse_yaml(text: str, source) -> Any:
    loader = _StrictLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise SpecError(source, "", "file is empty")
        limit = MAX_ALIAS_EXPANSION * _composed_nodes(root) + ALIAS_ALLOWANCE
        if _expanded_nodes(root, limit) > limit:
            raise SpecError(source, "", f"its aliases expand to more than {limit:,} nodes (at most "
                                        f"{MAX_ALIAS_EXPANSION}x the document's own nodes + {ALIAS_ALLOWANCE:,})")
        return loader.construct_document(root)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = str(getattr(exc, "problem", None) or exc)
        raise SpecError(source, "", f"invalid YAML{where}: {problem[:200]}") from None
    except RecursionError:
        raise SpecError(source, "", "nested too deeply") from None
    except SpecError:
        raise
    except ValueError as exc:   # Python's own limit on an integer's digits
        raise SpecError(source, "", _unreadable(exc)) from None
    finally:
        loader.dispose()


# ---------------------------------------------------------------------- values
def check_finite(doc: Any, source, where: str = "") -> None:
    """Refuse a NaN or infinite float anywhere in ``doc``, naming its field. Shared containers
    (YAML aliases) are visited once."""
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [(where, doc)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                raise SpecError(source, path, f"must be a finite number, got {value!r}")
        elif isinstance(value, (dict, list)):
            if id(value) in seen:
                continue
            seen.add(id(value))
            items: Iterable = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                child = f"{path}[{key}]" if isinstance(key, int) and isinstance(value, list) else \
                    (f"{path}.{str(key)[:QUOTE_CHARS]}" if path else str(key)[:QUOTE_CHARS])
                stack.append((child, item))


def check_total_size(paths: Iterable[str | os.PathLike], source: str | os.PathLike, *, what: str,
                     limit: int | None = None, in_memory: str | None = None) -> int:
    """The total size of the record files ``paths`` (read in bulk by Spark, pyarrow or pandas),
    refused when it exceeds ``limit`` bytes or, for a reader that holds them in memory
    (``in_memory``: ``"json"`` or ``"parquet"``), when their parsed size would not fit the memory
    limit; each file is recorded as an input. Returns the total."""
    limit = MAX_RECORD_BYTES if limit is None else limit
    total = 0
    for p in paths:
        guard.note_input(p)
        try:
            total += os.stat(p).st_size
        except OSError as exc:
            raise SpecError(p, "", f"cannot read: {exc.strerror or exc}") from None
    if total > limit:
        raise SpecError(source, "", f"holds {_size_text(total)} of {what}; at most {_size_text(limit)} can be read "
                                    "(the documented limit of record files)")
    if in_memory is not None:
        _memory_check(str(source), total, in_memory)
    return total

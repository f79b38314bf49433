"""The memory limit for inputs: estimated before anything large is allocated.

What a problem needs is estimated from its size (:func:`problem_bytes`): per directed task
edge :data:`EDGE_BYTES`, per task :data:`TASK_BYTES`. Measured: building an analytic task graph
and its symmetric weights peaks at 93-97 bytes per edge (10^6-9x10^6 edges); in
``benchmarks/scale.py`` a synthetic problem of 10^6 tasks and 3.5x10^6 edges scheduled by metis
peaks 0.48 GB above the interpreter. The constants give that case 0.85 GB: headroom for the
schedulers' own working arrays.

Default: half of this machine's memory (``/proc/meminfo``'s MemTotal; 8 GiB where unknown).
``$STREAMPLACE_MEMORY_LIMIT`` (bytes, or a number with K/M/G/T, e.g. ``12G``) overrides it; the
command line's ``--memory-limit`` sets that variable. A variable that is not a size is refused
(:class:`MemoryLimitError`, one line naming it), never ignored.
"""

from __future__ import annotations

import functools
import os

ENV = "STREAMPLACE_MEMORY_LIMIT"
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
EDGE_BYTES = 200
TASK_BYTES = 150
SLOT_BYTES = 120
"""Per worker slot: Storm's slot order is a Python list of (node, worker) pairs, then an int64
array (``schedulers/slots.py``); tracemalloc measured 96 B per pair on 10^5 slots, + 16 B of array."""
RECORD_BYTES = 1_000
"""Per generated application record: tracemalloc measured peaks of 138 (smart-home) to 631
(frequent-routes) bytes per record while 10^5 records are generated; writing them (JSON lines
text beside the frame) needs as much again."""
NODE_BYTES = 1_000
"""Per cluster node: tracemalloc measured 212 B per ``Node`` on 10^5 nodes; the spec's dict, the
cluster's per-node arrays and the writer's text take the rest (generous, as the others)."""


class MemoryLimitError(ValueError):
    """``$STREAMPLACE_MEMORY_LIMIT`` is not a size."""


def parse_size(text: str) -> int:
    """``"12G"`` -> bytes; raises ValueError for anything but a positive finite size."""
    raw = str(text).strip().upper().removesuffix("B").removesuffix("I")
    unit = raw[-1] if raw and raw[-1] in _UNITS else ""
    try:
        number = float(raw[: len(raw) - len(unit)])
    except ValueError:
        raise ValueError(f"expected a size such as 12G, got {str(text)[:40]!r}") from None
    if not (number > 0 and number * _UNITS[unit] < 2**62):
        raise ValueError(f"a memory size must be positive and finite, got {text!r}")
    return int(number * _UNITS[unit])


@functools.cache   # read once: every prediction checks its arrays against the limit
def machine_memory() -> int:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 16 * 2**30


def memory_limit() -> int:
    """Bytes an input may need: ``$STREAMPLACE_MEMORY_LIMIT`` if set, else half of the machine's memory."""
    value = os.environ.get(ENV)
    if value is not None:
        try:
            return parse_size(value)
        except ValueError as exc:
            raise MemoryLimitError(f"{ENV}: {exc}") from None
    return machine_memory() // 2


def describe_limit(limit: int) -> str:
    where = f"set by {ENV}" if os.environ.get(ENV) else "half of this machine's memory"
    return f"{size_text(limit)} ({where}; raise it with --memory-limit)"


def size_text(nbytes: float) -> str:
    """``nbytes`` in the largest binary unit it reaches, one decimal: 1.5 GiB, 12.0 MiB, 1 B."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} B"


def problem_bytes(n_tasks: int, n_edges: int) -> int:
    """Estimated peak memory to build, schedule and evaluate a problem of this size."""
    return TASK_BYTES * int(n_tasks) + EDGE_BYTES * int(n_edges)


def over_limit(need: int, what: str) -> str | None:
    """``None`` if ``need`` bytes fit the limit, else the sentence saying they do not."""
    limit = memory_limit()
    if need <= limit:
        return None
    return f"{what} need about {need / 2**30:.1f} GiB of memory; the limit is {describe_limit(limit)}"


def cluster_bytes(n_nodes: int, n_slots: int) -> int:
    """Estimated peak memory to build and schedule on a cluster of this size."""
    return NODE_BYTES * int(n_nodes) + SLOT_BYTES * int(n_slots)

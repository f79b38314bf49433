"""``KEY=VALUE`` arguments: the one reader of them (scheduler parameters ``-p``, ``compare``'s
``SCHEDULER.KEY=VALUE``, the catalogue's generator arguments, ``--storm-conf``), and the one
spelling of a boolean in them: ``true`` or ``false`` (any case); anything else is refused.

>>> parse_pairs(["tasks=30", " layout = diamond"])
{'tasks': '30', 'layout': 'diamond'}
>>> per_scheduler({"metis.repair": "false"}, ["even", "metis"])
{'even': {}, 'metis': {'repair': 'false'}}
>>> parse_bool("True"), parse_bool("false")
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..files import quote
from .errors import InputError

TRUE, FALSE = "true", "false"


def split_pair(pair: str) -> tuple[str, str] | None:
    """``(key, value)`` of ``KEY=VALUE``, both stripped; None without ``=`` or with an empty key."""
    key, sep, value = pair.partition("=")
    return (key.strip(), value.strip()) if sep and key.strip() else None


def parse_pairs(pairs: Iterable[str], option: str = "--param") -> dict[str, str]:
    """``KEY=VALUE`` strings as a mapping; :class:`InputError` naming ``option`` for a string
    that is not a pair, or a key given twice (which of two values was meant cannot be told)."""
    params = {}
    for pair in pairs:
        split = split_pair(pair)
        if split is None:
            raise InputError(f"{option}: expected key=value, got {quote(pair)}")
        if split[0] in params:
            raise InputError(f"{option}: {quote(split[0])} given twice ({quote(params[split[0]])} and {quote(split[1])})")
        params[split[0]] = split[1]
    return params


def per_scheduler(params: dict[str, str], names: Sequence[str]) -> dict[str, dict[str, str]]:
    """``SCHEDULER.KEY`` parameters split per scheduler, each of ``names`` (those that run)."""
    out: dict[str, dict[str, str]] = {n: {} for n in names}
    for key, value in params.items():
        sched, dot, param = key.partition(".")
        if not dot or sched not in out:
            raise InputError(f"--param: expected SCHEDULER.KEY=VALUE with SCHEDULER one of {', '.join(names)}, got {quote(key)}")
        out[sched][param] = value
    return out


def parse_bool(text: str) -> bool:
    """``true`` or ``false`` in any case; ValueError for anything else."""
    word = text.strip().lower()
    if word in (TRUE, FALSE):
        return word == TRUE
    raise ValueError(f"expected {TRUE} or {FALSE}, got {quote(text)}")

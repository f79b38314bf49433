"""The model's error type: a problem located at a field path (``operators[2].parallelism``), and
the field rules topologies and clusters share."""

import math

from ..files import quote


class FieldError(ValueError):
    def __init__(self, field_path: str, problem: str):
        super().__init__(f"{field_path}: {problem}")
        self.field_path = field_path
        self.problem = problem

    def __reduce__(self):   # raised in a child process (interrupt.in_child), it comes back pickled
        return type(self), (self.field_path, self.problem), self.__dict__


class Notice(UserWarning):
    """A warning the command line shows as one line ``streamplace: warning: ...`` (a fallback or a
    repair that changes what the user gets: say so, never silently)."""


def index_names(items, field: str, kind: str, owner: str, error: type[FieldError]) -> dict[str, int]:
    """Position of each item by ``name``; raises ``error`` naming the field when the list is empty
    or a name is empty, not a string or repeated (``operators`` of a topology, ``nodes`` of a cluster)."""
    if not items:
        raise error(field, f"a {owner} needs at least one {kind}")
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        where = f"{field}[{i}].name"
        if not isinstance(item.name, str) or not item.name:
            raise error(where, "must be a non-empty string")
        if item.name in seen:
            raise error(where, f"duplicate {kind} name {quote(item.name)}")
        seen[item.name] = i
    return seen


def check_non_negative(item, attrs, where: str, error: type[FieldError]) -> None:
    """Each of ``item``'s ``attrs`` must be a finite number >= 0."""
    for attr in attrs:
        value = getattr(item, attr)
        if not math.isfinite(value) or value < 0:
            raise error(f"{where}.{attr}", f"must be a finite number >= 0, got {value}")


class InputError(ValueError):
    """A problem with what the caller gave (an option, an argument, a pair of files that do not
    go together): ``str(err)`` is the one line the command line prints (exit 2)."""

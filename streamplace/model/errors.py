"""The model's error type: a problem located at a field path (``operators[2].parallelism``)."""


class FieldError(ValueError):
    def __init__(self, field_path: str, problem: str):
        super().__init__(f"{field_path}: {problem}")
        self.field_path = field_path
        self.problem = problem


class Notice(UserWarning):
    """A warning the command line shows as one line ``streamplace: warning: ...`` (a fallback or a
    repair that changes what the user gets: say so, never silently)."""

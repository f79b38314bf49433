"""The user-facing error of the Storm integration (one line, exit code 2)."""


class StormError(Exception):
    """Java or the Storm module missing, a run that failed, a topology Storm cannot take."""

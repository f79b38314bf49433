"""The model's error type: a problem located at a field path (``operators[2].parallelism``)."""


class FieldError(ValueError):
    def __init__(self, field_path: str, problem: str):
        super().__init__(f"{field_path}: {problem}")
        self.field_path = field_path
        self.problem = problem

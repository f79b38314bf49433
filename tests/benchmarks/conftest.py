"""Shared by the tests of ``benchmarks/``: a script loaded as a module, to call its functions."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def script():
    """``script(NAME)``: ``benchmarks/NAME.py`` as a module (its ``main`` not run)."""
    def load(name: str):
        spec = importlib.util.spec_from_file_location(f"benchmarks.{name}", BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module   # where dataclasses look a module's names up
        spec.loader.exec_module(module)
        return module
    return load

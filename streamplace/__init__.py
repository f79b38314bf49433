"""streamplace: where the tasks of a stream-processing job should run, and how good that is.

The public API (:mod:`streamplace.api`) is importable from here: ``import streamplace as sp;
sp.schedule(sp.load_problem("t.yaml", "c.yaml"), "ischeduler")``. It is loaded on first use, so
``import streamplace`` alone stays cheap and the package root depends on nothing above it.
"""

import importlib

__version__ = "0.1.0"


def __getattr__(name: str):
    # the one upward reference: lazy, by design (tests/test_layers.py); import_module, not
    # "from . import api", which would ask this very function for the attribute "api"
    api = importlib.import_module("streamplace.api")
    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module 'streamplace' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *importlib.import_module("streamplace.api").__all__])

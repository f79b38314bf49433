"""The import graph follows the layers (docs/architecture.md): a module imports only from its own
layer or a lower one, so nothing runs back up (the model never knows about schedulers, schedulers
never about the benchmarks)."""

import ast
from pathlib import Path

import streamplace

# lowest first; a top-level module or package of streamplace/ per entry
LAYERS = ["__init__", "interrupt", "model", "workloads", "partition", "exact", "schedulers", "evaluate", "profile",
          "storm", "export", "bench", "api", "cli", "__main__"]
# the package root re-exports the public API lazily (streamplace/__init__.py __getattr__)
LAZY = {("__init__", "api")}
ROOT = Path(streamplace.__file__).parent


def _unit(path: Path) -> str:
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def _imports(path: Path, root: Path = ROOT) -> set[str]:
    """The streamplace units ``path`` (a module under ``root``) imports, absolutely or relatively."""
    package = list(path.relative_to(root).parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            target = base + (node.module.split(".") if node.module else [])
            found.update([target[0]] if target else [alias.name for alias in node.names])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streamplace."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" and node.args \
                and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("streamplace."):
            found.add(node.args[0].value.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("streamplace."))
    return {"__init__" if name == "__version__" else name for name in found}


def test_every_unit_has_a_layer():
    units = {_unit(p) for p in ROOT.rglob("*.py")}
    assert units <= set(LAYERS), f"add {sorted(units - set(LAYERS))} to LAYERS (and docs/architecture.md)"


def test_no_import_reaches_a_higher_layer():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = sorted(f"{p.relative_to(ROOT)} imports {target}" for p in ROOT.rglob("*.py")
                    for target in _imports(p) if rank.get(target, -1) > rank[_unit(p)]
                    and (_unit(p), target) not in LAZY)
    assert upward == []


def test_the_check_sees_relative_and_absolute_imports(tmp_path):
    module = tmp_path / "model" / "sub" / "x.py"
    module.parent.mkdir(parents=True)
    module.write_text("import numpy\nfrom ...schedulers.base import Scheduler\nfrom .. import cluster\n"
                      "import streamplace.bench.demo\nfrom streamplace.cli import main\nfrom ... import __version__\n"
                      "importlib.import_module('streamplace.profile.spark')\n")
    assert _imports(module, tmp_path) == {"schedulers", "model", "bench", "cli", "__init__", "profile"}

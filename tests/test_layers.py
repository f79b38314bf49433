"""The import graph follows the layers (docs/architecture.md): a module imports only from its own
layer or a lower one, so nothing runs back up (the model never knows about schedulers, schedulers
never about the benchmarks)."""

import ast
from pathlib import Path

import streamplace

# lowest first; a top-level module or package of streamplace/ per entry
LAYERS = ["__init__", "interrupt", "memory", "files", "model", "workloads", "partition", "exact", "schedulers", "evaluate",
          "report", "fit", "profile", "storm", "export", "api", "campaign", "reproduce", "demo", "cli", "__main__"]
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
                      "import streamplace.demo.run\nfrom streamplace.cli import main\nfrom ... import __version__\n"
                      "importlib.import_module('streamplace.profile.spark')\n")
    assert _imports(module, tmp_path) == {"schedulers", "model", "demo", "cli", "__init__", "profile"}


def _module(path: Path, root: Path = ROOT) -> str:
    """``path``'s dotted name under ``root`` (a package is its ``__init__``'s directory)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, root: Path = ROOT) -> list[tuple[str, list[str]]]:
    """(module, names) of every ``from ... import`` and ``import`` of a module under ``root`` in
    ``path``, wherever it stands (a function's lazy import counts): ``from . import x`` of a
    submodule ``x`` is the module ``x``, of anything else the package itself."""
    package = list(path.relative_to(root).parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            elif (node.module or "").startswith(root.name + "."):
                base = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                sub = root.joinpath(*base, alias.name)
                if sub.with_suffix(".py").is_file() or (sub / "__init__.py").is_file():
                    found.append((".".join(base + [alias.name]), []))
                else:
                    found.append((".".join(base), [alias.name]))
        elif isinstance(node, ast.Import):
            found += [(a.name.split(".", 1)[1], []) for a in node.names if a.name.startswith(root.name + ".")]
    return found


def _cycles_inside_units(root: Path = ROOT) -> list[list[str]]:
    """Import cycles among the modules of one unit (layer), each as the modules around it."""
    graph: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        unit, name = _unit_of(path, root), _module(path, root)
        graph.setdefault(name, set()).update(m for m, _ in _imported_modules(path, root)
                                             if m != name and m.split(".")[0].removesuffix(".py") == unit)
    cycles, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [node, nxt] if nxt in stack else [node, nxt])
            elif nxt not in state:
                visit(nxt, stack + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return cycles


def _unit_of(path: Path, root: Path) -> str:
    return path.relative_to(root).parts[0].removesuffix(".py")


def _private_imports(root: Path = ROOT) -> list[str]:
    """``from X import _name`` where X is in another package than the importing module."""
    out = []
    for path in root.rglob("*.py"):
        here = _module(path, root) if path.name == "__init__.py" else _module(path, root).rpartition(".")[0]
        for module, names in _imported_modules(path, root):
            package = module if (root.joinpath(*module.split(".")) / "__init__.py").is_file() else module.rpartition(".")[0]
            out += [f"{path.relative_to(root)} imports {name} from {module}" for name in names
                    if name.startswith("_") and not name.startswith("__") and package != here]
    return sorted(out)


def test_no_import_cycle_inside_a_layer():
    assert _cycles_inside_units() == []


def test_no_import_of_another_packages_private_names():
    assert _private_imports() == []


def test_the_cycle_and_private_checks_see_them(tmp_path):
    pkg = tmp_path / "streamplace"
    for name, text in {"a/__init__.py": "", "a/x.py": "from .y import f\n", "a/y.py": "def g():\n    from . import x\n",
                       "a/z.py": "from streamplace.a.x import f\n", "b/__init__.py": "",
                       "b/w.py": "from ..a.y import _helper, public\nfrom . import v\n", "b/v.py": "from .w import _own\n"}.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    # x -> y at the top, y -> x in a function; w -> v -> w; z only imports
    assert _cycles_inside_units(pkg) == [["a.x", "a.y", "a.x"], ["b.v", "b.w", "b.v"]]
    # a private name of one's own package (v's _own) is allowed
    assert _private_imports(pkg) == ["b/w.py imports _helper from a.y"]

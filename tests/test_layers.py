"""The import graph follows the layers (docs/architecture.md): a module imports only from its own
layer or a lower one, so nothing runs back up (the model never knows about schedulers, schedulers
never about the benchmarks)."""

import ast
from pathlib import Path

import streamplace

# lowest first; a top-level module or package of streamplace/ per entry
LAYERS = ["__init__", "interrupt", "memory", "files", "model", "workloads", "partition", "exact", "schedulers", "evaluate",
          "report", "fit", "profile", "storm", "autopilot", "export", "campaign", "reproduce", "demo", "api", "cli", "__main__"]
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


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root: Path = ROOT) -> dict[str, Path]:
    return {_module_name(p, root): p for p in root.rglob("*.py")}


def _from_imports(path: Path, root: Path = ROOT):
    """``(module, names, top_level)`` of each ``from ... import`` in ``path``, the module as a dotted
    name under the package root ("" for the root itself), None outside streamplace."""
    package = _module_name(path, root).split(".") if path.name == "__init__.py" else \
        _module_name(path, root).split(".")[:-1]
    top = {id(n) for n in ast.parse(path.read_text()).body}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + (node.module.split(".") if node.module else []))
            elif (node.module or "") == "streamplace" or (node.module or "").startswith("streamplace."):
                module = node.module.removeprefix("streamplace").lstrip(".")
            else:
                module = None
            yield module, [a.name for a in node.names], id(node) in top


def _edges(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the streamplace modules it imports, at the top or inside a function (a lazy import
    still ties the two modules): a name that is a submodule counts as that module, and a submodule
    brings its packages (not the importer's own packages, which are running already)."""
    modules = _modules(root)
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for module, names, _ in _from_imports(path, root):
            if module is None:
                continue
            for imported in names:
                sub = f"{module}.{imported}" if module else imported
                target = sub if sub in modules else module
                # importing a.b.c runs the packages a.b and a first: they are imported too
                parts = target.split(".")
                for target in {".".join(parts[:i]) for i in range(1, len(parts) + 1)}:
                    if target in modules and target != name and not name.startswith(target + "."):
                        graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_inside_a_layer():
    graph = _edges()
    unit = {name: (name.split(".")[0] or "__init__") for name in graph}
    same_layer = {v: {w for w in ws if unit[w] == unit[v]} for v, ws in graph.items()}
    assert _cycles(same_layer) == []


def test_no_module_imports_another_packages_private_names():
    modules = _modules()
    found = []
    for name, path in modules.items():
        own = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for module, names, _ in _from_imports(path):
            if module is None:
                continue
            home = module if module in modules and modules[module].name == "__init__.py" else module.rpartition(".")[0]
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and home != own:
                found.append(f"{path.relative_to(ROOT)}: {', '.join(private)} from {module}")
    assert found == []


def test_the_cli_imports_only_the_public_api():
    """The command line is a client of the library: ``import streamplace`` (its attributes) and names
    of ``streamplace.api.__all__``, its own modules, click and rich, nothing else of streamplace."""
    import streamplace.api as api
    public = set(api.__all__) | {"__version__"}
    found = []
    for path in sorted((ROOT / "cli").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("streamplace"):
                        if a.name != "streamplace":
                            found.append(f"{path.name}: import {a.name}")
                        aliases.add(a.asname or a.name)
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    if node.level > 1 or module.split(".")[0] not in {p.stem for p in (ROOT / "cli").glob("*.py")} | {""}:
                        found.append(f"{path.name}: from {'.' * node.level}{module} import ...")
                elif module.startswith("streamplace"):
                    if module not in ("streamplace", "streamplace.api"):
                        found.append(f"{path.name}: from {module} import ...")
                    found += [f"{path.name}: {a.name} is not public" for a in node.names if a.name not in public]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                    and node.attr not in public:
                found.append(f"{path.name}: {node.value.id}.{node.attr} is not public")
    assert found == []


#: what a command may call besides its one use case: values and parsers of its options, and the
#: printers and writers of its result
CLI_VALUES = {"JobFiles", "parse_pairs", "per_scheduler", "storm_settings", "available", "quote"}
CLI_PRINTERS = {"dumps_json", "records_to_csv", "summary_table", "format_value", "metric", "describe", "write_document",
                "topology_to_dict", "cluster_to_dict", "profiling_to_dict"}


def _library_calls(function: ast.FunctionDef) -> set[str]:
    """The names ``sp.NAME(...)`` called in a command's body (not its decorators)."""
    return {node.func.attr for statement in function.body for node in ast.walk(statement)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "sp"}


def _commands(path: Path):
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "command" for d in node.decorator_list):
            yield node


def test_every_command_calls_one_use_case_of_the_library():
    """The CLI parses, calls one library function and prints: apart from the values and parsers of
    its options and the printers of its result, a command calls at most one function of the API."""
    found, seen = [], 0
    for path in sorted((ROOT / "cli").glob("*.py")):
        for command in _commands(path):
            seen += 1
            use_cases = sorted(_library_calls(command) - CLI_VALUES - CLI_PRINTERS)
            if len(use_cases) > 1:
                found.append(f"{path.name}:{command.name} calls {', '.join(use_cases)}")
    assert seen >= 20 and found == []


def test_the_use_case_check_sees_two_calls(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("@cli.command()\n@click.option('-x', help=sp.quote('x'))\ndef run(x):\n"
                      "    problem = sp.load_problem(x, x)\n    click.echo(sp.dumps_json(sp.compare(problem)))\n")
    (command,) = _commands(module)
    assert _library_calls(command) - CLI_VALUES - CLI_PRINTERS == {"load_problem", "compare"}


def test_the_structural_checks_see_a_cycle_and_a_private_import(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from .b import thing\n")
    (tmp_path / "pkg" / "b.py").write_text("from . import a\nfrom ..other import _hidden\n")
    (tmp_path / "other.py").write_text("_hidden = 1\n")
    graph = _edges(tmp_path)
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a", "other"}
    assert _cycles(graph) == [["pkg.a", "pkg.b"]]
    assert list(_from_imports(tmp_path / "pkg" / "b.py", tmp_path))[1][:2] == ("other", ["_hidden"])


def test_the_cli_starts_without_pandas_or_spark():
    """Importing the command line (what every ``streamplace`` process does first, ``--help``
    included) loads neither pandas (about 0.5 s), PySpark nor Matplotlib: the modules that use
    them import them where they do."""
    import subprocess
    import sys
    probe = "import sys, streamplace.cli; print(sorted(m for m in ('pandas', 'pyspark', 'matplotlib') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout

"""The CLI's contract, for every command, on generated hostile inputs (Hypothesis).

The commands are found by walking the command group, and each one's arguments are generated
from its own parameters (a path argument gets a file, an output gets an output path, a choice
one of its choices or not, a number a number or not), so a command added later is covered
without anyone listing its cases. Whatever is generated, the contract holds:

- the exit code is 0, 2 (refused) or 3 (no placement);
- a refusal is one line ``streamplace: ...`` on stderr (after any ``streamplace: note:`` said
  before the work started), never a traceback;
- no input file changes (contents hashed before and after);
- JSON printed on stdout parses, with no NaN or Infinity.

Commands that start Spark or Storm, or run until stopped (:data:`HEAVY`), get at least one input that must be refused,
so they are checked on the paths that run before the engine starts; their full runs are tested
in tests/profile, tests/storm and tests/demo.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
from pathlib import Path

import click
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from streamplace.cli import cli, main
from streamplace.cli.base import OutputPath

NOTES = ("streamplace: note: ", "streamplace: warning: ")
HEAVY = {"demo", "profile", "traffic", "sweep", "reproduce", "storm run", "autopilot"}   # autopilot: runs until stopped
EXAMPLES = 60   # per command (about 0.3 s per command in process; the heavy ones stop at their refusal)


def _commands(group: click.Group, prefix=()) -> dict[str, click.Command]:
    found = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.update(_commands(command, (*prefix, name)))
        else:
            found[" ".join((*prefix, name))] = command
    return found


COMMANDS = _commands(cli)

TOPOLOGY = """name: t
operators:
- {name: s, parallelism: 2, role: source}
- {name: a, parallelism: 2}
- {name: b, parallelism: 1, role: sink}
streams:
- {from: s, to: a, grouping: shuffle}
- {from: a, to: b, grouping: fields, key: k}
"""
CLUSTER = "name: c\nnodes:\n- {name: n0, capacity: 4, slots: 2}\n- {name: n1, capacity: 4, slots: 2}\n"
PLACEMENT = json.dumps({"placement": {"s[0]": {"node": "n0", "worker": 0}, "s[1]": {"node": "n1", "worker": 0},
                                      "a[0]": {"node": "n0", "worker": 1}, "a[1]": {"node": "n1", "worker": 1},
                                      "b[0]": "n0"}})
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(i)}: &{chr(i)} [{', '.join(['*' + chr(i - 1)] * 9)}]\n" for i in range(ord("b"), ord("j")))
HOSTILE = {
    "empty.yaml": "", "broken.json": "{not json", "dup.yaml": TOPOLOGY + "name: again\n",
    "dup.json": '{"name": "a", "name": "b"}', "bomb.yaml": BOMB, "nan.yaml": TOPOLOGY.replace("parallelism: 1,", "parallelism: .nan,"),
    "huge.json": json.dumps({"name": "c", "nodes": [{"name": "n", "capacity": 1e308, "slots": 1e308}]}),
    "slots.yaml": CLUSTER.replace("slots: 2}", "slots: 1000000000}"), "neg.yaml": TOPOLOGY.replace("parallelism: 2", "parallelism: -2"),
    "list.yaml": "- 1\n- 2\n", "binary.yaml": "\x00\xff\xfe garbage",
    "dup-task.json": PLACEMENT.replace('{"s[0]"', '{"s[0]": "n1", "s[0]"'),
    "long-name.yaml": TOPOLOGY.replace("name: t", "name: " + "x" * 5000),
}
VALID = {"topology": "t.yaml", "cluster": "c.yaml", "placement": "p.json", "source": "ui"}
UI = Path(__file__).resolve().parents[1] / "storm" / "storm-ui" / "wordcount"   # saved Storm UI responses
ROLE_WORDS = {"topology": "topology", "cluster": "cluster", "placement": "placement", "plan": "placement",
              "current": "placement", "first": "placement", "second": "placement", "source": "source"}
NUMBERS = ["0", "1", "0.5", "-1", "nan", "inf", "-inf", "1e308", "1e23", "x", "", "2147483648"]
TEXTS = ["", "x", "a=b", "=", "theta=1e308", "seed=-1", "time_limit=nan", "even", "nope", "\u00e9", "x" * 300]
VALID_TEXTS = {"name": ["even", "metis", "lns", "optimal", "online"], "names": ["even,metis", "even", "rstorm,t3"],
               "params": ["seed=1"], "compare params": ["even.seed=1", "metis.seed=2"], "window": ["600"]}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("inputs")
    (root / "t.yaml").write_text(TOPOLOGY)
    (root / "c.yaml").write_text(CLUSTER)
    (root / "p.json").write_text(PLACEMENT)
    for name, text in HOSTILE.items():
        (root / name).write_text(text, encoding="utf-8", errors="surrogateescape")
    shutil.copytree(UI, root / "ui")
    (root / "adir").mkdir()
    (root / "adir" / "topology.json").write_text("{}")
    return root


def _role(param: click.Parameter) -> str:
    return next((role for word, role in ROLE_WORDS.items() if word in (param.name or "")), "")


def _value(draw, command: str, param: click.Parameter, root: Path, hostile: bool) -> list[str]:
    """One drawn value of ``param`` as command-line words: a valid one, or (``hostile``) anything."""
    kind = param.type
    if isinstance(kind, OutputPath):
        valid = ["out", "out/new"] if kind.kind in ("dir", "into") else ["out/r.json", "out/r.yaml"]
        bad = ["out/r.txt", "out/noext", "t.yaml", "c.yaml", "adir", "adir/new.json", "p.json", ".", "out/r.json"]
        return [str(root / draw(st.sampled_from(bad if hostile else valid)))]
    if isinstance(kind, click.Path):
        valid = VALID.get(_role(param))
        if valid and not hostile:
            return [str(root / valid)]
        if not hostile and isinstance(param, click.Option):
            return []   # an optional file with no valid fixture (a profile, a cost model): left out
        return [str(root / draw(st.sampled_from([*HOSTILE, "missing.yaml", "adir", *VALID.values()])))]
    if isinstance(kind, click.Choice):
        return [draw(st.sampled_from(list(kind.choices) + (["bogus"] if hostile else [])))]
    if isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        return [draw(st.sampled_from(NUMBERS if hostile else ["0", "1", "2"]))]
    if hostile:
        return [draw(st.sampled_from(TEXTS))]
    valid = VALID_TEXTS.get(f"{command} {param.name}", VALID_TEXTS.get(param.name))
    return [draw(st.sampled_from(valid))] if valid else []


def _refused(param: click.Parameter) -> str | None:
    """A value of ``param`` certain to be refused while the command line is read, before any
    engine starts (None: the parameter has none)."""
    kind = param.type
    if isinstance(kind, OutputPath):
        return "t.yaml" if kind.kind in ("dir", "into") else "out/r.txt"   # a file for a directory; an unknown format
    if isinstance(kind, click.Choice):
        return "bogus"
    if isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        return "x"
    return None


@st.composite
def invocations(draw, name: str, root: Path):
    command = COMMANDS[name]
    params = [p for p in command.params if p.name not in ("help",)]
    refusable = [p.name for p in params if _refused(p) is not None and not getattr(p, "is_flag", False)]
    forced = draw(st.sampled_from(refusable)) if name in HEAVY else None
    args: list[str] = name.split()
    positional: list[str] = []
    for param in params:
        if param.name == forced:
            value = _refused(param)
            value = str(root / value) if isinstance(param.type, OutputPath) else value
            if isinstance(param, click.Argument):
                positional.append(value)
            else:
                args += [param.opts[0], value]
            continue
        hostile = draw(st.integers(0, 5)) == 0
        if isinstance(param, click.Argument):
            words = _value(draw, name, param, root, hostile)
            positional += words if param.nargs != -1 or hostile else []
            continue
        if getattr(param, "is_flag", False):
            args += [param.opts[0]] if draw(st.booleans()) else []
            continue
        if param.required or hostile or draw(st.integers(0, 3)) == 0:
            words = _value(draw, name, param, root, hostile)
            args += [param.opts[0], *words] if words else []
    if name in ("schedule", "reschedule", "compare", "storm run"):
        args += ["--time-limit", "1"]   # a valid spec solves in well under a second; keep optimal/lns short
    return [*args, *positional], forced


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code, out.getvalue(), err.getvalue()


def _strict_json(text: str):
    def refuse(name):
        raise ValueError(f"{name} in JSON output")
    return json.loads(text, parse_constant=refuse)


def _inputs_of(argv: list[str], root: Path) -> list[Path]:
    """The files of ``root`` this invocation names as inputs (outputs are the words after -o/--output)."""
    named = {Path(w) for i, w in enumerate(argv) if not (i and argv[i - 1] in ("-o", "--output", "--profiling-out"))}
    files = [p for p in root.rglob("*") if p.is_file()]
    return [p for p in files if p in named or any(d in named for d in p.parents)]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_keeps_the_contract(inputs, name, monkeypatch, tmp_path):
    monkeypatch.setenv("STREAMPLACE_MEMORY_LIMIT", "2G")   # the estimates refuse, whatever this machine has
    monkeypatch.setenv("STREAMPLACE_SPARK_MASTER", "spark://127.0.0.1:1")   # a heavy command that got this far fails fast
    counter = iter(range(10**6))

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(invocations(name, inputs))
    def check(invocation):
        argv, _ = invocation
        root = tmp_path / str(next(counter))   # a fresh copy per example: one example's output is never the next's input
        shutil.copytree(inputs, root, symlinks=True)
        argv = [w.replace(str(inputs), str(root)) for w in argv]
        named = _inputs_of(argv, root)
        before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in named}
        code, out, err = _run(argv)
        event(f"exit {code}")
        assert code in (0, 2, 3), (argv, code, err[-2000:])
        assert "Traceback" not in err and "Traceback" not in out, (argv, err[-2000:])
        if code == 2:   # one error line; notes said before the work (e.g. which schedulers take no time limit) may precede it
            lines = [line for line in err.splitlines() if line.strip() and not line.startswith(NOTES)]
            assert len(lines) == 1 and lines[0].startswith("streamplace: "), (argv, err[-2000:])
            assert len(lines[0]) <= 2200, argv
        if code in (0, 3) and "json" in argv and out.strip().startswith(("{", "[")):
            _strict_json(out)
        after = {p: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None for p in named}
        assert after == before, argv   # no input changed or deleted
        shutil.rmtree(root, ignore_errors=True)

    check()

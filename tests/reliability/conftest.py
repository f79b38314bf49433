"""Helpers for the reliability tests: run the real CLI as a process, look at files and processes."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from streamplace.interrupt import descendants

CLI = [sys.executable, "-m", "streamplace"]


def run_cli(*args, cwd=None, timeout=300, env=None) -> subprocess.CompletedProcess:
    """``streamplace ARGS`` as a separate process (exit code, stdout, stderr as text)."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    full_env.pop("STREAMPLACE_SPARK_MASTER", None)
    return subprocess.run([*CLI, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full_env)


def one_line(proc: subprocess.CompletedProcess) -> str:
    """The single stderr line of a refused run (asserts there is exactly one, and no traceback)."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and lines[0].startswith("streamplace: "), proc.stderr
    return lines[0]


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256), hidden ones included."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(root).rglob("*")) if p.is_file()}


def handles_sigterm(pid: int) -> bool:
    """True once process ``pid`` catches SIGTERM (its ``SigCgt`` mask in ``/proc``). Python installs
    no SIGTERM handler of its own, so this is the command's (``run_interruptible`` installs the
    SIGINT and SIGTERM handlers together): before it, a signal meets the interpreter still
    importing, not the command."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:")), 0)
    return bool(caught >> (signal.SIGTERM - 1) & 1)


def interrupt(args, *, ready, sig=signal.SIGINT, cwd=None, timeout=240, env=None):
    """Start the CLI (``env`` added to this process's environment), wait until the command handles
    signals and ``ready(proc)`` is true, send ``sig``; return (exit code, seconds from signal to
    exit, stderr, descendant pids seen just before the signal)."""
    env = {**os.environ, **(env or {})}
    env.pop("STREAMPLACE_SPARK_MASTER", None)
    proc = subprocess.Popen([*CLI, *map(str, args)], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        began = time.monotonic()
        while not (handles_sigterm(proc.pid) and ready(proc)):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() - began < timeout, "never became ready"
            time.sleep(0.1)
        assert proc.poll() is None, "the command finished before the signal: make its work longer"
        children = descendants(proc.pid)
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        return proc.returncode, time.monotonic() - sent, err.decode(), children
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def gone(pids, wait: float = 5.0) -> bool:
    """True once none of ``pids`` is a live process (zombies count as gone)."""
    deadline = time.monotonic() + wait
    while True:
        alive = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if state != b"Z":
                alive.append(pid)
        if not alive or time.monotonic() > deadline:
            return not alive
        time.sleep(0.1)


def write_yaml(path: Path, doc) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.fixture
def small(tmp_path):
    """A 10-task topology and a 10-node cluster written as files."""
    topo = write_yaml(tmp_path / "topology.yaml", {
        "name": "small", "operators": [{"name": "S", "parallelism": 4, "role": "source", "source_rate": 100.0},
                                       {"name": "B", "parallelism": 6}],
        "streams": [{"from": "S", "to": "B", "grouping": "shuffle"}]})
    cluster = write_yaml(tmp_path / "cluster.yaml", {"name": "c", "nodes": [{"name": f"n{i}", "capacity": 4} for i in range(10)]})
    return topo, cluster


@pytest.fixture
def rel():
    """These helpers (run_cli, one_line, snapshot, interrupt, gone, write_yaml) for the test modules."""
    return sys.modules[__name__]

"""Java and the built Storm module: finding them, and running a JVM that is always stopped.

The module is built by Maven (``make storm``) into ``storm/target/``: the harness jar
(:data:`HARNESS_JAR`: the runners, the spec topology and the traffic monitor, which the runner JVM
loads and the testbed's workers receive as the topology jar), the plugin jar (:data:`PLUGIN_JAR`:
only the plan scheduler and what it uses, for Nimbus) and ``classpath.txt`` (Storm and its
dependencies in the local Maven repository). ``STREAMPLACE_STORM_HOME`` points elsewhere, e.g. at
an installed copy of those three files.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import StormError

HOME_ENV = "STREAMPLACE_STORM_HOME"
MIN_JAVA = 17
REPO_STORM = Path(__file__).resolve().parents[2] / "storm"
HARNESS_JAR = "streamplace-storm-harness.jar"
PLUGIN_JAR = "streamplace-storm-plugin.jar"
#: the runners' class-data-sharing archive, beside the jars: the build dumps the classes listed in
#: ``storm/conf/cds/runner.classlist`` with the runners' class path (:func:`classpath`)
RUNNER_ARCHIVE = "runner.jsa"


def module_dir() -> Path:
    """Directory with the built jars and ``classpath.txt``."""
    env = os.environ.get(HOME_ENV)
    return Path(env) if env else REPO_STORM / "target"


def java() -> str:
    """The ``java`` to run (``$JAVA_HOME/bin/java``, else the one on PATH), checked to be >= 17."""
    home = os.environ.get("JAVA_HOME")
    exe = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not exe or not Path(exe).exists():
        raise StormError(f"Storm needs Java {MIN_JAVA}+: no java found (set JAVA_HOME or put java on PATH)")
    try:
        out = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StormError(f"Storm needs Java {MIN_JAVA}+: {exe} -version failed: {exc}") from None
    match = re.search(r'version "(\d+)', out)
    if not match or int(match.group(1)) < MIN_JAVA:
        raise StormError(f"Storm needs Java {MIN_JAVA}+: {exe} reports {out.splitlines()[0] if out else 'nothing'}")
    return exe


def jar(name: str) -> Path:
    """The built jar ``name`` (:data:`HARNESS_JAR` or :data:`PLUGIN_JAR`), checked to exist."""
    path = module_dir() / name
    if not path.exists():
        raise StormError(f"the Storm module is not built ({path} missing): run `make storm` (Maven), "
                         f"or set {HOME_ENV} to a directory with {HARNESS_JAR}, {PLUGIN_JAR} and classpath.txt")
    return path


def classpath() -> str:
    """The runner's classpath: the harness jar, then Storm's."""
    harness, cp = jar(HARNESS_JAR), module_dir() / "classpath.txt"
    if not cp.exists():
        raise StormError(f"the Storm module is not built ({cp} missing): run `make storm` (Maven), "
                         f"or set {HOME_ENV} to a directory with {HARNESS_JAR}, {PLUGIN_JAR} and classpath.txt")
    return f"{harness}{os.pathsep}{cp.read_text().strip()}"


def archive_opts(archive: Path) -> list[str]:
    """``-XX:SharedArchiveFile`` for the class-data-sharing archive ``archive``, where it exists:
    the JVM maps the classes it holds instead of reading, parsing and verifying them again. A JVM
    whose class path or jars no longer match the archive ignores it and starts as without it."""
    return [f"-XX:SharedArchiveFile={archive}"] if archive.is_file() else []


def log_config() -> Path:
    return REPO_STORM / "conf" / "runner-log4j2.xml"


@contextmanager
def child(cmd: list[str], stderr_path: Path) -> Iterator[subprocess.Popen]:
    """Start ``cmd`` in its own process group; on leaving (normally, on error, Ctrl-C or SIGTERM)
    the whole group is terminated (SIGTERM, then SIGKILL after 5 s) and reaped. A Ctrl-C or
    SIGTERM that arrives while the process starts is held until it has started, then acted on
    like one that came later: raised inside ``Popen``, it would leave the new JVM running with no
    one to stop it (seen once in a test that interrupts a testbed run as it comes up)."""
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
    with _held_signals() as held, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        for sig in held:
            signal.raise_signal(sig)   # through the handlers again in place: raises here
        yield proc
    finally:
        stop(proc)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)


def _terminated(signum, frame):
    raise SystemExit(128 + signum)


@contextmanager
def _held_signals() -> Iterator[list[int]]:
    """In the main thread, SIGINT and SIGTERM are noted rather than handled until the block ends
    (then the handlers are back); yields the list of those that came. A new process does not
    inherit the noting handler: exec resets caught signals to their defaults."""
    came: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield came
        return
    previous = {sig: signal.signal(sig, lambda signum, frame: came.append(signum)) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield came
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """Terminate ``proc``'s process group and wait for it (no stray JVM survives). A second
    Ctrl-C or SIGTERM while this runs is held back until the group is gone."""
    if threading.current_thread() is not threading.main_thread():
        return _stop(proc, grace)
    held = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        _stop(proc, grace)
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)


def _stop(proc: subprocess.Popen, grace: float) -> None:
    if proc.poll() is None:
        _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    _signal_group(proc, signal.SIGKILL)  # also children that outlived the leader
    proc.wait()
    if proc.stdout:
        proc.stdout.close()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def peak_rss_mb(pid: int) -> float | None:
    """Peak resident memory of a live process (``VmHWM``), in MB; None if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None

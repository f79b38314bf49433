"""Ctrl-C and SIGTERM for the command line: stop within a moment, whatever is running.

:func:`run_interruptible` runs a command's work in a worker thread while the main thread waits
for it with signals enabled. Native code (CP-SAT, METIS, a Spark job in the JVM) cannot be
stopped from Python in general, so on SIGINT/SIGTERM the main thread abandons the worker: it
removes the temporary files and directories registered with :func:`temporary` (half-written
outputs), runs the actions registered with :func:`cleanup` (the Storm testbed's namespaces and
cgroups), kills this process's child processes (Spark's JVM), prints one line and ends the
process with ``_exit`` (exit 130 for SIGINT, 143 for SIGTERM). Finished outputs were renamed
into place atomically, so they stay; a sweep keeps its finished parts.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from contextlib import contextmanager

EXIT_BY_SIGNAL = {signal.SIGINT: 130, signal.SIGTERM: 143}

_temporaries: set[str] = set()
_cleanups: list = []
_lock = threading.Lock()


def hold(path) -> None:
    """Register ``path`` (a temporary file or directory) for removal if the process is interrupted,
    until :func:`release` (for temporaries that outlive one block, e.g. Spark's local directory)."""
    with _lock:
        _temporaries.add(str(path))


def release(path) -> None:
    with _lock:
        _temporaries.discard(str(path))


@contextmanager
def temporary(path):
    """Register ``path`` (a temporary file or directory) for removal if the process is interrupted."""
    hold(path)
    try:
        yield path
    finally:
        release(path)


@contextmanager
def cleanup(action):
    """Register ``action()`` (no arguments) to run if the process is interrupted inside the block,
    after the temporaries are removed and before child processes are killed (e.g. tearing down
    network namespaces and cgroups that outlive their processes)."""
    with _lock:
        _cleanups.append(action)
    try:
        yield action
    finally:
        with _lock:
            if action in _cleanups:
                _cleanups.remove(action)


def _run_cleanups() -> None:
    with _lock:
        actions = list(reversed(_cleanups))
    for action in actions:
        try:
            action()
        except Exception:  # a failing clean-up must not stop the others
            pass


def _remove_temporaries() -> None:
    with _lock:
        paths = list(_temporaries)
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def descendants(pid: int) -> list[int]:
    """Process ids of all descendants of ``pid`` (from /proc; empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_children(grace: float = 0.5, first: int = signal.SIGTERM) -> None:
    """Signal every descendant process with ``first``, then SIGKILL those still there after ``grace`` seconds."""
    pids = descendants(os.getpid())
    for pid in pids:
        try:
            os.kill(pid, first)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if os.path.exists(f"/proc/{p}") and not _is_zombie(p)]
        time.sleep(0.05)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


class ChildFailed(RuntimeError):
    """The child process of :func:`in_child` ended without an answer (killed, or aborted by native
    code); ``signal`` is the signal that ended it, if one did; ``said`` the last line it wrote to
    stderr ("" if none), e.g. the failed check of native code that aborted."""

    def __init__(self, message: str, signal: int | None = None, said: str = ""):
        super().__init__(message)
        self.signal, self.said = signal, said

    def __reduce__(self):   # it crosses a process when an in_child call runs inside another
        return type(self), (str(self), self.signal, self.said), self.__dict__


def _last_line(text: str) -> str:
    """The last line of ``text`` that says something, without a glog prefix (``F1129 ... x.cc:12] ``)."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith((" ", "\t", "@", "***"))]
    if not lines:
        return ""
    line = lines[-1]
    head, sep, rest = line.partition("] ")
    return rest if sep and head[:1] in "FEWI" and ".cc:" in head else line


def _ending(status: int) -> tuple[str, int | None]:
    """A wait status in words, and the signal that ended the process (None if it exited)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            return f"signal {signal.Signals(sig).name}", sig
        except ValueError:
            return f"signal {sig}", sig
    return f"exit code {os.WEXITSTATUS(status)}", None


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its children that ended and were waited
    for, so that a search :func:`in_child` ran (``Scheduler.native_solver``) counts."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def in_child(fn, *args):
    """``fn(*args)`` in a forked child process; return its result or re-raise its exception here.

    For long native calls that hold the GIL (METIS on millions of edges holds it for seconds):
    the signal handler of :func:`run_interruptible` could not run until the call returned, but a
    child process is killed like any other (:func:`kill_children`) and this process stops at once.
    Also for native code that may abort the process (OR-Tools' CP-SAT: ``Scheduler.native_solver``):
    the child dies, this process raises :class:`ChildFailed` and goes on.
    Result and exception travel back pickled through a pipe. POSIX only; elsewhere ``fn`` runs here.
    """
    if not hasattr(os, "fork"):
        return fn(*args)
    for stream in (sys.stdout, sys.stderr):  # else the child would write their buffers a second time
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    said = tempfile.TemporaryFile()   # the child's stderr: a native abort's trace is not printed, its check is reported
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except BaseException:
        for fd in (read_fd, write_fd):
            os.close(fd)
        said.close()
        raise
    if pid == 0:  # the child: default signal actions (killed outright), one answer, no clean-up
        os.close(read_fd)
        os.dup2(said.fileno(), 2)
        faulthandler.disable()   # where enabled (pytest), it would dump this child's stacks elsewhere than fd 2
        for sig in EXIT_BY_SIGNAL:
            signal.signal(sig, signal.SIG_DFL)
        try:
            with os.fdopen(write_fd, "wb") as out:
                out.write(_answer(fn, args))
        finally:
            os._exit(0)
    os.close(write_fd)
    data, reaped = b"", False
    try:
        with os.fdopen(read_fd, "rb") as answer_in:
            data = answer_in.read()  # releases the GIL while the child works
        _, status = os.waitpid(pid, 0)
        reaped = True
        said.seek(0)
        text = said.read().decode(errors="replace")
    finally:
        said.close()
        if not reaped:   # interrupted here (KeyboardInterrupt in a library caller): the child goes too
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
    if not data:
        how, sig = _ending(status)
        last = _last_line(text)
        raise ChildFailed(f"the child process computing {getattr(fn, '__name__', fn)} ended without an answer ({how}"
                          f"{'; it said: ' + last if last else ''})", sig, last)
    if text:   # what the child wrote to stderr (warnings), passed on
        sys.stderr.write(text)
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value


def _answer(fn, args) -> bytes:
    """(True, result) or (False, exception) of ``fn(*args)``, pickled. An exception keeps where it
    was raised in the child as a note (shown with ``--debug``); one that would not come back
    whole (a constructor pickle cannot call) comes back as a RuntimeError naming it."""
    try:
        return pickle.dumps((True, fn(*args)), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:
        exc.add_note("raised in a child process (streamplace.interrupt.in_child):\n" + traceback.format_exc())
        try:
            data = pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
            pickle.loads(data)
            return data
        except Exception:
            return pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")), protocol=pickle.HIGHEST_PROTOCOL)


def run_interruptible(work, *, message: str = "streamplace: interrupted"):
    """``work()`` in a worker thread; return its result or re-raise its exception here.

    On SIGINT/SIGTERM: clean up (temporaries, child processes), print ``message`` to stderr and
    ``_exit`` with 130/143. Only from the main thread; elsewhere ``work()`` simply runs.
    """
    if threading.current_thread() is not threading.main_thread():
        return work()
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = work()
        except BaseException as exc:  # re-raised in the main thread
            outcome["error"] = exc

    def stop(signum, _frame):
        # Ignore further signals while cleaning up (a second Ctrl-C must not interrupt the clean-up).
        for sig in EXIT_BY_SIGNAL:
            signal.signal(sig, signal.SIG_IGN)
        try:
            _remove_temporaries()
            _run_cleanups()
            # SIGKILL at once: a JVM told to stop (Spark's) logs its shutdown races on our stderr,
            # which must hold the one line below and nothing else
            kill_children(grace=0.0, first=signal.SIGKILL)
            _remove_temporaries()  # a child may have been writing into one
            sys.stdout.flush()
        finally:
            os.write(2, (message + "\n").encode())
            os._exit(EXIT_BY_SIGNAL[signum])

    previous = {sig: signal.signal(sig, stop) for sig in EXIT_BY_SIGNAL}
    try:
        worker = threading.Thread(target=target, name="streamplace-command", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.1)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


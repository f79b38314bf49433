"""streamplace.interrupt.in_child: a native call in a child process that Ctrl-C can abandon."""

import os
import signal

import numpy as np
import pytest

from streamplace.interrupt import ChildFailed, cpu_seconds, in_child
from streamplace.partition import kway


def _where_and_sum(values):
    return os.getpid(), int(np.sum(values))


def _fails(message):
    raise ValueError(message)


def _dies():
    os._exit(3)


def test_the_result_comes_back_from_another_process():
    pid, total = in_child(_where_and_sum, np.arange(10))
    assert pid != os.getpid()
    assert total == 45


def test_the_childs_exception_is_raised_here():
    with pytest.raises(ValueError, match="bad graph"):
        in_child(_fails, "bad graph")


def test_a_child_that_dies_without_answering_is_an_error():
    with pytest.raises(ChildFailed, match=r"without an answer \(exit code 3\)") as info:
        in_child(_dies)
    assert info.value.signal is None and info.value.said == ""


def _aborts_as_glog_does():
    os.write(2, b"I1129 19:50:11.000001 4242 solver.cc:10] starting\n"
                b"F1129 19:50:12.345678 4242 integer_search.cc:99] Check failed: heuristics.fixed_search != nullptr \n"
                b"*** Check failure stack trace: ***\n    @     0x7f0c2a1b2c3d  (unknown)\n    @     0x7f0c2a1b2c40  (unknown)\n")
    os.abort()


def test_a_native_abort_names_the_signal_and_the_failed_check_without_its_trace():
    """The child's stderr is kept from this process's: of a native abort (CP-SAT's glog check), the
    failed check is reported, the stack trace is not."""
    with pytest.raises(ChildFailed) as info:
        in_child(_aborts_as_glog_does)
    assert info.value.signal == signal.SIGABRT and "signal SIGABRT" in str(info.value)
    assert info.value.said == "Check failed: heuristics.fixed_search != nullptr"


def _warns_and_answers():
    os.write(2, b"a warning\n")
    return 7


def test_what_a_child_that_answers_wrote_to_stderr_is_passed_on(capsys):
    assert in_child(_warns_and_answers) == 7
    assert capsys.readouterr().err == "a warning\n"


def test_metis_in_a_child_gives_the_same_partition(monkeypatch):
    rng = np.random.default_rng(5)
    import scipy.sparse as sp
    g = sp.random(600, 600, density=0.05, random_state=7)
    g = kway._clean(g + g.T)
    vw, tp = rng.uniform(1, 2, 600), np.full(4, 0.25)
    here = kway._metis(g, vw, tp, 1.05, 0, 1)
    monkeypatch.setattr(kway, "CHILD_PROCESS_EDGES", 0)
    assert np.array_equal(kway._metis(g, vw, tp, 1.05, 0, 1), here)


def _spins(seconds):
    import time
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return seconds


def test_cpu_seconds_count_the_work_of_a_child_that_answered():
    """A search run in a child (a native solver's) is CPU this process's callers spent: the
    autopilot's starvation rule and the scale benchmark measure it with :func:`cpu_seconds`."""
    import time
    own, total = time.process_time(), cpu_seconds()
    in_child(_spins, 0.4)
    assert cpu_seconds() - total >= 0.35 and time.process_time() - own < 0.2


def _refuses(kind):
    from streamplace.files import SpecError
    from streamplace.model.topology import TopologyError
    if kind == "spec":
        raise SpecError("t.yaml", "operators[0].parallelism", "must be >= 1")
    if kind == "field":
        raise TopologyError("streams[1].to", "unknown operator 'x'")

    class Local(Exception):   # defined here: pickle cannot find it by name
        pass
    raise Local("half-built")


@pytest.mark.parametrize("kind", ["spec", "field"])
def test_an_input_error_raised_in_the_child_comes_back_whole(kind):
    """SpecError and FieldError take several arguments: they cross the pipe as themselves, so the
    command line still prints their one line and exits 2, and the child's traceback is a note."""
    from streamplace.files import SpecError
    from streamplace.model.topology import TopologyError
    with pytest.raises(SpecError if kind == "spec" else TopologyError) as info:
        in_child(_refuses, kind)
    err = info.value
    if kind == "spec":
        assert (err.file, err.field_path, err.problem) == ("t.yaml", "operators[0].parallelism", "must be >= 1")
    else:
        assert (err.field_path, err.problem) == ("streams[1].to", "unknown operator 'x'")
    assert "raised in a child process" in err.__notes__[0] and "_refuses" in err.__notes__[0]


def test_an_exception_that_cannot_come_back_whole_is_a_runtime_error_naming_it():
    with pytest.raises(RuntimeError, match="Local: half-built"):
        in_child(_refuses, "other")

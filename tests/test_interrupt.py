"""streamplace.interrupt.in_child: a native call in a child process that Ctrl-C can abandon."""

import os

import numpy as np
import pytest

from streamplace.interrupt import in_child
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
    with pytest.raises(RuntimeError, match="without an answer"):
        in_child(_dies)


def test_metis_in_a_child_gives_the_same_partition(monkeypatch):
    rng = np.random.default_rng(5)
    import scipy.sparse as sp
    g = sp.random(600, 600, density=0.05, random_state=7)
    g = kway._clean(g + g.T)
    vw, tp = rng.uniform(1, 2, 600), np.full(4, 0.25)
    here = kway._metis(g, vw, tp, 1.05, 0, 1)
    monkeypatch.setattr(kway, "CHILD_PROCESS_EDGES", 0)
    assert np.array_equal(kway._metis(g, vw, tp, 1.05, 0, 1), here)

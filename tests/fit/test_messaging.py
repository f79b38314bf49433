"""streamplace.fit.messaging: the regression of a node's CPU outside executors on its workers and messages."""

import pytest

from streamplace.fit.messaging import NodeRow, regress


def _row(workers, messages, cores):
    return NodeRow("s", "n", workers, messages, cores, 0.0)


def test_regression_recovers_a_known_linear_cost():
    rows = [_row(w, m, 0.01 + 0.02 * w + 3e-6 * m) for w, m in [(1, 0), (1, 5000), (2, 1000), (3, 20000), (2, 8000)]]
    fit = regress(rows)
    assert (fit.base, fit.per_worker, fit.per_message) == pytest.approx((0.01, 0.02, 3e-6))
    assert fit.r2 == pytest.approx(1.0) and fit.n == 5


def test_too_few_rows_for_three_coefficients_is_an_error():
    with pytest.raises(ValueError, match="3 node rows: at least 4"):
        regress([_row(1, 0, 0.1)] * 3)

"""streamplace.fit.messaging: the regression of a node's CPU outside executors on its workers and messages."""

import pytest

from streamplace.fit.messaging import NodeRow, regress


def _row(workers, messages, cores):
    return NodeRow("j", "s", "n", workers, messages, 1.0, cores, 0.0)


def test_regression_recovers_a_known_linear_cost():
    rows = [_row(w, m, 0.01 + 0.02 * w + 3e-6 * m) for w, m in [(1, 0), (1, 5000), (2, 1000), (3, 20000), (2, 8000)]]
    fit = regress(rows)
    assert (fit.base, fit.per_worker, fit.per_message) == pytest.approx((0.01, 0.02, 3e-6))
    assert fit.r2 == pytest.approx(1.0) and fit.n == 5


def test_too_few_rows_for_three_coefficients_is_an_error():
    with pytest.raises(ValueError, match="3 node rows: at least 4"):
        regress([_row(1, 0, 0.1)] * 3)


def test_node_rows_of_campaign_records_hold_the_cpu_outside_the_executors_the_campaign_recorded():
    """Every node hosting a worker in every run, its cores outside executors equal to its cgroup's
    cores less the executor cores the campaign recorded per node (``node_executor_cpu``, summed
    by the campaign from the same load records along another path)."""
    from pathlib import Path

    from streamplace.fit import runs as fit_runs
    from streamplace.fit.messaging import node_rows
    from streamplace.reproduce.measured import load_runs
    path = Path(__file__).resolve().parents[1] / "fixtures" / "campaigns" / "frequent-routes-acking-msp10-first4.jsonl"
    records = load_runs(path)
    rows = node_rows(records, fit_runs.run_problems())
    assert len(records) == 4 and all(r["ackers"] == 3 for r in records)
    expected = {(r["scheduler"], node): r["node_cpu"][node]["cores"] - cores
                for r in records for node, cores in r["node_executor_cpu"].items()}
    assert {(row.scheduler, row.node): row.other_cores for row in rows} == pytest.approx(expected, abs=1e-5)
    assert all(row.messages > 0 and row.workers >= 1 for row in rows)

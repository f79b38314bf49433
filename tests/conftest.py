"""Shared test helpers: independent (loop-based) recomputation of costs."""

import itertools

import pytest


def recompute_costs(problem, node, worker):
    """Inter-node and inter-worker cost by a plain double loop over the dense matrix."""
    w = problem.graph.dense_weights()
    inter_node = inter_worker = 0.0
    for u, v in itertools.combinations(range(problem.n_tasks), 2):
        if w[u, v] == 0:
            continue
        if node[u] != node[v]:
            inter_node += w[u, v]
        elif worker[u] != worker[v]:
            inter_worker += w[u, v]
    return inter_node, inter_worker


@pytest.fixture
def recompute():
    return recompute_costs


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession (2 cores) for the whole test run (tests/profile and tests/bench)."""
    from streamplace.profile.spark import start_session, stop_session
    session = start_session("local[2]", fast_start=True, shuffle_partitions=2, driver_memory="1g")
    yield session
    stop_session(session)


@pytest.fixture
def cli(capsys):
    """Runs the command line in this process: ``cli(args)`` -> (exit code, stdout, stderr)."""
    from streamplace.cli import main

    def run(args):
        with pytest.raises(SystemExit) as exit_info:
            main([str(a) for a in args])
            raise SystemExit(0)
        out = capsys.readouterr()
        return exit_info.value.code or 0, out.out, out.err
    return run

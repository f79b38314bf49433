"""Shared test helpers: independent (loop-based) recomputation of costs; which tests share a
test worker.

``make test`` runs the suite on three pytest-xdist workers (``--dist loadgroup``; on this 2-core
machine three kept both cores busier than two while tests wait on Storm: 354 and 389 s against 400
and 421 s; four, tried 2026-11-30, were not better: 291 s against 298 s in place, but ``make test`` on a
clean clone took 378 s, against 370 and 371 s with three). The tests of a
module that shares something expensive run on one worker, as one group
(:func:`pytest_collection_modifyitems`), the first rule that applies:

* ``testbed``: modules that use the Storm testbed (one at a time on a machine: its lock), and the
  demo's, whose Storm step takes the testbed when it is free and embedded Storm when another run
  holds it;
* ``spark-profile`` and ``spark``: modules with a test on the session's SparkSession, those under
  ``tests/profile`` (which alone use the standalone Spark cluster) and the others: two groups, so a
  session of 1 GiB on at most two workers. Tried 2026-11-29 with the Spark modules spread over
  all the workers, one session per worker: the session-scoped standalone cluster then started
  twice too, and the run was far slower (31 % of the tests after 11 minutes against 53 % after 10
  grouped). One group was the longest worker by 2026-11-30 (266-280 s of a 299-312 s run); split
  in two, the three workers ended within 1 s of each other (307 s; with four workers 303 s);
* the module itself: modules with a module-scoped fixture (a Storm run, a fit, a sweep), which
  would otherwise be set up once on each worker that gets one of its tests.
"""

import itertools
from collections import defaultdict
from pathlib import Path

import pytest

#: modules that run the testbed without asking for the ``testbed_ready`` fixture
TESTBED_MODULES = {Path("demo") / "test_run.py"}


def _shares(item) -> set[str]:
    """What ``item`` shares with other tests: ``testbed``, ``spark``, ``module``."""
    info = getattr(item, "_fixtureinfo", None)   # pytest has no public way to a fixture's scope
    defs = info.name2fixturedefs.values() if info is not None else ()
    out = {"module"} if any(d and d[-1].scope == "module" for d in defs) else set()
    fixtures = set(getattr(item, "fixturenames", ()))
    if "testbed_ready" in fixtures:
        out.add("testbed")
    if "spark" in fixtures:
        out.add("spark")
    return out


@pytest.hookimpl(tryfirst=True)   # before xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    modules = defaultdict(list)
    for item in items:
        modules[item.path.relative_to(here)].append(item)
    for module, members in modules.items():
        shared = set().union(*map(_shares, members))
        if "testbed" in shared or module in TESTBED_MODULES:
            group = "testbed"
        elif "spark" in shared:
            group = "spark-profile" if module.parts[0] == "profile" else "spark"
        elif "module" in shared:
            group = module.as_posix()
        else:
            continue
        for item in members:
            item.add_marker(pytest.mark.xdist_group(group))


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
    session = start_session("local[2]", fast_start=True, short_jobs=True, shuffle_partitions=2, driver_memory="1g")
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

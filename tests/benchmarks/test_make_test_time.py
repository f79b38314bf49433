"""benchmarks/make_test_time.py: pytest's figures read from its log, and a whole run on a small
repository of its own whose ``make test`` stands in for the project's (the real one is the
script's, not a test's)."""

import subprocess
from pathlib import Path

import pytest

#: the end of a real ``make test`` log (CI177, 2026-12-02), shortened to three durations
LOG = """\
........................................................................ [100%]
============================= slowest 15 durations =============================
221.24s setup    tests/demo/test_run.py::test_writes_the_report_files@testbed
110.95s setup    tests/profile/test_spark.py::test_a_cli_run_leaves_nothing_in_the_temporary_directory@spark-profile
48.05s call     tests/reliability/test_wrong_results.py::test_overlapping_windows_are_refused@spark
1528 passed, 1 warning in 504.06s (0:08:24)
"""


@pytest.fixture
def mtt(script):
    return script("make_test_time")


def test_pytest_summary_and_slowest_tests_are_read_from_its_log(mtt):
    counts, seconds, slowest = mtt.pytest_figures(LOG)
    assert counts == "1528 passed, 1 warning" and seconds == 504.06
    assert slowest == ((221.24, "setup", "tests/demo/test_run.py::test_writes_the_report_files@testbed"),
                       (110.95, "setup", "tests/profile/test_spark.py::test_a_cli_run_leaves_nothing_in_the_temporary_directory@spark-profile"),
                       (48.05, "call", "tests/reliability/test_wrong_results.py::test_overlapping_windows_are_refused@spark"))
    assert mtt.pytest_figures("make: *** [test] Error 2\n") == ("no pytest summary", None, ())
    failed = "FAILED tests/x.py::test_y\n1 failed, 1532 passed, 1 warning in 584.38s (0:09:44)\nmake: *** Error 1\n"
    assert mtt.pytest_figures(failed) == ("1 failed, 1532 passed, 1 warning", 584.38, ())


def _repo(path: Path, recipe: str) -> Path:
    """A git repository whose ``make test`` runs ``recipe`` (a shell line)."""
    path.mkdir()
    (path / "Makefile").write_text(f"test:\n\t@{recipe}\n")
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "Makefile"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "m"], check=True)
    return path


def test_a_run_measures_make_test_on_a_fresh_clone(tmp_path, mtt, monkeypatch):
    monkeypatch.setenv("MAKELEVEL", "1")   # as under `make test` itself: the run's make is not a sub-make
    monkeypatch.setenv("MAKEFLAGS", "w")   # (which would print its directories around the log)
    # the stand-in sleeps 0.3 s (no CPU), then spends CPU in a Python loop of its own
    repo = _repo(tmp_path / "repo", "sleep 0.3; python3 -c 'sum(range(3*10**6))'; echo '2 passed in 0.25s (0:00:00)'")
    work = tmp_path / "work"
    work.mkdir()
    run = mtt.one_run(str(repo), work)
    assert run.code == 0 and (work / "clone" / "Makefile").exists() and run.log.endswith("2 passed in 0.25s (0:00:00)\n")
    assert run.counts == "2 passed" and run.pytest_s == 0.25 and run.wall_s >= 0.3
    assert run.cpu_s > 0 and run.machine_cpu_s >= run.cpu_s * 0.5   # the machine's counts in ticks of 10 ms


def test_main_prints_the_probe_a_line_per_run_and_cleans_up(tmp_path, capsys, monkeypatch, mtt):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    repo = _repo(tmp_path / "repo", "echo '2 passed in 0.25s (0:00:00)'")
    assert mtt.main(["--source", str(repo), "--runs", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("machine probe: sum(range(10**6)) in ")
    runs = [line for line in out if line.startswith("run ")]
    assert [line.split(":")[0] for line in runs] == ["run 1", "run 2"] and all(line.endswith("; 2 passed") for line in runs)
    assert out[-1] == "slowest 15 of the last run:"
    assert [p.name for p in tmp_path.iterdir()] == ["repo"]   # both clones removed


def test_a_failing_make_test_ends_with_its_exit_code_and_keeps_its_log(tmp_path, capsys, monkeypatch, mtt):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    repo = _repo(tmp_path / "repo", "echo broken; exit 3")
    assert mtt.main(["--source", str(repo)]) == 2   # make's own exit code for a failed recipe
    kept = Path(capsys.readouterr().err.split("its log: ")[1].strip())
    assert kept.parent == tmp_path and "broken" in kept.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["repo", kept.name])   # the clone is gone


def test_a_source_that_is_no_repository_is_one_line_and_exit_2(tmp_path, capsys, mtt, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert mtt.main(["--source", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"make_test_time: cannot clone {tmp_path / 'nothing'}: ")
    assert list(tmp_path.iterdir()) == []   # the temporary directory is gone


def test_runs_below_one_are_refused(capsys, mtt):
    with pytest.raises(SystemExit) as info:
        mtt.main(["--runs", "0"])
    assert info.value.code == 2 and "--runs: must be >= 1, got 0" in capsys.readouterr().err

"""Theme 9: one sweep per directory (PID lock file, stale locks taken over); a corrupt part never blocks resume."""

import subprocess

import pandas as pd


def _grid(rel, tmp_path):
    return rel.write_yaml(tmp_path / "grid.yaml", {
        "workloads": [{"microbench": {"layout": ["linear", "star"], "tasks": [10, 12]}}],
        "clusters": ["homogeneous"], "schedulers": {"even": {}, "t3": {}}, "seeds": [0, 1]})


def test_a_second_sweep_into_a_locked_directory_is_refused(rel, tmp_path):
    out, grid = tmp_path / "sweep", _grid(rel, tmp_path)
    out.mkdir()
    holder = subprocess.Popen(["sleep", "120"])  # stands for a sweep still running
    try:
        (out / ".sweep.lock").write_text(f"{holder.pid}\n")
        before = rel.snapshot(tmp_path)
        proc = rel.run_cli("sweep", grid, "-o", out)
        line = rel.one_line(proc)
        assert proc.returncode == 2 and "another sweep" in line and str(holder.pid) in line
        assert rel.snapshot(tmp_path) == before  # its lock and files untouched
    finally:
        holder.kill()
        holder.wait()


def test_stale_lock_and_corrupt_part_do_not_block_resume(rel, cli, spark, tmp_path):
    """The first sweep runs in this process (the ``cli`` fixture, on the test run's SparkSession);
    the resume under test is the real command, as a user would start it again."""
    grid, out = _grid(rel, tmp_path), tmp_path / "sweep"
    code, _, err = cli(["sweep", grid, "-o", out, "--batch-size", "4"])
    assert code == 0, err
    full = pd.read_csv(out / "results.csv")
    assert len(full) == 16 and not (out / ".sweep.lock").exists()
    parts = sorted((out / "parts").glob("part-*.parquet"))
    assert len(parts) == 4
    parts[1].write_bytes(parts[1].read_bytes()[:100])  # a half-written part (e.g. copied by hand, disk full)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (out / ".sweep.lock").write_text(f"{dead.pid}\n")  # left by a killed sweep
    proc = rel.run_cli("sweep", grid, "-o", out, "--batch-size", "4")
    assert proc.returncode == 0, proc.stderr
    assert "set aside" in proc.stderr and "Traceback" not in proc.stderr
    assert (out / "parts" / (parts[1].name + ".corrupt")).exists()  # kept for the user, not deleted
    again = pd.read_csv(out / "results.csv")
    assert sorted(again["scenario_id"]) == sorted(full["scenario_id"])  # recomputed: nothing lost
    assert not (out / ".sweep.lock").exists()

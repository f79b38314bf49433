"""Theme 8: 0 ok, 1 a bug (traceback only with --debug), 2 usage or input error, 3 no feasible placement."""

import pytest


def test_infeasible_is_exit_3(rel, small, tmp_path):
    topo, _ = small
    tiny = rel.write_yaml(tmp_path / "tiny.yaml", {"name": "tiny", "nodes": [{"name": "n0", "capacity": 1}]})
    proc = rel.run_cli("schedule", topo, tiny, "-s", "optimal", "--time-limit", "5")
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_solver_that_aborts_is_exit_3_with_the_reason_and_no_trace(cli, small, tmp_path, monkeypatch):
    """OR-Tools 9.15's CP-SAT can abort its process on a failed internal check (google/or-tools#5025):
    the search runs in a child process, so the command ends as without a placement (exit 3),
    naming the check, with neither the native trace nor a Python traceback."""
    import os

    from streamplace.schedulers.optimal import OptimalScheduler

    def aborts(self, problem):
        os.write(2, b"F1129 19:50:12.345678 4242 integer_search.cc:99] Check failed: heuristics.fixed_search != nullptr \n"
                    b"*** Check failure stack trace: ***\n    @     0x7f0c2a1b2c3d  (unknown)\n")   # as glog writes it
        os.abort()
    monkeypatch.setattr(OptimalScheduler, "_schedule", aborts)
    topo, cluster = small
    from streamplace.schedulers.base import SolverRetried
    with pytest.warns(SolverRetried, match="running the search once more"):   # the first abort; the second ends the run
        code, out, err = cli(["schedule", topo, cluster, "-s", "optimal", "--time-limit", "5", "-o", tmp_path / "r.json"])
    said = " ".join(err.split())   # the console wraps at its width
    assert code == 3, err
    assert "Check failed: heuristics.fixed_search != nullptr" in said and "google/or-tools#5025" in said
    assert "Traceback" not in err and "stack trace" not in err and "0x7f0c2a1b2c3d" not in err


def test_oversized_topology_is_an_input_error_naming_the_file(rel, tmp_path, small):
    _, cluster = small
    ops = [{"name": f"O{i}", "parallelism": 20000} for i in range(5)]
    ops[0].update(role="source", source_rate=1.0)
    streams = [{"from": f"O{i}", "to": f"O{i + 1}", "grouping": "shuffle"} for i in range(4)]
    topo = rel.write_yaml(tmp_path / "huge.yaml", {"name": "huge", "operators": ops, "streams": streams})
    proc = rel.run_cli("schedule", topo, cluster, "-s", "even")
    line = rel.one_line(proc)
    assert proc.returncode == 2 and "huge.yaml" in line and "task edges" in line


@pytest.mark.parametrize("args,word", [
    (["bogus-command"], "No such command"),
    (["schedule", "--time-limit", "x"], "--time-limit"),
    (["schedule", "{topo}", "{cluster}", "-s", "even", "--seed", "-1"], "--seed"),
])
def test_usage_errors_are_one_line_exit_2(rel, small, args, word):
    topo, cluster = small
    proc = rel.run_cli(*[a.format(topo=topo, cluster=cluster) for a in args])
    assert proc.returncode == 2 and word in rel.one_line(proc)


def test_bogus_spark_master_is_one_line_exit_2(rel, small, tmp_path):
    topo, _ = small
    traffic = tmp_path / "t.csv"
    traffic.write_text("window_start,window_seconds,src_task,dst_task,tuples,bytes\n0,10,S[0],B[0],1,1\n")
    proc = rel.run_cli("profile", "--topology", topo, "--traffic", traffic, "-o", tmp_path / "p", "--spark-master", "bogus://x")
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("streamplace: ")]
    assert proc.returncode == 2 and len(lines) == 1 and "internal error" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "p").exists()


def test_help_documents_the_exit_codes(rel):
    proc = rel.run_cli("--help")
    assert proc.returncode == 0 and "Exit codes" in proc.stdout and "130" in proc.stdout

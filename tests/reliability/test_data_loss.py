"""Theme 1: a command never deletes or overwrites its inputs or files it did not create."""

import pandas as pd


def test_schedule_output_onto_its_input_topology_is_refused(rel, small, tmp_path):
    topo, cluster = small
    before = rel.snapshot(tmp_path)
    proc = rel.run_cli("schedule", topo, cluster, "-s", "even", "-o", topo)
    assert proc.returncode == 2 and "is the input" in rel.one_line(proc)
    assert rel.snapshot(tmp_path) == before  # inputs byte-identical, no temporary left behind


def test_schedule_output_onto_an_input_by_another_spelling(rel, small, tmp_path):
    topo, cluster = small
    (tmp_path / "link.yaml").symlink_to(cluster)
    before = rel.snapshot(tmp_path)
    for output in (tmp_path / "sub" / ".." / "cluster.yaml", tmp_path / "link.yaml"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        proc = rel.run_cli("schedule", topo, cluster, "-s", "even", "-o", output)
        assert proc.returncode == 2 and "is the input" in rel.one_line(proc), output
    proc = rel.run_cli("compare", topo, tmp_path / "link.yaml", "--schedulers", "even", "-o", cluster)
    assert proc.returncode == 2 and "is the input" in rel.one_line(proc)
    assert rel.snapshot(tmp_path) == before


def _traffic_csv(path, topo_tasks=("S[0]", "B[0]")):
    pd.DataFrame({"window_start": [0, 10], "window_seconds": [10, 10], "src_task": [topo_tasks[0]] * 2,
                  "dst_task": [topo_tasks[1]] * 2, "tuples": [100, 120], "bytes": [1000, 1200]}).to_csv(path, index=False)
    return path


def test_profile_into_the_directory_holding_its_traffic_is_refused(rel, small, tmp_path):
    topo, _ = small
    data = tmp_path / "data"
    data.mkdir()
    traffic = _traffic_csv(data / "traffic.csv")
    before = rel.snapshot(tmp_path)
    proc = rel.run_cli("profile", "--topology", topo, "--traffic", traffic, "-o", data)
    assert proc.returncode == 2 and "contains the input" in rel.one_line(proc)
    proc = rel.run_cli("profile", "--topology", topo, "--traffic", traffic, "-o", data, "--force")
    assert proc.returncode == 2 and "contains the input" in rel.one_line(proc)  # --force never deletes inputs
    assert rel.snapshot(tmp_path) == before


def test_profile_into_a_directory_of_other_files_needs_force(rel, small, tmp_path):
    topo, _ = small
    traffic = _traffic_csv(tmp_path / "traffic.csv")
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine\n")
    before = rel.snapshot(tmp_path)
    proc = rel.run_cli("profile", "--topology", topo, "--traffic", traffic, "-o", other)
    assert proc.returncode == 2 and "--force" in rel.one_line(proc) and "keep.txt" in proc.stderr
    assert rel.snapshot(tmp_path) == before


def test_storm_run_into_a_directory_of_other_files_needs_force(rel, small, tmp_path):
    topo, cluster = small
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine\n")
    before = rel.snapshot(tmp_path)
    proc = rel.run_cli("storm", "run", topo, cluster, "-s", "even", "-o", other)
    assert proc.returncode == 2 and "--force" in rel.one_line(proc) and "not empty" in proc.stderr
    assert rel.snapshot(tmp_path) == before


def test_traffic_output_onto_its_records_is_refused(rel, small, tmp_path):
    topo, _ = small
    records = tmp_path / "mon" / "traffic.csv"
    records.parent.mkdir()
    pd.DataFrame({"ts": [1.0, 2.0]}).to_csv(records, index=False)
    before = rel.snapshot(tmp_path)
    proc = rel.run_cli("traffic", "--topology", topo, "--records", records, "--format", "csv", "-o", tmp_path / "mon")
    assert proc.returncode == 2 and "is the input" in rel.one_line(proc)
    assert rel.snapshot(tmp_path) == before


def test_unwritable_output_names_the_output_and_leaves_nothing(rel, small, tmp_path):
    topo, cluster = small
    before = rel.snapshot(tmp_path)
    bad = topo / "out.json"  # under a file: unwritable even for root
    proc = rel.run_cli("schedule", topo, cluster, "-s", "even", "-o", bad)
    line = rel.one_line(proc)
    assert proc.returncode == 2 and str(bad) in line and ".tmp" not in line and "internal error" not in line
    assert rel.snapshot(tmp_path) == before

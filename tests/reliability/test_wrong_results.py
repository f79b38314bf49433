"""Theme 2: inputs that would be read wrongly are refused, naming the file or label."""

import json
import subprocess

HEADER = "window_start,window_seconds,src_task,dst_task,tuples,bytes\n"


def test_mixed_csv_headers_in_one_traffic_directory_are_refused(rel, small, tmp_path):
    topo, _ = small
    data = tmp_path / "traffic"
    data.mkdir()
    (data / "a.csv").write_text(HEADER + "0,10,S[0],B[0],100,1000\n")
    (data / "b.csv").write_text("window_start,window_seconds,dst_task,src_task,bytes,tuples\n10,10,B[1],S[1],2000,200\n")
    before = rel.snapshot(tmp_path)
    proc = rel.run_cli("profile", "--topology", topo, "--traffic", data, "-o", tmp_path / "profile")
    line = rel.one_line(proc)
    assert proc.returncode == 2 and "b.csv" in line and "header" in line
    assert rel.snapshot(tmp_path) == before


def test_one_file_by_two_spellings_is_refused(rel, small, tmp_path):
    topo, _ = small
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    traffic = data / "traffic.csv"
    traffic.write_text(HEADER + "0,10,S[0],B[0],100,1000\n")
    before = rel.snapshot(tmp_path)
    for second in (data / "sub" / ".." / "traffic.csv", data):
        proc = rel.run_cli("profile", "--topology", topo, "--traffic", traffic, "--traffic", second, "-o", tmp_path / "p")
        assert proc.returncode == 2 and "counted twice" in rel.one_line(proc), second
    assert rel.snapshot(tmp_path) == before


def test_non_canonical_task_labels_are_refused_naming_the_label(rel, small, tmp_path):
    topo, cluster = small
    placement = tmp_path / "placement.json"
    proc = rel.run_cli("schedule", topo, cluster, "-s", "even", "-o", placement)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(placement.read_text())
    for bad in ("S[00]", "S[ 0]", "S[+0]"):
        mapping = dict(doc["placement"])
        mapping[bad] = mapping["S[0]"]
        edited = tmp_path / "edited.json"
        edited.write_text(json.dumps(mapping))
        proc = rel.run_cli("evaluate", topo, cluster, edited)
        assert proc.returncode == 2 and bad in rel.one_line(proc), bad


def test_brackets_in_operator_names_are_refused(rel, small, tmp_path):
    topo, cluster = small
    topo.write_text(topo.read_text().replace("name: B", "name: B[x]").replace("to: B", "to: B[x]"))
    proc = rel.run_cli("schedule", topo, cluster, "-s", "even")
    line = rel.one_line(proc)
    assert proc.returncode == 2 and "operators[1].name" in line


def test_duplicate_records_are_refused_naming_both_files(rel, small, tmp_path, cli, spark):
    """In this process (the ``cli`` fixture, on the test run's SparkSession); that a refusal found
    on Spark is one stderr line of the real command, Spark's own output kept off it, is
    :func:`test_overlapping_windows_are_refused`'s."""
    topo, _ = small
    data = tmp_path / "traffic"
    data.mkdir()
    (data / "a.csv").write_text(HEADER + "0,10,S[0],B[0],100,1000\n10,10,S[0],B[0],100,1000\n")
    (data / "b.csv").write_text(HEADER + "10,10,S[0],B[0],100,1000\n")   # a copy of a.csv's second row
    before = rel.snapshot(tmp_path)
    code, out, err = cli(["profile", "--topology", topo, "--traffic", data, "-o", tmp_path / "profile"])
    line = rel.one_line(subprocess.CompletedProcess([], code, out, err))
    assert code == 2, err
    assert "S[0] -> B[0]" in line and "[10, 20)" in line and "2 times" in line and "a.csv" in line and "b.csv" in line
    assert rel.snapshot(tmp_path) == before


def test_overlapping_windows_are_refused(rel, small, tmp_path):
    topo, _ = small
    data = tmp_path / "traffic"
    data.mkdir()
    (data / "ten.csv").write_text(HEADER + "".join(f"{t},10,S[0],B[0],100,1000\n" for t in range(0, 60, 10)))
    (data / "sixty.csv").write_text(HEADER + "0,60,S[1],B[1],600,6000\n")
    before = rel.snapshot(tmp_path)
    proc = rel.run_cli("profile", "--topology", topo, "--traffic", data, "-o", tmp_path / "profile")
    line = rel.one_line(proc)
    assert proc.returncode == 2 and "overlaps" in line and "[0, 60)" in line and "sixty.csv" in line, line
    assert rel.snapshot(tmp_path) == before

"""Theme 3: non-finite and absurd numbers are refused, naming the option or field; metrics are finite."""

import json
import math

import pytest


@pytest.mark.parametrize("option,value", [("--time-limit", "nan"), ("--time-limit", "inf"), ("--time-limit", "-1"),
                                          ("--seed", "100000000000000000000000"), ("--seed", "-3")])
def test_schedule_refuses_bad_numbers(rel, small, option, value):
    topo, cluster = small
    proc = rel.run_cli("schedule", topo, cluster, "-s", "optimal", option, value)
    assert proc.returncode == 2 and option in rel.one_line(proc)


@pytest.mark.parametrize("args", [["traffic", "--topology", "{topo}", "--records", "{topo}", "--window", "inf", "-o", "{tmp}/o"],
                                  ["profile", "--topology", "{topo}", "--traffic", "{topo}", "--decay", "nan", "-o", "{tmp}/o"],
                                  ["demo", "--time-limit", "nan", "-o", "{tmp}/o"]])
def test_pipeline_options_refuse_non_finite(rel, small, tmp_path, args):
    topo, _ = small
    proc = rel.run_cli(*[a.format(topo=topo, tmp=tmp_path) for a in args])
    assert proc.returncode == 2 and ("--window" in proc.stderr or "--decay" in proc.stderr or "--time-limit" in proc.stderr)
    rel.one_line(proc)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("field,value", [("source_rate", 1e308), ("selectivity", 1e300), ("capacity", 1e308)])
def test_absurd_spec_numbers_are_refused_naming_the_field(rel, small, tmp_path, field, value):
    topo, cluster = small
    text = (cluster if field == "capacity" else topo).read_text()
    if field == "capacity":
        cluster.write_text(text.replace("capacity: 4", f"capacity: {value:e}", 1))
    elif field == "source_rate":
        topo.write_text(text.replace("source_rate: 100.0", f"source_rate: {value:e}"))
    else:
        topo.write_text(text.replace("- name: B\n  parallelism: 6", f"- name: B\n  parallelism: 6\n  selectivity: {value:e}"))
    proc = rel.run_cli("schedule", topo, cluster, "-s", "even", "--format", "json")
    assert proc.returncode == 2 and field in rel.one_line(proc)


def test_largest_allowed_numbers_give_finite_metrics(rel, small):
    topo, cluster = small
    topo.write_text(topo.read_text().replace("source_rate: 100.0", "source_rate: 1.0e+12"))
    cluster.write_text(cluster.read_text().replace("capacity: 4", "capacity: 1.0e+12"))
    for name in ("even", "rstorm", "metis", "optimal"):
        proc = rel.run_cli("schedule", topo, cluster, "-s", name, "--format", "json", "--time-limit", "5")
        assert proc.returncode == 0, proc.stderr
        assert "NaN" not in proc.stdout and "Infinity" not in proc.stdout
        record = json.loads(proc.stdout)
        assert all(math.isfinite(v) for v in record.values() if isinstance(v, float))


def test_scheduler_parameters_refuse_non_finite(rel, small):
    topo, cluster = small
    for param in ("time_limit=nan", "time_limit=inf"):
        proc = rel.run_cli("schedule", topo, cluster, "-s", "optimal", "-p", param)
        assert proc.returncode == 2 and "time_limit" in rel.one_line(proc) and "finite" in proc.stderr

"""Theme 6: inputs whose memory is estimated beyond the limit are refused before allocating."""


def _keyed(rel, small, num_keys):
    topo, cluster = small
    doc = {"name": "keys", "operators": [{"name": "S", "parallelism": 8, "role": "source", "source_rate": 10.0},
                                          {"name": "B", "parallelism": 8}],
           "streams": [{"from": "S", "to": "B", "grouping": "fields", "key": "k", "key_distribution": "zipf",
                        "num_keys": num_keys}]}
    return rel.write_yaml(topo, doc), cluster


def test_absurd_key_count_is_refused_at_once(rel, small):
    topo, cluster = _keyed(rel, small, 300_000_000)  # took 9.3 GB before
    proc = rel.run_cli("schedule", topo, cluster, "-s", "even", timeout=60)
    line = rel.one_line(proc)
    assert proc.returncode == 2 and "num_keys" in line and "at most" in line


def test_memory_estimate_against_the_limit(rel, small):
    topo, cluster = _keyed(rel, small, 5_000_000)  # ~0.2 GiB of key arrays
    proc = rel.run_cli("--memory-limit", "64M", "schedule", topo, cluster, "-s", "even", timeout=60)
    line = rel.one_line(proc)
    assert proc.returncode == 2 and "GiB of memory" in line and "limit" in line and "--memory-limit" in line
    assert "the limit is 64.0 MiB (set by STREAMPLACE_MEMORY_LIMIT" in line   # was shown as 0.1 GiB
    proc = rel.run_cli("--memory-limit", "lots", "schedule", topo, cluster, "-s", "even", timeout=60)
    assert proc.returncode == 2 and "--memory-limit" in rel.one_line(proc)
    proc = rel.run_cli("--memory-limit", "4G", "schedule", topo, cluster, "-s", "even", "--format", "json", timeout=120)
    assert proc.returncode == 0, proc.stderr  # the same input within a raised limit


def test_task_edges_are_estimated_against_the_limit(rel, small):
    """Two operators of 3,000 tasks, shuffled: 9,000,000 task edges, about 1.7 GiB by the estimate."""
    topo, cluster = small
    doc = {"name": "wide", "operators": [{"name": "S", "parallelism": 3000, "role": "source", "source_rate": 10.0},
                                          {"name": "B", "parallelism": 3000}],
           "streams": [{"from": "S", "to": "B", "grouping": "shuffle"}]}
    rel.write_yaml(topo, doc)
    proc = rel.run_cli("--memory-limit", "1G", "schedule", topo, cluster, "-s", "even", timeout=60)
    line = rel.one_line(proc)
    assert proc.returncode == 2 and "9,000,000 task edges" in line and "1.7 GiB" in line and "1.0 GiB" in line, line


def test_a_sweep_scenario_beyond_the_limit_is_recorded_and_the_rest_run(rel, tmp_path):
    """A synthetic workload of 10^7 tasks (about 9 GiB by the estimate) under a 2 GiB limit: its
    scenario is an error row naming the estimate; the small one beside it is placed."""
    import pandas as pd
    grid = rel.write_yaml(tmp_path / "grid.yaml", {
        "workloads": [{"synthetic": {"tasks": [1000, 10_000_000]}}],
        "clusters": [{"synthetic": {"nodes": 10}}], "schedulers": {"even": {}}, "seeds": [0]})
    proc = rel.run_cli("--memory-limit", "2G", "sweep", grid, "-o", tmp_path / "out", timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = pd.read_csv(tmp_path / "out" / "results.csv").set_index("n_tasks", drop=False)
    small, big = rows[rows["workload"].str.contains("-1000-")], rows[rows["workload"].str.contains("-10000000-")]
    assert small["valid"].tolist() == [True]
    assert big["status"].tolist() == ["error"] and "GiB of memory" in big["error"].iloc[0], big.to_dict("records")

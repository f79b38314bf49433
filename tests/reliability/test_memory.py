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
    proc = rel.run_cli("--memory-limit", "lots", "schedule", topo, cluster, "-s", "even", timeout=60)
    assert proc.returncode == 2 and "--memory-limit" in rel.one_line(proc)
    proc = rel.run_cli("--memory-limit", "4G", "schedule", topo, cluster, "-s", "even", "--format", "json", timeout=120)
    assert proc.returncode == 0, proc.stderr  # the same input within a raised limit

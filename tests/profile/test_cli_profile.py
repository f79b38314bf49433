"""The profiling commands through the CLI: the whole chain, and one-line errors for bad input."""

import json

import numpy as np
import pandas as pd
import pytest

from streamplace.cli import main
from streamplace.model.specs import load_cluster, load_topology


@pytest.fixture(scope="module")
def chain(spark, tmp_path_factory):
    """workload app -> traffic -> profile, once for the module (uses the session's Spark)."""
    root = tmp_path_factory.mktemp("chain")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("STREAMPLACE_SPARK_MASTER", raising=False)
        for args in (["workload", "app", "--name", "trending-topics", "--records", "3000", "--format", "jsonl", "-o", root / "app"],
                     ["traffic", "--app", "trending-topics", "--topology", root / "app" / "topology.yaml",
                      "--records", root / "app" / "records.jsonl", "--window", "5", "--format", "csv", "-o", root / "mon"],
                     ["profile", "--topology", root / "app" / "topology.yaml", "--traffic", root / "mon" / "traffic.csv",
                      "--load", root / "mon" / "load.csv", "-o", root / "profile"]):
            with pytest.raises(SystemExit) as info:
                main([str(a) for a in args])
                raise SystemExit(0)
            assert (info.value.code or 0) == 0, args
    return root


def test_chain_writes_records_monitoring_and_profile(chain):
    records = pd.read_json(chain / "app" / "records.jsonl", lines=True)
    assert list(records.columns) == ["ts", "tweet_id", "user_id", "text"] and len(records) == 3000
    traffic = pd.read_csv(chain / "mon" / "traffic.csv")
    assert list(traffic.columns) == ["window_start", "window_seconds", "src_task", "dst_task", "tuples", "bytes"]
    summary = json.loads((chain / "profile" / "summary.json").read_text())
    assert summary["rows_read"] == summary["rows_used"] == len(traffic) + len(pd.read_csv(chain / "mon" / "load.csv"))
    assert summary["rows_rejected"] == 0 and summary["rejected_by_reason"] == {}
    edges = pd.read_parquet(chain / "profile" / "edges.parquet")
    assert list(edges.columns) == ["src_task", "dst_task", "tuples_per_s", "bytes_per_s"]
    span = summary["traffic"]["observed_seconds"]
    a_to_b = traffic[traffic["src_task"].str.startswith("A[")]
    assert edges[edges["src_task"].str.startswith("A[")]["tuples_per_s"].sum() == pytest.approx(a_to_b["tuples"].sum() / span)


def test_schedule_evaluate_compare_use_the_profile_weights(chain, cli):
    topo_path, cluster_path, prof = chain / "app" / "topology.yaml", chain / "app" / "cluster.yaml", chain / "profile"
    placement = chain / "placement.json"
    code, out, _ = cli(["schedule", topo_path, cluster_path, "-s", "even", "--profile", prof, "--format", "json", "-o", placement])
    assert code == 0
    record = json.loads(out)
    topo, cluster = load_topology(topo_path), load_cluster(cluster_path)
    node = {label: cluster.index[entry["node"]] for label, entry in record["placement"].items()}
    edges = pd.read_parquet(prof / "edges.parquet")
    pairs: dict = {}
    for row in edges.itertuples():  # undirected weight = rate u->v + rate v->u, each pair once
        key = tuple(sorted((row.src_task, row.dst_task)))
        pairs[key] = pairs.get(key, 0.0) + row.tuples_per_s
    expected = sum(w for (u, v), w in pairs.items() if node[u] != node[v])
    assert record["inter_node_cost"] == pytest.approx(expected, rel=1e-9)
    code, out, _ = cli(["evaluate", topo_path, cluster_path, placement, "--profile", prof, "--format", "json"])
    assert code == 0 and json.loads(out)["inter_node_cost"] == pytest.approx(expected, rel=1e-9)
    code, out, _ = cli(["compare", topo_path, cluster_path, "--schedulers", "even", "--profile", prof, "--format", "json"])
    assert code == 0 and json.loads(out)[0]["inter_node_cost"] == pytest.approx(expected, rel=1e-9)
    code, out, _ = cli(["evaluate", topo_path, cluster_path, placement, "--format", "json"])
    assert code == 0 and json.loads(out)["inter_node_cost"] != pytest.approx(expected, rel=1e-3)  # analytic weights differ
    assert np.isfinite(expected) and topo.n_tasks == 19


def test_bad_inputs_one_line_exit_2(chain, tmp_path, cli):
    topo = chain / "app" / "topology.yaml"
    header = "window_start,window_seconds,src_task,dst_task,tuples,bytes\n"
    empty, wrong, other = tmp_path / "empty.jsonl", tmp_path / "wrong.csv", tmp_path / "other.csv"
    empty.write_text("")
    wrong.write_text("window_start,window_seconds,from,to,tuples,bytes\n0,10,A[0],B[0],1,1\n")
    other.write_text(header + "".join(f"0,10,spout[{i}],bolt[{i}],1,1\n" for i in range(4)))
    header_only = tmp_path / "header.csv"
    header_only.write_text(header)
    missing = tmp_path / "nope.parquet"
    cases = {
        missing: f"streamplace: {missing}: file not found",
        empty: f"streamplace: {empty}: file is empty",
        header_only: f"streamplace: {header_only}: the file has no records (only a header line)",
        wrong: f"streamplace: {wrong}: src_task: missing column (the file has columns window_start, window_seconds, from, to, "
               "tuples, bytes; expected window_start, window_seconds, src_task, dst_task, tuples, bytes)",
        other: f"streamplace: {other}: src_task: 4 of 4 rows name tasks that topology 'trending-topics' does not have "
               "(first 'spout[0]'; its tasks are A[0] .. D[0]): records and topology do not match",
    }
    for path, expected in cases.items():
        code, _, err = cli(["profile", "--topology", topo, "--traffic", path, "-o", tmp_path / "p"])
        assert (code, err.strip()) == (2, expected)
        assert "Traceback" not in err
    assert not (tmp_path / "p").exists()
    code, _, err = cli(["profile", "--topology", topo, "--traffic", chain / "mon" / "traffic.csv", "--from", "soon", "-o", tmp_path / "p"])
    assert (code, err.strip()) == (2, "streamplace: --from: expected epoch seconds or an ISO-8601 timestamp, got 'soon'")
    code, _, err = cli(["profile", "--topology", topo, "--traffic", chain / "mon" / "traffic.csv", "--to", "nan", "-o", tmp_path / "p"])
    assert (code, err.strip()) == (2, "streamplace: --to: expected a finite number of epoch seconds, got 'nan'")   # every row
    code, _, err = cli(["schedule", topo, chain / "app" / "cluster.yaml", "-s", "even", "--profile", tmp_path / "none"])
    assert (code, err.strip()) == (2, f"streamplace: {tmp_path / 'none'}: profile directory not found")
    records = chain / "app" / "records.jsonl"  # tweets: no 'page' field for the page-view application
    code, _, err = cli(["traffic", "--app", "page-view", "--records", records, "-o", tmp_path / "m"])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"streamplace: {records}: page: operator 'view' cannot compute field 'page': [UNRESOLVED_COLUMN")
    code, _, err = cli(["traffic", "--records", records, "--topology", topo, "-o", tmp_path / "m"])
    assert (code, err.strip()) == (2, f"streamplace: {records}: topic: stream A -> B groups by field 'topic', which the tuples "
                                      "of 'A' do not have (they have text, ts, tweet_id, user_id)")


def test_traffic_with_a_placement_keeps_local_or_shuffle_in_the_worker(spark, tmp_path, cli, monkeypatch):
    monkeypatch.delenv("STREAMPLACE_SPARK_MASTER", raising=False)
    app = tmp_path / "pv"
    assert cli(["workload", "app", "--name", "page-view", "--records", "2000", "-o", app])[0] == 0
    cluster = load_cluster(app / "cluster.yaml")
    # source[i] and view[i] share worker 0 of node i; count[i] and sink[i] share worker 1 of node i.
    placement = {f"{op}[{i}]": {"node": cluster.nodes[i].name, "worker": 0 if op in ("source", "view") else 1}
                 for op in ("source", "view", "count", "sink") for i in range(4)}
    (tmp_path / "placement.json").write_text(json.dumps(placement))
    code, _, err = cli(["traffic", "--app", "page-view", "--records", app / "records.parquet", "--cluster", app / "cluster.yaml",
                        "--placement", tmp_path / "placement.json", "-o", tmp_path / "mon"])
    assert code == 0, err
    traffic = pd.read_parquet(tmp_path / "mon" / "traffic.parquet")
    pairs = traffic.groupby(["src_task", "dst_task"])["tuples"].sum()
    local = [(s, d) for s, d in pairs.index if s.split("[")[0] in ("source", "count")]
    assert all(s.split("[")[1] == d.split("[")[1] for s, d in local)  # always the receiver in the same worker
    assert sorted(s for s, _ in local if s.startswith("source")) == [f"source[{i}]" for i in range(4)]
    assert len(local) > 4  # counts with traffic (3 pages hash to at most 3 of them) pass it on locally too
    assert pairs[[p for p in pairs.index if p[0].startswith("source")]].sum() == 2000
    code, _, err = cli(["traffic", "--app", "page-view", "--records", app / "records.parquet", "--placement",
                        tmp_path / "placement.json", "-o", tmp_path / "m2"])
    assert (code, err.strip()) == (2, "streamplace: --cluster/--placement: give both or neither")

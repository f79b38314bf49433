"""Beyond one machine: `streamplace profile --spark-master spark://...` on a standalone cluster
(tests/profile/conftest.py starts it and runs the command once) gives the local-mode profile."""

import json

import pandas as pd

from streamplace.profile.metrics import build_profile


def test_profile_on_a_standalone_cluster_equals_local_mode(spark, cluster_profile):
    run = cluster_profile
    assert run.code == 0, run.stderr
    local = build_profile(spark, run.topology, [run.dir / "traffic.csv"], half_life=600.0, start=120.0)
    remote_summary = json.loads((run.dir / "p" / "summary.json").read_text())
    assert remote_summary["spark_master"] == run.master
    for key in ("rows_read", "rows_used", "rows_rejected", "rejected_by_reason"):
        assert remote_summary[key] == local.summary[key]
    assert remote_summary["rejected_by_reason"].keys() == {"negative_value", "unknown_task", "outside_range"}
    remote = pd.read_parquet(run.dir / "p" / "edges.parquet")
    pd.testing.assert_frame_equal(remote, local.edges, rtol=1e-12)
    rejected = pd.read_parquet(run.dir / "p" / "rejected" / "traffic")
    assert len(rejected) == local.summary["rows_rejected"]

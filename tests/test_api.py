"""The library API: what the README shows, through ``import streamplace``."""

import subprocess
import sys

import pytest

import streamplace as sp
from streamplace.model.specs import cluster_to_dict, topology_to_dict
from streamplace.workloads import microbench


def test_the_readme_example_runs(tmp_path):
    sp.write_document(topology_to_dict(microbench.microbench("diamond", 12)), tmp_path / "t.yaml")
    sp.write_document(cluster_to_dict(microbench.cluster("heterogeneous")), tmp_path / "c.yaml")
    problem = sp.load_problem(tmp_path / "t.yaml", tmp_path / "c.yaml")
    result = sp.schedule(problem, "optimal", time_limit=10)
    even = sp.schedule(problem, "even")
    record = sp.evaluate_placement(problem, result.placement)
    assert result.status == "optimal" and record["valid"] is True
    assert record["inter_node_cost"] == pytest.approx(result.lower_bound)   # proven: cost = bound
    assert record["inter_node_cost"] <= sp.evaluate_placement(problem, even.placement)["inter_node_cost"]
    assert sp.predict(problem, result.placement).throughput > 0
    assert sp.diff_placements(problem, even.placement, result.placement).traffic_delta == pytest.approx(
        record["inter_node_cost"] - sp.evaluate_placement(problem, even.placement)["inter_node_cost"])
    assert "optimal" in sp.available() and set(sp.api.__all__) <= set(dir(sp))


def test_import_streamplace_loads_no_scheduler_until_asked():
    code = "import sys, streamplace; print('streamplace.schedulers' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        sp.nothing

"""The standard report page: the decision first, then the metric sections and a sortable table."""

import re

from streamplace.report.page import write_report
from streamplace.evaluate.records import result_record
from streamplace.schedulers import make_scheduler
from streamplace.workloads import microbench


def test_write_report_puts_the_decision_first(tmp_path):
    records = []
    for inst in microbench.instances(sizes=(10,)):
        if inst.layout == "star":
            for name in ("even", "t3", "lf", "throughput"):
                record = result_record(make_scheduler(name).schedule(inst.problem))
                records.append({"workload": "star-10", "layout": "star", "n_tasks": 10, "cluster": inst.cluster, **record})
    path = write_report(records, tmp_path / "out", title="demo")
    page = path.read_text()
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == ["inter_node_cost.png", "latency_ms.png", "pareto.png", "placement-1.png", "placement-2.png",
                     "report.html", "seconds.png", "throughput.png", "throughput_gain_pct.png", "traffic_saved_pct.png"]
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    assert headings[:4] == ["Which placement to use", "Against Storm&#x27;s default", "Traffic against throughput",
                            "The recommended placements"]
    assert headings[-1] == "All results" and page.count("<section ") == len(headings) == 9
    assert page.count('<input type="search" class="filter"') == 1 and page.count('<table class="sortable">') >= 3
    # the decision table: one row per job, the recommended scheduler of each
    decision = page.split("<h2>Which placement to use</h2>")[1].split("</section>")[0]
    assert decision.count("<tr>") + decision.count('<tr class="best">') == 1 + 2


def test_a_measured_run_sits_beside_the_decision_with_both_gains(tmp_path):
    """even measured 10,000 tuples/s; lns predicted 12,500 calibrated on that run and measured
    11,000: +25 % predicted, +10 % measured."""
    from streamplace.report.page import measured_rows
    storm = {"workload": "page-view", "cluster": "4high+4low", "mode": "cluster", "operating_point": {"name": "10ms-sleeps"},
             "jobs": [{"scheduler": "lns", "throughput": 11000.0, "calibrated_throughput": 12500.0},
                      {"scheduler": "even", "throughput": 10000.0, "calibrated_throughput": 10000.0}]}
    rows = measured_rows(storm)
    assert rows == [{"job": "page-view@4high+4low", "scheduler": "lns", "operating_point": "10ms-sleeps",
                     "calibrated_throughput": 12500.0, "measured_throughput": 11000.0,
                     "predicted_gain_pct": 25.0, "measured_gain_pct": 10.0}]
    records = [{"workload": "star-10", "layout": "star", "n_tasks": 10, "cluster": inst.cluster,
                **result_record(make_scheduler("even").schedule(inst.problem))}
               for inst in microbench.instances(sizes=(10,)) if inst.layout == "star"]
    page = write_report(records, tmp_path / "out", measured=rows).read_text()
    first = page.split("<h2>Which placement to use</h2>")[1].split("</section>")[0]
    assert "Measured on Storm" in first and "page-view@4high+4low" in first

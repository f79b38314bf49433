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

"""benchmarks/results/index.yaml describes the campaign folders as they are: every file listed,
its runs, repetitions and experiments counted from the records, every fitted model file's
campaign files named as its provenance names them."""

import collections
import json
from pathlib import Path

from streamplace.fit.build import read_index
from streamplace.fit.runs import held_out

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
INDEX = read_index(RESULTS / "index.yaml")


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_every_file_of_every_campaign_folder_is_indexed_and_nothing_else():
    listed = {f"{c['folder']}/{f['file']}" for c in INDEX["campaigns"] for f in c["files"]}
    on_disk = {f"{p.parent.name}/{p.name}" for p in RESULTS.glob("*/*") if p.name != "README.md"}
    assert listed == on_disk
    assert all((RESULTS / c["folder"] / "README.md").is_file() for c in INDEX["campaigns"])
    assert all(c.get("operating_point") in INDEX["operating_points"] for c in INDEX["campaigns"] if "operating_point" in c)


def test_runs_repetitions_and_roles_are_counted_from_the_records():
    for c in INDEX["campaigns"]:
        for f in (f for f in c["files"] if "experiments" in f):
            runs = _records(RESULTS / c["folder"] / f["file"])
            assert f["runs"] == len(runs) and f["repetitions"] == sorted({r["rep"] for r in runs}), f["file"]
            counts = collections.Counter(r["experiment"] for r in runs)
            assert {e: v["runs"] for e, v in f["experiments"].items()} == counts, f["file"]
            kind = {r["experiment"]: r["kind"] for r in runs}
            assert all((v["role"] == "held-out") == held_out(kind[e]) for e, v in f["experiments"].items()), f["file"]
        assert c["runs"] == sum(f.get("runs", 0) for f in c["files"])


def test_the_model_files_name_the_indexed_campaign_files_they_were_fitted_on():
    models = ROOT / "docs" / "cost-models"
    for name, how in INDEX["cost_models"].items():
        provenance = json.loads((models / name).read_text())["provenance"]
        fitted_on = provenance["fitted_on"] if isinstance(provenance["fitted_on"], list) else [provenance["fitted_on"]]
        assert fitted_on == [f"benchmarks/results/{f}" for f in how["fitted_on"]], name
        assert all((RESULTS / f).is_file() for f in how["fitted_on"]), name
        assert (how["method"], str(how["date"])) == (provenance["method"], provenance["date"]), name
        used_by = {f"{c['folder']}/{f['file']}" for c in INDEX["campaigns"] for f in c["files"] if name in f.get("used_by", [])}
        assert used_by == set(how["fitted_on"]), name


def test_the_readme_table_is_the_index_rendered():
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "rebuild_cost_model.py"), "--index-table"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout.strip()
    assert table.count("\n") == len(INDEX["campaigns"]) + 1
    assert table in (RESULTS / "README.md").read_text()

"""Cost model files: read, refused with the file and field named, and used by the CLI."""

import json

import pytest

from streamplace.model.performance import CostModel, load_cost_model
from streamplace.model.specs import SpecError


def test_a_file_sets_the_constants_it_names_and_keeps_the_rest(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"cost_model": {"task_cpu_per_tuple": 2e-5, "worker_cpu": 0.1}, "provenance": {"runs": 3}}))
    model = load_cost_model(path)
    assert model == CostModel(task_cpu_per_tuple=2e-5, worker_cpu=0.1)


def test_round_trip_through_to_dict(tmp_path):
    model = CostModel(ser_cpu_per_byte=1e-8, machine_speed={"fast": 2.0})
    path = tmp_path / "m.yaml"
    path.write_text(json.dumps({"cost_model": model.to_dict()}))
    assert load_cost_model(path) == model


@pytest.mark.parametrize("doc,field", [({"cost_model": {"cpu_per_tuple": 1}}, "cost_model.cpu_per_tuple"),
                                       ({"cost_model": {"worker_cpu": "fast"}}, "cost_model.worker_cpu"),
                                       ({"cost_model": {"worker_cpu": -1.0}}, "cost_model"),
                                       ({"cost_model": {"default_cpu_per_tuple": 1e308}}, "cost_model"),
                                       ({"cost_model": {"machine_speed": "fast"}}, "cost_model.machine_speed"),
                                       ({"cost_model": {"machine_speed": [1]}}, "cost_model.machine_speed"),
                                       ({"cost_model": {"machine_speed": {"m1": "x"}}}, "cost_model.machine_speed.m1"),
                                       ({"cost_model": {"machine_speed": {"m1": 1e13}}}, "cost_model"),
                                       ({"model": {}}, "cost_model")])
def test_bad_files_name_the_file_and_the_field(tmp_path, doc, field):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SpecError) as err:
        load_cost_model(path)
    assert str(err.value).startswith(f"{path}: {field}")


def test_evaluate_uses_the_cost_model_file(cli, tmp_path, monkeypatch):
    """The CLI in this process (the ``cli`` fixture: exit code, stdout, stderr), run in ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    assert cli(["workload", "microbench", "--layout", "diamond", "--tasks", "12", "-o", "t.yaml"])[0] == 0
    assert cli(["workload", "cluster", "--preset", "heterogeneous", "-o", "c.yaml"])[0] == 0
    assert cli(["schedule", "t.yaml", "c.yaml", "-s", "even", "-o", "p.json"])[0] == 0
    (tmp_path / "slow.json").write_text(json.dumps({"cost_model": {"task_cpu_per_tuple": 1e-3}}))
    default = json.loads(cli(["evaluate", "t.yaml", "c.yaml", "p.json", "--format", "json"])[1])
    slow = json.loads(cli(["evaluate", "t.yaml", "c.yaml", "p.json", "--format", "json", "--cost-model", "slow.json"])[1])
    assert slow["throughput"] < default["throughput"]
    code, _, err = cli(["evaluate", "t.yaml", "c.yaml", "p.json", "--cost-model", "nowhere.json"])
    assert code == 2 and err.count("\n") == 1 and "nowhere.json" in err


def test_the_bundled_defaults_are_the_fitted_cost_model_file():
    """One home for the fitted constants: CostModel() is docs/cost-models/testbed-fit.json."""
    from pathlib import Path
    bundled = Path(__file__).resolve().parents[2] / "docs" / "cost-models" / "testbed-fit.json"
    assert load_cost_model(bundled) == CostModel()


def test_every_shipped_cost_model_file_states_every_constant():
    """A file that omits a constant takes the bundled default, which moves with every refit: the
    shipped files (the analytic model, earlier fits) must keep their meaning, so they name all."""
    import dataclasses
    from pathlib import Path
    files = sorted((Path(__file__).resolve().parents[2] / "docs" / "cost-models").glob("*.json"))
    assert len(files) > 1
    every = {f.name for f in dataclasses.fields(CostModel)}
    for path in files:
        assert set(json.loads(path.read_text())["cost_model"]) == every, path.name

"""Theme 5: --time-limit reaches every scheduler that takes a budget; the others say before they
start that they run to completion. (How run time grows with size is benchmarks/scale.py's job.)"""

import json

from streamplace.schedulers import REGISTRY


def test_budget_parameter_matches_the_declared_capability():
    for name, cls in REGISTRY.items():
        budget = {"time_limit", "theta"} & set(cls.__dataclass_fields__)
        assert bool(budget) == cls.honours_time_limit, name


def test_schedulers_with_a_budget_get_the_time_limit(rel, small):
    topo, cluster = small
    for name, key in (("optimal", "time_limit"), ("ischeduler", "theta")):
        proc = rel.run_cli("schedule", topo, cluster, "-s", name, "--time-limit", "2", "--format", "json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["params"][key] == 2.0
        assert "takes no time limit" not in proc.stderr


def test_schedulers_without_a_budget_say_so_on_stderr_only(rel, small):
    topo, cluster = small
    proc = rel.run_cli("schedule", topo, cluster, "-s", "metis", "--time-limit", "2", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scheduler"] == "metis"   # stdout stays parseable
    note = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(note) == 1 and "metis takes no time limit and runs to completion" in note[0]
    assert "optimal" in note[0] and "ischeduler" in note[0]


def test_a_refused_parameter_is_the_one_line_without_the_time_limit_note(cli, small):
    """The note that metis takes no time limit came first, then the refusal: two lines."""
    topo, cluster = small
    code, _, err = cli(["schedule", topo, cluster, "-s", "metis", "--time-limit", "2", "-p", "imbalance=0"])
    assert code == 2 and err.strip().splitlines() == ["streamplace: scheduler 'metis': imbalance must be between 1 and 1e+06, got 0.0"]

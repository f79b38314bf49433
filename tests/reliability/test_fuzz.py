"""Fuzz (Hypothesis) over topology/cluster specs and CLI numbers: every input either gives a valid
placement with finite metrics (exit 0), no feasible placement (exit 3), or one line and exit 2;
never a traceback, never exit 1 (the in-process CLI, so a few hundred cases run in seconds)."""

import contextlib
import io
import json
import math

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamplace.cli import main

NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10**6),
                    st.sampled_from([0, 1e308, -0.0, 1e12, 1e-300]))
NAMES = st.sampled_from(["S", "A", "B", "C", "spout", "B[x]", " C", ""])
CLI_NUMBERS = st.one_of(st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e23", "1e308", "x", "0.5", "2"]),
                        st.floats(allow_nan=True, allow_infinity=True).map(repr))


@st.composite
def specs(draw):
    n_ops = draw(st.integers(1, 4))
    ops = []
    for i in range(n_ops):
        op = {"name": draw(NAMES) if draw(st.booleans()) else f"O{i}",
              "parallelism": draw(st.one_of(st.integers(-1, 6), st.sampled_from([10**9])))}
        for key in draw(st.sets(st.sampled_from(["selectivity", "tuple_bytes", "cpu_per_tuple", "source_rate", "load"]))):
            op[key] = draw(NUMBERS)
        ops.append(op)
    ops[0]["role"] = "source"
    streams = []
    for i in range(1, n_ops):
        stream = {"from": ops[draw(st.integers(0, i - 1))]["name"], "to": ops[i]["name"],
                  "grouping": draw(st.sampled_from(["shuffle", "fields", "all", "global", "local_or_shuffle", "bogus"]))}
        if stream["grouping"] == "fields":
            stream.update(key="k", num_keys=draw(st.one_of(st.integers(-1, 100), st.sampled_from([3 * 10**8]))))
        streams.append(stream)
    nodes = [{"name": f"n{j}", "capacity": draw(NUMBERS)} for j in range(draw(st.integers(1, 5)))]
    return {"name": "fuzz", "operators": ops, "streams": streams}, {"name": "c", "nodes": nodes}


def _run(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(spec=specs(), scheduler=st.sampled_from(["even", "rstorm", "metis", "t3", "optimal", "online"]),
       time_limit=st.one_of(st.none(), CLI_NUMBERS), seed=st.one_of(st.none(), CLI_NUMBERS))
def test_any_input_is_a_placement_or_one_line(tmp_path, spec, scheduler, time_limit, seed):
    topo, cluster = spec
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(topo, allow_unicode=True))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cluster))
    args = ["schedule", tmp_path / "t.yaml", tmp_path / "c.yaml", "-s", scheduler, "--format", "json"]
    if scheduler == "optimal":
        time_limit = time_limit or "1"
    if time_limit is not None:
        args += ["--time-limit", time_limit]
    if seed is not None:
        args += ["--seed", seed]
    code, out, err = _run(args)
    assert code in (0, 2, 3), (code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 0:
        assert "NaN" not in out and "Infinity" not in out
        record = json.loads(out)
        assert all(math.isfinite(v) for v in record.values() if isinstance(v, float)), record
    elif code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("streamplace: note:")]
        assert len(lines) == 1 and lines[0].startswith("streamplace: "), err

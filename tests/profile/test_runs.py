"""profile_records / replay_records: which JVM start a job's input size asks for."""

import contextlib

import pytest

from streamplace.profile import runs
from streamplace.profile import spark as sparkmod

TOPOLOGY = "name: t\noperators: [{name: a, parallelism: 1, role: source}, {name: b, parallelism: 1}]\nstreams: [{from: a, to: b}]\n"


class _Stop(Exception):
    pass


@pytest.fixture
def session_options(monkeypatch):
    """The options each command asks :func:`spark_session` for (no JVM starts)."""
    asked = []

    @contextlib.contextmanager
    def recorder(master=None, **options):
        asked.append(options)
        raise _Stop
        yield   # pragma: no cover

    monkeypatch.setattr(sparkmod, "spark_session", recorder)
    return asked


def _inputs(tmp_path, rows):
    (tmp_path / "t.yaml").write_text(TOPOLOGY)
    lines = "".join(f"{10 * i},10,a[0],b[0],100,1000\n" for i in range(rows))
    (tmp_path / "traffic.csv").write_text("window_start,window_seconds,src_task,dst_task,tuples,bytes\n" + lines)
    (tmp_path / "records.csv").write_text("ts,v\n" + "".join(f"{i},x\n" for i in range(rows)))
    return tmp_path / "traffic.csv"


@pytest.mark.parametrize("limit, fast", [(None, True), (100, False)])
def test_small_inputs_start_the_jvm_with_c1_only(tmp_path, session_options, monkeypatch, limit, fast):
    traffic = _inputs(tmp_path, 200)   # about 5.6 kB each
    assert traffic.stat().st_size > 100
    if limit is not None:
        monkeypatch.setattr(sparkmod, "FAST_START_MAX_BYTES", limit)
    with pytest.raises(_Stop):
        runs.profile_records(str(tmp_path / "t.yaml"), [str(traffic)], [], str(tmp_path / "p"))
    with pytest.raises(_Stop):
        runs.replay_records(str(tmp_path / "records.csv"), str(tmp_path / "m"), topology=str(tmp_path / "t.yaml"))
    assert session_options == [{"fast_start": fast}, {"fast_start": fast}]


def test_the_size_counts_every_input_of_a_profile(tmp_path, session_options, monkeypatch):
    traffic = _inputs(tmp_path, 200)
    monkeypatch.setattr(sparkmod, "FAST_START_MAX_BYTES", traffic.stat().st_size)
    with pytest.raises(_Stop):
        runs.profile_records(str(tmp_path / "t.yaml"), [str(traffic)], [], str(tmp_path / "p"))
    second = tmp_path / "more.csv"
    second.write_text(traffic.read_text())
    with pytest.raises(_Stop):
        runs.profile_records(str(tmp_path / "t.yaml"), [str(traffic), str(second)], [], str(tmp_path / "p"))
    assert session_options == [{"fast_start": True}, {"fast_start": False}]

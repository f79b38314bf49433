"""import storm-ui on saved REST responses (tests/storm/storm-ui/wordcount: Storm's WordCount
sample of docs/STORM-UI-REST-API.md, 600 s window): parallelism, rates and groupings by hand."""

import shutil
from pathlib import Path

import pytest

from streamplace.cli import main
from streamplace.model.graph import stream_flows
from streamplace.model.specs import load_topology
from streamplace.storm.errors import StormError
from streamplace.storm.ui import import_storm_ui

SAVED = Path(__file__).parent / "storm-ui" / "wordcount"


def test_parallelism_rates_and_groupings_from_the_ui():
    imported = import_storm_ui(str(SAVED))
    topo = imported.topology
    assert imported.window_s == 600
    assert [(op.name, op.parallelism, op.role) for op in topo.operators] == \
        [("spout", 5, "source"), ("count", 12, "compute"), ("split", 8, "compute")]
    ops = {op.name: op for op in topo.operators}
    assert ops["spout"].source_rate == pytest.approx(28880 / 600)          # default stream only, not __metrics
    assert ops["split"].selectivity == pytest.approx(184500 / 28780)       # the __tick input left out
    assert [(s.src, s.dst, s.grouping) for s in topo.streams] == [("split", "count", "fields"), ("spout", "split", "shuffle")]
    # the model's stream rates are the UI's: what each sender emitted per second
    # the model's stream rates: what each sender emitted per second, up to the tuples in flight
    # when the window closed (split executed 28780 of the spout's 28880: 0.35 %)
    rate = {(stream.src, stream.dst): float(pair_rate.sum()) for stream, _, _, pair_rate in stream_flows(topo)[1]}
    assert rate[("spout", "split")] == pytest.approx(28880 / 600)
    assert rate[("split", "count")] == pytest.approx(28880 / 600 * 184500 / 28780)
    assert rate[("split", "count")] == pytest.approx(184500 / 600, rel=0.005)
    assert any("fields grouping with uniform keys" in note for note in imported.notes)


def test_without_the_visualization_groupings_are_shuffle_and_said(tmp_path):
    copy = shutil.copytree(SAVED, tmp_path / "saved")
    (copy / "visualization.json").unlink()
    imported = import_storm_ui(str(copy))
    assert {s.grouping for s in imported.topology.streams} == {"shuffle"}
    assert sum("no visualization" in note for note in imported.notes) == 2


def test_cli_writes_a_spec_and_refuses_bad_input_in_one_line(tmp_path, capsys):
    main(["import", "storm-ui", str(SAVED), "-o", str(tmp_path / "wc.yaml")])
    assert load_topology(tmp_path / "wc.yaml").n_tasks == 25
    copy = shutil.copytree(SAVED, tmp_path / "bad")
    (copy / "component-split.json").write_text("{not json")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["import", "storm-ui", str(copy), "-o", str(tmp_path / "bad.yaml")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "component-split.json: invalid JSON at line 1" in err
    assert not (tmp_path / "bad.yaml").exists()
    with pytest.raises(StormError, match="nor a directory with topology.json"):
        import_storm_ui(str(tmp_path))


def test_a_window_the_ui_does_not_serve_or_a_saved_window_of_no_seconds_is_refused(tmp_path):
    """--window abc was sent to the UI as it was, and ignored for a saved directory; a saved
    window of "nan" was reported as a window of 0 s."""
    with pytest.raises(StormError, match=r"--window: the Storm UI's windows are 600, 10800, 86400, :all-time, got 'abc'"):
        import_storm_ui("http://127.0.0.1:9/api/v1/topology/x", window="abc")
    with pytest.raises(StormError, match="holds the window its responses were saved with"):
        import_storm_ui(str(SAVED), window="600")
    copy = shutil.copytree(SAVED, tmp_path / "nan")
    page = (copy / "topology.json").read_text()
    (copy / "topology.json").write_text(page.replace('"window": "600"', '"window": "nan"', 1))
    assert '"window": "nan"' in (copy / "topology.json").read_text()
    with pytest.raises(StormError, match=r"topology.json: window: must be a number of seconds > 0 .*got 'nan'"):
        import_storm_ui(str(copy))

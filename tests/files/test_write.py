"""The one way out (streamplace.files.write and .guard): inputs never replaced, format by
extension, atomic, symlinks written through, directories swapped whole."""

import os
from pathlib import Path

import pytest

from streamplace.files import (OutputError, atomic_write_text, check_output_dir, check_output_file, document_format,
                               format_document, guarding, note_input, read_document, replace_dir, stage_dir,
                               write_document)
from streamplace.schedulers.status import Status


def test_the_format_follows_the_extension():
    assert [document_format(p) for p in ("a.json", "a.YAML", "b.yml")] == ["json", "yaml", "yaml"]
    for name, shown in (("a.txt", "extension '.txt'"), ("plain", "no extension")):
        with pytest.raises(OutputError, match=f"-o: {name} has {shown}; the format follows the extension"):
            document_format(name)


def test_enums_and_tuples_are_written_as_plain_values(tmp_path):
    # the finding: `schedule -o placement.yaml` crashed after the solve on the status enum
    write_document({"status": Status.HEURISTIC, "pair": (1, 2)}, tmp_path / "r.yaml")
    assert read_document(tmp_path / "r.yaml") == {"status": "heuristic", "pair": [1, 2]}


def test_non_finite_numbers_are_never_written():
    with pytest.raises(ValueError):
        format_document({"x": float("inf")}, "json")
    with pytest.raises(ValueError):
        format_document({"x": float("nan")}, "yaml")


def test_an_input_is_never_an_output_by_any_spelling(tmp_path):
    spec = tmp_path / "d" / "t.yaml"
    spec.parent.mkdir()
    spec.write_text("a: 1\n")
    (tmp_path / "link.yaml").symlink_to(spec)
    with guarding():
        read_document(spec)
        for spelling in (spec, tmp_path / "d" / ".." / "d" / "t.yaml", tmp_path / "link.yaml"):
            with pytest.raises(OutputError, match="is the input"):
                check_output_file(spelling)
            with pytest.raises(OutputError, match="is the input"):
                atomic_write_text(spelling, "b: 2\n")
        with pytest.raises(OutputError, match="contains the input"):
            check_output_dir(tmp_path / "d")
        check_output_dir(tmp_path / "d", replaced=False)        # writing files into it is fine
        check_output_file(tmp_path / "d" / "other.yaml")
    assert spec.read_text() == "a: 1\n"


def test_nothing_is_written_inside_an_input_directory(tmp_path):
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "topology.json").write_text("{}")
    with guarding():
        note_input(saved)   # read as a whole (e.g. saved Storm UI responses)
        with pytest.raises(OutputError, match="lies inside the input directory"):
            check_output_file(saved / "topology.json")
        with pytest.raises(OutputError, match="lies inside the input directory"):
            check_output_file(saved / "new.json")


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_document({"a": 1}, link)
    assert link.is_symlink() and read_document(target) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]   # no temporary left


def test_a_directory_is_swapped_in_whole_and_never_over_an_input(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    stage = stage_dir(out)
    (stage / "new.txt").write_text("new")
    replace_dir(stage, out)
    assert sorted(p.name for p in out.iterdir()) == ["new.txt"] and not stage.exists()
    (out / "spec.yaml").write_text("a: 1\n")
    with guarding():
        read_document(out / "spec.yaml")
        stage = stage_dir(out)
        with pytest.raises(OutputError, match="contains the input"):
            replace_dir(stage, out)
        assert not stage.exists()
    assert (out / "spec.yaml").read_text() == "a: 1\n"


def test_a_symlinked_directory_is_not_replaced(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OutputError, match="is a symbolic link"):
        check_output_dir(tmp_path / "link")


def test_written_files_are_world_readable(tmp_path):
    atomic_write_text(tmp_path / "x.txt", "x")
    assert os.stat(tmp_path / "x.txt").st_mode & 0o777 == 0o644
    assert Path(tmp_path / "x.txt").read_text() == "x"

"""The one way in (streamplace.files.read): each rule on inputs built by hand."""

import json
import os
import threading

import pytest

from streamplace.files import SpecError, check_total_size, guarding, parse_document, quote, read_document, read_json_lines
from streamplace.files import read as reader
from streamplace.files.guard import overlap


def test_duplicate_keys_are_refused_in_yaml_and_json(tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\noperators: []\nname: b\n")
    with pytest.raises(SpecError, match=r"a.yaml: invalid YAML at line 3 column 1: duplicate key 'name'"):
        read_document(tmp_path / "a.yaml")
    (tmp_path / "a.json").write_text('{"placement": {"s[0]": "n0", "s[0]": "n1"}}')
    with pytest.raises(SpecError) as err:
        read_document(tmp_path / "a.json")
    assert str(err.value) == f"{tmp_path / 'a.json'}: s[0]: duplicate key (each key may appear once)"
    (tmp_path / "a.jsonl").write_text('{"a": 1}\n{"a": NaN}\n')
    with pytest.raises(SpecError) as err:
        list(read_json_lines(tmp_path / "a.jsonl"))
    assert str(err.value).startswith(f"{tmp_path / 'a.jsonl'}: line 2: NaN is not a number JSON allows")
    # the same key in two different mappings is not a duplicate
    (tmp_path / "b.yaml").write_text("x: {name: 1}\ny: {name: 2}\n")
    assert read_document(tmp_path / "b.yaml") == {"x": {"name": 1}, "y": {"name": 2}}


def test_a_billion_laughs_is_refused_before_it_is_expanded(tmp_path):
    text = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for i in range(ord("b"), ord("j")):
        prev = chr(i - 1)
        text += f"{chr(i)}: &{chr(i)} [{', '.join(['*' + prev] * 9)}]\n"
    (tmp_path / "bomb.yaml").write_text(text)    # 9^9 = 387,420,489 leaves from 306 bytes
    with pytest.raises(SpecError, match="aliases expand to more than"):
        read_document(tmp_path / "bomb.yaml")


def test_a_few_aliases_for_shared_settings_still_load(tmp_path):
    (tmp_path / "c.yaml").write_text("base: &b {capacity: 4, slots: 2}\nnodes:\n- {<<: *b, name: n0}\n- {<<: *b, name: n1}\n")
    doc = read_document(tmp_path / "c.yaml")
    assert [n["slots"] for n in doc["nodes"]] == [2, 2]


def test_non_finite_numbers_are_refused_naming_the_field(tmp_path):
    (tmp_path / "n.yaml").write_text("operators:\n- {name: s, load: .inf}\n")
    with pytest.raises(SpecError, match=r"n.yaml: operators\[0\].load: must be a finite number, got inf"):
        read_document(tmp_path / "n.yaml")
    (tmp_path / "n.json").write_text('{"x": [1, NaN]}')
    with pytest.raises(SpecError, match="NaN is not a number JSON allows"):
        read_document(tmp_path / "n.json")


@pytest.mark.parametrize("name, text", [("big.json", '{"rate": ' + "9" * 5000 + "}"), ("big.yaml", "rate: " + "9" * 5000),
                                        ("date.yaml", "when: 2001-13-45")])
def test_a_value_python_cannot_make_is_one_line_naming_the_file(tmp_path, name, text):
    """An integer of more digits than int() reads (4,300), a YAML date that is no date: these
    used to end in an internal error."""
    (tmp_path / name).write_text(text)
    with pytest.raises(SpecError, match=f"{name}: a (number with more digits than can be read|value that cannot be read: month)"):
        read_document(tmp_path / name)
    (tmp_path / "lines.jsonl").write_text('{"a": 1}\n' + text + "\n" if name.endswith("json") else '{"a": 1}\n')
    if name.endswith("json"):
        with pytest.raises(SpecError, match="lines.jsonl: line 2: a number with more digits"):
            list(read_json_lines(tmp_path / "lines.jsonl"))


def test_size_is_checked_before_reading_and_an_endless_stream_stops(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_DOCUMENT_BYTES", 1000)
    (tmp_path / "big.yaml").write_text("a: " + "x" * 2000 + "\n")
    with pytest.raises(SpecError, match="is 2,004 bytes; a YAML or JSON file may hold at most 1,000 bytes"):
        reader.read_document(tmp_path / "big.yaml")
    fifo = tmp_path / "endless.yaml"
    os.mkfifo(fifo)
    stop = threading.Event()

    def write_forever():
        try:
            with open(fifo, "w") as fh:
                while not stop.is_set():
                    fh.write("a: 1\n" * 100)
        except (BrokenPipeError, OSError):
            pass
    writer = threading.Thread(target=write_forever, daemon=True)
    writer.start()
    with pytest.raises(SpecError, match="longer than 1,000 bytes"):
        reader.read_document(fifo)
    stop.set()


def test_parsing_must_fit_the_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMPLACE_MEMORY_LIMIT", "1M")
    (tmp_path / "m.yaml").write_text("a: " + "x" * 20_000 + "\n")   # 20 kB of YAML: ~1.3 MB to parse
    with pytest.raises(SpecError, match="parsing 20,004 bytes of YAML would need about"):
        read_document(tmp_path / "m.yaml")
    (tmp_path / "m.json").write_text(json.dumps({"a": "x" * 20_000}))   # JSON: ~0.2 MB
    assert len(read_document(tmp_path / "m.json")["a"]) == 20_000


def test_quotes_are_short_and_containers_are_never_rendered():
    assert quote("x" * 10) == "'xxxxxxxxxx'"
    long = quote("y" * 10_000)
    assert len(long) < 100 and long.endswith("(10,002 characters)")
    shared = [1] * 10**6
    assert quote([shared, shared]) == "[[1, 1, 1, 1, ...], [1, 1, 1, 1, ...]]"
    assert quote({"a": [1, 2]}) == "{'a': [1, 2]}"


def test_json_lines_are_numbered_and_strict(tmp_path):
    (tmp_path / "r.jsonl").write_text('{"a": 1}\n\n{"a": 2, "a": 3}\n')
    it = read_json_lines(tmp_path / "r.jsonl")
    assert next(it) == (1, {"a": 1})
    with pytest.raises(SpecError, match="line 3: a: duplicate key"):
        next(it)


def test_parse_document_reads_a_value_given_on_the_command_line():
    assert parse_document("[1, 2]", "--storm-conf x", "yaml") == [1, 2]
    with pytest.raises(SpecError, match="--storm-conf x: file is empty"):
        parse_document("  ", "--storm-conf x", "yaml")


def test_record_sets_are_bounded_and_recorded_as_inputs(tmp_path):
    files = []
    for i in range(3):
        files.append(tmp_path / f"t{i}.jsonl")
        files[-1].write_text("x" * 100)
    assert check_total_size(files, tmp_path, what="records", limit=300) == 300
    with pytest.raises(SpecError, match="holds 300 bytes of records; at most 299 bytes"):
        check_total_size(files, tmp_path, what="records", limit=299)
    with guarding():
        check_total_size(files[:1], tmp_path, what="records")
        assert overlap(files[0]) == f"is the input {files[0]}"
    assert overlap(files[0]) is None   # outside a session nothing is recorded


def test_control_characters_of_a_users_file_are_shown_escaped_never_sent_to_the_terminal(tmp_path, cli):
    """An unknown key "bo<ESC>[31mgus<NUL>" reached the terminal raw (colouring it, a NUL)."""
    path = tmp_path / "t.yaml"
    path.write_text('name: t\noperators:\n  - {name: a, parallelism: 1, "bo\\e[31mgus\\0": 1}\nstreams: []\n')
    err = SpecError(path, "bo\x1b[31mgus\x00", "line\x07")
    assert str(err) == f"{path}: bo\\x1b[31mgus\\x00: line\\x07" and err.field_path == "bo\\x1b[31mgus\\x00"
    assert str(SpecError(path, "f", "cannot read:\n  bad\tthing")) == f"{path}: f: cannot read: bad thing"
    (tmp_path / "c.yaml").write_text("name: c\nnodes: [{name: n, capacity: 4}]\n")
    code, _, text = cli(["schedule", path, tmp_path / "c.yaml", "-s", "even"])
    assert code == 2 and "operators[0].bo\\x1b[31mgus\\x00: unknown field" in text
    assert not any(ord(c) < 32 and c != "\n" for c in text)

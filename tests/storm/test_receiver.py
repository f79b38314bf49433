"""The records receiver: windows POSTed by the metrics consumer become the monitor's files."""

import json
import urllib.error
import urllib.request

import pytest

from streamplace.storm.errors import StormError
from streamplace.storm.receiver import RecordsReceiver
from streamplace.storm.records import read_monitor


def window(start, host="node-a", worker="topo-1-6700-42", dropped=0, traffic=None):
    load = json.dumps({"window_start": start, "window_seconds": 1.0, "task": "src[0]", "executed": 5,
                       "cpu_seconds": 0.01}) + "\n"
    traffic = traffic if traffic is not None else json.dumps(
        {"window_start": start, "window_seconds": 1.0, "src_task": "src[0]", "dst_task": "out[0]", "tuples": 5,
         "bytes": 50}) + "\n"
    return json.dumps({"host": host, "worker": worker, "window_start": start, "traffic": traffic, "load": load,
                       "latency": "", "dropped": dropped})


def post(receiver, lines, headers=None):
    request = urllib.request.Request(receiver.url, data=("\n".join(lines) + "\n").encode(), method="POST",
                                     headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture
def receiver(tmp_path):
    notes = []
    with RecordsReceiver(tmp_path / "monitor", on_note=notes.append) as r:
        r.notes = notes
        yield r


def test_windows_become_the_monitors_files_one_per_worker(receiver):
    assert post(receiver, [window(10.0), window(10.0, host="node-b"), window(11.0)])[0] == 204
    files = sorted(p.name for p in receiver.out_dir.iterdir())
    assert files == ["load-node-a-topo-1-6700-42.jsonl", "load-node-b-topo-1-6700-42.jsonl",
                     "traffic-node-a-topo-1-6700-42.jsonl", "traffic-node-b-topo-1-6700-42.jsonl"]
    load = read_monitor(receiver.out_dir, "load", 0, 100)
    assert sorted(load["window_start"]) == [10.0, 10.0, 11.0] and load["executed"].sum() == 15
    assert receiver.stats() == {"windows": 3, "repeated": 0, "refused": 0, "dropped": 0}


def test_a_window_sent_again_is_written_once(receiver):
    post(receiver, [window(10.0)])
    post(receiver, [window(10.0), window(11.0)])   # the consumer got no answer for the first request
    assert len(read_monitor(receiver.out_dir, "load", 0, 100)) == 2
    assert receiver.stats()["repeated"] == 1


def test_a_bad_line_refuses_the_whole_request_naming_line_and_field(receiver):
    code, message = post(receiver, [window(10.0), window(11.0).replace('"host": "node-a"', '"host": 3')])
    assert code == 400 and message == "line 2: host: must be a non-empty string"
    code, message = post(receiver, [window(10.0, traffic='{"cut": ')])
    assert code == 400 and message == "line 1: traffic: must be JSON Lines ending in a newline"
    assert post(receiver, ["not json"])[0] == 400
    assert not any(receiver.out_dir.iterdir())   # nothing of a refused request is written
    assert receiver.stats()["refused"] == 3


@pytest.mark.parametrize("record, field", [
    ({"executed": "x"}, "executed"), ({"window_start": "now"}, "window_start"), ({"window_seconds": 0}, "window_seconds"),
    ({"task": None}, "task"), ({"cpu_seconds": float("inf")}, "cpu_seconds"),
])
def test_a_record_of_the_wrong_type_refuses_the_request_and_writes_nothing(receiver, record, field):
    load = {"window_start": 11.0, "window_seconds": 1.0, "task": "src[0]", "executed": 5, "cpu_seconds": 0.01, **record}
    bad = json.loads(window(11.0))
    bad["load"] = json.dumps(load) + "\n"
    code, message = post(receiver, [window(10.0), json.dumps(bad)])
    assert code == 400 and message.startswith(f"line 2: load: {field}: ")
    assert not receiver.out_dir.exists() or not any(receiver.out_dir.iterdir())


def test_a_record_that_is_not_an_object_refuses_the_request(receiver):
    bad = json.loads(window(10.0))
    bad["traffic"] = "[1, 2]\n"
    assert post(receiver, [json.dumps(bad)]) == (400, "line 1: traffic: a record is not a JSON object")


def test_drops_reported_by_a_worker_or_the_consumer_are_noted(receiver):
    post(receiver, [window(10.0, dropped=0), window(11.0, dropped=2)], headers={"X-Streamplace-Dropped": "1"})
    assert receiver.stats()["dropped"] == 3
    assert len(receiver.notes) == 2
    assert any("worker topo-1-6700-42 on node-a dropped 2 monitor windows" in n for n in receiver.notes)
    assert any(n.startswith("consumer at 127.0.0.1 dropped 1 ") for n in receiver.notes)   # a sender that does not say who


def test_two_consumers_on_one_host_are_counted_apart(receiver):
    """Each topology has its own consumer; two on one host send from one address. Counts are
    totals so far per consumer: 3 then 4 from one and 2 from the other are 6 dropped, not 4."""
    post(receiver, [window(10.0)], headers={"X-Streamplace-Dropped": "3", "X-Streamplace-Consumer": "a-1-1:5"})
    post(receiver, [window(11.0)], headers={"X-Streamplace-Dropped": "2", "X-Streamplace-Consumer": "b-2-1:9"})
    post(receiver, [window(12.0)], headers={"X-Streamplace-Dropped": "4", "X-Streamplace-Consumer": "a-1-1:5"})
    assert receiver.stats()["dropped"] == 6
    assert [n.split(" monitor")[0] for n in receiver.notes] == ["consumer a-1-1:5 dropped 3", "consumer b-2-1:9 dropped 2",
                                                                "consumer a-1-1:5 dropped 1"]


def test_a_window_that_cannot_be_written_is_counted_said_and_never_half_sent_again(receiver):
    (receiver.out_dir / "load-node-a-topo-1-6700-42.jsonl").mkdir()   # opening it to append fails
    assert post(receiver, [window(10.0)])[0] == 204
    assert receiver.stats() == {"windows": 0, "repeated": 0, "refused": 0, "dropped": 1}
    assert any("cannot write a window of worker topo-1-6700-42" in n for n in receiver.notes)
    post(receiver, [window(10.0)])   # sent again: not appended a second time to the traffic file
    assert len(read_monitor(receiver.out_dir, "traffic", 0, 100)) == 1 and receiver.stats()["repeated"] == 1


def test_only_its_path_takes_windows(receiver):
    request = urllib.request.Request(receiver.url.replace("/records", "/other"), data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(request, timeout=10)
    assert e.value.code == 404 and receiver.stats()["refused"] == 1


def test_a_port_in_use_is_one_clear_error(receiver):
    port = int(receiver.url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(StormError, match=f"cannot listen on 127.0.0.1:{port}"):
        RecordsReceiver(receiver.out_dir, port=port)


def progress(receiver, query):
    try:
        with urllib.request.urlopen(f"{receiver.url}?{query}", timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_progress_counts_a_topologys_workers_and_those_with_the_last_window(receiver):
    """What the runner asks before it stops a job: of topo-1's workers that sent anything, how many
    sent the window starting at ``through`` (or a later one); another topology's are not counted."""
    assert progress(receiver, "prefix=topo-1&through=12") == (200, "0 0")
    post(receiver, [window(10.0, worker="topo-1-6700-42"), window(11.0, worker="topo-1-6700-42"),
                    window(10.0, worker="topo-1-6701-43"), window(12.0, worker="topo-10-6702-44")])
    assert progress(receiver, "prefix=topo-1&through=12") == (200, "0 2")
    assert progress(receiver, "prefix=topo-1&through=11") == (200, "1 2")
    post(receiver, [window(12.0, worker="topo-1-6701-43"), window(12.0, worker="topo-1-6700-42")])
    assert progress(receiver, "prefix=topo-1&through=12") == (200, "2 2")
    assert progress(receiver, "prefix=topo-10&through=12") == (200, "1 1")


@pytest.mark.parametrize("query", ["prefix=topo-1", "through=3", "prefix=t&through=x", "prefix=t&through=nan"])
def test_a_progress_question_without_a_prefix_and_a_time_is_refused(receiver, query):
    assert progress(receiver, query)[0] == 400

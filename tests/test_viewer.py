"""The trace viewer in real headless Chromium, and the trace store's read API on a real tiny GRPO run.

The browser is Debian's `chromium` (`apt-get install -y chromium`), driven over the Chrome DevTools Protocol
by tests/chromium.py's small client. Browser tests skip when it is absent.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from failed_groups import ARITHMETIC
from mentor.traces import node_io
from viewer_page import cards, write_page

# --- a real tiny GRPO run with traces ---------------------------------------------------------------------
LEAK = "<b>the answer is {answer}</b>"  # markup in a draft: the page must show it as text


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """Two GRPO steps (2 collapsed groups each) with the mentor. The composer leaks on every first draft, and on
    every draft of the first problem it sees, so that problem's hint is withheld after the bound (1 retry)."""
    from mentor import Mentor
    from mentor.tasks import get_task
    from tiny_grpo import RecordingReward, make_trainer

    path = tmp_path_factory.mktemp("run")
    task = get_task("arithmetic")
    original, stubborn, lock = task.compose, [], threading.Lock()

    def compose(group, diagnosis, tier, feedback):
        with lock:  # groups run concurrently
            if not stubborn:
                stubborn.append(group.problem_id)
        if feedback is None or group.problem_id in stubborn:
            return LEAK.format(answer=group.reference["answer"])
        return original(group, diagnosis, tier, feedback)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(task, "compose", compose)
        trainer = make_trainer(path, RecordingReward(), max_steps=2)
        Mentor.from_config({"max_leak_retries": 1}).attach(trainer)
        trainer.train()
    return path


@pytest.fixture(scope="module")
def store(run_dir):
    from mentor.traces import TraceStore

    store = TraceStore(run_dir, readonly=True)
    yield store
    store.close()


@pytest.fixture(scope="module")
def graph():
    from mentor.traces.viewer import graph_spec

    return graph_spec()


def copy_store(store, path):
    """A fresh, writable store at `path` holding the records and step metrics of `store`."""
    from mentor.traces import TraceStore

    copy = TraceStore(path)
    metrics = {s["step"]: {k: v for k, v in s.items() if k != "step"} for s in store.steps()}
    for step in sorted(metrics):
        records = [{k: v for k, v in r.items() if k != "id"} for r in store.interventions(step_min=step, step_max=step)]
        copy.append(step, records, metrics[step])
    return copy


# --- the trace store's read API ---------------------------------------------------------------------------
def test_store_read_api_on_a_real_run(store):
    records = store.interventions()
    assert store.count() == len(records) == 4
    assert [s["step"] for s in store.steps()] == [0, 1]
    assert all("mentor/collapse_rate_before" in s and "mentor/leaks_blocked" in s for s in store.steps())
    assert [r["id"] for r in records] == sorted(r["id"] for r in records)
    assert [r["step"] for r in records] == [0, 0, 1, 1]
    withheld = store.interventions(withheld=True)
    assert len(withheld) == 1 and withheld[0]["hint"] is None and not withheld[0]["recovered"]
    assert len(store.interventions(withheld=False)) == 3
    assert len(store.interventions(recovered=True)) == 3 and store.interventions(recovered=False) == withheld
    assert store.interventions(step_min=1) == store.interventions(step_min=1, step_max=1) == records[2:]
    assert store.interventions(step_max=0) == records[:2]
    assert store.interventions(after_id=records[1]["id"], limit=1) == [records[2]]
    cls = records[0]["diagnosis"]["error_class"]
    assert store.interventions(error_class=cls) == [r for r in records if r["diagnosis"]["error_class"] == cls]
    assert store.interventions(error_class="no such class") == []
    tier = records[1]["tier"]
    assert store.interventions(tier=tier) == [r for r in records if r["tier"] == tier]
    assert store.get(records[3]["id"]) == records[3] and store.get(10_000) is None
    assert list(store) == records
    assert [json.loads(t) for t in store.interventions_json()] == records
    assert [json.loads(t) for t in store.interventions_json(withheld=True)] == withheld


def test_records_hold_the_node_stream_the_drafts_and_the_reattempt(store):
    withheld = store.interventions(withheld=True)[0]
    hinted = store.interventions(withheld=False)
    for r in store:
        assert {"step", "group", "round", "problem_id", "task", "prompt", "attempts", "diagnosis", "hint", "tier",
                "withheld", "leak", "latency_s", "backend", "fallbacks", "error", "nodes", "reattempt",
                "recovered", "strategy", "placement"} <= set(r)
        assert len(r["attempts"]) == 4 and all(a["reward"] == 0.0 for a in r["attempts"])
        for node in r["nodes"]:  # from LangGraph's task stream (mentor/runtime/runner.py)
            assert node["backend"] == "rules" and node["latency_s"] > 0 and node["error"] is None
            assert isinstance(node["input"], dict) and isinstance(node["output"], dict)
        # The failed group is stored once: the classifier's output keeps only what the record lacks.
        group = r["nodes"][0]["output"]["group"]
        assert set(group) == {"reference", "previous_hints", "attempts"} and group["reference"]["answer"]
        assert len(group["attempts"]) == len(r["attempts"])
        assert all(set(a) == {"feedback"} and a["feedback"]["correct"] is False for a in group["attempts"])
    # The stubborn problem: two drafts (max_leak_retries=1), both rejected, no hint, no re-attempt.
    assert [n["node"] for n in withheld["nodes"]] == ["error_classifier", "root_cause_analyst", "hint_composer",
                                                      "leakage_checker", "hint_composer", "leakage_checker"]
    drafts = withheld["leak"]["leaked_drafts"]
    assert len(drafts) == 2 and all(d["detectors"] and d["draft"].startswith("<b>the answer is") for d in drafts)
    assert withheld["reattempt"] == []
    for r in hinted:  # the first draft leaked, the second passed; the re-attempt is recorded with its rewards
        assert len(r["leak"]["leaked_drafts"]) == 1 and r["hint"] and r["recovered"]
        assert len(r["reattempt"]) == 4 and max(a["reward"] for a in r["reattempt"]) > 0


def test_a_reader_sees_steps_a_writer_appends(store, tmp_path):
    from mentor.traces import TraceStore

    writer = copy_store(store, tmp_path)
    reader = TraceStore(tmp_path, readonly=True)
    last = reader.interventions()[-1]["id"]
    new = {k: v for k, v in store.interventions(limit=1)[0].items() if k != "id"}
    writer.append(2, [{**new, "step": 2}], {"mentor/collapse_rate_before": 0.5, "mentor/collapse_rate_after": 0.0})
    assert reader.count() == 5 and [s["step"] for s in reader.steps()] == [0, 1, 2]
    assert [r["step"] for r in reader.interventions(after_id=last)] == [2]
    reader.close()
    writer.close()


# --- the page, without a browser --------------------------------------------------------------------------
HOSTILE = "</script><script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\"><!-- & &amp; \u2028"


def hostile_record(record):
    r = json.loads(json.dumps(record))
    r["problem_id"] = "<i>p</i>"
    r["attempts"][0]["completion"] = HOSTILE
    r["attempts"][1]["reward"] = float("-inf")  # a row whose reward functions all returned None
    r["hint"] = "<svg onload=\"window.pwned = 3\">"
    r["diagnosis"]["root_cause"] = "</SCRIPT ><script>window.pwned = 4</script>"
    r["leak"]["leaked_drafts"][0]["draft"] = "<a href=\"javascript:window.pwned = 5\">x</a>"
    return r


def embedded_data(page: str) -> dict:
    start = page.index('<script type="application/json" id="mentor-data">') + len(
        '<script type="application/json" id="mentor-data">')
    return json.loads(page[start:page.index("</script>", start)])


def test_the_page_is_self_contained_and_holds_the_data_as_inert_json(store, graph):
    from mentor.traces.viewer import build_html

    records = store.interventions()
    page = build_html([hostile_record(records[0])] + records[1:], store.steps(), graph, source="run")
    assert page.count("<script") == 2 and page.lower().count("</script") == 2  # the data tag and the viewer's
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    data = embedded_data(page)
    assert data["interventions"][0]["attempts"][0]["completion"] == HOSTILE
    assert data["interventions"][0]["attempts"][1]["reward"] == "-inf"
    assert data["interventions"][1:] == records[1:] and data["steps"] == store.steps()
    assert {n["id"] for n in data["graph"]["nodes"]} >= {"error_classifier", "root_cause_analyst",
                                                         "hint_composer", "leakage_checker"}


def test_cli_writes_pages_for_a_run_and_for_diagnose_output(run_dir, tmp_path, capsys):
    from mentor.cli import main

    assert main(["traces", "view", str(run_dir), "-o", str(tmp_path / "run.html")]) == 0
    assert "4 interventions" in capsys.readouterr().out
    assert len(embedded_data((tmp_path / "run.html").read_text())["interventions"]) == 4
    failures = tmp_path / "failures.jsonl"
    failures.write_text("\n".join(json.dumps({**ARITHMETIC, "problem_id": f"add-{i}"}) for i in range(3)) + "\n")
    assert main(["diagnose", str(failures), "-o", str(tmp_path / "out.jsonl")]) == 0
    assert main(["traces", "view", str(tmp_path / "out.jsonl")]) == 0  # default: out.html next to it
    data = embedded_data((tmp_path / "out.html").read_text())
    assert data["meta"]["kind"] == "jsonl" and [r["id"] for r in data["interventions"]] == [1, 2, 3]
    assert data["interventions"][0]["hint"] and data["steps"] == []
    assert main(["traces", "view", str(tmp_path / "missing")]) == 2
    assert "no mentor traces" in capsys.readouterr().err


@pytest.fixture
def live_store(store, tmp_path):
    copy = copy_store(store, tmp_path)
    yield copy
    copy.close()


@contextlib.contextmanager
def serving(server):
    """`server` answering on its own thread until the block ends, then shut down and closed."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def server(live_store, tmp_path):
    from mentor.traces.viewer import TraceServer

    with serving(TraceServer(tmp_path, port=0, poll_s=0.2)) as server:
        yield server


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def test_serve_on_a_port_in_use_says_so(server, tmp_path, capsys):
    from mentor.cli import main

    port = server.server_address[1]
    assert main(["traces", "serve", str(tmp_path), "--port", str(port)]) == 2
    assert f"cannot serve on 127.0.0.1:{port}" in capsys.readouterr().err


def test_serve_answers_the_page_and_the_polling_api(server, live_store, store):
    with urllib.request.urlopen(server.url, timeout=10) as r:
        page = r.read().decode()
    assert embedded_data(page)["meta"]["live"] is True
    assert embedded_data(page)["interventions"] == []  # the page loads them from the API: GET / costs no records
    records = get_json(server.url + "api/interventions?after_id=0")
    assert records == store.interventions()
    assert get_json(server.url + f"api/interventions?after_id={records[-1]['id']}") == []
    new = {k: v for k, v in records[0].items() if k != "id"}
    live_store.append(2, [{**new, "step": 2, "attempts": [{"completion": "x", "reward": float("-inf")}]}])
    [added] = get_json(server.url + f"api/interventions?after_id={records[-1]['id']}")
    assert added["step"] == 2 and added["attempts"][0]["reward"] == "-inf"
    assert get_json(server.url + "api/interventions?after_id=0&limit=2") == records[:2]
    assert [s["step"] for s in get_json(server.url + "api/steps")] == [0, 1]
    assert get_json(server.url + "api/runs") == []  # the page is built once: a run recorded later arrives here
    versions = {"graph": {"file": "/copy/graphs/mentor/graph.py", "files": []}, "backends": {"hint_composer": "llm"}}
    live_store.record_run(2, versions)
    assert get_json(server.url + "api/runs") == [{"step": 2, **versions}]
    for bad in ("nothing", "api/interventions?after_id=x"):
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server.url + bad, timeout=10)


def raw_request(server, request: bytes) -> bytes:
    """The whole answer to `request` sent as is on a fresh connection (Host headers urllib would not send)."""
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_serve_answers_only_requests_that_name_it(server, tmp_path):
    """Issue 25: any Host was answered, so a page whose name was rebound to 127.0.0.1 read every record."""
    port = server.server_address[1]
    for host, status in ((f"127.0.0.1:{port}", 200), (f"localhost:{port}", 200), (f"LOCALHOST:{port}", 200),
                         (f"evil.example.com:{port}", 403), (f"localhost.evil.example.com:{port}", 403),
                         ("127.0.0.1", 403), (f"127.0.0.1:{port + 1}", 403)):
        answer = raw_request(server, f"GET /api/interventions HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                             .encode())
        assert status_of(answer) == status, (host, answer[:200])
        assert (b"problem_id" in answer) == (status == 200)
    assert status_of(raw_request(server, b"GET /api/interventions HTTP/1.0\r\n\r\n")) == 400  # no Host at all

    from mentor.traces.viewer import TraceServer

    # bound to every address: IPs, never names
    with serving(TraceServer(tmp_path, host="0.0.0.0", port=0)) as everywhere:
        port = everywhere.server_address[1]
        for host, status in ((f"10.1.2.3:{port}", 200), (f"[::1]:{port}", 200), (f"evil.example.com:{port}", 403)):
            answer = raw_request(everywhere, f"GET /api/steps HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            assert status_of(answer) == status, host


def test_serve_answers_bad_numbers_with_400_and_head_like_get(server):
    for query in ("after_id=99999999999999999999", "after_id=-1", "after_id=1e3", "limit=0", "limit=x",
                  "after_id=9223372036854775808"):
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(server.url + "api/interventions?" + query, timeout=10)
        assert e.value.code == 400 and b"must be" in e.value.read(), query
    assert get_json(server.url + "api/interventions?after_id=9223372036854775807") == []  # the largest id there is
    for path in ("", "api/interventions", "api/steps"):
        with urllib.request.urlopen(server.url + path, timeout=10) as r:
            body = r.read()
        with urllib.request.urlopen(urllib.request.Request(server.url + path, method="HEAD"), timeout=10) as r:
            assert r.status == 200 and r.read() == b"" and int(r.headers["Content-Length"]) == len(body)


class SmallServer:
    """A TraceServer with small bounds, so a test reaches them: one record per answer, 3 connections, 2 s idle."""

    def __new__(cls, path):
        from mentor.traces.viewer import TraceServer

        class Small(TraceServer):
            MAX_ANSWER_CHARS = 1
            MAX_CONNECTIONS = 3
            IDLE_TIMEOUT_S = 2.0  # long enough that the idle ones still hold their slots when the fourth comes

        return Small(path, port=0, poll_s=0.2)


@pytest.fixture
def small_server(live_store, tmp_path):
    with serving(SmallServer(tmp_path)) as server:
        yield server


def test_serve_pages_the_records_and_bounds_connections_and_idle_time(small_server, store):
    """Issue 25: GET / built the whole page from the store per request (590 MB for a 100 MB store), and 300 idle
    connections held 301 threads."""
    server, ids, after = small_server, [], 0
    while page := get_json(server.url + f"api/interventions?after_id={after}"):
        assert len(page) == 1  # MAX_ANSWER_CHARS = 1: one record per answer, whatever the limit asked
        ids.append(after := page[-1]["id"])
    assert ids == [r["id"] for r in store.interventions()]
    threads = threading.active_count()
    idle = [socket.create_connection(server.server_address[:2], timeout=10) for _ in range(3)]
    try:
        time.sleep(0.2)
        assert threading.active_count() <= threads + 3
        refused = raw_request(server, b"GET / HTTP/1.0\r\n\r\n")  # a fourth connection: refused at once
        assert status_of(refused) == 503 and threading.active_count() <= threads + 3
        for sock in idle:  # closed by the server after IDLE_TIMEOUT_S of silence (10 s is the hang guard)
            assert sock.recv(1) == b""
    finally:
        for sock in idle:
            sock.close()
    assert get_json(server.url + "api/steps")  # their slots are free again


STEPS = 2500  # two and a half answers of MAX_BATCH (1,000) steps


def many_steps(path, steps=STEPS, unreadable=()):
    """A writable store at `path` with `steps` steps of metrics, written in one transaction (TraceStore.append
    commits each step: thousands would take seconds); the steps in `unreadable` hold text that is not JSON."""
    from mentor.traces import TraceStore

    store = TraceStore(path)
    with store.db:
        store.db.executemany("INSERT INTO steps (step, metrics) VALUES (?, ?)", [
            (s, "not json" if s in unreadable else json.dumps({"mentor/graduated_total": s})) for s in range(steps)])
    return store


def test_serve_pages_the_steps(tmp_path, capsys):
    """Issue 39: /api/steps answered every step at every poll (57-66 MiB at 100,000 steps)."""
    from mentor.traces.viewer import TraceServer

    bad = set(range(1000, 1100))  # a run of unreadable rows longer than a read: skipped, and paging goes on past it
    many_steps(tmp_path, unreadable=bad).close()
    with serving(TraceServer(tmp_path, port=0)) as server:
        first = get_json(server.url + "api/steps")
        assert [s["step"] for s in first] == list(range(1000))  # MAX_BATCH
        seen, after = [], None
        while page := get_json(server.url + "api/steps" + ("" if after is None else f"?after_step={after}")):
            seen += page
            after = page[-1]["step"]
        assert seen == [{"step": s, "mentor/graduated_total": s} for s in range(STEPS) if s not in bad]
        assert [s["step"] for s in get_json(server.url + "api/steps?after_step=2490&limit=5")] == list(range(2491, 2496))
        assert get_json(server.url + "api/steps?after_step=-5&limit=1") == [{"step": 0, "mentor/graduated_total": 0}]
        for query in ("after_step=x", "limit=0", "after_step=99999999999999999999"):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(server.url + "api/steps?" + query, timeout=10)
            assert e.value.code == 400 and b"must be" in e.value.read(), query
    with serving(SmallServer(tmp_path)) as small:  # MAX_ANSWER_CHARS = 1: one step per answer
        assert get_json(small.url + "api/steps?after_step=7") == [{"step": 8, "mentor/graduated_total": 8}]
    assert "steps row step=1000 is not JSON" in capsys.readouterr().err


def test_a_growing_jsonl_file_is_read_on_from_where_the_last_read_stopped(tmp_path, capsys):
    from mentor.traces.viewer import TraceSource

    path = tmp_path / "out.jsonl"
    path.write_text('{"problem_id": "a"}\n\nnot json\n{"problem_id": "b"}\n')
    source = TraceSource(path, wait=True)  # as `serve` reads it

    def ids(after_id=0):
        return [(r["id"], r["problem_id"]) for r in source.interventions(after_id)]

    assert ids() == [(1, "a"), (4, "b")]
    assert capsys.readouterr().err.count("out.jsonl:3: not JSON") == 1
    with path.open("r+b") as f:  # an edit to a line already read is not parsed again
        f.seek(len('{"problem_id": "'))
        f.write(b"z")
    with path.open("a") as f:  # the writer is in the middle of line 6
        f.write('{"problem_id": "c"}\n{"problem_id": "d", "hin')
    assert ids(after_id=4) == [(5, "c")]
    with path.open("a") as f:
        f.write('t": "x"}\n{"problem_id": "e"}')  # line 7, whole but with no newline yet
    assert ids(after_id=5) == [(6, "d"), (7, "e")] and source.interventions(5)[0]["hint"] == "x"
    assert ids() == [(1, "a"), (4, "b"), (5, "c"), (6, "d"), (7, "e")]
    assert capsys.readouterr().err == ""  # neither the bad line 3 again, nor the half-written line 6
    with path.open("a") as f:
        f.write('\n{"problem_id": "f"}\n')
    assert ids(after_id=7) == [(8, "f")]
    path.write_text('{"problem_id": "new"}\n')  # rewritten shorter: read from the start
    assert ids() == [(1, "new")]


def test_a_jsonl_file_read_once_reports_a_broken_last_line(tmp_path, capsys):
    from mentor.traces.viewer import read_jsonl

    path = tmp_path / "out.jsonl"
    path.write_text('{"problem_id": "a"}\n[1, 2]\n{"problem_id": "b", "id": "own"}\n{"problem_id": "c", "hin')
    assert [(r["id"], r["problem_id"]) for r in read_jsonl(path)] == [(1, "a")]
    err = capsys.readouterr().err
    assert "out.jsonl:2: not a JSON object; skipped" in err and "out.jsonl:4: not JSON" in err
    assert "out.jsonl:3: 'id' must be an integer, got 'own'" in err  # reported, not dropped silently


# --- the page in headless Chromium (the `browser` fixture: conftest.py) -------------------------------------

@pytest.fixture(scope="module")
def run_page(store, graph, tmp_path_factory):
    return write_page(store, tmp_path_factory.mktemp("page") / "traces.html", graph).as_uri()


def rows(browser) -> list[int]:
    return browser.js("Array.from(document.querySelectorAll('#list tbody tr')).map(tr => +tr.dataset.id)")


def marks(browser, plot: str) -> list[float]:
    """The values of a summary plot's SVG marks (bars or points), in drawing order."""
    return browser.js(f"Array.from(document.querySelectorAll('[data-plot={plot}] svg .mark'))"
                      ".map(e => +e.dataset.value)")


def set_filter(browser, element_id: str, value) -> None:
    browser.js(f"(() => {{ const e = document.getElementById({json.dumps(element_id)}); e.value = {json.dumps(value)};"
               f" e.dispatchEvent(new Event('change', {{bubbles: true}})); }})()")


def test_the_page_loads_cleanly_and_draws_the_summary_and_the_graph(browser, run_page, store):
    browser.navigate(run_page)
    browser.wait_for("window.mentorReady")
    assert browser.problems() == []
    assert marks(browser, "per-step") == [2, 2]
    steps = store.steps()
    assert marks(browser, "collapse") == ([s["mentor/collapse_rate_before"] for s in steps]
                                          + [s["mentor/collapse_rate_after"] for s in steps])
    recovery = browser.js("Object.fromEntries(Array.from(document.querySelectorAll('[data-plot=recovery] svg .mark'))"
                          ".map(e => [e.dataset.label, +e.dataset.value]))")
    expected = {}
    for r in store.interventions(withheld=False):  # recovered share of the hinted interventions, per class
        expected.setdefault(r["diagnosis"]["error_class"], []).append(r["recovered"])
    assert recovery == {c: sum(v) / len(v) for c, v in expected.items()}
    assert marks(browser, "tiers")[-1] == 1  # the withheld bar
    assert sum(marks(browser, "leaks")) == 2 + 3 + 1  # 5 drafts blocked, 1 hint withheld
    nodes = browser.js("Array.from(document.querySelectorAll('#graph-svg .gnode')).map(g => g.dataset.node)")
    assert {"error_classifier", "root_cause_analyst", "hint_composer", "leakage_checker"} <= set(nodes)
    assert browser.js("!!document.querySelector('#graph-svg [data-edge=\"leakage_checker->hint_composer\"]')")
    assert browser.js("document.getElementById('count').textContent") == "4 of 4 interventions"


def test_filters_and_search_narrow_the_list(browser, run_page, store):
    browser.navigate(run_page)
    browser.wait_for("window.mentorReady")
    records = store.interventions()
    ids = [r["id"] for r in records]
    withheld = store.interventions(withheld=True)[0]
    assert rows(browser) == ids
    set_filter(browser, "f-withheld", "yes")
    assert rows(browser) == [withheld["id"]]
    set_filter(browser, "f-withheld", "")
    set_filter(browser, "f-recovered", "yes")
    assert rows(browser) == [i for i in ids if i != withheld["id"]]
    set_filter(browser, "f-recovered", "")
    browser.js("document.getElementById('f-step-min').value = 1;"
               " document.getElementById('f-step-min').dispatchEvent(new Event('input', {bubbles: true}))")
    assert rows(browser) == ids[2:]
    browser.click("#f-reset")
    browser.wait_for(f"document.querySelectorAll('#list tbody tr').length === {len(ids)}")
    browser.type_into("#f-search", records[3]["problem_id"])
    browser.wait_for("document.querySelectorAll('#list tbody tr').length === 1")
    assert rows(browser) == [ids[3]]
    browser.click("#f-reset")
    browser.type_into("#f-search", "no text like this")
    browser.wait_for("document.querySelectorAll('#list tbody tr').length === 0")
    assert browser.js("document.getElementById('count').textContent") == "0 of 4 interventions"
    browser.click("#f-reset")
    tier = str(records[1]["tier"])
    set_filter(browser, "f-tier", tier)
    assert rows(browser) == [r["id"] for r in records if str(r["tier"]) == tier]
    assert browser.problems() == []


def test_opening_an_intervention_shows_attempts_nodes_hint_drafts_and_reattempt(browser, run_page, store):
    browser.navigate(run_page)
    browser.wait_for("window.mentorReady")
    hinted = store.interventions(withheld=False)[0]
    browser.click(f"#list tbody tr[data-id='{hinted['id']}']")
    browser.wait_for(f"document.getElementById('detail').dataset.id === '{hinted['id']}'")
    detail = browser.js("""(() => { const d = document.getElementById('detail'); return {
        hint: document.getElementById('detail-hint').textContent,
        drafts: Array.from(d.querySelectorAll('.draft-text')).map(e => e.textContent),
        draftMarkup: d.querySelectorAll('.draft-text b, .draft-text *').length,
        detectors: Array.from(d.querySelectorAll('.detector')).map(e => e.textContent),
        attempts: Array.from(d.querySelectorAll('.attempts tbody tr')).length,
        nodes: Array.from(d.querySelectorAll('.node')).map(e => [e.dataset.node,
            e.querySelector('.latency').textContent, e.querySelector('.backend').textContent]),
        reattempt: Array.from(d.querySelectorAll('.reattempt tbody tr td:last-child')).map(e => e.textContent),
    }; })()""")
    assert detail["hint"] == hinted["hint"]
    assert detail["drafts"] == [d["draft"] for d in hinted["leak"]["leaked_drafts"]]
    assert detail["drafts"][0].startswith("<b>the answer is") and detail["draftMarkup"] == 0
    assert set(hinted["leak"]["leaked_drafts"][0]["detectors"]) <= set(detail["detectors"])
    assert detail["attempts"] == 4
    assert [n[0] for n in detail["nodes"]] == [n["node"] for n in hinted["nodes"]]
    assert all(n[1].endswith(" ms") and n[2] == "rules" for n in detail["nodes"])
    assert [float(x) for x in detail["reattempt"]] == [a["reward"] for a in hinted["reattempt"]]
    # A node's input and output, shown when opened.
    browser.click("#detail .node[data-node='leakage_checker'] details.output summary")
    output = json.loads(browser.wait_for(  # the page fills the <pre> when the <details> opens
        "document.querySelector(\"#detail .node[data-node='leakage_checker'] details.output pre\")?.textContent"))
    assert output == next(n for n in hinted["nodes"] if n["node"] == "leakage_checker")["output"]
    # The last node's whole input, rebuilt from what earlier nodes wrote (its record stores only what it added).
    last = f"#detail .node:nth-child({len(hinted['nodes'])}) details.input"
    browser.click(f"{last} summary")
    shown = json.loads(browser.wait_for(f"document.querySelector(\"{last} pre\")?.textContent"))
    assert shown == node_io(hinted["nodes"])[-1]["input"] and hinted["nodes"][-1]["inherited"]
    assert shown["leaked_drafts"] == hinted["leak"]["leaked_drafts"] and shown["draft"] == hinted["hint"]

    withheld = store.interventions(withheld=True)[0]
    browser.js(f"mentorViewer.showDetail({withheld['id']})")
    assert "withheld" in browser.js("document.getElementById('detail-hint').textContent")
    assert browser.js("document.querySelectorAll('#detail .draft').length") == 2
    assert browser.problems() == []


def test_the_detail_shows_the_prompt_as_sent_and_says_so_where_an_old_record_lacks_it(browser, run_page, store, graph,
                                                                                      tmp_path):
    from mentor.traces.viewer import build_html

    browser.navigate(run_page)
    browser.wait_for("window.mentorReady")
    hinted = store.interventions(withheld=False)[0]
    browser.js(f"mentorViewer.showDetail({hinted['id']})")
    sent = browser.js("document.getElementById('detail-sent').textContent")
    assert sent == hinted["hinted_prompt"] and hinted["prompt"] in sent and hinted["hint"] in sent
    withheld = store.interventions(withheld=True)[0]
    browser.js(f"mentorViewer.showDetail({withheld['id']})")
    assert browser.js("document.getElementById('detail-sent')") is None  # no hint, so nothing was sent with one
    # A record an earlier version wrote (tests/data/trace_records.json): no prompt as sent, and the page says so.
    cases = json.loads((Path(__file__).parent / "data" / "trace_records.json").read_text())["cases"]
    old = {**cases[0]["raw"], "id": 1}
    page = tmp_path / "old.html"
    page.write_text(build_html([old], [], graph, source="run"), encoding="utf-8")
    browser.navigate(page.as_uri())
    browser.wait_for("window.mentorReady")
    browser.js("mentorViewer.showDetail(1)")
    assert "not recorded" in browser.js("document.getElementById('detail-sent').textContent")
    assert browser.js("mentorViewer.records()[0].reference") == {"answer": "1219", "operands": [851, 368]}
    assert browser.js("document.querySelector('#detail .badge.ok').textContent") == "recovered"
    # An SDPOTrainer record: what the self-teacher saw, in place of a prompt sent and a re-attempt.
    sdpo = {**cases[-1]["raw"], "id": 1}
    page.write_text(build_html([sdpo], [], graph, source="run"), encoding="utf-8")
    browser.navigate(page.as_uri())
    browser.wait_for("window.mentorReady")
    browser.js("mentorViewer.showDetail(1)")
    assert browser.js("document.getElementById('detail-teacher').textContent") == sdpo["teacher_prompt"]
    assert browser.js("document.getElementById('detail-sent')") is None
    assert browser.js("document.querySelector('#detail .reattempt')") is None
    assert browser.problems() == []


def test_model_output_is_shown_as_text_never_run(browser, store, graph, tmp_path):
    from mentor.traces.viewer import build_html

    records = store.interventions()
    bad = hostile_record(records[0])
    path = tmp_path / "hostile.html"
    path.write_text(build_html([bad] + records[1:], store.steps(), graph, source="<b>run</b>"), encoding="utf-8")
    browser.navigate(path.as_uri())
    browser.wait_for("window.mentorReady")
    browser.js(f"mentorViewer.showDetail({bad['id']})")
    assert browser.js("window.pwned") is None
    markup = "#detail script, #detail img, #detail svg, #detail a, #detail i"
    assert browser.js(f"document.querySelectorAll({json.dumps(markup)}).length") == 0
    text = browser.js("document.getElementById('detail').textContent")
    draft = bad["leak"]["leaked_drafts"][0]["draft"]
    for shown in (HOSTILE, bad["hint"], bad["diagnosis"]["root_cause"], draft, "<i>p</i>"):
        assert shown in text
    assert browser.js("document.getElementById('source').textContent").endswith("<b>run</b>")
    assert browser.problems() == []


def test_a_run_without_interventions_yet_loads_cleanly(browser, graph, tmp_path):
    from mentor.traces.viewer import build_html

    path = tmp_path / "empty.html"
    path.write_text(build_html([], [], graph, source="run"), encoding="utf-8")
    browser.navigate(path.as_uri())
    browser.wait_for("window.mentorReady")
    assert browser.problems() == []
    assert browser.js("document.getElementById('count').textContent") == "0 of 0 interventions"
    assert browser.js("document.querySelectorAll('figure.plot').length") == 7
    assert browser.js("document.querySelectorAll('[data-plot=graduated] .empty, [data-plot=reliance] .empty').length") == 2


def test_diagnose_output_opens_in_the_viewer(browser, graph, tmp_path):
    from mentor.cli import main
    from mentor.traces.viewer import write_html

    failures, out = tmp_path / "failures.jsonl", tmp_path / "out.jsonl"
    failures.write_text("".join(json.dumps({**ARITHMETIC, "problem_id": f"add-{i}"}) + "\n" for i in range(3)))
    assert main(["diagnose", str(failures), "-o", str(out)]) == 0
    page, n = write_html(out)
    assert n == 3
    browser.navigate(page.as_uri())
    browser.wait_for("window.mentorReady")
    assert browser.problems() == []
    assert rows(browser) == [1, 2, 3]
    assert browser.js("document.querySelectorAll('[data-plot=recovery] svg .mark').length") > 0
    assert browser.js("document.querySelectorAll('[data-plot=tiers] svg .mark').length") > 0
    browser.js("mentorViewer.showDetail(2)")
    second = json.loads(out.read_text().splitlines()[1])
    assert browser.js("document.getElementById('detail-hint').textContent") == second["hint"]
    assert browser.js("document.querySelector('#detail .diagnosis').textContent").count(
        second["diagnosis"]["root_cause"]) == 1
    attempts = browser.js("document.querySelector('#detail .attempts').textContent")
    assert all(a["completion"].strip() in attempts for a in ARITHMETIC["attempts"])


def test_placeholder_text_in_a_file_name_or_a_record_stays_text(browser, tmp_path):
    """Issue 25: the template was filled in several passes, so a JSONL named `{{MENTOR_DATA}}.jsonl` broke the page."""
    from mentor.traces.viewer import write_html

    path = tmp_path / "{{MENTOR_DATA}}.jsonl"
    hints = ["{{MENTOR_JS}} and {{MENTOR_DATA}}", "{{MENTOR_TITLE}}{{MENTOR_CSS}}"]
    path.write_text("".join(json.dumps({"problem_id": f"p{i}", "hint": h}) + "\n" for i, h in enumerate(hints)))
    page, n = write_html(path)
    assert n == 2
    browser.navigate(page.as_uri())
    browser.wait_for("window.mentorReady")
    assert browser.problems() == []
    assert rows(browser) == [1, 2]
    assert browser.js("document.title") == "MENTOR traces: {{MENTOR_DATA}}.jsonl"
    assert browser.js("document.getElementById('source').textContent").endswith("{{MENTOR_DATA}}.jsonl")
    for i, hint in enumerate(hints, 1):
        browser.js(f"mentorViewer.showDetail({i})")
        assert browser.js("document.getElementById('detail-hint').textContent") == hint


def test_serve_refreshes_as_new_traces_land(browser, small_server, live_store, store):
    """The served page holds no records: it loads them from the API, here one per answer, then polls."""
    server = small_server
    third = [r for r in store.interventions() if r["hint"]][-1]
    browser.navigate(server.url + f"#i{third['id']}")  # a link to a record the page has not loaded yet
    browser.wait_for("window.mentorReady")
    browser.wait_for("document.getElementById('count').textContent === '4 of 4 interventions'", timeout=10)
    browser.wait_for("!!document.getElementById('detail-hint')", timeout=10)
    assert browser.js("document.getElementById('detail-hint').textContent") == third["hint"]
    new = [{k: v for k, v in r.items() if k != "id"} for r in store.interventions(step_min=1)]
    live_store.append(2, [{**r, "step": 2} for r in new],
                      {"mentor/collapse_rate_before": 1.0, "mentor/collapse_rate_after": 0.5})
    live_store.record_run(2, {"graph": {"file": "/copy/graphs/mentor/graph.py"}, "backends": {"hint_composer": "llm"}})
    browser.wait_for("document.getElementById('count').textContent === '6 of 6 interventions'", timeout=10)
    browser.wait_for("document.getElementById('runs').textContent.includes('/copy/graphs/mentor/graph.py')",
                     timeout=10)  # "What ran" follows the store: the served page was built before this run
    assert marks(browser, "per-step") == [2, 2, 2]
    assert len(marks(browser, "collapse")) == 6
    assert browser.js("document.getElementById('live').textContent").startswith("live")
    assert browser.problems() == []


def test_the_served_page_reads_the_steps_in_pages_and_again_after_a_resume(browser, tmp_path):
    from mentor.traces.viewer import TraceServer

    store = many_steps(tmp_path)
    try:
        with serving(TraceServer(tmp_path, port=0, poll_s=0.2)) as server:
            card = "(() => {{ const c = Array.from(document.querySelectorAll('#cards .card')).find(c => " \
                   "c.querySelector('.k').textContent === {!r}); return c && c.querySelector('.v').textContent; }})()"
            browser.navigate("about:blank")  # an earlier test's live page may have kept polling its server
            browser.navigate(server.url)
            browser.wait_for("window.mentorReady")
            browser.wait_for(f"{card.format('steps')} === '{STEPS}'", timeout=20)  # three answers of steps
            assert browser.js(card.format("graduated")) == str(STEPS - 1)
            store.append(STEPS - 1, [], {"mentor/graduated_total": 7777})  # the last step rewritten
            browser.wait_for(f"{card.format('graduated')} === '7777'", timeout=10)
            store.drop_from(2000)  # a run resumed from step 2000: it rewrites its steps from there
            store.record_run(2000, {"graph": {"file": "/resumed/graph.py"}, "backends": {}})
            store.append(2000, [], {"mentor/graduated_total": 5})
            browser.wait_for(f"{card.format('steps')} === '2001'", timeout=10)
            assert browser.js(card.format("graduated")) == "5"
            assert browser.problems() == [], browser.problems()
        browser.navigate("about:blank")  # the page stops polling the closed server
    finally:
        store.close()


@pytest.fixture(scope="module")
def metrics_run(tmp_path_factory, graph):
    """Three GRPO steps on two problems with `reliance_every: 2`: one problem is hinted at step 0, earns reward
    unhinted at step 1 (it graduates) and is hinted again at step 2; the other always earns reward unhinted."""
    from mentor import Mentor
    from mentor.lab.data import make_dataset
    from mentor.traces import TraceStore
    from tiny_grpo import ScheduledReward, make_trainer

    path = tmp_path_factory.mktemp("metrics")
    dataset = make_dataset("hard", 2, seed=0)
    hinted_one, solved = dataset["problem_id"]
    trainer = make_trainer(path, ScheduledReward({hinted_one: {1}, solved: {0, 1, 2}}), max_steps=3, dataset=dataset)
    Mentor.from_config({"reliance_every": 2}).attach(trainer)
    trainer.train()
    store = TraceStore(path, readonly=True)
    page = write_page(store, path / "traces.html", graph)
    steps = store.steps()
    store.close()
    return page.as_uri(), steps


def test_the_page_shows_graduation_and_hint_reliance_per_step(browser, metrics_run):
    uri, steps = metrics_run
    assert [s["mentor/graduated"] for s in steps] == [0, 1, 0]
    reliance = [s["mentor/reliance"] for s in steps if "mentor/reliance" in s]
    assert [s["step"] for s in steps if "mentor/reliance" in s] == [0, 2]
    # While the run trained, an earlier test's live page may have kept polling its server; a blank page first
    # reads those messages, so that they are not taken for this page's.
    browser.navigate("about:blank")
    browser.navigate(uri)
    browser.wait_for("window.mentorReady")
    assert browser.problems() == []
    assert marks(browser, "graduated") == [0, 1, 0] + [0, 1, 1]  # this step's, then the run's
    assert marks(browser, "reliance") == pytest.approx(reliance, abs=1e-12)
    shown = cards(browser)
    assert shown["graduated"] == "1"
    assert float(shown["hint reliance"]) == pytest.approx(sum(reliance) / len(reliance), rel=0.05)  # 2 digits
    # Both values show on hover, the reliance's with its sign.
    titles = browser.js("Array.from(document.querySelectorAll('[data-plot=reliance] svg .mark title'))"
                        ".map(t => t.textContent)")
    assert len(titles) == 2 and all(t.startswith("reliance · step ") for t in titles)


def test_viewing_a_run_never_runs_code_the_store_names(tmp_path, monkeypatch):
    """A shared run folder whose `runs` table names a `g.py` (relative, found from the working directory) beside an
    `__init__.py`: viewing draws the stored drawing and imports neither; only `--config` loads a graph's code."""
    from mentor.cli import main
    from mentor.runtime import MentorRuntime
    from mentor.traces import TraceStore

    shared = tmp_path / "shared"
    shared.mkdir()
    marker = tmp_path / "ran"
    for name in ("g.py", "__init__.py"):
        (shared / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    versions = MentorRuntime().versions
    store = TraceStore(shared / "run")
    store.record_run(0, {**versions, "graph": {**versions["graph"], "spec": "g.py:graph", "file": "g.py"}})
    store.append(0, [{**ARITHMETIC, "hint": "h", "attempts": []}])
    store.close()
    monkeypatch.chdir(shared)
    assert main(["traces", "view", "run", "-o", str(tmp_path / "page.html")]) == 0
    assert not marker.exists()  # neither g.py nor __init__.py ran
    page = (tmp_path / "page.html").read_text()
    assert '"mermaid":' in page and '"name":"hint_composer"' in page  # drawn from the stored drawing

    old = {**versions, "graph": {k: v for k, v in versions["graph"].items() if k != "drawing"} | {"spec": "g.py:graph",
                                                                                                  "file": "g.py"}}
    store = TraceStore(shared / "old")  # a run recorded before drawings were stored
    store.record_run(0, old)
    store.close()
    assert main(["traces", "view", "old", "-o", str(tmp_path / "old.html")]) == 0
    assert not marker.exists() and "give --config to load a graph" in (tmp_path / "old.html").read_text()

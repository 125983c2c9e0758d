"""The viewer shows each `llm` node's raw replies (the model's text before parsing) in the node's detail, from a real
graph run against an OpenAI-compatible server on loopback (tests/openai_server.py), in headless Chromium (the
`browser` fixture: conftest.py); a hostile reply stays text."""

import json

from failed_groups import group
from llm_config import config
from openai_server import CANNED_HINT, Reply

HOSTILE = '<img src=x onerror="window.pwned=1"> Here is the hint: ' + json.dumps({"hint": CANNED_HINT, "tier": 2})


def test_the_node_detail_shows_the_raw_replies_as_text(browser, openai_server, tmp_path):
    from mentor.runtime import MentorRuntime
    from mentor.trace_format import trace_record
    from mentor.traces.viewer import build_html, graph_spec

    openai_server.behaviour = lambda req: (Reply(content="not json") if req.node_index == 0 else Reply(content=HOSTILE))
    failed = group()
    [result] = MentorRuntime(config(openai_server, nodes={"hint_composer": "llm"}, parse_retries=1,
                                    structured_output=False)).run([failed])
    assert result.hint == CANNED_HINT
    record = {**trace_record(failed, result), "id": 1}
    page = tmp_path / "traces.html"
    page.write_text(build_html([record], [], graph_spec(), source="run"), encoding="utf-8")
    browser.navigate(page.as_uri() + "#i1")
    composer = "#detail .node[data-node='hint_composer']"
    browser.wait_for(f"window.mentorReady && !!document.querySelector(\"{composer} details.reply\")")
    labels = browser.js(f"Array.from(document.querySelectorAll(\"{composer} details.reply summary\"))"
                        ".map(s => s.textContent)")
    assert labels == ["reply 1 of 2", "reply 2 of 2"]
    browser.js(f"document.querySelectorAll(\"{composer} details.reply\").forEach(d => d.open = true)")
    browser.wait_for(f"Array.from(document.querySelectorAll(\"{composer} pre.reply-text\"))"
                     ".every(p => p.textContent.length > 0)")  # filled on the fold's toggle event
    shown = browser.js(f"Array.from(document.querySelectorAll(\"{composer} pre.reply-text\")).map(p => p.textContent)")
    assert shown == ["not json", HOSTILE]
    assert browser.js("window.pwned === undefined && !document.querySelector('#detail img')")
    # A rules node asked no model: no reply fold.
    assert browser.js("document.querySelectorAll(\"#detail .node[data-node='error_classifier'] details.reply\")"
                      ".length") == 0
    assert browser.problems() == []

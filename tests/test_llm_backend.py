"""The `llm` backend against a real OpenAI-compatible HTTP server on loopback (tests/openai_server.py).

Every failure of the chat model (malformed answers, 5xx, timeouts, an unreachable server) must end in the
`rules` output for that node, recorded in Intervention.fallbacks, and never in an exception out of the runtime.
"""

import json
import time

import pytest

from failed_groups import group
from llm_config import ALL_LLM, config
from loopback import free_port
from mentor.config import NODES, MentorConfig
from mentor.llm.client import load_prompt
from mentor.llm.schemas import node_schema
from mentor.runtime import MentorRuntime
from mentor.tasks.arithmetic import format_answer, format_prompt
from mentor.types import FailedGroup, InputError
from openai_server import CANNED_HINT, CANNED_ROOT_CAUSE, NODE_MARKERS, Reply, canned_answer, detect_node

# ARITHMETIC (158 + 267 = 425): the rules backend says missed_carry x2 and wrong_tens x1 (and a partial-answer
# hint); the canned LLM answers say wrong_hundreds x3 and CANNED_HINT.
RULES_CLASSES = {"missed_carry": 2, "wrong_tens": 1}


@pytest.fixture(scope="module")
def rules_hint() -> str:
    """What the `rules` mentor hints for ARITHMETIC: what every fallback must reproduce."""
    [result] = MentorRuntime().run([group()])
    assert result.diagnosis.error_classes == RULES_CLASSES and result.hint and result.hint != CANNED_HINT
    return result.hint


def addition(i: int) -> FailedGroup:
    a, b = 100 + (i * 37) % 900, 100 + (i * 91 + 13) % 900
    s = a + b
    return FailedGroup.from_dict({
        "problem_id": f"add-{i:04d}", "task": "arithmetic", "prompt": format_prompt(a, b),
        "reference": {"answer": format_answer(a, b), "operands": [a, b]},
        "attempts": [{"completion": f" {w:04d}", "reward": 0.0} for w in (s - 10, s - 100)][: 1 + i % 2]})


def only(node: str, reply: Reply):
    """A behaviour that sends `reply` to `node` and the canned answer to every other node."""
    return lambda req: reply if req.node == node else Reply()


# --- the server itself ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("node", NODES)
def test_the_server_tells_each_node_from_its_prompt_file(node):
    text = load_prompt(MentorConfig().prompts_dir, "arithmetic", node).messages[0].prompt.template
    assert detect_node(text) == node
    assert detect_node("You judge a hint composer's output ... error classifier") == "hint_composer"  # earliest
    assert set(NODE_MARKERS) == set(NODES)


def test_the_server_stops_cleanly_with_a_request_hanging():
    import threading
    import urllib.error
    import urllib.request

    from openai_server import OpenAIServer

    server = OpenAIServer(behaviour=lambda req: Reply(hang=True)).start()
    url = server.base_url + "/chat/completions"
    body = json.dumps({"model": "test", "messages": [{"role": "user", "content": "hint composer"}]}).encode()
    errors = []

    def client():
        try:
            urllib.request.urlopen(urllib.request.Request(url, body, {"Content-Type": "application/json"}), timeout=10)
        except Exception as e:  # the server drops the hanging request when it stops
            errors.append(e)

    thread = threading.Thread(target=client)
    thread.start()
    deadline = time.monotonic() + 30  # a hang guard: the request arrives at once, on a loaded machine later
    while server.in_flight == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.in_flight == 1 and server.max_in_flight == 1 and server.count("hint_composer") == 1
    server.stop()
    assert server.in_flight == 0  # stop() released the hanging handler (it would otherwise wait hang_s = 30 s)
    thread.join(timeout=30)
    assert not thread.is_alive() and errors
    with pytest.raises(urllib.error.URLError):  # the port is closed
        urllib.request.urlopen(url, body, timeout=2)


# --- (1) well-formed answers ---------------------------------------------------------------------------------
def test_well_formed_answers_for_all_four_nodes_reach_the_intervention(openai_server):
    [result] = MentorRuntime(config(openai_server)).run([group()])
    assert result.error is None and result.fallbacks == []
    assert result.backend == {n: "llm" for n in NODES}
    assert result.diagnosis.error_classes == {"wrong_hundreds": 3}  # the LLM's classes, not the rules'
    assert result.diagnosis.error_class == "wrong_hundreds"
    assert result.diagnosis.root_cause == CANNED_ROOT_CAUSE and result.diagnosis.first_error_step == 2
    assert result.hint == CANNED_HINT and result.tier == 2 and not result.withheld
    assert result.leak["leaked_drafts"] == []
    assert [openai_server.count(n) for n in NODES] == [1, 1, 1, 1]
    # What the server received: the prompt files, filled with this group.
    [classifier] = openai_server.texts("error_classifier")
    assert "Q: 158+267=? A:" in classifier and "Attempt 3 (reward 0.0):\n 0435" in classifier
    assert '"missed_carry"' in classifier  # the taxonomy
    [composer] = openai_server.texts("hint_composer")
    assert CANNED_ROOT_CAUSE in composer  # the analyst's answer flows into the composer's prompt
    [judge] = openai_server.texts("leakage_checker")
    assert CANNED_HINT in judge
    body = openai_server.requests[0].body
    assert body["model"] == "test" and body["messages"][0]["role"] == "user" and body["temperature"] == 0


def test_runs_after_the_first_keep_their_llm_calls(openai_server):
    """An async client's connections belong to one event loop: every run shares the mentor's loop."""
    runtime = MentorRuntime(config(openai_server))
    for _ in range(3):
        results = runtime.run([group(), addition(1)])
        assert all(r.fallbacks == [] and set(r.backend.values()) == {"llm"} for r in results), results[0].fallbacks


def test_a_chat_model_given_by_the_user_works_across_runs(openai_server):
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="test", base_url=openai_server.base_url, api_key="x", max_retries=0, timeout=5)
    runtime = MentorRuntime(config(openai_server), chat_model=model)
    for _ in range(2):
        [result] = runtime.run([group()])
        assert result.fallbacks == [] and set(result.backend.values()) == {"llm"}


def test_nodes_left_on_rules_send_nothing_to_the_server(openai_server):
    [result] = MentorRuntime(config(openai_server, nodes={"hint_composer": "llm"})).run([group()])
    assert result.backend == {"error_classifier": "rules", "root_cause_analyst": "rules",
                              "hint_composer": "llm", "leakage_checker": "rules"}
    assert result.diagnosis.error_classes == RULES_CLASSES and result.hint == CANNED_HINT
    assert openai_server.count() == openai_server.count("hint_composer") == 1


# --- (2) malformed answers -----------------------------------------------------------------------------------
@pytest.mark.parametrize("content", [
    "Sure! The classes are missed_carry and wrong_tens.",         # no JSON at all
    '{"classes": ["wrong_hundreds", "wrong_hund',                # truncated JSON
    {"classes": ["wrong_hundreds"]},                               # one class for three attempts
    {"classes": ["off_by_one", "off_by_one", "off_by_one"]},       # classes outside the taxonomy
    {"labels": ["wrong_hundreds"] * 3},                            # the wrong key
])
@pytest.mark.parametrize("parse_retries", [0, 2])
def test_malformed_answers_are_retried_then_fall_back_to_rules(openai_server, content, parse_retries):
    openai_server.behaviour = only("error_classifier", Reply(content=content))
    [result] = MentorRuntime(config(openai_server, parse_retries=parse_retries)).run([group()])
    assert openai_server.count("error_classifier") == parse_retries + 1
    assert result.error is None
    assert result.backend["error_classifier"] == "rules (llm fallback)"
    assert result.diagnosis.error_classes == RULES_CLASSES
    [fallback] = result.fallbacks
    assert fallback.startswith("error_classifier: LLMOutputError") and f"{parse_retries + 1} tries" in fallback
    # The other nodes still ran on the LLM, and a hint came out.
    assert result.backend["root_cause_analyst"] == result.backend["hint_composer"] == "llm"
    assert result.diagnosis.root_cause == CANNED_ROOT_CAUSE and result.hint == CANNED_HINT


def test_a_malformed_answer_then_a_good_one_needs_no_fallback(openai_server):
    openai_server.behaviour = lambda req: (Reply(content="```json\n{oops\n```")
                                           if req.node == "hint_composer" and req.node_index == 0 else Reply())
    [result] = MentorRuntime(config(openai_server, parse_retries=1)).run([group()])
    assert openai_server.count("hint_composer") == 2
    assert result.fallbacks == [] and result.backend["hint_composer"] == "llm" and result.hint == CANNED_HINT


def test_answers_wrapped_in_prose_and_code_fences_are_accepted(openai_server):
    def behaviour(req):
        return Reply(content=f"Here you go:\n```json\n{json.dumps(canned_answer(req.node, req.text))}\n```\n")

    openai_server.behaviour = behaviour
    [result] = MentorRuntime(config(openai_server, parse_retries=0)).run([group()])
    assert result.fallbacks == [] and result.hint == CANNED_HINT


def test_malformed_answers_on_every_node_give_the_rules_mentor(openai_server, rules_hint):
    openai_server.behaviour = lambda req: Reply(content="I cannot answer in JSON, sorry.")
    [result] = MentorRuntime(config(openai_server, parse_retries=1)).run([group()])
    assert result.error is None
    assert set(result.backend.values()) == {"rules (llm fallback)"}
    assert [f.split(":")[0] for f in result.fallbacks] == list(NODES)
    assert result.diagnosis.error_classes == RULES_CLASSES and result.hint == rules_hint and not result.withheld
    assert openai_server.count() == 4 * 2


# --- (3) server errors ---------------------------------------------------------------------------------------
def test_http_500_falls_back_and_never_raises(openai_server, rules_hint):
    openai_server.behaviour = lambda req: Reply(status=500)
    results = MentorRuntime(config(openai_server)).run([group(), addition(7)])
    for result in results:
        assert result.error is None
        assert set(result.backend.values()) == {"rules (llm fallback)"}
        assert len(result.fallbacks) == 4 and all("Error code: 500" in f for f in result.fallbacks)
        assert result.hint
    assert results[0].hint == rules_hint and results[0].diagnosis.error_classes == RULES_CLASSES
    assert openai_server.count() == 2 * 4  # max_retries=0, and a 5xx is no reason to re-ask for JSON


def test_transport_retries_follow_llm_max_retries(openai_server):
    openai_server.behaviour = lambda req: Reply(status=503) if req.node_index == 0 else Reply()
    [result] = MentorRuntime(config(openai_server, nodes={"root_cause_analyst": "llm"}, max_retries=1)).run([group()])
    assert openai_server.count("root_cause_analyst") == 2  # the 503, then the retry that succeeds
    assert result.fallbacks == [] and result.diagnosis.root_cause == CANNED_ROOT_CAUSE


def test_a_body_that_is_not_a_chat_completion_falls_back(openai_server, rules_hint):
    openai_server.behaviour = only("hint_composer", Reply(raw_body=b"<html>502 Bad Gateway</html>"))
    [result] = MentorRuntime(config(openai_server)).run([group()])
    assert result.error is None and result.hint == rules_hint
    assert result.backend["hint_composer"] == "rules (llm fallback)" and len(result.fallbacks) == 1


# --- (4) timeouts --------------------------------------------------------------------------------------------
def test_a_server_that_hangs_past_the_request_timeout_falls_back_in_bounded_time(openai_server, rules_hint):
    openai_server.behaviour = lambda req: Reply(hang=True)
    t0 = time.perf_counter()
    [result] = MentorRuntime(config(openai_server, request_timeout_s=0.25)).run([group()])
    wall = time.perf_counter() - t0
    assert result.error is None and result.hint == rules_hint
    assert set(result.backend.values()) == {"rules (llm fallback)"}
    assert all("Timeout" in f for f in result.fallbacks), result.fallbacks
    assert 4 * 0.25 <= wall, wall  # four nodes, each waits out its own request timeout once
    assert len(result.fallbacks) == 4 and all(openai_server.count(n) == 1 for n in NODES)  # once: no retry


def test_the_group_timeout_bounds_a_whole_group_and_spares_the_others(openai_server):
    # The request timeout is long; the runtime's per-group timeout (1.5 s: room for the fine group under load)
    # must cut the hanging group off.
    openai_server.behaviour = lambda req: Reply(hang=True) if "Q: 158+267" in req.text else Reply()
    runtime = MentorRuntime(config(openai_server, mentor={"timeout_s": 1.5}, request_timeout_s=30))
    t0 = time.perf_counter()
    hung, fine = runtime.run([group(), addition(3)])
    wall = time.perf_counter() - t0
    assert 1.5 <= wall, wall
    assert hung.error is not None and "timeout" in hung.error and hung.hint is None
    # Cut by the group's 1.5 s in its first node, whose one request was never retried (not the request's 30 s).
    assert hung.error.startswith("timeout: no hint within 1.5 s") and "cut off in error_classifier" in hung.error
    assert sum("Q: 158+267" in text for text in openai_server.texts()) == 1
    assert fine.error is None and fine.fallbacks == [] and fine.hint == CANNED_HINT


def test_groups_waiting_for_a_slot_share_the_timeout_so_a_hung_server_holds_the_run_once(openai_server):
    # One slot, three groups, a server that never answers: the run ends after one timeout, not three.
    openai_server.behaviour = lambda req: Reply(hang=True)
    runtime = MentorRuntime(config(openai_server, mentor={"timeout_s": 1.0, "max_concurrent_groups": 1}, request_timeout_s=30))
    t0 = time.perf_counter()
    results = runtime.run([group(), addition(2), addition(3)])
    wall = time.perf_counter() - t0
    assert all(r.hint is None and "timeout" in r.error for r in results)
    assert 1.0 <= wall, wall
    assert openai_server.count() == 1  # before: three requests, one timeout per group in turn
    # The group in the slot was cut off in its first node; the others never got the slot, and say so.
    assert "cut off in error_classifier (llm" in results[0].error and len(results[0].nodes) == 1
    assert all(r.error.endswith("never got one of the max_concurrent_groups = 1 slots") and r.nodes == []
               for r in results[1:])


def test_the_defaults_leave_the_rules_fallback_time_on_a_hung_server():
    import warnings

    defaults = MentorConfig()
    assert len(NODES) * defaults.llm.request_timeout_s < defaults.timeout_s  # four hung llm nodes, then rules, in time
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MentorConfig(nodes=ALL_LLM)
    with pytest.warns(UserWarning, match=r"Set llm.request_timeout_s below 15, or raise timeout_s"):
        MentorConfig(nodes=ALL_LLM, llm={"request_timeout_s": 15})


@pytest.mark.parametrize("reply", [Reply(drip_s=0.5), Reply(status=429, headers={"Retry-After": "55"})],
                         ids=["drip", "429-retry-after"])
def test_llm_timeout_bounds_a_whole_request_so_the_node_falls_back_in_time(openai_server, rules_hint, reply):
    # Each read of a dripping answer is quick, and the client would sleep out a 429's Retry-After before its retry:
    # neither is cut by a per-read timeout. llm.request_timeout_s cuts the whole request, retries included.
    openai_server.behaviour = only("hint_composer", reply)
    runtime = MentorRuntime(config(openai_server, nodes={"hint_composer": "llm"}, mentor={"timeout_s": 30},
                                   request_timeout_s=2, max_retries=2))
    t0 = time.perf_counter()
    [result] = runtime.run([group()])
    wall = time.perf_counter() - t0
    assert 2 <= wall, wall  # cut at 2 s (the fallback below says so), not at the 30 s group bound or the Retry-After
    assert result.error is None and result.hint == rules_hint
    assert result.backend["hint_composer"] == "rules (llm fallback)"
    assert result.fallbacks == ["hint_composer: TimeoutError: no answer within llm.request_timeout_s = 2 s"]
    assert openai_server.count() == 1  # no retry was sent within the bound (a 429's retry waits 55 s)
    # The abandoned request was cancelled, which closed its connection: the dripping handler saw it and ended.
    deadline = time.monotonic() + 30  # a hang guard: the handler ends at its next write, on a loaded machine later
    while openai_server.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    assert openai_server.in_flight == 0


def test_a_group_cut_off_by_its_timeout_keeps_its_node_records_and_fallbacks(openai_server):
    # The classifier's request fails (a fallback); the analyst's hangs past the group's 1 s.
    openai_server.behaviour = lambda req: Reply(status=500) if req.node == "error_classifier" else Reply(hang=True)
    with pytest.warns(UserWarning, match="llm.request_timeout_s: 30 s x 2 llm node"):
        cut = config(openai_server, nodes={"error_classifier": "llm", "root_cause_analyst": "llm"},
                     mentor={"timeout_s": 1.0}, request_timeout_s=30)
    [result] = MentorRuntime(cut).run([group()])
    assert result.hint is None
    assert result.error.startswith("timeout: no hint within 1.0 s of the run's start; cut off in root_cause_analyst "
                                   "(llm, "), result.error
    classifier, analyst = result.nodes
    assert classifier["node"] == "error_classifier" and classifier["backend"] == "rules (llm fallback)"
    assert classifier["error"] is None and classifier["output"]["classes"]
    assert analyst["node"] == "root_cause_analyst" and analyst["backend"] == "llm" and analyst["output"] == {}
    assert analyst["error"].startswith("cut off: timeout") and 0 < analyst["latency_s"] < 30  # not the request's 30 s
    assert analyst["input"]["classes"] == classifier["output"]["classes"]
    [fallback] = result.fallbacks
    assert fallback.startswith("error_classifier: ") and "Error code: 500" in fallback
    assert result.backend == {"error_classifier": "rules (llm fallback)"}


# --- (5) an unreachable server -------------------------------------------------------------------------------
def test_an_unreachable_server_falls_back():
    port = free_port()  # free a moment ago, and closed now
    results = MentorRuntime(config(f"http://127.0.0.1:{port}/v1")).run([group(), addition(2)])
    for result in results:
        assert result.error is None and result.hint
        assert set(result.backend.values()) == {"rules (llm fallback)"}
        assert len(result.fallbacks) == 4 and all("ConnectionError: Connection error" in f for f in result.fallbacks)


# --- (6) many groups at once ---------------------------------------------------------------------------------
def test_64_concurrent_groups_get_their_own_answers_within_the_concurrency_bound(openai_server):
    openai_server.delay_s = 0.05

    def behaviour(req):  # echo the group's own problem back, so crossed wires between groups would show
        problem = next(line for line in req.text.splitlines() if line.startswith("Q: "))
        answer = canned_answer(req.node, req.text)
        if req.node == "root_cause_analyst":
            answer["root_cause"] = f"LLM root cause for {problem}"
        if req.node == "hint_composer":
            answer["hint"] = f"LLM hint for {problem.replace('=? A:', '')}: mind the carries"
        return Reply(content=answer)

    openai_server.behaviour = behaviour
    groups = [addition(i) for i in range(64)]
    results = MentorRuntime(config(openai_server, mentor={"max_concurrent_groups": 64}, max_concurrent_requests=8)).run(groups)
    assert [r.problem_id for r in results] == [g.problem_id for g in groups]
    for g, r in zip(groups, results):
        assert r.error is None and r.fallbacks == [] and set(r.backend.values()) == {"llm"}
        assert r.diagnosis.error_classes == {"wrong_hundreds": len(g.attempts)}
        assert r.diagnosis.root_cause == f"LLM root cause for {g.prompt}"
        assert r.hint == f"LLM hint for {g.prompt.replace('=? A:', '')}: mind the carries"
    assert openai_server.count() == 64 * 4
    assert 1 < openai_server.max_in_flight <= 8


# --- (7) the LLM leakage judge -------------------------------------------------------------------------------
def test_the_llm_judge_rejects_a_draft_and_the_composer_hears_why(openai_server):
    leaked = {"leaked": True, "reason": "it carries the hundreds digit for the student"}
    openai_server.behaviour = lambda req: (Reply(content=leaked) if req.node == "leakage_checker"
                                           and req.node_index == 0 else Reply())
    [result] = MentorRuntime(config(openai_server, mentor={"max_leak_retries": 2})).run([group()])
    assert result.hint == CANNED_HINT and not result.withheld
    [draft] = result.leak["leaked_drafts"]
    assert draft["detectors"] == ["llm_judge"] and draft["reason"] == leaked["reason"]
    assert openai_server.count("hint_composer") == 2 and openai_server.count("leakage_checker") == 2
    second = openai_server.texts("hint_composer")[1]
    assert "The draft leaked (llm_judge)" in second and leaked["reason"] in second


@pytest.mark.parametrize("retries", [0, 2])
def test_a_judge_that_always_says_leaked_withholds_the_hint_after_the_bound(openai_server, retries):
    openai_server.behaviour = only("leakage_checker", Reply(content={"leaked": True, "reason": "too revealing"}))
    [result] = MentorRuntime(config(openai_server, mentor={"max_leak_retries": retries})).run([group()])
    assert result.withheld and result.hint is None and result.error is None
    assert len(result.leak["leaked_drafts"]) == retries + 1
    assert all(d["detectors"] == ["llm_judge"] for d in result.leak["leaked_drafts"])
    assert openai_server.count("hint_composer") == openai_server.count("leakage_checker") == retries + 1


def test_a_judge_that_fails_does_not_block_a_clean_hint(openai_server):
    openai_server.behaviour = only("leakage_checker", Reply(status=500))
    [result] = MentorRuntime(config(openai_server)).run([group()])
    assert result.hint == CANNED_HINT and not result.withheld
    assert result.backend["leakage_checker"] == "rules (llm fallback)"
    assert [f.split(":")[0] for f in result.fallbacks] == ["leakage_checker"]


@pytest.mark.parametrize("leaky", ["The sum is 0425, write it down.", "It comes to 425.",
                                   "four hundred and twenty-five", "158 + 267 = 425",
                                   "The answer is \u200b4\u200b2\u200b5\u200b."])
def test_an_llm_hint_that_states_the_answer_is_caught_by_the_deterministic_detectors(openai_server, leaky):
    openai_server.behaviour = lambda req: (Reply(content={"hint": leaky, "tier": 3})
                                           if req.node == "hint_composer" and req.node_index == 0 else Reply())
    [result] = MentorRuntime(config(openai_server)).run([group()])
    [draft] = result.leak["leaked_drafts"]
    assert draft["draft"] == leaky and draft["detectors"] and "llm_judge" not in draft["detectors"]
    assert result.hint == CANNED_HINT and not result.withheld
    assert openai_server.count("leakage_checker") == 1  # the judge saw only the clean second draft
    assert "The draft leaked" in openai_server.texts("hint_composer")[1]


def test_an_llm_composer_that_always_leaks_is_withheld(openai_server):
    openai_server.behaviour = only("hint_composer", Reply(content={"hint": "Write 0425.", "tier": 3}))
    [result] = MentorRuntime(config(openai_server, mentor={"max_leak_retries": 1})).run([group()])
    assert result.withheld and result.hint is None
    assert [d["draft"] for d in result.leak["leaked_drafts"]] == ["Write 0425.", "Write 0425."]
    assert openai_server.count("leakage_checker") == 0


# --- (8) prompt files ----------------------------------------------------------------------------------------
def test_a_prompts_dir_override_is_the_text_the_server_receives(openai_server, tmp_path):
    (tmp_path / "hint_composer.md").write_text("CUSTOM hint composer prompt.\nProblem: {problem}\nTier: {tier}\n"
                                               'Reply as {{"hint": "...", "tier": 1}}.')
    [result] = MentorRuntime(config(openai_server, nodes={"hint_composer": "llm"},
                                    mentor={"prompts_dir": str(tmp_path)})).run([group()])
    assert result.fallbacks == [] and result.hint == CANNED_HINT
    assert openai_server.texts() == ['CUSTOM hint composer prompt.\nProblem: Q: 158+267=? A:\nTier: 3\n'
                                     'Reply as {"hint": "...", "tier": 1}.']
    # The node's trace record keeps the prompt as sent; a rules node's has none.
    records = {n["node"]: n for n in result.nodes}
    assert records["hint_composer"]["prompt"] == openai_server.texts()[0]
    assert "prompt" not in records["error_classifier"] and "prompts" not in records["hint_composer"]["output"]


def test_a_per_task_prompt_overrides_the_generic_one(openai_server, tmp_path):
    (tmp_path / "hint_composer.md").write_text("generic hint composer prompt")
    (tmp_path / "arithmetic").mkdir()
    (tmp_path / "arithmetic" / "hint_composer.md").write_text("arithmetic hint composer prompt for {problem}")
    MentorRuntime(config(openai_server, nodes={"hint_composer": "llm"}, mentor={"prompts_dir": str(tmp_path)})).run([group()])
    assert openai_server.texts() == ["arithmetic hint composer prompt for Q: 158+267=? A:"]


def test_a_missing_prompt_file_is_refused_at_load_naming_the_file(openai_server, tmp_path):
    with pytest.raises(InputError, match=r"nodes.root_cause_analyst: llm, but prompts_dir .* has no "
                                         r"root_cause_analyst.md"):
        MentorRuntime(config(openai_server, nodes={"root_cause_analyst": "llm"}, mentor={"prompts_dir": str(tmp_path)}))
    assert openai_server.count() == 0


@pytest.mark.parametrize("verdict, leaked", [("false", False), ("no", False), ("true", True), ("yes", True)])
def test_a_judge_verdict_written_as_a_string_means_what_it_says(openai_server, verdict, leaked):
    openai_server.behaviour = only("leakage_checker", Reply(content={"leaked": verdict, "reason": "r"}))
    [result] = MentorRuntime(config(openai_server, parse_retries=0)).run([group()])
    assert result.fallbacks == []
    assert bool(result.leak["leaked_drafts"]) is leaked


def test_a_judge_verdict_that_is_neither_true_nor_false_is_re_asked(openai_server):
    openai_server.behaviour = lambda req: (Reply(content={"leaked": "maybe", "reason": "unsure"})
                                           if req.node == "leakage_checker" and req.node_index == 0 else Reply())
    [result] = MentorRuntime(config(openai_server, parse_retries=1)).run([group()])
    assert openai_server.count("leakage_checker") == 2
    assert result.fallbacks == [] and result.hint == CANNED_HINT and result.leak["leaked_drafts"] == []


def test_the_hint_the_policy_sees_has_no_invisible_characters(openai_server):
    hidden = "Add the tens\u200b column first, then carry\u2060 into the hundreds."
    openai_server.behaviour = only("hint_composer", Reply(content={"hint": hidden, "tier": 2}))
    [result] = MentorRuntime(config(openai_server)).run([group()])
    assert result.hint == "Add the tens column first, then carry into the hundreds."


@pytest.mark.parametrize("undeclared", [False, True])
def test_an_answer_larger_than_the_token_budget_allows_is_unusable_output(openai_server, rules_hint, undeclared):
    from mentor.llm.body_cap import body_cap
    openai_server.behaviour = only("hint_composer", Reply(content_bytes=64 << 20, undeclared=undeclared))
    runtime = MentorRuntime(config(openai_server, nodes={"hint_composer": "llm"}, max_tokens=100, parse_retries=1))
    [result] = runtime.run([group()])
    assert result.backend["hint_composer"] == "rules (llm fallback)" and result.hint == rules_hint
    [fallback] = result.fallbacks
    assert "unusable output after 2 tries" in fallback and f"{body_cap(100)} bytes" in fallback, fallback
    assert openai_server.count("hint_composer") == 2  # re-asked once, as for malformed JSON; no transport retry
    deadline = time.monotonic() + 30  # a hang guard: the handlers end at their next write, on a loaded machine later
    while openai_server.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    # 64 MiB twice was not read: the client hung up, so neither answer could be written whole
    assert len(openai_server.huge_sent) == 2 and max(openai_server.huge_sent) < 64 << 20, openai_server.huge_sent


# --- (9) what a node record keeps of the model: its raw replies ------------------------------------------------
def test_each_llm_node_record_keeps_the_models_raw_replies_re_asks_included(openai_server):
    prose = f"Sure, here it is:\n```json\n{json.dumps({'hint': CANNED_HINT, 'tier': 2})}\n```"
    openai_server.behaviour = lambda req: (
        Reply(content="not json, sorry") if req.node == "hint_composer" and req.node_index == 0
        else Reply(content=prose) if req.node == "hint_composer"
        else Reply(content="I cannot answer in JSON.") if req.node == "error_classifier" else Reply())
    [result] = MentorRuntime(config(openai_server, nodes={"error_classifier": "llm", "hint_composer": "llm"},
                                    parse_retries=1, structured_output=False)).run([group()])
    records = {n["node"]: n for n in result.nodes}
    assert records["hint_composer"]["replies"] == ["not json, sorry", prose]  # as written, before parsing
    assert result.hint == CANNED_HINT
    # A node that fell back to rules keeps what the model wrote: the reason it fell back can be checked.
    assert records["error_classifier"]["replies"] == ["I cannot answer in JSON."] * 2
    assert records["error_classifier"]["backend"] == "rules (llm fallback)"
    assert "replies" not in records["root_cause_analyst"]  # a rules node asked no model
    assert all("replies" not in n["output"] and "replies" not in n["input"] for n in result.nodes)


def test_a_long_reply_is_kept_cut_and_a_reply_that_is_not_text_is_repaired(openai_server):
    from mentor.llm.client import MAX_REPLY_CHARS

    long = "x" * (3 * MAX_REPLY_CHARS) + json.dumps({"hint": CANNED_HINT, "tier": 2})
    broken = 'Here: \ud800 {"root_cause": "r", "first_error_step": null}'  # JSON's "\ud800": a lone surrogate
    openai_server.behaviour = lambda req: (Reply(content=long) if req.node == "hint_composer"
                                           else Reply(content=broken) if req.node == "root_cause_analyst" else Reply())
    [result] = MentorRuntime(config(openai_server, parse_retries=0)).run([group()])
    records = {n["node"]: n for n in result.nodes}
    [kept] = records["hint_composer"]["replies"]
    assert kept.startswith("x" * MAX_REPLY_CHARS) and len(kept) < MAX_REPLY_CHARS + 100
    assert kept.endswith(f"[mentor: reply cut to {MAX_REPLY_CHARS} of its {len(long)} characters]")
    assert result.hint == CANNED_HINT  # the answer was read whole; only the record is cut
    assert records["root_cause_analyst"]["replies"] == [broken.replace("\ud800", "\ufffd")]
    json.dumps(result.nodes).encode("utf-8")  # every string is text: no encoder raises


# --- (10) a judge's refusal names its reason ---------------------------------------------------------------------
@pytest.mark.parametrize("reason, kept", [
    ("it carries the hundreds digit", "it carries the hundreds digit"),
    ("false", "the llm judge gave no reason (it wrote 'false')"),   # what SmolLM2-135M wrote, verdict first
    (" ", "the llm judge gave no reason"),
])
def test_a_judge_refusal_keeps_its_reason_or_says_it_gave_none(openai_server, reason, kept):
    openai_server.behaviour = lambda req: (Reply(content={"reason": reason, "leaked": True})
                                           if req.node == "leakage_checker" and req.node_index == 0 else Reply())
    [result] = MentorRuntime(config(openai_server, parse_retries=0, mentor={"max_leak_retries": 1})).run([group()])
    [draft] = result.leak["leaked_drafts"]
    assert draft["detectors"] == ["llm_judge"] and draft["reason"] == kept
    assert kept in openai_server.texts("hint_composer")[1]  # the composer hears it
    judge = next(n for n in result.nodes if n["node"] == "leakage_checker")
    assert judge["replies"] == [json.dumps({"reason": reason, "leaked": True})]


def test_the_judge_is_asked_for_its_reason_before_its_verdict():
    schema = node_schema("leakage_checker", {}, 1)
    assert list(schema["properties"]) == schema["required"] == ["reason", "leaked"]
    prompt = load_prompt(MentorConfig().prompts_dir, "arithmetic", "leakage_checker").messages[0].prompt.template
    assert prompt.index('"reason"') < prompt.index('"leaked"')

"""Each node's JSON schema (mentor/llm/schemas.py): in the prompt, as the validation, and as `response_format` to
an `openai` server, with a server that rejects or ignores it detected once, counted, and answered prompt-only."""

import json

import pytest

from failed_groups import group
from llm_config import config
from mentor.config import NODES, MentorConfig
from mentor.llm.client import load_prompt
from mentor.llm.schemas import node_schema, token_budget, violations
from mentor.runtime import MentorRuntime
from mentor.tasks import get_task
from openai_server import Reply, canned_answer

TAXONOMY = get_task("arithmetic").taxonomy


@pytest.mark.parametrize("node", NODES)
def test_the_canned_answer_matches_its_node_schema_and_a_wrong_key_does_not(node):
    schema = node_schema(node, TAXONOMY, 3)
    answer = canned_answer(node, "Attempt 1 (reward 0)\nAttempt 2 (reward 0)\nAttempt 3 (reward 0)")
    if node == "error_classifier":
        answer = {"classes": ["missed_carry"] * 3}
    assert violations(answer, schema) == []
    assert any("unknown key 'extra'" in v for v in violations({**answer, "extra": 1}, schema))
    assert any("lacks" in v for v in violations({}, schema))


def test_violations_name_the_field_and_what_it_needs():
    schema = node_schema("error_classifier", TAXONOMY, 2)
    assert violations({"classes": ["missed_carry"]}, schema) == ["answer.classes has 1 items, needs 2-2"]
    [wrong] = violations({"classes": ["missed_carry", "nonsense"]}, schema)
    assert wrong.startswith('answer.classes[1] is "nonsense", not one of')
    hint = node_schema("hint_composer", TAXONOMY, 2)
    assert violations({"hint": "h", "tier": True}, hint) == ["answer.tier is true, not one of [1, 2, 3]"]
    assert violations({"hint": "", "tier": 1}, hint) == ["answer.hint has 0 characters, needs 1-400"]
    rca = node_schema("root_cause_analyst", TAXONOMY, 2)
    assert violations({"root_cause": "r", "first_error_step": None}, rca) == []
    assert len(violations({"root_cause": "r", "first_error_step": 1.5}, rca)) == 1


def test_token_budgets_are_sized_to_each_schema_not_one_cap():
    budgets = {n: token_budget(node_schema(n, TAXONOMY, 3)) for n in NODES}
    assert budgets["error_classifier"] < budgets["leakage_checker"] < budgets["root_cause_analyst"] < \
        budgets["hint_composer"] < 512
    assert token_budget(node_schema("error_classifier", TAXONOMY, 6)) > budgets["error_classifier"]  # per attempt


@pytest.mark.parametrize("node", NODES)
def test_every_prompt_carries_its_schema(node):
    for task in ("arithmetic", "code"):
        schema = node_schema(node, get_task(task).taxonomy, 2)
        [message] = load_prompt(MentorConfig().prompts_dir, task, node).format_messages(
            **{v: "" for v in ("task", "problem", "reference", "attempts", "taxonomy", "diagnosis", "tier",
                                "previous_hints", "feedback", "hint")}, json_schema=json.dumps(schema))
        assert json.dumps(schema) in message.content


def sent_formats(server) -> list:
    return [r.body.get("response_format") for r in server.requests]


def test_the_schema_goes_out_as_response_format_with_each_nodes_budget(openai_server):
    runtime = MentorRuntime(config(openai_server))
    [result] = runtime.run([group()])
    assert result.fallbacks == [] and runtime.structured.enabled and runtime.structured.fallbacks == 0
    for request in openai_server.requests:
        schema = request.body["response_format"]["json_schema"]["schema"]
        assert request.body["response_format"]["type"] == "json_schema"
        assert schema == node_schema(request.node, TAXONOMY, 3)
        assert request.body["max_completion_tokens"] == token_budget(schema)


def test_llm_max_tokens_overrides_every_nodes_budget_and_structured_output_false_sends_no_schema(openai_server):
    [result] = MentorRuntime(config(openai_server, max_tokens=200, structured_output=False)).run([group()])
    assert result.fallbacks == []
    assert {r.body["max_completion_tokens"] for r in openai_server.requests} == {200}
    assert set(map(str, sent_formats(openai_server))) == {"None"}


def test_a_server_rejecting_response_format_is_warned_once_then_asked_prompt_only(openai_server):
    def behaviour(req):
        if "response_format" in req.body:
            return Reply(status=400, raw_body=b'{"error": {"message": "unsupported field: response_format"}}')
        return Reply()

    openai_server.behaviour = behaviour
    runtime = MentorRuntime(config(openai_server, parse_retries=0))
    with pytest.warns(UserWarning, match="rejected response_format") as warned:
        results = runtime.run([group()])
        results += runtime.run([group()])
    assert len([w for w in warned if "structured_output" in str(w.message)]) == 1
    assert all(r.fallbacks == [] and set(r.backend.values()) == {"llm"} for r in results)
    assert sent_formats(openai_server)[0] is not None and all(f is None for f in sent_formats(openai_server)[2:])
    assert runtime.structured.fallbacks == 1 and not runtime.structured.enabled


def test_a_server_ignoring_response_format_is_detected_from_a_schema_invalid_answer(openai_server):
    # It answers prose to the first request, as transformers serve does to a small model asked without a grammar.
    openai_server.behaviour = lambda req: Reply(content="Sure! The classes are carry errors.") if req.index == 0 \
        else Reply()
    runtime = MentorRuntime(config(openai_server, parse_retries=1))
    with pytest.warns(UserWarning, match="ignored response_format"):
        [result] = runtime.run([group()])
    assert result.fallbacks == [] and result.backend["error_classifier"] == "llm"  # the re-ask went prompt-only
    formats = sent_formats(openai_server)
    assert formats[0] is not None and all(f is None for f in formats[1:])
    assert runtime.structured.fallbacks == 1


def cut_reply(content: str) -> Reply:
    return Reply(raw_body=json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "test",
                                      "choices": [{"index": 0, "finish_reason": "length", "message": {
                                          "role": "assistant", "content": content}}]}).encode())


def test_a_json_answer_cut_at_max_tokens_does_not_turn_structured_output_off(openai_server):
    openai_server.behaviour = lambda req: cut_reply('{"classes": ["missed') if req.node == "error_classifier" \
        else Reply()
    runtime = MentorRuntime(config(openai_server, parse_retries=0))
    [result] = runtime.run([group()])
    [fallback] = result.fallbacks
    assert fallback.startswith("error_classifier: LLMOutputError") and "malformed JSON" in fallback
    assert runtime.structured.enabled and runtime.structured.fallbacks == 0
    assert all(f is not None for f in sent_formats(openai_server))


def test_prose_cut_at_max_tokens_shows_the_server_ignored_response_format(openai_server):
    openai_server.behaviour = lambda req: cut_reply("The error classifier is a type of") if req.index == 0 \
        else Reply()
    runtime = MentorRuntime(config(openai_server, parse_retries=0))
    with pytest.warns(UserWarning, match="ignored response_format"):
        [result] = runtime.run([group()])
    assert result.fallbacks[0].startswith("error_classifier: LLMOutputError") and len(result.fallbacks) == 1
    assert not runtime.structured.enabled and runtime.structured.fallbacks == 1


def test_a_schema_violation_falls_back_to_rules_and_names_the_field(openai_server):
    openai_server.behaviour = lambda req: Reply(content={"hint": "h", "tier": 7}) if req.node == "hint_composer" \
        else Reply()
    [result] = MentorRuntime(config(openai_server, parse_retries=0, structured_output=False)).run([group()])
    [fallback] = result.fallbacks
    assert "hint_composer: LLMOutputError" in fallback and "answer.tier is 7, not one of [1, 2, 3]" in fallback
    assert result.backend["hint_composer"] == "rules (llm fallback)" and result.hint


def test_bad_max_tokens_and_structured_output_name_the_field():
    from mentor.types import InputError

    with pytest.raises(InputError, match=r"llm.max_tokens: 0 is out of range; set it to an integer >= 1, or null"):
        MentorConfig(llm={"max_tokens": 0})
    with pytest.raises(InputError, match=r"llm.structured_output: expected bool, got 'yes'"):
        MentorConfig(llm={"structured_output": "yes"})


def test_the_diagnose_summary_times_finished_groups_only_and_counts_the_cut_ones_apart(openai_server):
    import dataclasses

    from mentor.cli import summary_text as summarise

    openai_server.behaviour = lambda req: Reply(hang=True)
    hung = MentorRuntime(config(openai_server, request_timeout_s=0.3, mentor={"timeout_s": 0.5}))
    [cut] = hung.run([group()])
    [done] = MentorRuntime().run([group()])
    assert cut.error.startswith("timeout") and not done.error
    text = summarise([done, cut, dataclasses.replace(cut, problem_id="p2")])
    assert "failed: 2 (2 timed out)" in text
    finished_ms = 1000 * sum(done.latency_s.values())
    assert f"latency per finished group (1): median {finished_ms:.1f} ms" in text
    assert "failed or timed-out groups (2), not in the latency above: " + cut.problem_id in text
    assert summarise([cut]).count("none finished") == 1


def test_fit_schema_shrinks_text_fields_to_llm_max_tokens_so_a_constrained_answer_closes():
    from mentor.llm.schemas import fit_schema

    schema = node_schema("hint_composer", TAXONOMY, 3)
    small = fit_schema(schema, 64)
    assert token_budget(small) <= 64 < token_budget(schema)
    assert small["properties"]["hint"]["maxLength"] < schema["properties"]["hint"]["maxLength"]
    assert schema["properties"]["hint"]["maxLength"] == 400  # the node's own schema is left as it was
    assert fit_schema(schema, 10_000) == schema


@pytest.fixture(scope="module")
def smollm2_vocab():
    """Xgrammar's view of the real SmolLM2 tokenizer, and each token's rank for the worst-case decoder below:
    special tokens and the end last, then tokens holding a closing quote, bracket or brace, then longer ones."""
    import torch
    import xgrammar as xgr
    from transformers import AutoTokenizer

    from mentor.models import resolve

    info = xgr.TokenizerInfo.from_huggingface(AutoTokenizer.from_pretrained(
        resolve("HuggingFaceTB/SmolLM2-135M-Instruct")))
    vocab = info.decoded_vocab
    length = torch.tensor([len(v) for v in vocab])
    closing = torch.tensor([any(c in v for c in (b'"', b"}", b"]")) for v in vocab])
    rank = closing.long() * 10**8 + length * 10**5 + torch.arange(len(vocab))  # ties by id
    rank[length == 0] = rank[info.stop_token_ids] = 10**9
    return info, xgr.GrammarCompiler(info), rank


def longest_constrained_answer(schema: dict, smollm2_vocab) -> tuple[str, int]:
    """What xgrammar lets a decoder write under `schema` with the real SmolLM2 tokenizer, when the decoder picks
    the worst ASCII it can at each token: one character at a time, never a closing quote, bracket or brace while
    anything else is allowed (free text to its limit, digits while the grammar takes more). Returns the answer and
    its tokens with the end-of-sequence token, or stops one token past the budget."""
    import torch
    import xgrammar as xgr

    info, compiler, rank = smollm2_vocab
    matcher = xgr.GrammarMatcher(compiler.compile_json_schema(json.dumps(schema), any_whitespace=False))
    bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
    text, tokens = b"", 0
    while not matcher.is_terminated() and tokens <= token_budget(schema):
        matcher.fill_next_token_bitmask(bitmask)
        allowed = ((bitmask[0].unsqueeze(1) >> torch.arange(32)) & 1).flatten()[:len(rank)].bool()
        token = int(torch.where(allowed, rank, 10**10).argmin())
        assert matcher.accept_token(token)
        text += b"" if token in info.stop_token_ids else info.decoded_vocab[token]
        tokens += 1
    return text.decode(), tokens


@pytest.mark.parametrize("max_tokens", [64, 16])  # short text: a 300-character walk outlasts a loaded machine
@pytest.mark.parametrize("node", NODES)
def test_a_decoder_writing_the_longest_answer_its_grammar_allows_still_closes_within_the_budget(node, max_tokens,
                                                                                                 smollm2_vocab):
    # The recorded 31/32: the analyst wrote "1.0.0.1.1.1.1..." a token a character, past a 3-characters-a-token cap.
    from mentor.llm.schemas import fit_schema

    schema = node_schema(node, get_task("math").taxonomy, 3)
    schema = fit_schema(schema, max_tokens) if max_tokens else schema
    text, tokens = longest_constrained_answer(schema, smollm2_vocab)
    assert tokens <= token_budget(schema), (tokens, token_budget(schema), text)
    assert violations(json.loads(text), schema) == []  # what the grammar allows, the validation accepts
    if max_tokens == 64:
        assert token_budget(schema) <= 64 or node == "error_classifier"  # its fixed class names alone need more


def test_the_hf_provider_has_the_judge_write_its_reason_before_its_verdict(smollm2_vocab):
    # Verdict first, SmolLM2-135M wrote `{"leaked": "true", "reason": "false"}`: the grammar keeps the schema's order.
    import xgrammar as xgr

    from mentor.llm.hf import BatchedChat

    chat = BatchedChat(model="unused")
    chat._compiler = smollm2_vocab[1]  # the real tokenizer's compiler; no model is loaded
    grammar = chat._grammar(node_schema("leakage_checker", TAXONOMY, 3))
    assert xgr.GrammarMatcher(grammar).accept_string('{"reason": "')
    assert not xgr.GrammarMatcher(grammar).accept_string('{"leaked": ')


def test_the_step_is_bounded_in_the_validation_as_in_the_grammar():
    rca = node_schema("root_cause_analyst", TAXONOMY, 2)
    assert violations({"root_cause": "the carry", "first_error_step": 999}, rca) == []
    assert violations({"root_cause": "r", "first_error_step": 1000}, rca) == ["answer.first_error_step is 1000, "
                                                                              "which matches none of ['integer', 'null']"]
    assert len(violations({"root_cause": "r", "first_error_step": 0}, rca)) == 1


def test_a_request_asks_for_at_least_its_schemas_budget_when_llm_max_tokens_is_below_it(openai_server):
    from mentor.llm.schemas import fit_schema

    def short_answers(req) -> Reply:  # answers that fit the cut schema, so structured output stays on
        answer = canned_answer(req.node, req.text)
        return Reply(content={k: v[:8] if isinstance(v, str) else v for k, v in answer.items()})

    openai_server.behaviour = short_answers
    runtime = MentorRuntime(config(openai_server, max_tokens=16))
    runtime.run([group()])
    assert runtime.structured.enabled and openai_server.count() >= 4
    for request in openai_server.requests:
        fitted = fit_schema(node_schema(request.node, TAXONOMY, 3), 16)
        assert request.body["response_format"]["json_schema"]["schema"] == fitted
        assert request.body["max_completion_tokens"] == token_budget(fitted) > 16


def rejecting_response_format(req) -> Reply:
    if "response_format" in req.body:
        return Reply(status=400, raw_body=b'{"error": {"message": "unsupported field: response_format"}}')
    return Reply()


def test_structured_output_fallbacks_are_a_training_metric_per_step(tmp_path, openai_server):
    from mentor import Mentor
    from tiny_grpo import RecordingReward, make_trainer

    openai_server.behaviour = rejecting_response_format
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=2)
    Mentor.from_config({"nodes": {"hint_composer": "llm"}, "llm": {
        "provider": "openai", "model": "m", "base_url": openai_server.base_url, "max_retries": 0}}).attach(trainer)
    with pytest.warns(UserWarning, match="rejected response_format"):
        trainer.train()
    logs = [log for log in trainer.state.log_history if "mentor/interventions" in log]
    rejected = sum("response_format" in r.body for r in openai_server.requests)  # those in flight before the warning
    assert rejected >= 1 and [log["mentor/structured_output_fallbacks"] for log in logs] == [rejected, 0]
    assert logs[0]["mentor/interventions"] > 0 and logs[0]["mentor/llm_fallbacks"] == 0


def test_mentor_diagnose_prints_the_structured_output_fallbacks(tmp_path, openai_server, capsys):
    import yaml

    from failed_groups import ARITHMETIC
    from mentor.cli import main

    openai_server.behaviour = rejecting_response_format
    (tmp_path / "failures.jsonl").write_text(json.dumps(ARITHMETIC) + "\n")
    (tmp_path / "mentor.yaml").write_text(yaml.safe_dump({"nodes": {n: "llm" for n in NODES}, "llm": {
        "provider": "openai", "model": "m", "base_url": openai_server.base_url, "max_retries": 0}}))
    with pytest.warns(UserWarning, match="rejected response_format"):
        assert main(["diagnose", str(tmp_path / "failures.jsonl"), "-o", str(tmp_path / "out.jsonl"),
                     "--config", str(tmp_path / "mentor.yaml")]) == 0
    out = capsys.readouterr().out
    assert "structured-output fallbacks: 1 request(s) found it unusable; structured output off (the server " \
           "rejected response_format" in out
    assert "llm fallbacks: 0" in out

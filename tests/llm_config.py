"""MentorConfigs whose `llm` nodes talk to a loopback OpenAI-compatible server (tests/openai_server.py)."""

from mentor.config import NODES, MentorConfig

ALL_LLM = {n: "llm" for n in NODES}


def config(server_or_url, nodes=None, mentor=None, **llm) -> MentorConfig:
    """A MentorConfig whose `llm` nodes talk to the loopback server: `mentor` holds top-level keys, `llm` the
    LLMConfig keys (`request_timeout_s`, `max_concurrent_requests`, ...)."""
    base_url = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
    llm = {"provider": "openai", "model": "test", "base_url": base_url, "request_timeout_s": 5.0, "max_retries": 0,
           "parse_retries": 1, **llm}
    return MentorConfig(nodes=ALL_LLM if nodes is None else nodes, llm=llm, **(mentor or {}))

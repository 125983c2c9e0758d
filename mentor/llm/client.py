"""The `llm` backend of a node: prompt file in, JSON out, validated; `rules` takes over when it fails."""

from __future__ import annotations

import asyncio
import json
import warnings
from contextlib import nullcontext
from functools import lru_cache
from typing import Any, Callable

from mentor.llm.body_cap import capped, capped_async_client, too_large
from mentor.llm.prompts import load_prompt
from mentor.llm.schemas import token_budget, violations
from mentor.text import invalid_text
from mentor.types import InputError

MAX_REPLY_CHARS = 8192  # a reply kept in a node record: 2,000 tokens of prose or more, whole; a longer one is cut


class LLMOutputError(ValueError):
    """The model's answer is not the JSON object the node needs."""


def kept_reply(text: str) -> str:
    """A model's raw reply as its node record keeps it: its first MAX_REPLY_CHARS characters, the cut said."""
    if len(text) <= MAX_REPLY_CHARS:
        return text
    return text[:MAX_REPLY_CHARS] + f"\n[mentor: reply cut to {MAX_REPLY_CHARS} of its {len(text)} characters]"


def parse_json(text: str) -> dict[str, Any]:
    """The first JSON object in a model's answer, allowing code fences and prose around it."""
    text = text.strip()
    if text.startswith("```"):  # str methods, not `\s*```$`, which rescanned a run of spaces from each of its starts
        text = text[3:].removeprefix("json").lstrip()
    if text.endswith("```"):
        text = text[:-3].rstrip()
    start = text.find("{")
    if start < 0:
        raise LLMOutputError(f"no JSON object in the answer: {text[:200]!r}")
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as e:
        raise LLMOutputError(f"malformed JSON ({e.msg}): {text[start:start + 200]!r}") from None
    if not isinstance(obj, dict):
        raise LLMOutputError("the answer's JSON is not an object")
    return obj


class StructuredOutput:
    """Whether requests still ask the server for constrained decoding (`response_format`), for one runtime's life.

    A server that rejects the field (a 4xx naming it) or ignores it (an answer that is not schema-valid though not
    cut at max_tokens) turns it off: one warning, then prompt-only JSON. `fallbacks` counts the requests that
    found it unusable."""

    def __init__(self, enabled: bool = True):
        self.enabled, self.off_reason, self.fallbacks = enabled, None, 0

    def turn_off(self, reason: str) -> None:
        self.fallbacks += 1
        if self.enabled:
            self.enabled, self.off_reason = False, reason
            warnings.warn(f"llm.structured_output: {reason}; the nodes ask for JSON in the prompt alone from now on "
                          f"(set llm.structured_output: false to skip the check)", UserWarning, stacklevel=2)


def _request_kwargs(chat_model, node: str, schema: dict, max_tokens: int, structured: bool) -> dict[str, Any]:
    """What a request adds for the chat models we build: its token budget and, when `structured`, the schema.

    ChatOpenAI gets `response_format` through `extra_body`, so it goes out as a plain create call (its own
    `response_format` path calls `parse`, which raises on an answer cut at max_tokens). Other chat models keep
    their own settings."""
    response_format = {"type": "json_schema", "json_schema": {"name": node, "schema": schema, "strict": True}}
    if getattr(chat_model, "mentor_kwargs", False):  # mentor.llm.hf.BatchedChat
        return {"max_tokens": max_tokens, **({"response_format": response_format} if structured else {})}
    if type(chat_model).__name__ == "ChatOpenAI":
        return {"max_completion_tokens": max_tokens,
                **({"extra_body": {"response_format": response_format}} if structured else {})}
    return {}


def _rejects_response_format(e: Exception) -> bool:
    status = getattr(e, "status_code", None)
    return isinstance(status, int) and 400 <= status < 500 and "response_format" in str(e)


async def ask(node: str, task: str, variables: dict[str, Any], validate: Callable[[dict], dict], *,
              chat_model, prompts_dir: str, parse_retries: int, limit: asyncio.Semaphore | None,
              timeout_s: float | None = None, queue_timeout_s: float | None = None, schema: dict | None = None, max_tokens: int | None = None,
              structured: StructuredOutput | None = None, sent: list[str] | None = None,
              replies: list[str] | None = None) -> dict:
    """Ask the chat model for `node`'s output; re-ask up to `parse_retries` times on unusable output.

    The answer must match `schema` (also the prompt's `{json_schema}` and, while `structured` is on, the constraint
    sent with the request), then pass `validate`. The request asks for `max_tokens`, never fewer than the schema's
    token budget, so that a constrained answer always closes its JSON.
    Each request, the client's own retries and waits inside it, is cut at `timeout_s` (TimeoutError, no re-ask):
    the client's timeout bounds each read only, so a server dripping bytes or a long `Retry-After` outlasts it.
    Cutting cancels the request, which closes its connection. Waiting for a `limit` slot is not counted, nor, for
    the `hf` provider, which bounds its own requests, the wait in its batch queue (`queue_timeout_s`, None: none).
    The prompt as sent (its messages' text) is appended to `sent`, when given, before the first request, and each
    answer's raw text, before it is parsed, to `replies` (`kept_reply`), re-asks included."""
    schema = schema or {"type": "object", "properties": {}}
    structured = structured or StructuredOutput(False)
    max_tokens = max(max_tokens or 0, token_budget(schema))
    messages = load_prompt(prompts_dir, task, node).format_messages(
        **variables, json_schema=json.dumps({k: v for k, v in schema.items() if k != "title"}))
    if sent is not None:
        sent.append("\n\n".join(str(m.content) for m in messages))
    error: Exception | None = None
    tries = 0
    while tries <= parse_retries:
        constrained = structured.enabled
        async with limit or nullcontext():
            try:
                kwargs = _request_kwargs(chat_model, node, schema, max_tokens, constrained)
                with capped(max_tokens):  # the answer's bytes, from its token budget (docs/configuration.md)
                    if getattr(chat_model, "mentor_kwargs", False):  # BatchedChat times its queue and generation
                        answer = await chat_model.ainvoke(messages, **kwargs, queue_timeout_s=queue_timeout_s,
                                                          request_timeout_s=timeout_s)
                    else:
                        answer = await _within(chat_model.ainvoke(messages, **kwargs), timeout_s)
            except Exception as e:
                if too_large(e):  # unusable output, as malformed JSON is: re-asked, then the fallback
                    tries, error = tries + 1, LLMOutputError(str(too_large(e)))
                    continue
                if not (constrained and _rejects_response_format(e)):
                    raise
                structured.turn_off(f"the server rejected response_format ({str(e)[:200]})")
                continue  # the same try again, without the field
        tries += 1
        cut_note = (getattr(answer, "response_metadata", None) or {}).get("prompt_cut")
        if cut_note and sent and cut_note not in sent[-1]:  # the trace's prompt says what the model did not see of it
            sent[-1] += f"\n\n[mentor: {cut_note}]"
        text = answer.content if isinstance(answer.content, str) else str(answer.content)
        if replies is not None:
            replies.append(kept_reply(text))
        try:
            out = parse_json(text)
            wrong = violations(out, schema)
            if wrong:
                raise LLMOutputError("not schema-valid: " + "; ".join(wrong[:3]))
        except LLMOutputError as e:
            error = e
            # A constrained answer starts with "{" and is valid unless cut at max_tokens; prose never is.
            cut = (getattr(answer, "response_metadata", None) or {}).get("finish_reason") == "length"
            if constrained and structured.enabled and (not cut or not text.lstrip().startswith("{")):
                structured.turn_off(f"the server ignored response_format (the {node} answer: {e})")
            continue
        where = invalid_text(out)
        if where:  # JSON's "\ud800" escape: a string no tokenizer or file accepts. Unusable, as malformed JSON is
            error = LLMOutputError(f"{where} holds a lone surrogate, which is not text")
            continue
        try:
            return validate(out)
        except (KeyError, TypeError, ValueError) as e:
            error = e
    raise LLMOutputError(f"unusable output after {parse_retries + 1} tries: {error}")


async def _within(request, timeout_s: float | None):
    try:
        return await asyncio.wait_for(request, timeout_s)
    except TimeoutError:
        raise TimeoutError(f"no answer within llm.request_timeout_s = {timeout_s} s") from None


@lru_cache(maxsize=8)
def _build_chat_model(provider: str, model: str, base_url: str | None, api_key_env: str, timeout_s: float,
                      max_retries: int, temperature: float, max_tokens: int):
    import os

    if provider == "openai":
        try:
            from langchain_openai import ChatOpenAI
        except ImportError:
            raise InputError("llm.provider 'openai' needs the extra: pip install 'mentor-rl[openai]'") from None
        return ChatOpenAI(model=model, base_url=base_url, api_key=os.environ.get(api_key_env) or "EMPTY",
                          timeout=timeout_s, max_retries=max_retries, temperature=temperature,
                          max_completion_tokens=max_tokens, http_async_client=capped_async_client())
    from mentor.llm.hf import BatchedChat
    from mentor.models import resolve

    return BatchedChat(model=resolve(model), temperature=temperature, max_tokens=max_tokens)


def chat_model_from_config(llm) -> Any:
    """The LangChain chat model an `LLMConfig` describes, built once per distinct config.

    Its async HTTP connections belong to the mentor's one event loop (`mentor.runtime.event_loop.mentor_loop`), where
    every graph run happens, so they stay open from one training step to the next.
    """
    return _build_chat_model(llm.provider, llm.model, llm.base_url, llm.api_key_env, llm.request_timeout_s,
                             llm.max_retries, llm.temperature, llm.max_tokens or 512)  # each request sets its own

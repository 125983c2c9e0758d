"""The `llm` backend of a node: prompt file in, JSON out, validated; `rules` takes over when it fails."""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import weakref
from contextlib import nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from langchain_core.prompts import ChatPromptTemplate

from mentor.types import InputError


class LLMOutputError(ValueError):
    """The model's answer is not the JSON object the node needs."""


@lru_cache(maxsize=None)
def load_prompt(prompts_dir: str, task: str, node: str) -> ChatPromptTemplate:
    """The prompt of `node`: `<prompts_dir>/<task>/<node>.md` if present, else `<prompts_dir>/<node>.md`."""
    for path in (Path(prompts_dir) / task / f"{node}.md", Path(prompts_dir) / f"{node}.md"):
        if path.exists():
            return ChatPromptTemplate.from_messages([("human", path.read_text())])
    raise InputError(f"no prompt for node '{node}' in '{prompts_dir}': add {node}.md there, or set prompts_dir")


def parse_json(text: str) -> dict[str, Any]:
    """The first JSON object in a model's answer, allowing code fences and prose around it."""
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
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


async def ask(node: str, task: str, variables: dict[str, Any], validate: Callable[[dict], dict], *,
              chat_model, prompts_dir: str, parse_retries: int, limit: asyncio.Semaphore | None) -> dict:
    """Ask the chat model for `node`'s output; re-ask up to `parse_retries` times on unusable output."""
    messages = load_prompt(prompts_dir, task, node).format_messages(**variables)
    error: Exception | None = None
    for _ in range(parse_retries + 1):
        async with limit or nullcontext():
            answer = await chat_model.ainvoke(messages)
        try:
            return validate(parse_json(answer.content if isinstance(answer.content, str) else str(answer.content)))
        except (LLMOutputError, KeyError, TypeError, ValueError) as e:
            error = e
    raise LLMOutputError(f"unusable output after {parse_retries + 1} tries: {error}")


def _build_chat_model(provider: str, model: str, base_url: str | None, api_key_env: str, timeout_s: float,
                      max_retries: int, temperature: float, max_tokens: int, http_async_client: Any = None):
    import os

    if provider == "openai":
        try:
            from langchain_openai import ChatOpenAI
        except ImportError:
            raise InputError("llm.provider 'openai' needs the extra: pip install 'mentor-rl[openai]'") from None
        extra = {"http_async_client": http_async_client} if http_async_client is not None else {}
        return ChatOpenAI(model=model, base_url=base_url, api_key=os.environ.get(api_key_env) or "EMPTY",
                          timeout=timeout_s, max_retries=max_retries, temperature=temperature,
                          max_completion_tokens=max_tokens, **extra)
    try:
        from langchain_huggingface import ChatHuggingFace, HuggingFacePipeline
    except ImportError:
        raise InputError("llm.provider 'hf' needs the extra: pip install 'mentor-rl[hf]'") from None
    pipeline = HuggingFacePipeline.from_model_id(model, task="text-generation", pipeline_kwargs={
        "max_new_tokens": max_tokens, "do_sample": temperature > 0, "return_full_text": False})
    return ChatHuggingFace(llm=pipeline)


_cached_chat_model = lru_cache(maxsize=8)(_build_chat_model)  # loop-free models (hf; openai outside a loop)

# An async HTTP client's pooled connections belong to the event loop that opened them: ChatOpenAI's default
# client is one process-wide object, so after `asyncio.run` ends (each `MentorRuntime.run` is one), the next
# loop's first requests fail with "Event loop is closed" and the nodes silently fall back to `rules`. An
# `openai` model is therefore built per event loop, with its own client, and closed by `close_chat_models`.
_per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, Any]] = weakref.WeakKeyDictionary()


def chat_model_from_config(llm) -> Any:
    """The LangChain chat model an `LLMConfig` describes (built once per distinct config and event loop)."""
    key = (llm.provider, llm.model, llm.base_url, llm.api_key_env, llm.timeout_s, llm.max_retries,
           llm.temperature, llm.max_tokens)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if llm.provider != "openai" or loop is None:
        return _cached_chat_model(*key)
    models = _per_loop.setdefault(loop, {})
    if key not in models:
        import openai

        client = openai.DefaultAsyncHttpxClient(verify=_ssl_context())
        models[key] = _build_chat_model(*key, http_async_client=client)
    return models[key]


@lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    """One TLS context for every per-loop client: loading the CA store costs ~0.1 s, too much per run."""
    return ssl.create_default_context()


async def close_chat_models() -> None:
    """Close the HTTP clients of the models `chat_model_from_config` built for the running event loop."""
    for chat_model in _per_loop.pop(asyncio.get_running_loop(), {}).values():
        client = getattr(chat_model, "http_async_client", None)
        if client is not None:
            await client.aclose()

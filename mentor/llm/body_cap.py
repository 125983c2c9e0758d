"""A cap on the bytes an `llm` node reads from its server's answer, sized from the request's token budget.

The OpenAI client reads a response whole before anyone looks at it, so a server answering 600 MiB of content
had the trainer's process hold all of it. Each request sets its cap (`capped`) and a response hook on the
client's connection pool (`capped_async_client`) refuses a declared length past it and cuts a body that grows
past it; `ask` counts such an answer as unusable output. Requests ask for no compression, and a compressed answer
is refused, so the cap bounds what is decoded too."""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from typing import Any, AsyncIterator, Iterator

BYTES_PER_TOKEN = 64      # a token of JSON-escaped text is at most a few dozen bytes (`\uXXXX` is 6 a character)
ENVELOPE_BYTES = 16_384   # the chat completion around the content: id, model, usage, ...

_cap: contextvars.ContextVar[int | None] = contextvars.ContextVar("mentor_llm_body_cap", default=None)


class ResponseTooLarge(Exception):
    """The server's answer is larger than the request's token budget allows."""


def body_cap(max_tokens: int) -> int:
    """The most bytes an answer to a request for `max_tokens` tokens may have."""
    return ENVELOPE_BYTES + BYTES_PER_TOKEN * max_tokens


@contextmanager
def capped(max_tokens: int) -> Iterator[int]:
    """Requests made inside (and in tasks started inside) read at most `body_cap(max_tokens)` bytes."""
    token = _cap.set(body_cap(max_tokens))
    try:
        yield _cap.get()
    finally:
        _cap.reset(token)


def too_large(error: BaseException | None) -> ResponseTooLarge | None:
    """The ResponseTooLarge behind `error` (the client wraps it in its connection error), or None."""
    seen = 0
    while error is not None and seen < 16:
        if isinstance(error, ResponseTooLarge):
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


def _cap_hook(stream_class: type):
    async def cap_response(response: Any) -> None:
        limit = _cap.get()
        if limit is None:
            return
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise ResponseTooLarge(f"the server's answer declares {declared} bytes, more than {limit} bytes, the most "
                                   f"the request's token budget allows")
        if response.headers.get("content-encoding", "identity").lower() not in ("", "identity"):
            raise ResponseTooLarge(f"the server's answer is compressed ({response.headers['content-encoding']}) "
                                   f"though none was asked for, so its size cannot be bounded")
        response.stream = stream_class(response.stream, limit)
    return cap_response


def capped_async_client(**kwargs: Any) -> Any:
    """The OpenAI client's default async connection pool, with the cap hook on every response."""
    import importlib

    from openai import DefaultAsyncHttpxClient

    # The HTTP library the client is built on: httpx for openai 1.x, its fork httpx2 for later ones.
    library = importlib.import_module(next(c.__module__ for c in DefaultAsyncHttpxClient.__mro__[1:]
                                           if not c.__module__.startswith("openai")).split(".")[0])

    class CappedStream(library.AsyncByteStream):
        def __init__(self, stream: Any, limit: int):
            self.stream, self.limit, self.read = stream, limit, 0

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.stream:
                self.read += len(chunk)
                if self.read > self.limit:
                    raise ResponseTooLarge(f"the server's answer is longer than {self.limit} bytes, the most the "
                                           f"request's token budget allows")
                yield chunk

        async def aclose(self) -> None:
            await self.stream.aclose()

    return DefaultAsyncHttpxClient(event_hooks={"response": [_cap_hook(CappedStream)]}, headers={"Accept-Encoding": "identity"},
                                   **kwargs)

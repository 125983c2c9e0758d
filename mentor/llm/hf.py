"""The in-process `hf` provider: a transformers model as a LangChain chat model that batches and constrains.

Requests that arrive together (the concurrent groups' calls to one node) become one left-padded `generate`, and
a request carrying `response_format` json_schema is decoded under that schema by xgrammar's logits processor, so
a small model writes valid JSON. A request's wait in the queue and its generation have bounds of their own
(llm.queue_timeout_s, llm.request_timeout_s), so a long queue costs no fallback; a request past its bound stops its
row at the next token. A prompt longer than the model's context is cut to fit (mentor/llm/hf_fit.py), the cut named in the answer's metadata and so in the
trace. Each `generate` runs in a thread of its own that exit stops (every row at its next token) and waits for, so
a process never ends with torch still generating (which aborted it: "terminate called without an active exception").
"""

from __future__ import annotations

import asyncio
import atexit
import json
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from mentor.llm.hf_fit import context_length, fit_prompt
from mentor.types import InputError

_ROLES = {"human": "user", "ai": "assistant", "system": "system"}
EXIT_WAIT_S = 120.0  # the longest exit waits for a generate to stop: its prefill, which no criterion interrupts
_LIVE: list[weakref.ref] = []  # the chat models whose generate threads exit stops (a pydantic model is unhashable)


def _stop_at_exit() -> None:
    for ref in list(_LIVE):
        chat = ref()
        if chat is not None:
            chat.close()


_exit_hook = threading.Lock()


def _register_exit_hook() -> None:
    if _exit_hook.acquire(blocking=False):  # once; never released
        atexit.register(_stop_at_exit)


@dataclass(eq=False)  # one request is one object, whatever its prompt
class _Request:
    prompt: list[dict[str, str]]
    max_tokens: int
    schema: dict | None
    future: asyncio.Future = field(default=None)
    started: asyncio.Event = field(default_factory=asyncio.Event)  # set when its batch's generate begins
    cut: str | None = None  # what fitting the prompt to the context cut, if anything


class BatchedChat(BaseChatModel):
    """A causal LM from `model` (a local folder or Hub id), served in batches.

    Args:
        model: what `from_pretrained` loads.
        max_batch: most requests in one `generate`.
        window_s: how long the first request waits for others to join its batch.
        temperature: 0 decodes greedily.
        max_tokens: the answer cap of a request that names none.
    """

    model: str
    max_batch: int = 16
    window_s: float = 0.02
    temperature: float = 0.0
    max_tokens: int = 512
    mentor_kwargs: bool = True  # mentor.llm.client sends `max_tokens` and `response_format` per request

    _lm: Any = PrivateAttr(default=None)
    _tokenizer: Any = PrivateAttr(default=None)
    _grammars: dict = PrivateAttr(default_factory=dict)
    _compiler: Any = PrivateAttr(default=None)
    _pending: list = PrivateAttr(default_factory=list)
    _worker: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _batch_sizes: list = PrivateAttr(default_factory=list)
    _closing: Any = PrivateAttr(default_factory=threading.Event)
    _thread: Any = PrivateAttr(default=None)

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        _LIVE[:] = [ref for ref in _LIVE if ref() is not None] + [weakref.ref(self)]

    def close(self, wait_s: float = EXIT_WAIT_S) -> None:
        """Stops the running `generate` (every row at its next token) and waits up to `wait_s` for its thread; later
        requests fail (the nodes fall back to rules). Called at exit."""
        self._closing.set()
        thread = self._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join(wait_s)

    @property
    def batch_sizes(self) -> list[int]:
        """Each `generate`'s batch size so far, for tests and the benchmark."""
        return self._batch_sizes

    @property
    def _llm_type(self) -> str:
        return "mentor-hf-batched"

    def _load(self):
        with self._lock:
            if self._lm is None:
                from transformers import AutoModelForCausalLM, AutoTokenizer

                self._tokenizer = AutoTokenizer.from_pretrained(self.model, padding_side="left")
                if self._tokenizer.pad_token is None:
                    self._tokenizer.pad_token = self._tokenizer.eos_token
                self._lm = AutoModelForCausalLM.from_pretrained(self.model).eval()
        return self._lm, self._tokenizer

    def _grammar(self, schema: dict):
        """The schema compiled for this tokenizer, once per distinct schema (about 1 s each on CPU). Its keys keep
        their order: xgrammar writes properties in the schema's order (the judge's `reason` before its verdict)."""
        key = json.dumps(schema)
        if key not in self._grammars:
            try:
                import xgrammar as xgr
            except ImportError:
                raise InputError("llm.structured_output with provider 'hf' needs xgrammar: pip install "
                                 "'mentor-rl[hf]' (or set llm.structured_output: false)") from None
            if self._compiler is None:
                lm, tokenizer = self._load()
                self._compiler = xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(
                    tokenizer, vocab_size=lm.config.vocab_size))
            # No free whitespace: a small model pads JSON with newlines and runs out of tokens.
            self._grammars[key] = self._compiler.compile_json_schema(key, any_whitespace=False)
        return self._grammars[key]

    def generate_batch(self, requests: list[_Request]) -> list[tuple[str, str]]:
        """(text, finish_reason) for each request, from one `generate`; all constrained or none."""
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        if self._closing.is_set():
            raise RuntimeError("the hf chat model is closed (the process is exiting)")
        lm, tokenizer = self._load()
        _register_exit_hook()  # now that torch is loaded: atexit runs the latest first, so this runs before torch's
        for r in requests:  # a prompt past the context is cut, and the cut told
            r.prompt, r.cut = fit_prompt(tokenizer, r.prompt, r.max_tokens, context_length(lm))
        texts = [tokenizer.apply_chat_template(r.prompt, add_generation_prompt=True, tokenize=False) for r in requests]
        inputs = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        processors = []
        if requests[0].schema is not None:
            import xgrammar as xgr

            processors.append(xgr.contrib.hf.LogitsProcessor([self._grammar(r.schema) for r in requests]))

        start = inputs["input_ids"].shape[1]

        closing = self._closing

        class Done(StoppingCriteria):  # a row stops at its own cap, now if its caller gave up, all at exit
            def __call__(self, input_ids, scores, **kwargs):
                return torch.tensor([input_ids.shape[1] - start >= r.max_tokens or closing.is_set()
                                     or (r.future is not None and r.future.cancelled()) for r in requests])

        self._batch_sizes.append(len(requests))
        with torch.no_grad():
            out = lm.generate(**inputs, max_new_tokens=max(r.max_tokens for r in requests),
                              do_sample=self.temperature > 0, temperature=self.temperature or None, top_p=None,
                              top_k=None, logits_processor=processors, pad_token_id=tokenizer.pad_token_id,
                              stopping_criteria=StoppingCriteriaList([Done()]))
        results = []
        for r, row in zip(requests, out[:, start:]):
            row = row[: r.max_tokens].tolist()
            ended = tokenizer.eos_token_id in row or tokenizer.pad_token_id in row
            results.append((tokenizer.decode(row, skip_special_tokens=True), "stop" if ended else "length"))
        return results

    @staticmethod
    def _request(messages: list[BaseMessage], max_tokens: int, response_format: dict | None) -> _Request:
        prompt = [{"role": _ROLES.get(m.type, "user"), "content": str(m.content)} for m in messages]
        schema = (response_format or {}).get("json_schema", {}).get("schema")
        return _Request(prompt, max_tokens, schema)

    @staticmethod
    def _result(text: str, finish_reason: str, cut: str | None = None) -> ChatResult:
        message = AIMessage(content=text, response_metadata={"finish_reason": finish_reason,
                                                             **({"prompt_cut": cut} if cut else {})})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages, stop=None, run_manager=None, max_tokens=None, response_format=None, **kwargs):
        request = self._request(messages, max_tokens or self.max_tokens, response_format)
        [(text, reason)] = self.generate_batch([request])
        return self._result(text, reason, request.cut)

    async def _agenerate(self, messages, stop=None, run_manager=None, max_tokens=None, response_format=None,
                         queue_timeout_s=None, request_timeout_s=None, **kwargs):
        """The answer, within `queue_timeout_s` in the queue and then `request_timeout_s` of generation (None: no
        bound); past either the request is cancelled, its row stopped at the next token (TimeoutError)."""
        request = self._request(messages, max_tokens or self.max_tokens, response_format)
        request.future = asyncio.get_running_loop().create_future()
        self._pending.append(request)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._drain())
        try:
            try:
                await asyncio.wait_for(request.started.wait(), queue_timeout_s)
            except TimeoutError:
                raise TimeoutError(f"still queued after llm.queue_timeout_s = {queue_timeout_s} s") from None
            try:
                text, reason = await asyncio.wait_for(request.future, request_timeout_s)
            except TimeoutError:
                raise TimeoutError(f"no answer within llm.request_timeout_s = {request_timeout_s} s of its "
                                   f"generation's start") from None
        except BaseException:  # a bound passed, or the caller gave up (the group's timeout_s): never generated, or
            request.future.cancel()  # its row stopped at the next token
            raise
        return self._result(text, reason, request.cut)

    async def _drain(self):
        """Runs the pending requests in batches, one `generate` at a time, until none is left. A batch holds
        requests of one kind, constrained or not, whatever their budgets (each row stops at its own): in practice
        the calls to one node, whose budget varies with the group's attempts."""
        await asyncio.sleep(self.window_s)
        while self._pending:
            constrained = self._pending[0].schema is not None
            batch = [r for r in self._pending if (r.schema is not None) == constrained][: self.max_batch]
            self._pending = [r for r in self._pending if r not in batch]
            batch = [r for r in batch if not r.future.cancelled()]
            if not batch:
                continue
            for r in batch:
                r.started.set()
            try:
                results = await self._in_thread(batch)
            except Exception as e:  # each caller falls back to rules with this error
                for r in batch:
                    if not r.future.done():
                        r.future.set_exception(e)
                continue
            for r, result in zip(batch, results):
                if not r.future.done():
                    r.future.set_result(result)
            await asyncio.sleep(self.window_s)  # requests the next node's calls send meanwhile join

    async def _in_thread(self, batch: list[_Request]) -> list[tuple[str, str]]:
        """`generate_batch(batch)` in a daemon thread of its own, which `close` (at exit) stops and joins: a pool's
        worker would be joined only after it ran to the end, and an abandoned one outlived the process's work."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future = loop.create_future()

        def settle(result, error) -> None:
            if not done.done():
                done.set_exception(error) if error is not None else done.set_result(result)

        def work() -> None:
            try:
                result, error = self.generate_batch(batch), None
            except BaseException as e:  # handed to the callers, who fall back to rules
                result, error = None, e
            try:
                loop.call_soon_threadsafe(settle, result, error)
            except RuntimeError:  # the loop closed meanwhile: nobody waits for this batch
                pass

        self._thread = threading.Thread(target=work, name="mentor-hf-generate", daemon=True)
        self._thread.start()
        return await done

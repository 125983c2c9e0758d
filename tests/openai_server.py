"""A real OpenAI-compatible chat-completions server on loopback, for tests and benchmarks.

It speaks `POST /v1/chat/completions` (non-streaming) over HTTP/1.1 with keep-alive, on 127.0.0.1 and an
ephemeral port, one thread per connection. What it answers is decided per request by `behaviour`, a function
of the `Request` (which mentor node asked, read from the prompt text; how many requests came before) that
returns a `Reply` (a status, a body, a delay, or a hang). It counts requests and the most it had in flight.

    with OpenAIServer(delay_s=0.05) as server:          # canned well-formed answers after 50 ms
        config = MentorConfig(llm={"base_url": server.base_url, ...})

    server.behaviour = lambda req: Reply(content="not json")       # malformed answers
    server.behaviour = lambda req: Reply(status=500)                # server errors
    server.behaviour = lambda req: Reply(hang=True)                 # never answers (until stop)
    server.behaviour = lambda req: Reply(drip_s=0.5)                # the answer one byte every 0.5 s
    server.behaviour = lambda req: Reply(status=429, headers={"Retry-After": "55"})   # rate limited: come back later
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

# Which node sent a prompt: the role each prompt in prompts/ opens with. The earliest marker in the text wins,
# so a marker quoted later (say, inside a hint being judged) does not confuse the detection.
NODE_MARKERS = {
    "error_classifier": "error classifier",
    "root_cause_analyst": "root-cause analyst",
    "hint_composer": "hint composer",
    "leakage_checker": "judge whether a hint",
}

CANNED_ROOT_CAUSE = "LLM root cause: the hundreds column is added without the carry from the tens."
CANNED_HINT = "LLM hint: add the tens column first and remember to carry into the hundreds."


def detect_node(text: str, markers: dict[str, str] = NODE_MARKERS) -> str:
    """The node whose prompt `text` is, or "unknown"."""
    lowered = text.lower()
    found = [(lowered.find(m.lower()), node) for node, m in markers.items() if m.lower() in lowered]
    return min(found)[1] if found else "unknown"


def count_attempts(text: str) -> int:
    """How many attempts the prompt lists ("Attempt N (reward ...)" lines, as mentor/runtime/nodes.py writes)."""
    return len(re.findall(r"^Attempt \d+ \(reward", text, flags=re.M))


def canned_answer(node: str, text: str) -> dict[str, Any]:
    """A well-formed answer for `node`, distinguishable from what the `rules` backend writes."""
    if node == "error_classifier":
        return {"classes": ["wrong_hundreds"] * max(1, count_attempts(text))}
    if node == "root_cause_analyst":
        return {"root_cause": CANNED_ROOT_CAUSE, "first_error_step": 2}
    if node == "hint_composer":
        return {"hint": CANNED_HINT, "tier": 2}
    if node == "leakage_checker":
        return {"leaked": False, "reason": "the hint states no digit of the answer"}
    return {"answer": "unknown prompt"}


@dataclass
class Request:
    """One chat-completions request as the server saw it."""

    index: int                     # 0-based, over all requests to this server
    node: str                      # which mentor node (detect_node), "unknown" if none
    node_index: int                # 0-based, over requests of the same node
    text: str                      # the messages' contents, joined
    body: dict[str, Any]           # the request's JSON


@dataclass
class Reply:
    """What to answer. `content` None means the canned answer for the node; a dict is sent as JSON text."""

    content: str | dict | None = None
    status: int = 200
    delay_s: float | None = None   # None: the server's default delay
    hang: bool = False             # wait until the server stops (or `hang_s` passes), then drop the connection
    raw_body: bytes | None = None  # send these bytes as the HTTP body instead of a chat completion
    drip_s: float | None = None    # send the body one byte every `drip_s` seconds (each read of a client is quick)
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers, e.g. Retry-After
    content_bytes: int | None = None  # a chat completion whose content is this many bytes, written 1 MiB at a time
    undeclared: bool = False          # with content_bytes: no Content-Length, the body ends when the connection does


@dataclass
class OpenAIServer:
    """The server. Start with `start()` or a `with` block; `stop()` ends it and releases hanging handlers.

    Args:
        behaviour: Request -> Reply. Default: the canned well-formed answer after `delay_s`.
        delay_s: default time each answer waits before it is sent.
        hang_s: the longest a hanging reply waits (it also ends when the server stops).
    """

    behaviour: Callable[[Request], Reply] | None = None
    delay_s: float = 0.0
    hang_s: float = 30.0
    requests: list[Request] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    huge_sent: list[int] = field(default_factory=list)  # per `content_bytes` reply: content bytes written before it ended

    def __post_init__(self):
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> OpenAIServer:
        server = self

        class Handler(_Handler):
            owner = server

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 1024   # the default listen backlog (5) drops bursts of connections

            def handle_error(self, request, client_address):  # a client that hung up is no news
                if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
                    super().handle_error(request, client_address)

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="openai-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            deadline = time.monotonic() + 5  # let released handlers finish
            while self.in_flight and time.monotonic() < deadline:
                time.sleep(0.01)
            self._httpd = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "start the server first"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- statistics -----------------------------------------------------------------------------------
    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = self.in_flight

    def count(self, node: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if node is None or r.node == node)

    def texts(self, node: str | None = None) -> list[str]:
        with self._lock:
            return [r.text for r in self.requests if node is None or r.node == node]

    # --- one request ----------------------------------------------------------------------------------
    def _record(self, body: dict[str, Any]) -> Request:
        text = "\n".join(m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                         for m in body.get("messages", []))
        node = detect_node(text)
        with self._lock:
            request = Request(len(self.requests), node, sum(1 for r in self.requests if r.node == node), text, body)
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return request

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    disable_nagle_algorithm = True  # headers and body are two writes: without this, a delayed-ACK stall

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            return self._send(400, {"error": {"message": "request body is not JSON"}})
        owner = self.owner
        request = owner._record(body)
        try:
            reply = owner.behaviour(request) if owner.behaviour else Reply()
            if reply.hang:
                owner._stopping.wait(owner.hang_s)
                self.close_connection = True
                return  # nothing sent: the client sees its timeout
            delay = owner.delay_s if reply.delay_s is None else reply.delay_s
            if delay > 0 and owner._stopping.wait(delay):
                self.close_connection = True
                return
            if reply.raw_body is not None:
                return self._send(reply.status, reply.raw_body, reply)
            if reply.content_bytes is not None:
                return self._send_huge(reply)
            if reply.status != 200:
                return self._send(reply.status, {"error": {"message": f"test server error {reply.status}",
                                                           "type": "server_error"}}, reply)
            content = reply.content if reply.content is not None else canned_answer(request.node, request.text)
            if isinstance(content, dict):
                content = json.dumps(content)
            self._send(200, {
                "id": f"chatcmpl-{request.index}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "test"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop", "logprobs": None}],
                "usage": {"prompt_tokens": len(request.text) // 4, "completion_tokens": len(content) // 4,
                          "total_tokens": (len(request.text) + len(content)) // 4}}, reply)
        finally:
            owner._done()

    def _send(self, status: int, payload: dict | bytes, reply: Reply | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        reply = reply or Reply()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if reply.drip_s is None:
                self.wfile.write(data)
                return
            for i in range(len(data)):  # ends early when the client hangs up (a write fails) or the server stops
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                if self.owner._stopping.wait(reply.drip_s):
                    self.close_connection = True
                    return
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
            self.close_connection = True

    def _send_huge(self, reply: Reply) -> None:
        """A well-formed chat completion of `reply.content_bytes` bytes of content, never held whole here."""
        head = b'{"id": "chatcmpl-huge", "object": "chat.completion", "created": 0, "model": "test", "choices": ' \
               b'[{"index": 0, "message": {"role": "assistant", "content": "'
        tail = b'"}, "finish_reason": "stop", "logprobs": null}]}'
        piece, left = b"x" * (1 << 20), reply.content_bytes
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if reply.undeclared:
                self.send_header("Connection", "close")
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(head) + reply.content_bytes + len(tail)))
            self.end_headers()
            self.wfile.write(head)
            while left > 0 and not self.owner._stopping.is_set():
                self.wfile.write(piece[:left])
                left -= len(piece)
            self.wfile.write(tail)
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading
            self.close_connection = True
        finally:
            self.owner.huge_sent.append(reply.content_bytes - max(0, left))


def main() -> None:
    """`python tests/openai_server.py --delay-s 0.05`: serve canned answers in this process; prints the port,
    then serves until stdin closes (so a parent that dies takes the server with it) or SIGTERM."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--delay-s", type=float, default=0.0, help="time each answer waits before it is sent")
    parser.add_argument("--content-mib", type=int, default=0, help="answer every request with this much content")
    args = parser.parse_args()
    huge = (lambda req: Reply(content_bytes=args.content_mib << 20)) if args.content_mib else None
    with OpenAIServer(behaviour=huge, delay_s=args.delay_s) as server:
        print(server.port, flush=True)
        try:
            sys.stdin.read()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

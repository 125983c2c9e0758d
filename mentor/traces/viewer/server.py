"""The live server of `mentor traces serve`: the page, and the JSON API it polls."""

from __future__ import annotations

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from mentor.traces.viewer.graph import graph_spec
from mentor.traces.viewer.hosts import allowed_hosts, host_allowed
from mentor.traces.viewer.json_text import to_json
from mentor.traces.viewer.page import build_html
from mentor.traces.viewer.source import TraceSource
from mentor.types import InputError


class TraceServer(ThreadingHTTPServer):
    """`/` is the page, without records: it loads them from `/api/interventions?after_id=N&limit=M` and
    `/api/steps?after_step=S&limit=M` in batches, and polls those and `/api/runs`. Binds to localhost unless told
    otherwise.

    Bounds: an answer holds at most MAX_BATCH records (or steps) and about MAX_ANSWER_CHARS characters (the page
    asks again from the last id or step it got), so memory does not grow with the store; at most MAX_CONNECTIONS connections are
    served at once, and one that sends nothing for IDLE_TIMEOUT_S is closed. Only requests whose Host header
    names this server are answered (a page elsewhere cannot reach it by DNS rebinding).
    """

    daemon_threads = True
    MAX_BATCH = 1000
    MAX_ANSWER_CHARS = 4 << 20
    MAX_CONNECTIONS = 32
    IDLE_TIMEOUT_S = 10.0

    def __init__(self, source: str | Path, host: str = "127.0.0.1", port: int = 8765, config: Any = None,
                 poll_s: float = 2.0):
        self.traces = TraceSource(source, wait=True)
        self.graph = graph_spec(config)
        self.poll_s = poll_s
        self.connections = threading.BoundedSemaphore(self.MAX_CONNECTIONS)
        super().__init__((host, port), _Handler)
        self.hosts = allowed_hosts(host, self.server_address[1])
        self.page = build_html([], [], self.graph, source=self.traces.label, kind=self.traces.kind, live=True,
                               poll_s=self.poll_s).encode("utf-8", errors="backslashreplace")  # built once

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def interventions_json(self, after_id: int, limit: int) -> list[str]:
        """Records after `after_id`, at most `limit` of them and about MAX_ANSWER_CHARS characters (at least one)."""
        return self.bounded(lambda after, n: [(record_id(t), t) for t in self.traces.interventions_json(after, n)],
                            after_id, limit)

    def steps_json(self, after_step: int | None, limit: int) -> list[str]:
        """Step metrics after `after_step` (None: from the first), bounded as `interventions_json` is: a run of
        100,000 steps is about 60 MB of them."""
        return self.bounded(lambda after, n: [(s["step"], to_json(s)) for s in self.traces.steps(after, n)],
                            after_step, limit)

    def bounded(self, read, after, limit: int) -> list[str]:
        """The JSON texts `read(after, n)` gives as (key, text) pairs in key order, read a few at a time from
        `after` on: at most `limit` of them and about MAX_ANSWER_CHARS characters (at least one)."""
        texts: list[str] = []
        size = 0
        while len(texts) < limit:
            want = min(64, limit - len(texts))
            batch = read(after, want)
            for _, text in batch:
                if texts and size + len(text) > self.MAX_ANSWER_CHARS:
                    return texts
                texts.append(text)
                size += len(text)
            if len(batch) < want:
                break
            after = batch[-1][0]
        return texts

    def process_request(self, request, client_address) -> None:
        if not self.connections.acquire(blocking=False):  # busy: refused at once, not queued on a thread
            try:
                request.settimeout(1.0)
                request.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address) -> None:
        # ThreadingMixIn's body, with the slot freed before the socket closes: a client that sees the close and
        # connects again at once must find the slot free (CI once got a 503 there).
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.connections.release()
            self.shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        self.traces.close()



def record_id(text: str) -> int:
    """The id of a record's JSON text as the store writes it (`{"id":N,...`) or as to_json does (anywhere)."""
    match = _ID.match(text)
    return int(match.group(1)) if match else int(json.loads(text)["id"])


_ID = re.compile(r'\{"id":(\d+)[,}]')
MAX_ID = (1 << 63) - 1  # SQLite's largest integer


def int_param(query: dict[str, list[str]], name: str, default: int | None, low: int) -> int | None:
    """A query parameter as an integer from `low` to MAX_ID; ValueError (a 400) naming it otherwise."""
    if name not in query:
        return default
    text = query[name][0]
    if not re.fullmatch(r"-?[0-9]{1,20}", text):
        raise ValueError(f"{name} must be an integer, got {text[:40]!r}")
    value = int(text)
    if not low <= value <= MAX_ID:
        raise ValueError(f"{name} must be from {low} to {MAX_ID}, got {text}")
    return value


class _Handler(BaseHTTPRequestHandler):
    server: TraceServer

    def setup(self) -> None:
        self.timeout = self.server.IDLE_TIMEOUT_S  # a connection that sends nothing is closed, its thread freed
        super().setup()

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's name): as GET, without the body
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        host = self.headers.get("Host")
        if not host_allowed(host, self.server.hosts, self.server.server_address[1]):
            why = f"Host {host[:100]!r} is not it" if host else "the request names no Host"
            self._send(403 if host else 400, "text/plain; charset=utf-8",
                       f"this server answers only {self.server.url} ({why})")
            return
        url = urlparse(self.path)
        query = parse_qs(url.query)
        try:
            if url.path in ("/", "/index.html"):
                self._send(200, "text/html; charset=utf-8", self.server.page)
            elif url.path == "/api/interventions":
                after_id = int_param(query, "after_id", 0, 0)
                limit = min(int_param(query, "limit", self.server.MAX_BATCH, 1), self.server.MAX_BATCH)
                texts = self.server.interventions_json(after_id, limit)
                self._send(200, "application/json", "[" + ",".join(texts) + "]")
            elif url.path == "/api/steps":
                after_step = int_param(query, "after_step", None, -MAX_ID - 1)
                limit = min(int_param(query, "limit", self.server.MAX_BATCH, 1), self.server.MAX_BATCH)
                self._send(200, "application/json", "[" + ",".join(self.server.steps_json(after_step, limit)) + "]")
            elif url.path == "/api/runs":
                self._send(200, "application/json", to_json(self.server.traces.runs()))
            else:
                self._send(404, "text/plain; charset=utf-8", "not found")
        except ValueError as e:
            self._send(400, "text/plain; charset=utf-8", f"bad request: {e}")
        except InputError as e:
            self._send(500, "text/plain; charset=utf-8", str(e))
        except Exception as e:  # a bug answers 500 with its name, not a dropped connection
            print(f"mentor traces serve: {self.path[:200]!r}: {type(e).__name__}: {e}", file=sys.stderr)
            self._send(500, "text/plain; charset=utf-8", f"internal error: {type(e).__name__}")

    def _send(self, status: int, content_type: str, body: str | bytes) -> None:
        data = body if isinstance(body, bytes) else body.encode("utf-8", errors="backslashreplace")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the page polls every few seconds
        pass

"""The trace viewer: `mentor traces view RUN_DIR` and `mentor traces serve RUN_DIR`.

`view` writes one self-contained HTML file: the records are embedded as JSON in a
`<script type="application/json">` tag, and the page's own script (mentor/traces/assets/viewer.js, plain DOM
and SVG, no library) draws the summary plots, the mentor graph and the intervention list. The page loads
nothing from the network; its Content-Security-Policy forbids it.

`serve` serves the same page on localhost, plus `/api/interventions?after_id=N`, `/api/steps` and `/api/runs`,
which the page polls, so a live run's new interventions appear as the trace store grows.

Both open a run directory (a trainer's output_dir, read through TraceStore), a `traces.sqlite` file, or the
JSONL file `mentor diagnose -o` writes.
"""

from __future__ import annotations

import html
import ipaddress
import json
import math
import os
import re
import sqlite3
import sys
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from mentor.traces import TraceStore, trace_path
from mentor.traces.jsonl import parse_lines
from mentor.types import InputError

ASSETS = Path(__file__).resolve().parent / "assets"


# --- reading traces ---------------------------------------------------------------------------------------
def is_jsonl(path: str | Path) -> bool:
    """A JSONL file (`mentor diagnose` output), rather than a run directory or its traces.sqlite."""
    path = Path(path)
    return path.suffix in (".jsonl", ".ndjson") or (path.is_file() and path.suffix != ".sqlite")


def _record(number: int, value: Any) -> dict[str, Any]:
    """A JSONL line's record, given its 1-based line number as `id` if it lacks one (stable while the file grows)."""
    if not isinstance(value, dict):
        raise InputError("not a JSON object")
    value.setdefault("id", number)
    if not isinstance(value["id"], int) or isinstance(value["id"], bool):  # the page orders and polls by it
        raise InputError(f"'id' must be an integer, got {value['id']!r} (leave it out to number lines by position)")
    return value


class JsonlRecords:
    """The records of a JSONL file that may still be growing, read on from where the last read stopped.

    Each `read` parses only the lines completed since the previous one. The last line, while it has no newline,
    is parsed on every read and kept once complete. A file that shrank or was replaced is read from the start.
    Bad lines are reported on stderr once, and skipped.

    Args:
        path: the JSONL file (`mentor diagnose` output or exported traces).
        live: another process may be writing the file (`serve`): an unfinished last line that does not parse
            yet is taken as half written and not reported. Default False: it is reported like any bad line.
    """

    def __init__(self, path: str | Path, live: bool = False):
        self.path, self.live = Path(path), live
        self.records: list[dict[str, Any]] = []
        self.offset = self.lines = 0  # bytes and lines read and parsed, up to the last newline
        self.inode: int | None = None

    def read(self) -> list[dict[str, Any]]:
        """Every record so far, in file order."""
        with self.path.open("rb") as f:
            stat = os.fstat(f.fileno())
            if stat.st_size < self.offset or stat.st_ino != self.inode:  # truncated or replaced
                self.records, self.offset, self.lines, self.inode = [], 0, 0, stat.st_ino
            f.seek(self.offset)
            data = f.read()
        complete, newline, tail = data.rpartition(b"\n")
        if newline:  # UTF-8 never holds a newline byte inside a character, so each line decodes whole
            lines = complete.decode("utf-8", errors="replace").split("\n")
            self.records += self._parse(lines, report=True)
            self.offset, self.lines = self.offset + len(complete) + 1, self.lines + len(lines)
        return self.records + self._parse([tail.decode("utf-8", errors="replace")], report=not self.live)

    def _parse(self, lines: list[str], report: bool) -> list[dict[str, Any]]:
        records, problems = parse_lines(lines, self.path, _record, first=self.lines + 1)
        for problem in problems if report else ():
            print(problem, file=sys.stderr)
        return records


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Records of a JSONL file (`mentor diagnose` output or exported traces), each given an `id` if it lacks one.

    Ids are 1-based line numbers, so they stay stable while the file grows. Bad lines are reported and skipped.
    """
    return JsonlRecords(path).read()


class TraceSource:
    """Interventions and step metrics of a run directory, a traces.sqlite file or a JSONL file.

    Args:
        path: what to read.
        wait: the run may still be writing (`serve`): a run with no step stored yet reads as empty instead of
            raising, and a JSONL file's unfinished last line is not reported while it does not parse. Default False.
    """

    def __init__(self, path: str | Path, wait: bool = False):
        self.path = Path(path)
        self.kind = "jsonl" if is_jsonl(self.path) else "run"
        self.store: TraceStore | None = None
        self.jsonl = JsonlRecords(self.path, live=wait)  # read on from where the last poll stopped
        self.lock = threading.Lock()
        if self.kind == "jsonl":
            if not self.path.is_file():
                raise InputError(f"no such file: {self.path}")
        elif not wait or trace_path(self.path).exists():  # a file that is there is checked now, before serving
            self._open()

    def _open(self) -> TraceStore | None:
        if self.store is None:
            try:  # a bad row is reported on stderr, once, and skipped, as a bad JSONL line is
                self.store = TraceStore(self.path, readonly=True, on_problem=lambda m: print(m, file=sys.stderr))
            except FileNotFoundError as e:
                raise InputError(str(e)) from None
        return self.store

    def _read(self, read):
        """`read(store)` under the lock; [] while a live run has written nothing; InputError naming the file if
        SQLite cannot read it (corrupted, or replaced by another file, while it is served)."""
        with self.lock:
            store = self._store()
            try:
                return read(store) if store else []
            except sqlite3.DatabaseError as e:
                raise InputError(f"cannot read {self.label} ({e}): is it a trace store a run wrote, and whole? "
                                 f"Restore it, or view another run") from None

    def _store(self) -> TraceStore | None:
        if self.store is None and not trace_path(self.path).exists():
            return None  # a live run that has not written yet
        return self._open()

    def interventions(self, after_id: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Records with an id above `after_id`, oldest first."""
        with self.lock:
            if self.kind == "jsonl":
                records = [r for r in self.jsonl.read() if r["id"] > after_id]
                return records[:limit] if limit is not None else records
        return self._read(lambda store: store.interventions(after_id=after_id, limit=limit))

    def interventions_json(self, after_id: int = 0, limit: int | None = None) -> list[str]:
        """The same records as strict JSON texts; from a store without parsing them (a 10,000-record run is
        tens of MB), except the rare record that holds NaN or Infinity."""
        if self.kind == "jsonl":
            return [to_json(r) for r in self.interventions(after_id, limit)]
        texts = self._read(lambda store: store.interventions_json(after_id=after_id, limit=limit))
        return [to_json(json.loads(t)) if "NaN" in t or "Infinity" in t else t for t in texts]

    def steps(self) -> list[dict[str, Any]]:
        if self.kind == "jsonl":
            return []
        return self._read(lambda store: store.steps())

    def runs(self) -> list[dict[str, Any]]:
        """What each run that wrote the store ran (graph and prompt files with hashes, backends); none for JSONL."""
        if self.kind == "jsonl":
            return []
        return self._read(lambda store: store.runs())

    @property
    def label(self) -> str:
        return str(trace_path(self.path) if self.kind == "run" else self.path)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


# --- the graph --------------------------------------------------------------------------------------------
def graph_spec(config: Any = None) -> dict[str, Any]:
    """Nodes, edges and mermaid text of the mentor graph the config names; `{"error": ...}` if it won't load.
    This imports the graph's code: only for a config the user gave (`--config`) or the installed graph (None).

    Drawn by the page itself, offline (mermaid's renderer would need a web service).
    """
    try:
        from mentor.config import MentorConfig
        from mentor.runtime import load_graph
        from mentor.runtime.drawing import drawing

        cfg = MentorConfig.load(config)
        return drawing(load_graph(cfg.graph, cfg), cfg.graph)
    except Exception as e:  # the viewer still shows the traces without the drawing
        return {"error": f"{type(e).__name__}: {e}"}


def stored_graph(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The drawing of the graph the last run recorded (`TraceStore.runs`), as stored with it: viewing runs none of the
    run's code. An error naming `--config` for a run recorded without a drawing; None for a source without runs."""
    graph = (runs[-1].get("graph") or {}) if runs else {}
    if not graph:
        return None
    stored = graph.get("drawing")
    if isinstance(stored, dict) and (isinstance(stored.get("nodes"), list) or "error" in stored):
        return stored
    return {"error": f"the run recorded its graph ({str(graph.get('spec'))[:200]}) without a drawing; viewing "
                     f"never runs a run's code: give --config to load a graph and draw it"}


# --- the page ---------------------------------------------------------------------------------------------
def _finite(value: Any) -> Any:
    """The value with NaN and infinities (which JSON cannot hold; a reward can be -inf) as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def to_json(value: Any) -> str:
    """Strict JSON (no NaN or Infinity, which the browser's JSON.parse rejects)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def script_safe(text: str) -> str:
    r"""JSON text made safe inside a <script> element: `<`, `>` and `&` (which JSON has only inside strings)
    become `\u003c`, `\u003e`, `\u0026`, so no text in the data (a completion holding `</script>` or
    `<!--`) can end the element or start markup. JSON.parse reads the same strings back."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_PLACEHOLDER = re.compile(r"\{\{MENTOR_(TITLE|CSS|JS|DATA)\}\}")


def build_html(interventions: list[dict[str, Any]] | list[str], steps: list[dict[str, Any]] | None = None,
               graph: dict[str, Any] | None = None, source: str = "", kind: str = "run", live: bool = False,
               poll_s: float = 2.0, runs: list[dict[str, Any]] | None = None) -> str:
    """The viewer page with the given records (dicts, or strict JSON texts of dicts) embedded."""
    meta = {"source": source, "kind": kind, "live": live, "poll_ms": int(poll_s * 1000),
            "built": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    records = ",".join(r if isinstance(r, str) else to_json(r) for r in interventions)
    data = (f'{{"meta":{to_json(meta)},"graph":{to_json(graph or {})},"steps":{to_json(steps or [])},'
            f'"runs":{to_json(runs or [])},"interventions":[{records}]}}')
    parts = {
        "TITLE": html.escape(f"MENTOR traces: {Path(source).name or source}" if source else "MENTOR traces"),
        "CSS": (ASSETS / "viewer.css").read_text(encoding="utf-8"),
        "JS": (ASSETS / "viewer.js").read_text(encoding="utf-8"),
        "DATA": script_safe(data),
    }
    # One pass over the template only: a placeholder's text inside a value (a file named `{{MENTOR_DATA}}.jsonl`,
    # a record) is never substituted again.
    return _PLACEHOLDER.sub(lambda m: parts[m.group(1)], (ASSETS / "viewer.html").read_text(encoding="utf-8"))


def write_html(source: str | Path, output: str | Path | None = None, config: Any = None) -> tuple[Path, int]:
    """Writes the self-contained page of a run (or JSONL file); returns its path and the record count."""
    traces = TraceSource(source)
    try:
        records, steps, runs = traces.interventions_json(), traces.steps(), traces.runs()
        label, kind = traces.label, traces.kind
    finally:
        traces.close()
    if output is None:
        src = Path(source)
        output = src.with_suffix(".html") if traces.kind == "jsonl" else trace_path(src).parent / "traces.html"
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    graph = graph_spec(config) if config is not None else stored_graph(runs) or graph_spec(None)
    text = build_html(records, steps, graph, source=label,
                      kind=kind, runs=runs)
    output.write_text(text, encoding="utf-8", errors="backslashreplace")  # a lone surrogate becomes \udXXX
    return output, len(records)


# --- the live server --------------------------------------------------------------------------------------
class TraceServer(ThreadingHTTPServer):
    """`/` is the page, without records: it loads them from `/api/interventions?after_id=N&limit=M` in batches
    and polls that, `/api/steps` and `/api/runs`. Binds to localhost unless told otherwise.

    Bounds: an answer holds at most MAX_BATCH records and about MAX_ANSWER_CHARS characters (the page asks again
    from the last id it got), so memory does not grow with the store; at most MAX_CONNECTIONS connections are
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
        """Records after `after_id`, at most `limit` of them and about MAX_ANSWER_CHARS characters (at least one),
        read from the store a few at a time."""
        texts: list[str] = []
        size = 0
        while len(texts) < limit:
            want = min(64, limit - len(texts))
            batch = self.traces.interventions_json(after_id, want)
            for text in batch:
                if texts and size + len(text) > self.MAX_ANSWER_CHARS:
                    return texts
                texts.append(text)
                size += len(text)
            if len(batch) < want:
                break
            after_id = record_id(batch[-1])
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
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release()

    def server_close(self) -> None:
        super().server_close()
        self.traces.close()


def allowed_hosts(host: str, port: int) -> set[str]:
    """The Host headers `serve` answers: the bound name, `localhost`, `127.0.0.1` and `[::1]`, with the port (or
    without it on port 80). Bound to every address (0.0.0.0, ::), any IP address too: a name can be rebound by
    its DNS to this machine, an address cannot."""
    names = {"localhost", "127.0.0.1", "[::1]", host.lower()}
    if ":" in host and not host.startswith("["):
        names.add(f"[{host.lower()}]")
    hosts = {f"{name}:{port}" for name in names} | (names if port == 80 else set())
    if host in ("", "0.0.0.0", "::"):
        hosts.add("*ip")
    return hosts


def host_allowed(header: str | None, hosts: set[str], port: int) -> bool:
    if not header:
        return False
    header = header.strip().lower()
    if header in hosts:
        return True
    if "*ip" in hosts:
        name, _, given = header.rpartition(":") if not header.endswith("]") else (header, "", "")
        if (given or "80") == str(port):
            try:
                ipaddress.ip_address(name.strip("[]"))
                return True
            except ValueError:
                return False
    return False


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
                self._send(200, "application/json", to_json(self.server.traces.steps()))
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


# --- the CLI ----------------------------------------------------------------------------------------------
def cmd_view(args) -> int:
    out, n = write_html(args.run, args.output, args.config)
    size = out.stat().st_size
    print(f"wrote {out} ({n} interventions, {size / 1e6:.1f} MB): open it in a browser, no network needed")
    return 0


def cmd_serve(args) -> int:
    try:
        server = TraceServer(args.run, args.host, args.port, args.config, args.poll)
    except OSError as e:  # a port in use, or a host this machine does not have
        raise InputError(f"cannot serve on {args.host}:{args.port} ({e.strerror}); pick another --port, "
                         f"or --port 0 for any free one") from None
    print(f"serving the traces of {server.traces.label} at {server.url} (refreshes every {args.poll:g} s;"
          f" Ctrl-C stops)", flush=True)
    if server.traces.kind == "run" and not trace_path(args.run).exists():
        print(f"no traces at {trace_path(args.run)} yet: the page fills in once the run writes its first step",
              flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def add_traces_command(sub) -> None:
    """Registers `mentor traces ...` on the CLI's sub-parsers."""
    traces = sub.add_parser("traces", help="see a run's interventions in the trace viewer")
    commands = traces.add_subparsers(dest="traces_command", required=True)
    what = "a run directory (the trainer's output_dir), its mentor/traces.sqlite, or a `mentor diagnose` JSONL file"

    view = commands.add_parser("view", help="write one self-contained HTML page (no network needed to open it)")
    view.add_argument("run", help=what)
    view.add_argument("-o", "--output", help="HTML file (default: <run>/mentor/traces.html, or FILE.html)")
    view.add_argument("--config", help="mentor config YAML naming the graph to draw, which loads its code (default: the "
                                       "drawing the run stored, else the installed graphs/mentor; viewing runs no "
                                       "code of the run)")
    view.set_defaults(func=cmd_view)

    serve = commands.add_parser("serve", help="serve the viewer on localhost; it refreshes as new traces land")
    serve.add_argument("run", help=what)
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--poll", type=float, default=2.0, help="seconds between the page's refreshes (default 2)")
    serve.add_argument("--config", help="mentor config YAML naming the graph to draw (default: graphs/mentor)")
    serve.set_defaults(func=cmd_serve)


__all__ = ["TraceServer", "TraceSource", "add_traces_command", "build_html", "graph_spec", "read_jsonl", "stored_graph",
           "script_safe", "to_json", "write_html"]

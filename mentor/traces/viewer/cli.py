"""`mentor traces view` and `mentor traces serve` on the CLI."""

from __future__ import annotations

from mentor.traces import trace_path
from mentor.traces.viewer.page import write_html
from mentor.traces.viewer.server import TraceServer
from mentor.types import InputError


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

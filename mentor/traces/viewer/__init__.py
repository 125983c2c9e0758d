"""The trace viewer: `mentor traces view RUN_DIR` and `mentor traces serve RUN_DIR`.

`view` writes one self-contained HTML file: the records are embedded as JSON in a
`<script type="application/json">` tag, and the page's own script (mentor/traces/assets/viewer.js, plain DOM
and SVG, no library) draws the summary plots, the mentor graph and the intervention list. The page loads
nothing from the network; its Content-Security-Policy forbids it.

`serve` serves the same page on localhost, plus `/api/interventions?after_id=N`, `/api/steps` and `/api/runs`,
which the page polls, so a live run's new interventions appear as the trace store grows.

Both open a run directory (a trainer's output_dir, read through TraceStore), a `traces.sqlite` file, or the
JSONL file `mentor diagnose -o` writes.

The parts, one job each: `tail` (a growing JSONL file), `source` (the records of a run or file), `graph` (the
graph's drawing), `json_text` (strict, script-safe JSON), `page` (the HTML), `hosts` (the Host check), `server`
(the live server), `cli` (the commands).
"""

from mentor.traces.viewer.cli import add_traces_command
from mentor.traces.viewer.graph import graph_spec, stored_graph
from mentor.traces.viewer.json_text import script_safe, to_json
from mentor.traces.viewer.page import build_html, write_html
from mentor.traces.viewer.server import TraceServer
from mentor.traces.viewer.source import TraceSource
from mentor.traces.viewer.tail import read_jsonl

__all__ = ["TraceServer", "TraceSource", "add_traces_command", "build_html", "graph_spec", "read_jsonl", "stored_graph",
           "script_safe", "to_json", "write_html"]

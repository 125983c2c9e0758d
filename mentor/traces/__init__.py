"""The traces: every intervention's record in `<output_dir>/mentor/traces.sqlite` (store), the JSONL reader and
writer of `mentor diagnose` files (jsonl), and the HTML viewer with its assets (viewer, assets/).

The store's public names are importable from here: `from mentor.traces import TraceStore`."""

from mentor.trace_format import TRACE_FILE, node_io, trace_path
from mentor.traces.store import TraceStore

__all__ = ["TRACE_FILE", "TraceStore", "node_io", "trace_path"]

"""The viewer page: the HTML template filled with the assets and the records, and `view`'s self-contained file."""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mentor.output import check_output
from mentor.traces import trace_path
from mentor.traces.viewer.graph import graph_spec, stored_graph
from mentor.traces.viewer.json_text import script_safe, to_json
from mentor.traces.viewer.source import TraceSource

ASSETS = Path(__file__).resolve().parent.parent / "assets"


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
    """Writes the self-contained page of a run (or JSONL file); returns its path and the record count.

    Refuses (InputError), before reading a record, an output that is a folder or the file it reads (the trace store,
    the JSONL file, a link to either), which the page would overwrite."""
    traces = TraceSource(source)
    try:
        flag = "-o" if output is not None else "the default page (no -o)"
        if output is None:
            src = Path(source)
            output = src.with_suffix(".html") if traces.kind == "jsonl" else trace_path(src).parent / "traces.html"
        output = Path(output)
        check_output(output, flag, inputs=[Path(source)])
        records, steps, runs = traces.interventions_json(), traces.steps(), traces.runs()
        label, kind = traces.label, traces.kind
    finally:
        traces.close()
    output.parent.mkdir(parents=True, exist_ok=True)
    graph = graph_spec(config) if config is not None else stored_graph(runs) or graph_spec(None)
    text = build_html(records, steps, graph, source=label,
                      kind=kind, runs=runs)
    output.write_text(text, encoding="utf-8", errors="backslashreplace")  # a lone surrogate becomes \udXXX
    return output, len(records)

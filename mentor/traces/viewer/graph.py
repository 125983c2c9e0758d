"""The mentor graph's drawing the page shows: loaded from a config, or as a run stored it."""

from __future__ import annotations

from typing import Any


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

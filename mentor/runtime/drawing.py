"""A graph's drawing as data (nodes, edges, mermaid text): stored with each run, so the trace viewer draws the graph a
run ran without importing any of its code."""

from __future__ import annotations

from typing import Any


def drawing(graph: Any, spec: str) -> dict[str, Any]:
    """`{"spec", "nodes", "edges", "mermaid"}` of a compiled graph; `{"error": ...}` if it cannot be drawn."""
    try:
        drawable = graph.get_graph()
        return {
            "spec": spec,
            "nodes": [{"id": n.id, "name": n.name} for n in drawable.nodes.values()],
            "edges": [{"source": e.source, "target": e.target, "conditional": bool(e.conditional),
                       "label": e.data if isinstance(e.data, str) else None} for e in drawable.edges],
            "mermaid": drawable.draw_mermaid(),
        }
    except Exception as e:  # a drawing is for the viewer; the run goes on without one
        return {"error": f"{type(e).__name__}: {e}"}

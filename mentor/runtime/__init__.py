"""What runs the mentor graph: the runner (MentorRuntime), the graph a spec names (graph_loading: load_graph), the
process's one event loop (event_loop), the Intervention a run stands for (intervention), the chat model (llm, hf) and
the node answer schemas (schemas)."""

from mentor.runtime.graph_loading import load_graph
from mentor.runtime.runner import MentorRuntime

__all__ = ["MentorRuntime", "load_graph"]

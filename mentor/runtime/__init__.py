"""What runs the mentor graph, and the contract a graph keeps: the runner (MentorRuntime), the graph a spec names
(graph_loading: load_graph), the process's one event loop and its threads (event_loop), the state keys a graph shares
(state), the run's settings (context), the rules/llm dispatch of a node (nodes) and the Intervention a run stands for
(intervention). The model clients an `llm` node asks are mentor/llm/."""

from mentor.runtime.graph_loading import load_graph
from mentor.runtime.runner import MentorRuntime

__all__ = ["MentorRuntime", "load_graph"]

"""What runs the mentor graph: the runner (MentorRuntime, load_graph), the chat model (llm, hf) and the node
answer schemas (schemas)."""

from mentor.runtime.runner import MentorRuntime, load_graph

__all__ = ["MentorRuntime", "load_graph"]

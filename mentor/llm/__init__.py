"""The model clients of `llm` nodes: the chat model a node asks and its call (`client`: an OpenAI-compatible server
through LangChain, or the in-process Hugging Face provider of `hf`, with `hf_fit`), the request body's cap
(`body_cap`), each node's answer schema and token budget (`schemas`), and the prompt files (`prompts`). The runtime
(mentor/runtime/) runs the graph and imports these; nothing here imports the runtime."""

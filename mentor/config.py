"""MentorConfig: every knob of the mentor and of its intervention in training, with its default."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mentor.types import InputError

NODES = ("error_classifier", "root_cause_analyst", "hint_composer", "leakage_checker")
DEFAULT_GRAPH = "graphs/mentor/graph.py:graph"
DEFAULT_PROMPTS_DIR = str(Path(__file__).resolve().parent.parent / "prompts")


@dataclass
class LLMConfig:
    """The chat model behind every node whose backend is `llm`.

    Args:
        provider: `openai` (any OpenAI-compatible server: vLLM, an API) or `hf` (a local transformers model).
        model: model name on the server, or the Hugging Face model id for `hf`.
        base_url: the server's URL, e.g. `http://localhost:8000/v1` for `vllm serve`. Default: the provider's.
        api_key_env: environment variable holding the API key (a vLLM server accepts any key).
        timeout_s: per-request timeout, in seconds.
        max_retries: transport retries (connection errors, 5xx) per request.
        parse_retries: extra requests when the answer is not the JSON the node needs; then `rules` takes over.
        max_concurrency: requests in flight at once, over all groups.
        temperature: sampling temperature of the mentor model.
        max_tokens: cap on each answer's length.
    """

    provider: str = "openai"
    model: str = "gpt-4o-mini"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 30.0
    max_retries: int = 1
    parse_retries: int = 1
    max_concurrency: int = 16
    temperature: float = 0.0
    max_tokens: int = 512

    def __post_init__(self):
        _check_types(self, "llm.")


@dataclass
class MentorConfig:
    """Configuration of the mentor graph and of how its hints enter GRPO training.

    Args:
        task: task adapter (`arithmetic`, `math`, `code`). Default: inferred from the dataset's columns.
        graph: the mentor graph as `path.py:variable` (the langgraph.json convention); the variable is a
            compiled graph or a `build_graph(config)` function. Default: the graph in `graphs/mentor/`.
        nodes: backend per node, `rules` (deterministic, offline; the default) or `llm`.
        llm: the chat model for `llm` nodes (see `LLMConfig`).
        prompts_dir: folder of the `llm` prompts, one `<node>.md` per node, with per-task overrides in
            `<task>/<node>.md`. Default: the repository's `prompts/`.
        max_leak_retries: drafts the leakage checker may send back to the composer before the hint is
            withheld. Default 2.
        max_concurrency: failed groups run through the graph at once. Default 16.
        timeout_s: wall-clock bound on each group's run through the graph, counted from the start of the run
            (one per step and round) so that waiting for a `max_concurrency` slot counts too; a group not done by
            then gets no hint. So the mentor holds a step for at most this long per round. Default 60.
        collapse_threshold: a group whose rewards are all at or below this is collapsed. Default 0.
        strategy: `replace_group` (the group becomes G hinted attempts; default), `replace_k` (k failed rows
            replaced by hinted successes), or `mixed` (a share `mixed_share` of the group hinted).
        k: rows replaced under `replace_k`. Default 1.
        mixed_share: share of the group hinted under `mixed`. Default 0.5.
        max_rounds: diagnose-hint-regenerate rounds per group per step; a round escalates the tier. Default 1.
        hint_placement: `prompt` (appended to the user turn; default) or `prefix` (a partial solution that
            starts the response; for a conversational prompt, the start of the assistant turn).
        strip_hint: train the hinted completion after the original prompt (off-policy). With `prefix` placement and
            no `train_prefix`, that is the continuation alone. Default False.
        train_prefix: with `prefix` placement and `strip_hint`, a successful re-attempt's prefix tokens become part
            of its trained completion (off-policy, close to prefix-guided SFT); a failed one is trained as
            generated, the prefix on the prompt side. Default False.
        mode: `in_step` (re-generate inside the step; default) or `next_attempt` (attach the hint to the
            problem for its next sampling, with no extra generation).
        columns: our reference field -> dataset column, for datasets that name them otherwise.
        traces: write every intervention to `<output_dir>/mentor/traces.sqlite`. Default True.
    """

    task: str | None = None
    graph: str = DEFAULT_GRAPH
    nodes: dict[str, str] = field(default_factory=lambda: {n: "rules" for n in NODES})
    llm: LLMConfig = field(default_factory=LLMConfig)
    prompts_dir: str = DEFAULT_PROMPTS_DIR
    max_leak_retries: int = 2
    max_concurrency: int = 16
    timeout_s: float = 60.0
    collapse_threshold: float = 0.0
    strategy: str = "replace_group"
    k: int = 1
    mixed_share: float = 0.5
    max_rounds: int = 1
    hint_placement: str = "prompt"
    strip_hint: bool = False
    train_prefix: bool = False
    mode: str = "in_step"
    columns: dict[str, str] = field(default_factory=dict)
    traces: bool = True

    def __post_init__(self):
        if isinstance(self.llm, dict):
            self.llm = _build(LLMConfig, self.llm, "llm")
        _check_types(self, "")
        self.nodes = {**{n: "rules" for n in NODES}, **self.nodes}
        for node, backend in self.nodes.items():
            if node not in NODES:
                raise InputError(f"nodes: unknown node '{node}'; the nodes are {list(NODES)}")
            if backend not in ("rules", "llm"):
                raise InputError(f"nodes.{node}: backend '{backend}' must be 'rules' or 'llm'")
        choices = {"strategy": ("replace_group", "replace_k", "mixed"), "hint_placement": ("prompt", "prefix"),
                   "mode": ("in_step", "next_attempt")}
        for key, allowed in choices.items():
            if getattr(self, key) not in allowed:
                raise InputError(f"{key}: '{getattr(self, key)}' is not one of {list(allowed)}")
        if self.llm.provider not in ("openai", "hf"):
            raise InputError(f"llm.provider: '{self.llm.provider}' must be 'openai' or 'hf'")
        if self.max_leak_retries < 0 or self.max_rounds < 1 or self.k < 1 or not 0 < self.mixed_share <= 1:
            raise InputError("max_leak_retries must be >= 0, max_rounds >= 1, k >= 1, 0 < mixed_share <= 1")
        if self.train_prefix and not (self.strip_hint and self.hint_placement == "prefix"):
            raise InputError("train_prefix: true needs hint_placement: prefix and strip_hint: true")
        if self.strip_hint and self.mode == "next_attempt":
            raise InputError("strip_hint: true applies to mode: in_step only; mode: next_attempt samples the problem "
                             "with its hint and trains it on-policy. Set strip_hint: false, or mode: in_step")

    @classmethod
    def load(cls, source: MentorConfig | dict | str | Path | None) -> MentorConfig:
        """A config from a MentorConfig, a dict, or a YAML file path (None gives the defaults)."""
        if isinstance(source, cls):
            return source
        if source is None:
            return cls()
        if isinstance(source, (str, Path)):
            path = Path(source)
            if not path.exists():
                raise InputError(f"mentor config file '{path}' does not exist")
            source = yaml.safe_load(path.read_text()) or {}
            source = source.get("mentor", source)  # a training YAML may nest it under `mentor:`
        if not isinstance(source, dict):
            raise InputError(f"a mentor config must be a mapping, got {type(source).__name__}")
        return _build(cls, source, "mentor config")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# Annotation (a string: annotations are postponed) -> the types its values may have. An int passes for a float.
_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,), "dict": (dict,),
          "LLMConfig": (LLMConfig,)}


def _check_types(config, prefix: str) -> None:
    """Refuses (InputError) a field of `config` whose value is not of its annotated type; a bool passes only for
    bool, None only for an optional field, and a number written as text (`1e-3`) is read as a float.
    `prefix` starts each key in the message (`llm.` inside a MentorConfig)."""
    for f in dataclasses.fields(config):
        value, kind, optional = getattr(config, f.name), f.type.split("[")[0].split(" |")[0], f.type.endswith("| None")
        if kind == "float" and isinstance(value, str):  # YAML reads `1e-3` as text; TRL's own keys accept it too
            try:
                value = float(value)
                setattr(config, f.name, value)
            except ValueError:
                pass
        if (value is None and optional) or (isinstance(value, _TYPES[kind]) and
                                            (kind == "bool" or not isinstance(value, bool))):
            continue
        expected = ("mapping" if kind in ("dict", "LLMConfig") else kind) + (" or null" if optional else "")
        raise InputError(f"{prefix}{f.name}: expected {expected}, got {value!r} ({type(value).__name__})")


def _build(cls, values: dict, where: str):
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {unknown}; the keys are {sorted(known)}")
    return cls(**values)

"""MentorConfig: every knob of the mentor and of its intervention in training, with its default."""

from __future__ import annotations

import dataclasses
import difflib
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mentor.shipped import shipped_folder
from mentor.types import InputError

NODES = ("error_classifier", "root_cause_analyst", "hint_composer", "leakage_checker")
# The installed graph and prompts, by absolute path: the working directory never decides which graph runs.
DEFAULT_GRAPH = f"{shipped_folder('graphs') / 'mentor' / 'graph.py'}:graph"
DEFAULT_PROMPTS_DIR = str(shipped_folder("prompts"))


@dataclass
class LLMConfig:
    """The chat model behind every node whose backend is `llm`. Each field's `help` says what it sets; every key,
    with an example, is in docs/configuration.md."""

    provider: str = field(default="openai", metadata={
        "help": "`openai` (any OpenAI-compatible server: vLLM, an API) or `hf` (a local transformers model)."})
    model: str = field(default="gpt-4o-mini", metadata={
        "help": "Model name on the server, or the Hugging Face model id for `hf`."})
    base_url: str | None = field(default=None, metadata={
        "help": "The server's URL, e.g. `http://localhost:8000/v1` for `vllm serve`. Default: the provider's."})
    api_key_env: str = field(default="OPENAI_API_KEY", metadata={
        "help": "Environment variable holding the API key (a vLLM server accepts any key)."})
    request_timeout_s: float = field(default=10.0, metadata={
        "help": "Bound on each request's whole time, in seconds, the client's transport retries (and any "
                "`Retry-After` wait) included; past it the request is cancelled and `rules` takes over. Default 10, "
                "so that four `llm` nodes on a server that never answers still leave a 60 s group time for the "
                "fallback."})
    queue_timeout_s: float | None = field(default=None, metadata={
        "help": "`hf` only: bound on a request's wait in the provider's batch queue, in seconds, before its "
                "generation starts (and `request_timeout_s` starts counting); past it `rules` takes over. Default "
                "null: no bound of its own, the group's `timeout_s` bounds the wait, so a long queue (eval's many "
                "groups at once) gives no fallback."})
    max_retries: int = field(default=1, metadata={
        "help": "Transport retries (connection errors, 429, 5xx) per request, inside `request_timeout_s`."})
    parse_retries: int = field(default=1, metadata={
        "help": "Extra requests when the answer is not the JSON the node needs; then `rules` takes over."})
    max_concurrent_requests: int = field(default=16, metadata={"help": "Requests in flight at once, over all groups."})
    temperature: float = field(default=0.0, metadata={"help": "Sampling temperature of the mentor model."})
    max_tokens: int | None = field(default=None, metadata={
        "help": "Cap on each answer's length, for every node. Default: each node's own, sized to its JSON schema "
                "(`mentor.llm.schemas.token_budget`: 62 tokens for a classifier of 3 arithmetic attempts, 424 "
                "for a hint of up to 400 characters); a lower cap shortens the schema's text fields to fit."})
    structured_output: bool = field(default=True, metadata={
        "help": "Send each node's JSON schema for constrained decoding (`response_format` json_schema to an "
                "`openai` server; a grammar on generation under `hf`). A server that rejects or ignores it is "
                "detected from its answers: one warning, then prompt-only JSON for the rest of the run."})

    def __post_init__(self):
        check_fields(self, "llm.")
        if self.provider not in ("openai", "hf"):
            raise InputError(f"llm.provider: '{self.provider}' must be 'openai' or 'hf'")


@dataclass
class MentorConfig:
    """Configuration of the mentor graph and of how its hints enter GRPO training. Each field's `help` says what it
    sets; every key, with an example, is in docs/configuration.md."""

    # The graph: what diagnoses a failed group and writes its hint.
    task: str | None = field(default=None, metadata={
        "help": "Task adapter (`arithmetic`, `math`, `code`, a name given to `mentor.tasks.register`, or "
                "`package.module:Class`). Default: inferred from the dataset's columns."})
    graph: str = field(default=DEFAULT_GRAPH, metadata={
        "help": "The mentor graph as `path.py:variable` (the langgraph.json convention); the variable is a "
                "compiled graph or a function returning one: `build_graph()`, or `build_graph(config)` to be given "
                "this MentorConfig. A relative path is found from the config file's folder, then the working "
                "directory, then among the shipped graphs. Default: the installed `graphs/mentor/graph.py`, wherever "
                "the run starts."})
    nodes: dict[str, str] = field(default_factory=lambda: {n: "rules" for n in NODES}, metadata={
        "help": "Backend per node, `rules` (deterministic, offline; the default) or `llm`."})
    llm: LLMConfig = field(default_factory=LLMConfig, metadata={
        "help": "The chat model for `llm` nodes (see `LLMConfig`)."})
    prompts_dir: str = field(default=DEFAULT_PROMPTS_DIR, metadata={
        "help": "Folder of the `llm` prompts, one `<node>.md` per node, with per-task overrides in "
                "`<task>/<node>.md`. Only `llm` nodes read them. A relative path is found from the config file's "
                "folder, then the working directory. Default: the installed `prompts/`."})
    max_leak_retries: int = field(default=2, metadata={
        "help": "Drafts the leakage checker may send back to the composer before the hint is withheld."})

    # The runtime: how the failed groups of a step run through the graph.
    max_concurrent_groups: int = field(default=16, metadata={"help": "Failed groups run through the graph at once."})
    timeout_s: float = field(default=60.0, metadata={
        "help": "Wall-clock bound on each group's run through the graph, counted from the start of the run (one "
                "per step and round) so that waiting for a `max_concurrent_groups` slot counts too; a group not done by "
                "then gets no hint. So the mentor holds a step for at most this long per round."})

    # The splice: which groups get a hint, and how hinted attempts enter the training batch.
    collapse_threshold: float = field(default=0.0, metadata={
        "help": "A group whose rewards are all at or below this is collapsed."})
    success_reward: list[str] = field(default_factory=list, metadata={
        "help": "The reward function(s), by name (TRL's `reward_func_names`) or as the functions themselves, that "
                "say whether an attempt "
                "succeeded: their weighted sum above `collapse_threshold`. A group is collapsed when no attempt "
                "succeeded by them, whatever the other rewards (a format reward) give; a re-attempt recovers the "
                "same way. One name or a list. Default: every reward function (the weighted total)."})
    strategy: str = field(default="replace_group", metadata={
        "help": "`replace_group` (the group becomes G hinted attempts; default), `replace_k` (k failed rows "
                "replaced by hinted successes), or `mixed` (a share `mixed_share` of the group hinted)."})
    k: int = field(default=1, metadata={"help": "Rows replaced under `replace_k`."})
    mixed_share: float = field(default=0.5, metadata={"help": "Share of the group hinted under `mixed`."})
    max_rounds: int = field(default=1, metadata={
        "help": "Diagnose-hint-regenerate rounds per group per step; a round escalates the tier."})
    hint_placement: str = field(default="prompt", metadata={
        "help": "`prompt` (appended to the user turn; default) or `prefix` (a partial solution that starts the "
                "response; for a conversational prompt, the start of the assistant turn)."})
    strip_hint: bool = field(default=False, metadata={
        "help": "Train the hinted completion after the original prompt (off-policy). With `prefix` placement and "
                "no `train_prefix`, that is the continuation alone."})
    correct_off_policy: bool = field(default=False, metadata={
        "help": "Under `strip_hint`, weight each hinted row trained after the unhinted prompt by the truncated "
                "importance ratio pi(y|x) / pi(y|x,h) of its whole response, capped at TRL's "
                "`vllm_importance_sampling_clip_max` (its floor `..._clip_min`): the rows were drawn under the hint "
                "and are trained as if drawn without it. Under vLLM with TRL's importance-sampling correction on, the "
                "rows keep their hinted sampling log-probs and TRL's own correction applies them (its "
                "`vllm_importance_sampling_mode`); otherwise the row's advantage is scaled by the ratio, which weights "
                "its every token. Two forward passes over those rows a step."})
    train_prefix: bool = field(default=False, metadata={
        "help": "With `prefix` placement and `strip_hint`, a successful re-attempt's prefix tokens become part of "
                "its trained completion (off-policy, close to prefix-guided SFT); a failed one is trained as "
                "generated, the prefix on the prompt side."})
    mode: str = field(default="in_step", metadata={
        "help": "`in_step` (re-generate inside the step; default) or `next_attempt` (attach the hint to the "
                "problem for its next sampling, with no extra generation)."})
    columns: dict[str, str] = field(default_factory=dict, metadata={
        "help": "Our reference field -> dataset column, for datasets that name them otherwise."})
    redraw_all_pass: bool = field(default=False, metadata={
        "help": "Also replace the other kind of group with no gradient: one whose every attempt succeeded with one "
                "total reward. Before the collapse check, each such group becomes G fresh attempts at another "
                "training row, drawn with replacement by a seed of the run's seed, the step and the group (DAPO's "
                "dynamic sampling, one draw a group; the sampler and its epochs are untouched). A replacement that "
                "collapses is mentored as any collapsed group; one that is all-pass again is kept. Traced with "
                "`hint_source: all_pass`; `mentor/all_pass_*` metrics. `in_step` mode only, not under SDPO."})

    # The choice: which hint a hinted group gets.
    hint_source: str = field(default="graph", metadata={
        "help": "`graph` (the mentor graph writes each collapsed group's hint; default) or `none`: the retry "
                "control. Each collapsed group is re-drawn from its unhinted prompt, G fresh attempts through the "
                "same rounds, budget and splice, and traced and counted as an intervention (its trace's hint is "
                "the marker `(re-draw, no hint)`); no graph runs. Train it beside the mentor: the mentor's gain over "
                "it is the hint's, not the extra attempts'. `in_step` mode and `hint_choice: graph` only."})
    hint_choice: str = field(default="graph", metadata={
        "help": "`graph` (the graph's hint; default) or `learning`: the policy tries the graph's hint and each "
                "`hint_candidates` column's, G attempts each, and the group gets the one with the highest predicted "
                "learning, p(1 - p) of the group as spliced, weighted down by HiLL's reliance (mentor/trl/choice.py); "
                "that candidate's attempts are the re-attempt. Costs G more generations per extra candidate. "
                "`in_step` mode only."})
    hint_candidates: list[str] = field(default_factory=list, metadata={
        "help": "Dataset columns holding other hints for `hint_choice: learning` to choose among (each checked for "
                "leaks as the graph's is); a row's empty or missing column is left out."})
    graph_draws: int = field(default=1, metadata={
        "help": "Under `hint_choice: learning`, the graph's hint is tried this many times, G attempts each, as "
                "separate candidates: with no `hint_candidates`, a best-of-N choice among draws of one hint (the "
                "control that tells the choice between hints from the extra attempts)."})
    hint_memory: bool = field(default=False, metadata={
        "help": "Remember the hints that rescued: a hint whose re-attempt recovered a problem is tried first, with "
                "no graph run, the next time that problem's group collapses (leak-checked again), and dropped once it "
                "fails there. Rescuing hints are also kept per error class (`hint_memory_size`), as further "
                "candidates for `hint_choice: learning`. Saved in checkpoints; a record served from memory says so "
                "(`backend.hint_source: memory`, `memory`: the step and problem it came from). `in_step` mode and "
                "`hint_source: graph` only."})
    hint_memory_size: int = field(default=8, metadata={
        "help": "Under `hint_memory`, the rescuing hints kept per error class: the latest distinct ones, the oldest "
                "evicted first."})
    reliance_penalty: float = field(default=1.0, metadata={
        "help": "Under `hint_choice: learning`, a candidate's score is multiplied by exp(reliance_penalty x "
                "min(0, reliance)), reliance HiLL's over its correct attempts (per token; below 0 where the hint "
                "makes them likelier). 0: reliance is ignored."})

    # The record.
    traces: bool = field(default=True, metadata={
        "help": "Write every intervention to `<output_dir>/mentor/traces.sqlite`."})
    reliance_every: int = field(default=0, metadata={
        "help": "Log `mentor/reliance` (HiLL's hint reliance on the step's correct hinted rows; two forward passes "
                "over them) on steps that are a multiple of this. 0: off."})

    def __post_init__(self):
        self.llm = llm_config(self.llm)
        if isinstance(self.success_reward, str) or callable(self.success_reward):  # one name, the common case
            self.success_reward = [self.success_reward]
        if isinstance(self.success_reward, (list, tuple)):  # a function stands for its name, as TRL names it
            self.success_reward = [getattr(f, "__name__", f) if callable(f) else f for f in self.success_reward]
        check_fields(self, "")
        if not all(isinstance(name, str) and name for name in self.success_reward):
            raise InputError(f"success_reward: {self.success_reward!r} must be a reward function's name or a list "
                             f"of them (e.g. success_reward: accuracy_reward)")
        self.nodes = node_backends(self.nodes)
        choices = {"strategy": ("replace_group", "replace_k", "mixed"), "hint_placement": ("prompt", "prefix"),
                   "mode": ("in_step", "next_attempt"), "hint_choice": ("graph", "learning"),
                   "hint_source": ("graph", "none")}
        for key, allowed in choices.items():
            if getattr(self, key) not in allowed:
                raise InputError(f"{key}: '{getattr(self, key)}' is not one of {list(allowed)}")
        if self.train_prefix and not (self.strip_hint and self.hint_placement == "prefix"):
            raise InputError("train_prefix: true needs hint_placement: prefix and strip_hint: true")
        if self.strip_hint and self.mode == "next_attempt":
            raise InputError("strip_hint: true applies to mode: in_step only; mode: next_attempt samples the problem "
                             "with its hint and trains it on-policy. Set strip_hint: false, or mode: in_step")
        if self.hint_source == "none" and (self.mode != "in_step" or self.hint_choice != "graph"):
            raise InputError("hint_source: none re-draws collapsed groups inside the step, with no hint to choose: "
                             "it needs mode: in_step and hint_choice: graph")
        if self.correct_off_policy and not self.strip_hint:
            raise InputError("correct_off_policy: true corrects the rows strip_hint trains after the unhinted prompt; "
                             "set strip_hint: true, or leave correct_off_policy: false (without strip_hint the hinted "
                             "rows are trained on-policy, after their hinted prompt)")
        if self.hint_memory and (self.mode != "in_step" or self.hint_source != "graph"):
            raise InputError("hint_memory: true remembers the hints whose in-step re-attempt recovered; it needs mode: "
                             "in_step and hint_source: graph")
        if self.redraw_all_pass and self.mode != "in_step":
            raise InputError("redraw_all_pass: true draws a fresh group inside the step; it needs mode: in_step")
        if self.hint_choice == "learning" and self.mode != "in_step":
            raise InputError("hint_choice: learning tries each candidate inside the step; it needs mode: in_step")
        if self.hint_choice == "learning" and not self.hint_candidates and self.graph_draws < 2:
            raise InputError("hint_choice: learning needs hint_candidates: the dataset columns of the hints to choose "
                             "among besides the graph's (e.g. [hint_step1, hint_step2]), or graph_draws of 2 or more")
        if not all(isinstance(c, str) and c for c in self.hint_candidates):
            raise InputError(f"hint_candidates: {self.hint_candidates!r} must be a list of column names")
        check_column_names(self.columns)
        llm_nodes = sum(backend == "llm" for backend in self.nodes.values())
        if llm_nodes * self.llm.request_timeout_s >= self.timeout_s:  # a hung server would leave no time for `rules`
            warnings.warn(f"llm.request_timeout_s: {self.llm.request_timeout_s} s x {llm_nodes} llm node(s) is not "
                          f"under timeout_s: {self.timeout_s} s, so a server that never answers takes the group's whole time and "
                          f"the rules fallback never gives its hint. Set llm.request_timeout_s below "
                          f"{self.timeout_s / llm_nodes:g}, or raise timeout_s", UserWarning, stacklevel=3)

    @classmethod
    def load(cls, source: MentorConfig | dict | str | Path | None) -> MentorConfig:
        """A config from a MentorConfig, a dict, or a YAML file path (None gives the defaults)."""
        if isinstance(source, cls):
            return source
        if source is None:
            return cls()
        where = "a mentor config"
        if isinstance(source, (str, Path)):
            folder = Path(source).resolve().parent
            source, where = _read_yaml(Path(source)), f"mentor config file '{source}'"
            if isinstance(source, dict):
                source = source.get("mentor", source)  # a training YAML may nest it under `mentor:`
                if isinstance(source, dict):
                    source = with_paths_from(source, folder)
        if not isinstance(source, dict):
            raise InputError(f"{where} must be a mapping of keys to values (e.g. `strategy: replace_group`), "
                             f"got {type(source).__name__}: {str(source)[:80]!r}")
        if where == "a mentor config":
            return _build(cls, source, "mentor config")
        try:  # a bad key or value names the file it came from
            return _build(cls, source, where)
        except InputError as e:
            raise InputError(str(e) if str(e).startswith(where) else f"{where}: {e}") from None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def llm_config(value: LLMConfig | dict) -> LLMConfig:
    """The LLMConfig of a mapping (its keys checked: an unknown or renamed one is refused by name); others as given,
    for `check_fields` to refuse what is not a mapping."""
    return _build(LLMConfig, value, "llm") if isinstance(value, dict) else value


def node_backends(nodes: dict[str, str]) -> dict[str, str]:
    """The backend of every node: those `nodes` names, `rules` for the rest. Refuses an unknown node or backend."""
    for node, backend in nodes.items():
        if node not in NODES:
            raise InputError(f"nodes: unknown node '{node}'; the nodes are {list(NODES)}")
        if backend not in ("rules", "llm"):
            raise InputError(f"nodes.{node}: backend '{backend}' must be 'rules' or 'llm'")
    return {**{n: "rules" for n in NODES}, **nodes}


def check_column_names(columns: dict) -> None:
    """Refuses (InputError) a `columns` entry that is not one field name -> one column name. Which fields there are
    depends on the task, known when the mentor attaches (`mentor.trl.attach.dataset_task` checks them there)."""
    for field_name, column in columns.items():
        if not (isinstance(field_name, str) and field_name and isinstance(column, str) and column):
            raise InputError(f"columns: {field_name!r}: {column!r} must map one of the mentor's reference fields to "
                             f"one dataset column, both names (e.g. columns: {{answer: gold}})")


def with_paths_from(values: dict, folder: Path) -> dict:
    """`values` with a relative `graph:` or `prompts_dir:` made absolute against `folder` (the config file's) when
    the file or folder is there; else left relative, for the working directory (and, for a graph, the shipped
    ones) to resolve. A config file and the copy it names move together."""
    values = dict(values)
    graph = values.get("graph")
    if isinstance(graph, str) and ":" in graph:
        path, _, variable = graph.rpartition(":")
        if not Path(path).is_absolute() and (folder / path).is_file():
            values["graph"] = f"{folder / path}:{variable}"
    prompts = values.get("prompts_dir")
    if isinstance(prompts, str) and not Path(prompts).is_absolute() and (folder / prompts).is_dir():
        values["prompts_dir"] = str(folder / prompts)
    return values


def _read_yaml(path: Path) -> Any:
    """The YAML value of the file at `path`; InputError, naming the file, if it is missing, a folder, or not YAML."""
    if not path.is_file():
        raise InputError(f"mentor config file '{path}' " + ("is a folder; give a YAML file inside it"
                                                            if path.is_dir() else "does not exist"))
    try:
        value = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(f"mentor config file '{path}' is not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError(f"mentor config file '{path}' is not valid YAML{at}: "
                         f"{getattr(e, 'problem', None) or e}") from None
    return {} if value is None else value  # an empty file: the defaults


# Range of each numeric key: the check, and the allowed values as the error states them. An int passes for a float.
_RANGES: dict[str, tuple[Any, str]] = {
    "max_leak_retries": (lambda v: v >= 0, "an integer >= 0"),
    "max_concurrent_groups": (lambda v: v >= 1, "an integer >= 1"),
    "timeout_s": (lambda v: 0 < v < math.inf, "a finite number of seconds > 0"),
    "collapse_threshold": (math.isfinite, "a finite number (a reward)"),
    "k": (lambda v: v >= 1, "an integer >= 1"),
    "mixed_share": (lambda v: 0 < v <= 1, "a number > 0 and <= 1"),
    "max_rounds": (lambda v: v >= 1, "an integer >= 1"),
    "reliance_every": (lambda v: v >= 0, "an integer >= 0 (0 is off)"),
    "reliance_penalty": (lambda v: 0 <= v < math.inf, "a finite number >= 0"),
    "graph_draws": (lambda v: v >= 1, "an integer >= 1"),
    "hint_memory_size": (lambda v: v >= 1, "an integer >= 1"),
}
_LLM_RANGES: dict[str, tuple[Any, str]] = {
    "request_timeout_s": (lambda v: 0 < v < math.inf, "a finite number of seconds > 0"),
    "queue_timeout_s": (lambda v: v is None or 0 < v < math.inf, "a finite number of seconds > 0, or null"),
    "max_retries": (lambda v: v >= 0, "an integer >= 0"),
    "parse_retries": (lambda v: v >= 0, "an integer >= 0"),
    "max_concurrent_requests": (lambda v: v >= 1, "an integer >= 1"),
    "temperature": (lambda v: 0 <= v < math.inf, "a number >= 0"),
    "max_tokens": (lambda v: v is None or v >= 1, "an integer >= 1, or null for each node's own budget"),
}


def check_fields(config, prefix: str) -> None:
    """Refuses (InputError) the first field of the config dataclass `config` (MentorConfig, LLMConfig, or a part of
    one, as mentor.runtime.context.MentorContext) of the wrong type or out of its range. `prefix` starts each key
    in the message (`llm.` inside a MentorConfig)."""
    _check_types(config, prefix)
    ranges = _LLM_RANGES if isinstance(config, LLMConfig) else _RANGES
    names = {f.name for f in dataclasses.fields(config)}
    _check_ranges(config, {key: check for key, check in ranges.items() if key in names}, prefix)


def _check_ranges(config, ranges: dict[str, tuple[Any, str]], prefix: str) -> None:
    """Refuses (InputError) the first field of `config` outside its range in `ranges`, naming the key, the value and
    the range. Runs after `_check_types`, so every value is a number."""
    for key, (ok, allowed) in ranges.items():
        value = getattr(config, key)
        if not ok(value):  # NaN fails every test, so it is refused too
            raise InputError(f"{prefix}{key}: {value!r} is out of range; set it to {allowed}")


# Annotation (a string: annotations are postponed) -> the types its values may have. An int passes for a float.
_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,), "dict": (dict,), "list": (list,),
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


# Keys renamed so that each name says its scope (a group, or one request): the old ones are refused, naming the new.
RENAMED = {"MentorConfig": {"max_concurrency": "max_concurrent_groups"},
           "LLMConfig": {"timeout_s": "request_timeout_s", "max_concurrency": "max_concurrent_requests"}}


def _guess(cls, key: str, known: set[str]) -> str | None:
    """What an unknown key was meant to be. A top-level key that names an `llm:` field or a node is said to belong
    there before any lookalike is offered: a top-level `max_tokens` is `llm.max_tokens`, not `max_rounds`."""
    if cls is MentorConfig and key in {f.name for f in dataclasses.fields(LLMConfig)}:
        return f"`{key}` belongs under `llm:` (llm.{key})."
    if cls is MentorConfig and key in NODES:
        return f"`{key}` is a node: set its backend under `nodes:` (nodes.{key})."
    close = difflib.get_close_matches(key, known, n=1)
    return f"`{key}`: did you mean `{close[0]}`?" if close else None


def _build(cls, values: dict, where: str):
    prefix = "llm." if cls.__name__ == "LLMConfig" else ""
    for old, new in RENAMED.get(cls.__name__, {}).items():
        if old in values:
            raise InputError(f"{prefix}{old} is now called {prefix}{new}: rename the key")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        guesses = [guess for key in unknown if (guess := _guess(cls, str(key), known))]
        raise InputError(f"{where}: unknown key(s) {unknown}; " + "".join(f"{guess} " for guess in guesses)
                         + ("The" if guesses else "the") + f" keys are {sorted(known)}")
    return cls(**values)

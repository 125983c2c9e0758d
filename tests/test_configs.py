"""The ready training configs (training/configs/) and accelerate configs (training/accelerate/).

Each training YAML is parsed by TRL's parser exactly as training/train_grpo.py does, then everything short of the
weights is built (`build_trainer(..., load_weights=False)`). Hub datasets are stood in for by in-memory rows of the
hub's own shape, so the dataset factories' mapping is checked without a download. The CPU script also runs one real
GRPO step end to end on a tiny model saved in tmp.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
TRAINING = ROOT / "training"
CONFIGS = sorted((TRAINING / "configs").glob("*.yaml"))
ACCELERATE = sorted((TRAINING / "accelerate").glob("*.yaml"))
if str(TRAINING) not in sys.path:  # as when the script runs: its folder is on sys.path (dataset factories live there)
    sys.path.insert(0, str(TRAINING))

import train_grpo  # noqa: E402
from train_grpo import GRPOConfig, MentorScriptArguments, ModelConfig, TrlParser  # noqa: E402

DEEPSCALER = "agentica-org/DeepScaleR-Preview-Dataset"
MBPP = "google-research-datasets/mbpp"

# In-memory stand-ins for the hub datasets the configs name, in the hub's own columns.
FAKE_HUB: dict[tuple[str, str | None], list[dict]] = {
    (DEEPSCALER, None): [
        {"problem": "Compute $\\frac{1}{2} + \\frac{1}{3}$.", "answer": "\\frac{5}{6}",
         "solution": "The common denominator is 6, so $\\frac{3}{6} + \\frac{2}{6} = \\frac{5}{6}$."},
        {"problem": "How many primes are below 20?", "answer": "8",
         "solution": "They are 2, 3, 5, 7, 11, 13, 17, 19: $\\boxed{8}$."},
        {"problem": "A problem without an answer.", "answer": "", "solution": "(none)"},  # dropped by the factory
        {"problem": "Find $x$ if $2x + 3 = 11$.", "answer": "4", "solution": "$2x = 8$, so $x = 4$."},
    ],
    (MBPP, "full"): [
        {"task_id": 901, "text": "Write a function to return the square of a number.",
         "code": "def square(n):\r\n    return _times(n, n)\r\ndef _times(a, b):\r\n    return a * b\r\n",
         "test_list": ["assert square(3) == 9", "assert square(-2) == 4", "assert square(0) == 0"],
         "test_setup_code": "", "challenge_test_list": []},
        {"task_id": 902, "text": "Write a function to find the area of a circle.",
         "code": "import math\r\ndef circle_area(r):\r\n  return math.pi * r * r",
         "test_list": ["assert math.isclose(circle_area(1), 3.14159, rel_tol=1e-4)",
                       "assert math.isclose(circle_area(2), 12.56637, rel_tol=1e-4)"],
         "test_setup_code": "import math", "challenge_test_list": []},
    ],
    (MBPP, "sanitized"): [
        {"source_file": "x.py", "task_id": 903, "prompt": "Write a function that sums the square roots of a list.",
         "code": "import math\ndef root_sum(xs):\n    return sum(math.sqrt(x) for x in xs)\n",
         "test_imports": ["import math"], "test_list": ["assert math.isclose(root_sum([1, 4, 9]), 6.0)"]},
    ],
}


@pytest.fixture
def fake_hub(monkeypatch):
    """`datasets.load_dataset` answers from FAKE_HUB (and records its calls); bf16 counts as available, so configs
    written for GPUs parse on this CPU machine exactly as they are."""
    import datasets
    import transformers.training_args

    calls = []

    def load_dataset(path, name=None, split=None, **kwargs):
        calls.append({"path": path, "name": name, "split": split})
        if (path, name) not in FAKE_HUB:
            raise AssertionError(f"no stand-in for hub dataset {(path, name)}: add one to FAKE_HUB in this file")
        ds = datasets.Dataset.from_list(FAKE_HUB[(path, name)])
        return ds if split is not None else datasets.DatasetDict({"train": ds})

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setattr(transformers.training_args, "is_torch_bf16_gpu_available", lambda: True)
    return calls


def parse(path: Path):
    parser = TrlParser((MentorScriptArguments, GRPOConfig, ModelConfig))
    return parser.parse_args_and_config(["--config", str(path)])


def correct_completion(reward, row: dict) -> tuple[list, list] | None:
    """A completion the reward must score 1.0 for this row, and one it must score 0.0 (None: unknown reward)."""
    name = reward.__name__
    if name == "math_reward":
        good, bad = f"So the answer is $\\boxed{{{row['answer']}}}$.", "So the answer is $\\boxed{-123456}$."
    elif name in ("code_reward", "code_reward_partial"):
        good = f"```python\n{row['solution']}\n```"
        bad = f"```python\ndef {row['entry_point']}(*args):\n    return None\n```"
    elif name == "arithmetic_reward":
        good, bad = f" {row['answer']}", " 9999" if row["answer"] != "9999" else " 0000"
    else:
        return None
    conversational = not isinstance(row["prompt"], str)
    wrap = (lambda t: [{"role": "assistant", "content": t}]) if conversational else (lambda t: t)
    return [wrap(good)], [wrap(bad)]


def call_reward(reward, completions: list, row: dict) -> list[float]:
    columns = {k: [v] for k, v in row.items() if k != "prompt"}
    return reward(completions=completions, prompts=[row["prompt"]], completion_ids=[[1]], trainer_state=None,
                  **columns)


# --------------------------------------------------------------------------------------------------------------
# Every training config


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_config_parses_and_builds_short_of_weights(path, fake_hub):
    from mentor import Mentor
    from mentor.config import MentorConfig
    from mentor.trl.attach import dataset_task

    script_args, training_args, model_args = parse(path)
    rewards, dataset, mentor = train_grpo.build_trainer(script_args, training_args, model_args, load_weights=False)

    # The dataset has what TRL and the reward functions read.
    assert len(dataset) > 0
    assert "prompt" in dataset.column_names
    for reward in rewards:
        assert callable(reward)
        needed = [p.name for p in inspect.signature(reward).parameters.values()
                  if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD
                  and p.name not in ("completions", "prompts", "completion_ids")]
        missing = [c for c in needed if c not in dataset.column_names]
        assert not missing, f"{reward.__name__} reads column(s) {missing}; the dataset has {dataset.column_names}"
        # The reward agrees with the dataset's reference: right scores 1, wrong scores 0.
        row = dataset[0]
        pair = correct_completion(reward, row)
        if pair is not None:
            good, bad = pair
            assert call_reward(reward, good, row) == [1.0], f"{reward.__name__} on a correct completion of {row}"
            assert call_reward(reward, bad, row) == [0.0]

    # The mentor (when the config has one: without it the script trains the plain GRPO baseline): a valid config,
    # a task whose reference columns the dataset has (what attach checks).
    assert (mentor is None) == (script_args.mentor is None)
    config = mentor.config if mentor is not None else MentorConfig()
    if mentor is not None:
        assert isinstance(mentor, Mentor) and isinstance(config, MentorConfig)
        dataset_task(config, dataset.column_names)  # raises InputError, as attach does, on a missing column
        inferred = dataset_task(dataclasses.replace(config, task=None), dataset.column_names).name
        assert config.task in (None, inferred), f"task {config.task!r} but the dataset's columns say {inferred!r}"
        if "llm" in config.nodes.values():
            assert config.llm.provider == "openai" and config.llm.base_url, "llm nodes need a reachable server"
            llm_nodes = sum(backend == "llm" for backend in config.nodes.values())
            assert llm_nodes * config.llm.request_timeout_s < config.timeout_s, \
                "a server that never answers must leave the rules fallback time within the group's bound"

    # GRPO: whole groups in every generation batch, for any number of training processes.
    G = training_args.num_generations
    assert G >= 2
    assert training_args.generation_batch_size % G == 0
    per_rank = training_args.per_device_train_batch_size * training_args.steps_per_generation
    for world_size in (1, 2, 3, 4, 5, 6, 7, 8, 16):
        assert (per_rank * world_size) % G == 0, f"with {world_size} processes a group would be cut"

    # Precision: bf16 training loads bf16 weights; a CPU config trains in fp32.
    if training_args.use_cpu:
        assert not training_args.bf16
    if training_args.bf16:
        assert model_args.dtype in ("bfloat16", "auto")

    # vLLM: a known mode, room for the prompt, servers that do not collide.
    if training_args.use_vllm:
        assert training_args.vllm_mode in ("colocate", "server")
        if training_args.vllm_max_model_length is not None:
            assert training_args.vllm_max_model_length >= training_args.max_completion_length + 256
        if training_args.vllm_mode == "colocate":
            assert 0 < training_args.vllm_gpu_memory_utilization <= 0.5, "colocated vLLM must leave room to train"
        else:
            url = urlparse(training_args.vllm_server_base_url or
                           f"http://{training_args.vllm_server_host}:{training_args.vllm_server_port}")
            mentor_url = urlparse(config.llm.base_url or "")
            assert (url.hostname, url.port) != (mentor_url.hostname, mentor_url.port), \
                "the policy's trl vllm-serve and the mentor's server cannot share an address"


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_config_header_has_its_launch_command(path):
    text = path.read_text()
    assert text.startswith("#"), "each config starts with a comment header"
    header = text.split("\n\n", 1)[0]
    launch = f"training/train_grpo.py --config training/configs/{path.name}"
    assert launch in " ".join(header.replace("\\\n", " ").split()), f"the header lacks `{launch}`"
    for referenced in re.findall(r"training/accelerate/[\w.-]+\.yaml", text):
        assert (ROOT / referenced).exists(), f"{path.name} names {referenced}, which does not exist"


def test_ready_configs_cover_models_tasks_and_vllm_modes():
    """What issue 7 asks of the ready configs: the three math models, code configs, both vLLM modes, G = 8, bf16,
    the mentor's composer on the llm backend of an OpenAI-compatible server."""
    configs = {p.name: yaml.safe_load(p.read_text()) for p in CONFIGS}
    gpu = {name: c for name, c in configs.items() if c.get("use_vllm") and not c.get("use_cpu")}
    math_models = {c["model_name_or_path"] for c in gpu.values() if c["mentor"].get("task") == "math"}
    assert {"Qwen/Qwen2.5-Math-1.5B", "Qwen/Qwen2.5-Math-7B", "meta-llama/Llama-3.2-3B-Instruct"} <= math_models
    code = [c for c in gpu.values() if c["mentor"].get("task") == "code"]
    assert code and all(c["reward_funcs"] == ["mentor.rewards.code_reward"] for c in code)
    assert all(c["reward_funcs"] == ["mentor.rewards.math_reward"]
               for c in gpu.values() if c["mentor"].get("task") == "math")
    assert {c["vllm_mode"] for c in gpu.values()} == {"colocate", "server"}
    for name, c in gpu.items():
        assert c["num_generations"] == 8 and c["bf16"] is True and c["dtype"] == "bfloat16", name
        assert c["mentor"]["nodes"]["hint_composer"] == "llm", name
        llm = c["mentor"]["llm"]
        assert llm["provider"] == "openai" and llm["base_url"].startswith("http") and llm["max_concurrent_requests"] >= 1


# --------------------------------------------------------------------------------------------------------------
# The dataset factories


def test_math_factory_maps_problem_answer_solution(fake_hub):
    import hub_datasets

    ds = hub_datasets.math_dataset(split="train")
    assert fake_hub == [{"path": DEEPSCALER, "name": None, "split": "train"}]
    source = [r for r in FAKE_HUB[(DEEPSCALER, None)] if r["answer"]]
    assert len(ds) == len(source), "rows without an answer are dropped"
    assert set(ds.column_names) == {"prompt", "answer", "solution", "problem_id"}
    for row, src in zip(ds, source):
        assert row["answer"] == src["answer"] and row["solution"] == src["solution"]
        assert row["prompt"][-1]["role"] == "user" and row["prompt"][-1]["content"].startswith(src["problem"])
        assert "\\boxed{}" in row["prompt"][-1]["content"]
    assert len(set(ds["problem_id"])) == len(ds)
    plain = hub_datasets.math_dataset(chat=False, solution_column=None, limit=2)
    assert isinstance(plain[0]["prompt"], str) and "solution" not in plain.column_names and len(plain) == 2


@pytest.mark.parametrize("config", ["full", "sanitized"])
def test_mbpp_factory_gives_runnable_tests_and_the_called_function(config, fake_hub):
    import hub_datasets
    from mentor.rewards import code_reward

    ds = hub_datasets.mbpp_dataset(name=config, split="test")
    source = FAKE_HUB[(MBPP, config)]
    assert len(ds) == len(source)
    assert {"prompt", "test", "entry_point", "solution", "task_id", "problem_id"} <= set(ds.column_names)
    for row, src in zip(ds, source):
        assert row["entry_point"] in src["code"] and re.search(rf"\b{row['entry_point']}\(", src["test_list"][0])
        assert all(t in row["test"] for t in src["test_list"]) and "\r" not in row["solution"]
        prompt = row["prompt"][0]["content"]
        assert src["test_list"][0] in prompt and all(t not in prompt for t in src["test_list"][1:])
        assert "```" not in prompt  # the code task would read a fenced block in the prompt as code
    n, rows = len(ds), ds.to_list()  # TRL hands reward functions plain lists
    good = [f"```python\n{r['solution']}\n```" for r in rows]
    bad = [f"```python\ndef {r['entry_point']}(*a):\n    return 0\n```" for r in rows]
    columns = {k: [r[k] for r in rows] for k in ("test", "entry_point")}
    columns.update(prompts=[r["prompt"] for r in rows], completion_ids=[[1]] * n)
    assert code_reward(good, **columns) == [1.0] * n
    assert code_reward(bad, **columns) == [0.0] * n


def test_mbpp_entry_point_is_the_function_the_tests_call():
    from hub_datasets import mbpp_entry_point

    code = "def helper(x):\n    return x\ndef main_fn(a):\n    return helper(a)\ndef other():\n    pass\n"
    assert mbpp_entry_point(code, ["assert main_fn(2) == 2"]) == "main_fn"
    assert mbpp_entry_point(code, ["assert math.isclose(main_fn(2), 2)"]) == "main_fn"
    assert mbpp_entry_point(code, ["assert True"]) == "other"
    with pytest.raises(ValueError):
        mbpp_entry_point("x = 1\n", ["assert x == 1"])


# --------------------------------------------------------------------------------------------------------------
# The accelerate configs


def test_accelerate_configs_load_and_match_their_names():
    from accelerate.commands.config.config_args import ClusterConfig

    names = {p.name for p in ACCELERATE}
    assert {"ddp.yaml", "zero3.yaml"} <= names
    for path in ACCELERATE:
        raw = yaml.safe_load(path.read_text())
        config = ClusterConfig.from_yaml_file(str(path))  # accelerate refuses unknown keys
        assert config.mixed_precision == "bf16" and config.use_cpu is False and config.num_machines >= 1
        assert "accelerate launch --config_file training/accelerate/" + path.name in \
            " ".join(path.read_text().replace("\\\n", " ").split())
        if path.name == "ddp.yaml":
            assert raw["distributed_type"] == "MULTI_GPU"
        if path.name == "zero3.yaml":
            assert raw["distributed_type"] == "DEEPSPEED"
            ds = raw["deepspeed_config"]
            assert ds["zero_stage"] == 3 and ds["zero3_init_flag"] is True and ds["zero3_save_16bit_model"] is True


# --------------------------------------------------------------------------------------------------------------
# The script, end to end on CPU


def test_the_mentor_script_argument_holds_a_mapping_or_a_path():
    # A YAML `mentor:` section stays the mapping it is; a path, in the YAML or on the command line, stays text.
    assert isinstance(parse(TRAINING / "configs" / "smollm2-135m-cpu.yaml")[0].mentor, dict)
    assert parse(TRAINING / "configs" / "lab_cpu.yaml")[0].mentor == "mentor/lab/strategy.json"
    parser = TrlParser((MentorScriptArguments, GRPOConfig, ModelConfig))
    [script_args, *_] = parser.parse_args_and_config(["--config", str(TRAINING / "configs" / "lab_cpu.yaml"),
                                                      "--mentor", "my/mentor.yaml"])
    assert script_args.mentor == "my/mentor.yaml"


def test_train_grpo_runs_one_step_and_writes_traces(tmp_path):
    """training/train_grpo.py's main() on the CPU lab config, with a tiny fresh policy saved in tmp: one GRPO step
    with the mentor attached; the trace store holds the step's interventions, and, under the config's
    `save_strategy: "no"`, no weights are written."""
    from mentor.lab.model import build_policy
    from mentor.traces import TraceStore

    model, tokenizer = build_policy(seed=0, num_hidden_layers=1, hidden_size=64, intermediate_size=128)
    model.save_pretrained(tmp_path / "policy")
    tokenizer.save_pretrained(tmp_path / "policy")

    from mentor.config import MentorConfig
    from mentor.lab.demo import LAB_STRATEGY

    config = yaml.safe_load((TRAINING / "configs" / "lab_cpu.yaml").read_text())
    assert MentorConfig.load(config["mentor"]) == MentorConfig.load(LAB_STRATEGY)  # the YAML runs the demo's arm
    config.update(model_name_or_path=str(tmp_path / "policy"), output_dir=str(tmp_path / "run"), max_steps=1,
                  per_device_train_batch_size=8, num_generations=4, logging_steps=1,
                  dataset_factory_kwargs={**config["dataset_factory_kwargs"], "n": 16})
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))

    train_grpo.main(["--config", str(path)])

    store = TraceStore(tmp_path / "run", readonly=True)
    try:
        # A fresh policy never writes the 4-digit sum: both groups collapse, and each gets an intervention.
        assert store.count() >= 1
        steps = store.steps()
        assert steps and "mentor/collapse_rate_before" in steps[0].get("metrics", steps[0])
    finally:
        store.close()
    assert config["save_strategy"] == "no" and not list((tmp_path / "run").rglob("*.safetensors"))
    for strategy, saves in (("no", False), ("steps", True), ("epoch", True)):
        args = GRPOConfig(output_dir=str(tmp_path), save_strategy=strategy, use_cpu=True, bf16=False)
        assert train_grpo.saves_weights(args) is saves


# --------------------------------------------------------------------------------------------------------------
# The mentor config: values that make no sense, files that are not a config, graphs that are not a graph


@pytest.mark.parametrize("values, message", [
    ({"max_concurrency": 8}, "max_concurrency is now called max_concurrent_groups: rename the key"),
    ({"llm": {"timeout_s": 5}}, "llm.timeout_s is now called llm.request_timeout_s: rename the key"),
    ({"llm": {"max_concurrency": 4}}, "llm.max_concurrency is now called llm.max_concurrent_requests: rename the key"),
])
def test_the_renamed_scope_keys_are_refused_with_their_new_names(values, message):
    from mentor.config import MentorConfig
    from mentor.types import InputError

    with pytest.raises(InputError, match=re.escape(message)):
        MentorConfig.load(values)
    assert MentorConfig.load({"max_concurrent_groups": 8, "timeout_s": 30, "llm": {
        "request_timeout_s": 5, "max_concurrent_requests": 4}}).llm.max_concurrent_requests == 4


@pytest.mark.parametrize("values, key, value, allowed", [
    ({"max_concurrent_groups": 0}, "max_concurrent_groups", "0", "an integer >= 1"),
    ({"max_concurrent_groups": -1}, "max_concurrent_groups", "-1", "an integer >= 1"),
    ({"timeout_s": 0}, "timeout_s", "0", "a finite number of seconds > 0"),
    ({"timeout_s": -5.0}, "timeout_s", "-5.0", "a finite number of seconds > 0"),
    ({"timeout_s": float("inf")}, "timeout_s", "inf", "a finite number of seconds > 0"),
    ({"collapse_threshold": float("nan")}, "collapse_threshold", "nan", "a finite number"),
    ({"collapse_threshold": "nan"}, "collapse_threshold", "nan", "a finite number"),  # YAML text, read as a float
    ({"max_leak_retries": -1}, "max_leak_retries", "-1", "an integer >= 0"),
    ({"max_rounds": 0}, "max_rounds", "0", "an integer >= 1"),
    ({"k": 0}, "k", "0", "an integer >= 1"),
    ({"mixed_share": 0}, "mixed_share", "0", "a number > 0 and <= 1"),
    ({"mixed_share": 1.5}, "mixed_share", "1.5", "a number > 0 and <= 1"),
    ({"llm": {"max_concurrent_requests": 0}}, "llm.max_concurrent_requests", "0", "an integer >= 1"),
    ({"llm": {"request_timeout_s": 0}}, "llm.request_timeout_s", "0", "a finite number of seconds > 0"),
    ({"llm": {"request_timeout_s": -1}}, "llm.request_timeout_s", "-1", "a finite number of seconds > 0"),
    ({"llm": {"parse_retries": -1}}, "llm.parse_retries", "-1", "an integer >= 0"),
    ({"llm": {"max_tokens": -5}}, "llm.max_tokens", "-5", "an integer >= 1"),
    ({"llm": {"max_tokens": 0}}, "llm.max_tokens", "0", "an integer >= 1"),
    ({"llm": {"max_retries": -1}}, "llm.max_retries", "-1", "an integer >= 0"),
    ({"llm": {"temperature": -0.5}}, "llm.temperature", "-0.5", "a number >= 0"),
])
def test_config_refuses_a_value_out_of_range_naming_key_value_and_range(values, key, value, allowed):
    from mentor.config import MentorConfig
    from mentor.types import InputError

    with pytest.raises(InputError) as error:
        MentorConfig.load(values)
    message = str(error.value)
    assert message.startswith(f"{key}: {value} is out of range; set it to {allowed}"), message
    assert message.count("out of range") == 1  # one key per message


def test_config_accepts_the_edges_of_each_range():
    from mentor.config import MentorConfig

    config = MentorConfig.load({"max_concurrent_groups": 1, "timeout_s": 0.5, "collapse_threshold": -1, "k": 1,
                                "max_leak_retries": 0, "mixed_share": 1, "max_rounds": 1,
                                "llm": {"max_concurrent_requests": 1, "request_timeout_s": 0.01, "parse_retries": 0, "max_retries": 0,
                                        "max_tokens": 1, "temperature": 0}})
    assert (config.max_concurrent_groups, config.llm.max_tokens, config.mixed_share) == (1, 1, 1)


def test_every_config_field_has_help_and_is_in_the_documented_example():
    from mentor.config import LLMConfig, MentorConfig

    example = yaml.safe_load(re.search(r"```yaml\n(.*?)```", (ROOT / "docs/configuration.md").read_text(), re.S)[1])
    for cls, documented in ((MentorConfig, example), (LLMConfig, example["llm"])):
        fields = dataclasses.fields(cls)
        assert [f.name for f in fields if not f.metadata.get("help", "").strip()] == [], cls.__name__
        assert sorted(documented) == sorted(f.name for f in fields), cls.__name__


@pytest.mark.parametrize("text, message", [
    ("- strategy: replace_k\n- k: 2\n", r"must be a mapping of keys to values .*got list"),
    ("just a sentence\n", r"must be a mapping of keys to values .*got str: 'just a sentence'"),
    ("mentor: [1, 2]\n", r"must be a mapping of keys to values .*got list"),
    ("strategy: [replace_k\nk: 2\n", r"is not valid YAML at line \d+, column \d+"),
    ("strategy:\treplace_k\n  k: 2\n", r"is not valid YAML at line \d+"),
    (b"strategy: replace_k\n# caf\xe9\n", r"is not UTF-8 text \(byte 25\); save it as UTF-8"),  # the \xe9
])
def test_a_config_file_that_is_not_a_yaml_mapping_is_refused_naming_the_file(tmp_path, text, message):
    from mentor.config import MentorConfig
    from mentor.types import InputError

    path = tmp_path / "mentor.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError, match=f"mentor config file '{re.escape(str(path))}' {message}"):
        MentorConfig.load(path)


@pytest.mark.parametrize("text, message", [
    ("timeout_s: -1\n", r"timeout_s: -1 is out of range"),
    ("strategy: replace_all\n", r"strategy"),
    ("max_tokens: 96\n", r"unknown key\(s\) \['max_tokens'\]; `max_tokens` belongs under `llm:`"),
    ("llm: {request_timeout_s: 0}\n", r"llm.request_timeout_s"),
])
def test_a_bad_key_or_value_in_a_config_file_names_the_file(tmp_path, text, message):
    """The file a bad value came from is in the error, once: a user with several configs knows which to fix."""
    from mentor.config import MentorConfig
    from mentor.types import InputError

    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=f"^mentor config file '{re.escape(str(path))}': .*{message}") as refused:
        MentorConfig.load(path)
    assert str(refused.value).count(str(path)) == 1


def test_a_config_path_that_is_a_folder_or_missing_is_refused(tmp_path):
    from mentor.config import MentorConfig
    from mentor.types import InputError

    with pytest.raises(InputError, match=f"'{re.escape(str(tmp_path))}' is a folder; give a YAML file inside it"):
        MentorConfig.load(tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        MentorConfig.load(tmp_path / "nope.yaml")
    (tmp_path / "empty.yaml").write_text("")
    assert MentorConfig.load(tmp_path / "empty.yaml") == MentorConfig()  # an empty file: the defaults


GRAPH_HEAD = "from mentor.graphs.mentor.graph import build_graph as shipped\n"


@pytest.mark.parametrize("source, variable, message", [
    ("raise ValueError('half-edited')\n", "graph", r"importing '.*' raised ValueError: half-edited\. Fix the file"),
    ("import no_such_module_here\n", "graph", r"raised ModuleNotFoundError: No module named 'no_such_module_here'"),
    ("graph = 42\n", "graph", r"graph is '42' \(int\), not a compiled LangGraph graph"),
    ("def build_graph(config):\n    builder = None\n", "build_graph",
     r"build_graph\(config\) is 'None' \(NoneType\), not a compiled LangGraph graph"),
    ("def build_graph(config):\n    raise KeyError('nodes')\n", "build_graph",
     r"build_graph\(config\) raised KeyError: 'nodes'"),
    ("def build_graph():\n    raise KeyError('edges')\n", "build_graph", r"build_graph\(\) raised KeyError: 'edges'"),
    (GRAPH_HEAD + "from langgraph.graph import StateGraph\nfrom mentor.graphs.mentor.state import MentorState\n"
     "graph = StateGraph(MentorState)\n", "graph", r"graph is .*\(StateGraph\), not a compiled LangGraph graph"),
])
def test_a_graph_that_is_not_a_compiled_graph_is_refused_at_load(tmp_path, source, variable, message):
    from mentor.config import MentorConfig
    from mentor.runtime import MentorRuntime, load_graph
    from mentor.types import InputError

    path = tmp_path / f"bad_graph_{abs(hash(source))}.py"  # a module name of its own per case
    path.write_text(source)
    spec = f"{path}:{variable}"
    with pytest.raises(InputError, match=message):
        load_graph(spec, MentorConfig())
    with pytest.raises(InputError, match=f"graph '{re.escape(spec)}'"):  # at construction, before any group
        MentorRuntime({"graph": spec})


def test_a_graph_from_a_builder_or_a_variable_loads():
    from langgraph.pregel import Pregel

    from mentor.config import MentorConfig
    from mentor.runtime import load_graph

    assert isinstance(load_graph("graphs/mentor/graph.py:graph"), Pregel)
    assert isinstance(load_graph("graphs/mentor/graph.py:build_graph", MentorConfig()), Pregel)
    assert isinstance(load_graph("graphs/static_hints/graph.py:graph"), Pregel)


def test_a_misspelt_key_gets_its_closest_name():
    from mentor.config import MentorConfig
    from mentor.types import InputError

    with pytest.raises(InputError, match=r"unknown key\(s\) \['hint_placment'\]; `hint_placment`: did you mean "
                                         r"`hint_placement`\? The keys are \["):
        MentorConfig.load({"hint_placment": "prefix"})
    with pytest.raises(InputError, match=r"llm: unknown key\(s\) \['modle'\]; `modle`: did you mean `model`\?"):
        MentorConfig.load({"llm": {"modle": "gpt-4o"}})
    with pytest.raises(InputError, match=r"unknown key\(s\) \['zzz'\]; the keys are \["):  # nothing close: the list
        MentorConfig.load({"zzz": 1})


@pytest.mark.parametrize("key", ["max_tokens", "request_timeout_s", "max_retries", "max_concurrent_requests", "model"])
def test_an_llm_key_at_the_top_level_is_sent_under_llm_not_to_a_lookalike(key):
    from mentor.config import MentorConfig
    from mentor.types import InputError

    with pytest.raises(InputError) as e:  # max_tokens looked like max_rounds: 256 re-attempt rounds a step
        MentorConfig.load({key: 1})
    assert f"`{key}` belongs under `llm:` (llm.{key})." in str(e.value) and "did you mean" not in str(e.value)


def test_a_node_name_at_the_top_level_is_sent_under_nodes():
    from mentor.config import MentorConfig
    from mentor.types import InputError

    with pytest.raises(InputError, match=r"`hint_composer` is a node: set its backend under `nodes:` "
                                         r"\(nodes.hint_composer\)\. The keys are"):
        MentorConfig.load({"hint_composer": "llm"})

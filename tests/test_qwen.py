"""The real Qwen2.5-Coder-0.5B-Instruct (`make setup-qwen` first; `make test-qwen` runs these, `make test` leaves
them out): resolved by name to the checked, converted copy, it solves a HumanEval problem through its chat template,
scored in the sandbox by `code_reward`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mentor.chunked_models import CHUNKED_MODELS, QWEN_0_5B, checked_path
from mentor.models import MANIFEST, offline_copy, resolve

pytestmark = pytest.mark.qwen


@pytest.fixture(scope="module")
def qwen() -> Path:
    return Path(offline_copy(QWEN_0_5B))  # an InputError naming `python -m mentor.chunked_models` if not set up


def test_the_name_resolves_to_a_plain_copy_of_the_checked_file(qwen):
    assert resolve(QWEN_0_5B) == str(qwen)
    assert checked_path(QWEN_0_5B).stat().st_size == CHUNKED_MODELS[QWEN_0_5B].size
    config = json.loads((qwen / "config.json").read_text())
    assert (config["model_type"], config["num_hidden_layers"]) == ("qwen2", 24)
    assert "quantization_config" not in config  # Trainer refuses a quantized-flagged model
    assert json.loads((qwen / MANIFEST).read_text())["source"] == checked_path(QWEN_0_5B).name


def test_it_solves_a_humaneval_problem_greedy_through_its_chat_template(qwen):
    from mentor.data.humaneval import chat_prompt, load_humaneval
    from mentor.data.policy_failures import sampled_groups
    from mentor.policy import torch_threads
    from mentor.rewards import code_reward

    problem = next(p for p in load_humaneval() if p["task_id"] == "HumanEval/7")  # filter_by_substring
    with torch_threads(2):
        [[text]] = sampled_groups(QWEN_0_5B, "code", [(problem["task_id"], chat_prompt(problem["prompt"]), problem)],
                                  1, 0.0, 384, 0)
    assert "def filter_by_substring" in text
    assert code_reward([text], [problem["test"]], [problem["entry_point"]], prompt=[problem["prompt"]]) == [1.0]
